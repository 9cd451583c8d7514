package amf

import (
	"github.com/free5gc/nas"
)

// secContext is a UE's 5G NAS security context (TS 24.501 4.4.2).
type secContext struct {
	ngKSI  uint8
	kamf   []byte
	ea, ia uint8
	nas    NASContext
	// active: the Security Mode Command was sent, so downlink is protected.
	active bool
	// confirmed: the UE answered under this context (Security Mode Complete
	// or an integrity-checked initial message); uplink must now verify.
	confirmed bool
	// nhSync is the SYNC-input of the next NH (TS 33.501 A.10): the last
	// KgNB or NH given to a gNB; ncc its Next Hop Chaining Count.
	nhSync []byte
	ncc    uint8
}

// protect applies the context to a downlink message: plain before security
// is active; the Security Mode Command itself travels integrity protected
// with the new context (TS 24.501 4.4.6, header type 3); everything else
// integrity protected and ciphered (type 2).
func (s *secContext) protect(plain []byte, smc bool) ([]byte, error) {
	switch {
	case s == nil || !s.active:
		return plain, nil
	case smc:
		return s.nas.Protect(plain, nas.SecurityHeaderTypeIntegrityProtectedWithNew5gNasSecurityContext)
	default:
		return s.nas.Protect(plain, nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
	}
}

// verifies says whether pdu passes the integrity check of this context (and
// its replay check, which it then advances).
func (s *secContext) verifies(pdu []byte) bool {
	if s == nil {
		return false
	}
	_, err := s.nas.Unprotect(pdu)
	return err == nil
}
