package nasx

import "testing"

// FuzzDecodeNAS: the AMF's uplink NAS path never panics, whatever arrives:
// the header, the decoder, the message behind a security header, and the IE
// parsers and builders the AMF runs on what decodes.
func FuzzDecodeNAS(f *testing.F) {
	for _, seeds := range []map[string][]byte{samples(f), uplinkSamples(f)} {
		for _, b := range seeds {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readUplink(b)
		if h, err := PeekHeader(b); err == nil && h.Protected() {
			// An initial message integrity protected with a context the AMF
			// does not hold yet is read in clear (TS 24.501 4.4.6), and NEA0
			// unprotects to the same octets: the message behind the 7-octet header.
			readUplink(b[7:])
		}
		if len(b) > 1 {
			_, _ = ParseMobileIdentity(b[1:])
			_, _ = NSSAIModels(b[1:])
		}
	})
}

// readUplink decodes b and runs on its IEs what the AMF runs on them
// (nf/amf: parseRegistration, the Identity Response and Deregistration
// Request handlers, onSecurityModeComplete and readFullRequest).
func readUplink(b []byte) {
	m, err := Decode(b)
	if err != nil {
		return
	}
	switch {
	case m.RegistrationRequest != nil:
		r := m.RegistrationRequest
		readIdentity(r.MobileIdentity5GS.Buffer)
		if r.UESecurityCapability != nil {
			readSecurityCapability(SecurityCapability{Raw: append([]byte(nil), r.UESecurityCapability.Buffer...)})
		}
		if r.RequestedNSSAI != nil {
			_, _ = NSSAIModels(r.RequestedNSSAI.Buffer)
		}
	case m.IdentityResponse != nil:
		readIdentity(m.IdentityResponse.MobileIdentity.Buffer)
	case m.ServiceRequest != nil:
		if r, err := ParseServiceRequest(m.ServiceRequest); err == nil && r.Container != nil {
			readUplink(r.Container) // the full Service Request (TS 24.501 4.4.6)
		}
	case m.DeregistrationRequestUEOriginatingDeregistration != nil:
		readIdentity(m.DeregistrationRequestUEOriginatingDeregistration.MobileIdentity5GS.Buffer)
	case m.SecurityModeComplete != nil:
		c := m.SecurityModeComplete
		if c.IMEISV != nil {
			readIdentity(c.IMEISV.Octet[:c.IMEISV.GetLen()])
		}
		if c.NASMessageContainer != nil {
			readUplink(c.NASMessageContainer.Buffer) // the full Registration Request (TS 24.501 4.4.6)
		}
	}
}

func readIdentity(b []byte) {
	if id, err := ParseMobileIdentity(b); err == nil && id.Type == IdentitySUCI {
		_, _ = NullSchemeSUPI(id.SUCI)
	}
}

// readSecurityCapability: the AMF selects algorithms from it, replays it in
// Security Mode Command (TS 24.501 5.4.2.2) and maps it to NGAP bitmaps.
func readSecurityCapability(c SecurityCapability) {
	if !c.Valid() {
		return
	}
	ia, _ := SelectAlgorithm([]uint8{IA2, IA1, IA0}, c.SupportsIA)
	ea, _ := SelectAlgorithm([]uint8{EA2, EA1, EA0}, c.SupportsEA)
	_, _ = BuildSecurityModeCommand(SecurityModeCommand{IA: ia, EA: ea, ReplayedUECap: c, IMEISVRequest: true})
	_, _ = c.NRBits()
	_, _ = c.EUTRABits()
}

// Found by FuzzDecodeNAS: a short 5GSM message whose PDU session identity
// octet looked like a security header type passed as protected, and readers
// that trust Protected() to mean a 7-octet security header sliced past its end.
func TestPeekHeaderReads5GSMAsPlain(t *testing.T) {
	h, err := PeekHeader([]byte{0x2E, 0x01, 0x00, 0xC1})
	if err != nil || h.Protected() {
		t.Fatalf("5GSM header %+v, %v: want plain, no error", h, err)
	}
}
