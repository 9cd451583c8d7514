package amf

import (
	"strings"

	"github.com/l25gc/l25gc/security"
)

// securityCrypto is the production Crypto: package security's key hierarchy
// (TS 33.501 annex A) and NAS protection (TS 24.501 4.4, NIA2/NEA2).
type securityCrypto struct{}

func (securityCrypto) KAMF(kseaf []byte, supi string, abba []byte) ([]byte, error) {
	// TS 33.501 A.7.0: P0 is the SUPI value, the IMSI digits for an IMSI.
	return security.KAMF(kseaf, strings.TrimPrefix(supi, "imsi-"), abba), nil
}

func (securityCrypto) KgNB(kamf []byte, ulCount uint32) ([]byte, error) {
	return security.KgNB(kamf, ulCount, security.AccessType3GPP), nil
}

func (securityCrypto) NewNASContext(kamf []byte, ea, ia uint8) (NASContext, error) {
	return networkNAS{security.NewNASContext(kamf, ea, ia, security.Downlink)}, nil
}

// networkNAS is the AMF's side of a security.NASContext.
type networkNAS struct{ c *security.NASContext }

func (n networkNAS) Protect(plain []byte, sht uint8) ([]byte, error) { return n.c.Protect(plain, sht) }

func (n networkNAS) Unprotect(pdu []byte) ([]byte, error) {
	plain, _, err := n.c.Unprotect(pdu)
	return plain, err
}

func (n networkNAS) ULCount() uint32 { return n.c.LastRxCount() }

// Counts: a registered UE's context has received at least the Security
// Mode Complete, so the next uplink COUNT expected follows the last one.
func (n networkNAS) Counts() (nextDL, nextUL uint32) {
	return n.c.NextTxCount(), n.c.LastRxCount() + 1
}

func (n networkNAS) Resume(nextDL, nextUL uint32) { n.c.ResumeCounts(nextDL, nextUL) }

func (n networkNAS) DecipherContainer(ciphered []byte) ([]byte, error) {
	return n.c.DecipherContainer(ciphered)
}
