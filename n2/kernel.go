package n2

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/ishidawataru/sctp"
)

// The kernel puts sinfo_ppid on the wire as stored, so it must be stored in
// network byte order; github.com/ishidawataru/sctp does that itself: SCTPWrite
// applies htonl to SndRcvInfo.PPID and SCTPRead applies ntohl. Callers give and
// get host-order values (60 for NGAP) and must not swap again.

// sctpSocket is what a kernelConn needs of *sctp.SCTPConn (tests fake it to
// see the SndRcvInfo handed to the library).
type sctpSocket interface {
	SCTPRead(b []byte) (int, *sctp.SndRcvInfo, error)
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
	c       sctpSocket
	wmu     sync.Mutex
	buf     []byte
	streams uint16
	metrics *Metrics
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
	return &kernelConn{c: c, buf: make([]byte, 64*1024), streams: streams, metrics: o.Metrics,
		local: c.LocalAddr(), remote: c.RemoteAddr()}, nil
}

func (k *kernelConn) ReadMsg() ([]byte, uint16, error) {
	for {
		n, info, err := k.c.SCTPRead(k.buf)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 || info == nil {
			continue // a notification, not a DATA chunk
		}
		if info.PPID != PPIDNGAP { // host order: the library converted it
			k.metrics.discard(DiscardPPID)
			continue
		}
		return append([]byte(nil), k.buf[:n]...), info.Stream, nil
	}
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
