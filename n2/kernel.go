package n2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/ishidawataru/sctp"
)

// The kernel puts sinfo_ppid on the wire as stored, so it must be stored in
// network byte order; github.com/ishidawataru/sctp does that itself: SCTPWrite
// applies htonl to SndRcvInfo.PPID and SCTPRead applies ntohl. Callers give and
// get host-order values (60 for NGAP) and must not swap again.

// sctpSocket is what a kernelConn needs of *sctp.SCTPConn (tests fake it to
// see the SndRcvInfo handed to the library).
type sctpSocket interface {
	// recvPart reads one piece of a message: the kernel hands a message
	// larger than b over in pieces, MSG_EOR marking the last (sctp(7),
	// RFC 6458 8.1.16 partial delivery).
	recvPart(b []byte) (n int, info *sctp.SndRcvInfo, flags int, err error)
	SCTPWrite(b []byte, info *sctp.SndRcvInfo) (int, error)
	Close() error
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
}

// kernelStreams is what we ask for: plenty of streams for UE-associated signalling.
const kernelStreams = 32

type kernelListener struct {
	ln   *sctp.SCTPListener
	opts Options
}

func listenKernel(addr string, o Options) (Listener, error) {
	if !KernelSCTPAvailable() {
		return nil, errors.New("n2: kernel SCTP unavailable on this host (load the sctp module, or use transport udp)")
	}
	laddr, err := sctp.ResolveSCTPAddr("sctp", addr)
	if err != nil {
		return nil, fmt.Errorf("n2: %w", err)
	}
	ln, err := sctp.ListenSCTPExt("sctp", laddr, sctp.InitMsg{NumOstreams: kernelStreams, MaxInstreams: kernelStreams})
	if err != nil {
		return nil, fmt.Errorf("n2: listen %s: %w", addr, err)
	}
	rc, err := ln.SyscallConn()
	if err == nil {
		err = kernelHeartbeat(rc, o)
	}
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &kernelListener{ln: ln, opts: o}, nil
}

func (l *kernelListener) Accept() (Conn, error) {
	c, err := l.ln.AcceptSCTP()
	if err != nil {
		return nil, err
	}
	return newKernelConn(c, l.opts)
}

func (l *kernelListener) Close() error   { return l.ln.Close() }
func (l *kernelListener) Addr() net.Addr { return l.ln.Addr() }

func dialKernel(ctx context.Context, addr string, o Options) (Conn, error) {
	if !KernelSCTPAvailable() {
		return nil, errors.New("n2: kernel SCTP unavailable on this host (use transport udp)")
	}
	raddr, err := sctp.ResolveSCTPAddr("sctp", addr)
	if err != nil {
		return nil, fmt.Errorf("n2: %w", err)
	}
	c, err := sctp.DialSCTPExt("sctp", nil, raddr, sctp.InitMsg{NumOstreams: kernelStreams, MaxInstreams: kernelStreams})
	if err != nil {
		return nil, fmt.Errorf("n2: dial %s: %w", addr, err)
	}
	rc, err := c.SyscallConn()
	if err == nil {
		err = kernelHeartbeat(rc, o)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return newKernelConn(c, o)
}

type kernelConn struct {
	c          sctpSocket
	wmu        sync.Mutex
	buf        []byte
	maxMessage int
	streams    uint16
	metrics    *Metrics
	// Read at set-up: the library asks the closed socket otherwise, and the
	// log line of an ended association printed an empty address.
	local, remote net.Addr
}

func newKernelConn(c *sctp.SCTPConn, o Options) (*kernelConn, error) {
	// Receive the stream of each message (sctp_sndrcvinfo).
	if err := c.SubscribeEvents(sctp.SCTP_EVENT_DATA_IO); err != nil {
		c.Close()
		return nil, fmt.Errorf("n2: subscribe events: %w", err)
	}
	streams := uint16(kernelStreams)
	if st, err := c.GetStatus(); err == nil && st.Ostreams > 0 {
		streams = st.Ostreams
	}
	return &kernelConn{c: kernelSocket{c}, buf: make([]byte, 64*1024), maxMessage: int(o.maxMessageSize()),
		streams: streams, metrics: o.Metrics, local: c.LocalAddr(), remote: c.RemoteAddr()}, nil
}

// Flags of recvmsg on an SCTP socket (linux/sctp.h, sctp(7)).
const (
	msgNotification = 0x8000
	msgEOR          = syscall.MSG_EOR
)

// ReadMsg returns the next NGAP message, joined from the pieces the kernel
// delivers it in; one over MaxMessageSize is read to its end, dropped and
// counted, and the association stays.
func (k *kernelConn) ReadMsg() ([]byte, uint16, error) {
	var msg []byte
	tooBig, limit := false, k.maxMessage
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	for {
		n, info, flags, err := k.c.recvPart(k.buf)
		if err != nil {
			return nil, 0, err
		}
		if flags&msgNotification != 0 {
			continue // an event, not a DATA chunk
		}
		if !tooBig && len(msg)+n <= limit {
			msg = append(msg, k.buf[:n]...)
		} else {
			tooBig, msg = true, nil
		}
		if flags&msgEOR == 0 {
			continue // more of this message follows
		}
		switch {
		case tooBig:
			k.metrics.discard(DiscardTooBig)
		case info == nil || n+len(msg) == 0:
		case info.PPID != PPIDNGAP: // host order: converted like the library does
			k.metrics.discard(DiscardPPID)
		default:
			return msg, info.Stream, nil
		}
		msg, tooBig = nil, false
	}
}

// kernelSocket reads with recvmsg itself: the library's SCTPRead drops the
// flags, and MSG_EOR is how a message larger than the buffer is told from
// several messages.
type kernelSocket struct{ *sctp.SCTPConn }

func (k kernelSocket) recvPart(b []byte) (n int, info *sctp.SndRcvInfo, flags int, err error) {
	rc, err := k.SyscallConn()
	if err != nil {
		return 0, nil, 0, err
	}
	oob := make([]byte, 256)
	var oobn int
	cerr := rc.Control(func(fd uintptr) { // a blocking socket, as the library reads it
		n, oobn, flags, _, err = syscall.Recvmsg(int(fd), b, oob, 0)
	})
	switch {
	case cerr != nil:
		return 0, nil, 0, cerr
	case err != nil:
		return 0, nil, 0, err
	case n == 0 && oobn == 0:
		return 0, nil, 0, io.EOF
	}
	return n, sndRcvInfo(oob[:oobn]), flags, nil
}

// sndRcvInfo reads the SCTP_SNDRCV ancillary data (RFC 6458 5.3.2), PPID
// in host order.
func sndRcvInfo(oob []byte) *sctp.SndRcvInfo {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.IPPROTO_SCTP && m.Header.Type == sctp.SCTP_CMSG_SNDRCV && len(m.Data) >= 32 {
			d := m.Data
			return &sctp.SndRcvInfo{Stream: binary.NativeEndian.Uint16(d[0:]), SSN: binary.NativeEndian.Uint16(d[2:]),
				Flags: binary.NativeEndian.Uint16(d[4:]), PPID: binary.BigEndian.Uint32(d[8:]),
				Context: binary.NativeEndian.Uint32(d[12:]), TTL: binary.NativeEndian.Uint32(d[16:]),
				TSN: binary.NativeEndian.Uint32(d[20:]), CumTSN: binary.NativeEndian.Uint32(d[24:]),
				AssocID: int32(binary.NativeEndian.Uint32(d[28:]))}
		}
	}
	return nil
}

func (k *kernelConn) WriteMsg(pdu []byte, stream uint16) error {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	_, err := k.c.SCTPWrite(pdu, &sctp.SndRcvInfo{Stream: stream, PPID: PPIDNGAP})
	return err
}

func (k *kernelConn) Close() error         { return k.c.Close() }
func (k *kernelConn) LocalAddr() net.Addr  { return k.local }
func (k *kernelConn) RemoteAddr() net.Addr { return k.remote }
func (k *kernelConn) Streams() uint16      { return k.streams }
