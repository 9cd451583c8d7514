package amf

// Crypto is what the AMF needs from package security (TS 33.501 annex A,
// TS 24.501 4.4): key derivations and one NAS security context per UE. The
// AMF never implements crypto itself; security.go adapts package security.
type Crypto interface {
	// KAMF derives KAMF from KSEAF, the SUPI and ABBA (TS 33.501 A.7).
	KAMF(kseaf []byte, supi string, abba []byte) ([]byte, error)
	// KgNB derives KgNB from KAMF and an uplink NAS COUNT (TS 33.501 A.9,
	// access type distinguisher 3GPP).
	KgNB(kamf []byte, ulCount uint32) ([]byte, error)
	// NewNASContext derives KNASenc/KNASint (TS 33.501 A.8) for the chosen
	// algorithms and returns the context that protects downlink and verifies
	// uplink messages with COUNT tracking.
	NewNASContext(kamf []byte, ea, ia uint8) (NASContext, error)
}

// NASContext is one UE's NAS security context on the network side.
type NASContext interface {
	// Protect adds the security header of type sht (TS 24.501 9.3.1),
	// ciphering when sht says so, with the next downlink COUNT.
	Protect(plain []byte, sht uint8) ([]byte, error)
	// Unprotect verifies the MAC and COUNT of an uplink message (rejecting
	// replays), deciphers it when needed, and returns the plain message.
	Unprotect(pdu []byte) ([]byte, error)
	// ULCount is the COUNT of the last uplink message that passed Unprotect.
	ULCount() uint32
	// DecipherContainer deciphers the NAS message container of the initial
	// message that last passed Unprotect, with its COUNT (TS 24.501 4.4.6).
	DecipherContainer(ciphered []byte) ([]byte, error)
	// Counts are the next downlink COUNT to send and the next uplink COUNT
	// expected (the UE store keeps them, persist.go).
	Counts() (nextDL, nextUL uint32)
	// Resume continues a stored context at these COUNTs.
	Resume(nextDL, nextUL uint32)
}
