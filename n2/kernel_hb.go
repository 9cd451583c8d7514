package n2

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/ishidawataru/sctp"
)

// struct sctp_paddrparams (RFC 6458 8.1.12, linux/sctp.h), packed and
// 4-aligned: what SCTP_PEER_ADDR_PARAMS reads and writes.
const (
	paddrParamsLen   = 156
	offHBInterval    = 132 // u32, ms
	offPathMaxRxt    = 136 // u16
	offFlags         = 146 // u32
	sppHBEnable      = 1
	sppHBDisable     = 2
	sctpPeerAddrOpts = sctp.SCTP_PEER_ADDR_PARAMS

	// struct sctp_assocparams (RFC 6458 8.1.2): SCTP_ASSOCINFO
	assocParamsLen = 20
	offAsocMaxRxt  = 4 // u16
)

// kernelHeartbeat applies Options' HB.interval and Path.Max.Retrans to an
// SCTP socket; on a listening socket they are the defaults its associations
// inherit. Unset options keep the kernel's (sysctl net.sctp.hb_interval,
// path_max_retrans: 30 s and 5, RFC 4960's), under which the kernel itself
// ends the association of a silent peer and the reader sees an error.
func kernelHeartbeat(rc syscall.RawConn, o Options) error {
	if o.HeartbeatInterval == 0 && o.PathMaxRetrans == 0 {
		return nil
	}
	var p [paddrParamsLen]byte
	switch {
	case o.HeartbeatInterval < 0:
		binary.NativeEndian.PutUint32(p[offFlags:], sppHBDisable)
	default:
		binary.NativeEndian.PutUint32(p[offHBInterval:], uint32(o.HeartbeatInterval/time.Millisecond))
		binary.NativeEndian.PutUint32(p[offFlags:], sppHBEnable)
	}
	binary.NativeEndian.PutUint16(p[offPathMaxRxt:], uint16(max(o.PathMaxRetrans, 0)))
	if err := setsockopt(rc, sctpPeerAddrOpts, p[:]); err != nil {
		return fmt.Errorf("n2: SCTP_PEER_ADDR_PARAMS (heartbeats): %w", err)
	}
	if o.PathMaxRetrans <= 0 {
		return nil
	}
	// One path: the association fails when it does, as over udp, rather
	// than at Association.Max.Retrans (10) while the path is long down.
	var a [assocParamsLen]byte
	binary.NativeEndian.PutUint16(a[offAsocMaxRxt:], uint16(o.PathMaxRetrans))
	if err := setsockopt(rc, sctp.SCTP_ASSOCINFO, a[:]); err != nil {
		return fmt.Errorf("n2: SCTP_ASSOCINFO (max retransmissions): %w", err)
	}
	return nil
}

func setsockopt(rc syscall.RawConn, opt uintptr, v []byte) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		_, _, errno := syscall.Syscall6(syscall.SYS_SETSOCKOPT, fd, syscall.IPPROTO_SCTP, opt,
			uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)), 0)
		if errno != 0 {
			serr = errno
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// kernelHeartbeatParams reads back HB.interval and Path.Max.Retrans.
func kernelHeartbeatParams(rc syscall.RawConn) (interval time.Duration, maxRetrans int, err error) {
	var p [paddrParamsLen]byte
	n := uint32(paddrParamsLen)
	var serr error
	err = rc.Control(func(fd uintptr) {
		_, _, errno := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_SCTP, sctpPeerAddrOpts,
			uintptr(unsafe.Pointer(&p[0])), uintptr(unsafe.Pointer(&n)), 0)
		if errno != 0 {
			serr = errno
		}
	})
	if err == nil {
		err = serr
	}
	interval = time.Duration(binary.NativeEndian.Uint32(p[offHBInterval:])) * time.Millisecond
	return interval, int(binary.NativeEndian.Uint16(p[offPathMaxRxt:])), err
}
