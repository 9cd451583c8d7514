package nasx

// Algorithm identifiers of TS 33.501 5.11.1.1 / TS 24.501 9.11.3.34.
const (
	EA0 uint8 = 0 // null ciphering
	EA1 uint8 = 1 // 128-NEA1 (SNOW 3G)
	EA2 uint8 = 2 // 128-NEA2 (AES-CTR)
	EA3 uint8 = 3
	IA0 uint8 = 0 // null integrity
	IA1 uint8 = 1
	IA2 uint8 = 2 // 128-NIA2 (AES-CMAC)
	IA3 uint8 = 3
)

// SecurityCapability is the UE security capability (TS 24.501 9.11.3.54) as
// sent: octet 1 5G-EA0..7 (EA0 in bit 8), octet 2 5G-IA0..7, then optional
// EPS octets. Raw is kept so it can be replayed bit-exact in Security Mode
// Command (TS 24.501 5.4.2.2).
type SecurityCapability struct {
	Raw []byte
}

// SupportsEA says whether the UE supports 5G-EAn.
func (c SecurityCapability) SupportsEA(n uint8) bool { return c.bit(0, n) }

// SupportsIA says whether the UE supports 5G-IAn.
func (c SecurityCapability) SupportsIA(n uint8) bool { return c.bit(1, n) }

func (c SecurityCapability) bit(octet int, n uint8) bool {
	if len(c.Raw) <= octet || n > 7 {
		return false
	}
	return c.Raw[octet]&(0x80>>n) != 0
}

// Valid says whether the IE has its two mandatory octets (TS 24.501 9.11.3.54:
// length 2..8).
func (c SecurityCapability) Valid() bool { return len(c.Raw) >= 2 && len(c.Raw) <= 8 }

// NRBits gives the 16-bit NR encryption and integrity bitmaps of NGAP's UE
// Security Capabilities (TS 38.413 9.3.1.86): bit 1 = 128-NEA1/NIA1, bit 2 =
// 128-NEA2/NIA2, bit 3 = 128-NEA3/NIA3; EA0/IA0 have no bit there.
func (c SecurityCapability) NRBits() (enc, integ [2]byte) {
	if !c.Valid() {
		return
	}
	return [2]byte{c.Raw[0] << 1, 0}, [2]byte{c.Raw[1] << 1, 0}
}

// EUTRABits gives the EPS bitmaps when the UE sent them (octets 3 and 4),
// shifted likewise (TS 38.413 9.3.1.86).
func (c SecurityCapability) EUTRABits() (enc, integ [2]byte) {
	if len(c.Raw) >= 4 {
		return [2]byte{c.Raw[2] << 1, 0}, [2]byte{c.Raw[3] << 1, 0}
	}
	return
}

// SelectAlgorithm picks the first algorithm of the preference list the UE
// supports (TS 33.501 6.7.2: the AMF chooses by its priority list).
func SelectAlgorithm(pref []uint8, supported func(uint8) bool) (uint8, bool) {
	for _, a := range pref {
		if supported(a) {
			return a, true
		}
	}
	return 0, false
}
