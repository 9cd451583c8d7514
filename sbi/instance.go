package sbi

import (
	"crypto/sha1"
	"fmt"

	"github.com/free5gc/openapi/models"
)

// instanceNamespace is the RFC 4122 name space of L25GC+ NF instance ids.
var instanceNamespace = [16]byte{0x6c, 0x32, 0x35, 0x67, 0x63, 0x2b, 0x4e, 0x46, 0x8a, 0x1d, 0x3c, 0x5e, 0x29, 0x50, 0x0f, 0x7b}

// InstanceID is the NF instance id (TS 29.510 6.1.6.2.2 nfInstanceId, a
// UUID) of an NF of nfType serving its SBI at addr: a name-based UUID
// (RFC 4122 4.3, version 5), so a restarted NF registers under the same id
// and replaces its old profile at the NRF instead of leaving a stale one.
func InstanceID(nfType models.NrfNfManagementNfType, addr string) string {
	h := sha1.New()
	h.Write(instanceNamespace[:])
	h.Write([]byte(string(nfType) + "/" + addr))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
