package n2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// ICMP for SCTP over UDP, the dialing side. RFC 6951 5.5: an ICMP Port
// Unreachable for the encapsulating UDP is to be treated as SCTP's
// Protocol Unreachable, which RFC 9260 appendix C (ICMP8) handles as an
// ABORT, once the quoted packet is shown to be ours by its Verification
// Tag (ICMP5, ICMP6). A gNB whose AMF died thus learns it from the first
// packet it sends there, and one dialing an AMF not yet up tries again
// promptly, instead of waiting out SCTP's doubling retransmission timers.
//
// Linux reports an ICMP error on a connected UDP socket as ECONNREFUSED on
// its next call; with IP_RECVERR it also queues the error with the quoted
// UDP payload (our SCTP packet) on the socket's error queue, which is what
// we check the tag against.

// errPortUnreachable ends an association (or a handshake attempt) whose
// peer's UDP port answered with ICMP Port Unreachable. It wraps io.EOF:
// the association is over, as with an ABORT.
var errPortUnreachable = fmt.Errorf("n2: the AMF's UDP port is unreachable: ICMP Port Unreachable, taken as an ABORT (RFC 6951 5.5, RFC 9260 appendix C): %w", io.EOF)

// ICMP codes of Port Unreachable and the extended error origins (linux/errqueue.h).
const (
	eeOriginICMP      = 2
	eeOriginICMP6     = 3
	icmpDestUnreach   = 3
	icmpPortUnreach   = 3
	icmp6DestUnreach  = 1
	icmp6PortUnreach  = 4
	sockExtendedErrSz = 16 // struct sock_extended_err
)

// icmpReport is one ICMP error from the socket's error queue: whether it
// is a Port Unreachable and the start of the SCTP packet it answers.
type icmpReport struct {
	portUnreachable bool
	quoted          []byte
}

// errorQueue reads the ICMP errors Linux queued on a UDP socket.
type errorQueue struct{ rc syscall.RawConn }

// watchICMP turns on IP_RECVERR (or IPV6_RECVERR) on uc and returns its
// error queue; nil when the socket does not allow it, so ICMP stays ignored.
func watchICMP(uc *net.UDPConn) *errorQueue {
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		level, opt := syscall.IPPROTO_IP, syscall.IP_RECVERR
		if a, ok := uc.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() == nil {
			level, opt = syscall.IPPROTO_IPV6, syscall.IPV6_RECVERR
		}
		serr = syscall.SetsockoptInt(int(fd), level, opt, 1)
	})
	if cerr != nil || serr != nil {
		return nil
	}
	return &errorQueue{rc: rc}
}

// drain empties the error queue and returns what it held.
func (q *errorQueue) drain() []icmpReport {
	var reports []icmpReport
	buf, oob := make([]byte, 64), make([]byte, 256)
	for range 64 { // bounded: the queue is bounded by the receive buffer anyway
		var n, oobn int
		var err error
		cerr := q.rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, err = syscall.Recvmsg(int(fd), buf, oob, syscall.MSG_ERRQUEUE|syscall.MSG_DONTWAIT)
			return true // never wait: an empty queue is the end
		})
		if cerr != nil || err != nil {
			return reports
		}
		reports = append(reports, parseICMPReport(buf[:n], oob[:oobn]))
	}
	return reports
}

// parseICMPReport reads one error queue entry: the extended error in the
// control message and the quoted UDP payload in the data.
func parseICMPReport(data, oob []byte) icmpReport {
	r := icmpReport{quoted: append([]byte(nil), data...)}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return r
	}
	for _, m := range msgs {
		isErr := (m.Header.Level == syscall.IPPROTO_IP && m.Header.Type == syscall.IP_RECVERR) ||
			(m.Header.Level == syscall.IPPROTO_IPV6 && m.Header.Type == syscall.IPV6_RECVERR)
		if !isErr || len(m.Data) < sockExtendedErrSz {
			continue
		}
		origin, typ, code := m.Data[4], m.Data[5], m.Data[6]
		r.portUnreachable = r.portUnreachable ||
			(origin == eeOriginICMP && typ == icmpDestUnreach && code == icmpPortUnreach) ||
			(origin == eeOriginICMP6 && typ == icmp6DestUnreach && code == icmp6PortUnreach)
	}
	return r
}

// answersUs applies RFC 9260 appendix C ICMP6 to the quoted packet: it is
// ours when it carries the peer's tag, or tag 0 on an INIT whose Initiate
// Tag is our own (the handshake's first packet).
func (r icmpReport) answersUs(local, peer uint32) bool {
	if !r.portUnreachable || len(r.quoted) < commonHeaderLen {
		return false
	}
	vtag := binary.BigEndian.Uint32(r.quoted[4:8])
	if vtag != 0 {
		return peer != 0 && vtag == peer
	}
	const initTagEnd = commonHeaderLen + 8 // chunk header, Initiate Tag
	return len(r.quoted) >= initTagEnd && r.quoted[commonHeaderLen] == chunkInit &&
		local != 0 && binary.BigEndian.Uint32(r.quoted[commonHeaderLen+4:initTagEnd]) == local
}

// refusalConn is the dialing side's socket under pion. A connected UDP
// socket reports an ICMP error as ECONNREFUSED on its next call: when the
// error queue shows a Port Unreachable answering one of our packets, the
// association ends (Read returns errPortUnreachable, and pion with it);
// any other such error is hidden, so SCTP goes on retransmitting. Only the
// reader drains the error queue: a writer would wait for the socket's read
// lock, which the reader holds while it waits for a packet.
type refusalConn struct {
	net.Conn
	icmp    *errorQueue // nil: ICMP ignored
	neg     *negotiation
	refused atomic.Bool
}

func (r *refusalConn) Read(b []byte) (int, error) {
	for {
		if r.refused.Load() {
			return 0, errPortUnreachable
		}
		n, err := r.Conn.Read(b)
		var se *os.SyscallError
		switch {
		case err == nil:
			return n, nil
		case errors.As(err, &se): // the ICMP error, reported to us
			r.checkICMP()
		case r.icmp != nil && errors.Is(err, os.ErrDeadlineExceeded): // reported to Write, which woke us
			_ = r.Conn.SetReadDeadline(time.Time{})
			r.checkICMP()
		default:
			return n, err
		}
	}
}

// Write sends one packet. The ICMP error may surface here instead of in
// Read: the packet then counts as lost (SCTP retransmits it), and the
// reader is woken to look at the error queue.
func (r *refusalConn) Write(b []byte) (int, error) {
	n, err := r.Conn.Write(b)
	if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
		if r.icmp != nil {
			_ = r.Conn.SetReadDeadline(time.Now())
		}
		return len(b), nil
	}
	return n, err
}

// checkICMP drains the error queue and notes whether the peer refused us;
// the reader's goroutine only.
func (r *refusalConn) checkICMP() {
	if r.icmp == nil {
		return
	}
	local, peer := r.neg.tags()
	for _, rep := range r.icmp.drain() {
		if rep.answersUs(local, peer) {
			r.refused.Store(true)
		}
	}
}

// cause is errPortUnreachable once the peer refused us.
func (r *refusalConn) cause() error {
	if r.refused.Load() {
		return errPortUnreachable
	}
	return nil
}
