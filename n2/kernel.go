package n2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/ishidawataru/sctp"
)

// The kernel stores sinfo_ppid as given and puts it on the wire unchanged:
// it must be in network byte order, like Wireshark reads it.
var ppidNetworkOrder = func() uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], PPIDNGAP)
	return binary.NativeEndian.Uint32(b[:])
}()

// kernelStreams is what we ask for: plenty of streams for UE-associated signalling.
const kernelStreams = 32

type kernelListener struct{ ln *sctp.SCTPListener }

func listenKernel(addr string) (Listener, error) {
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
	return &kernelListener{ln: ln}, nil
}

func (l *kernelListener) Accept() (Conn, error) {
	c, err := l.ln.AcceptSCTP()
	if err != nil {
		return nil, err
	}
	return newKernelConn(c)
}

func (l *kernelListener) Close() error   { return l.ln.Close() }
func (l *kernelListener) Addr() net.Addr { return l.ln.Addr() }

func dialKernel(ctx context.Context, addr string) (Conn, error) {
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
	return newKernelConn(c)
}

type kernelConn struct {
	c       *sctp.SCTPConn
	wmu     sync.Mutex
	buf     []byte
	streams uint16
}

func newKernelConn(c *sctp.SCTPConn) (*kernelConn, error) {
	// Receive the stream of each message (sctp_sndrcvinfo).
	if err := c.SubscribeEvents(sctp.SCTP_EVENT_DATA_IO); err != nil {
		c.Close()
		return nil, fmt.Errorf("n2: subscribe events: %w", err)
	}
	streams := uint16(kernelStreams)
	if st, err := c.GetStatus(); err == nil && st.Ostreams > 0 {
		streams = st.Ostreams
	}
	return &kernelConn{c: c, buf: make([]byte, 64*1024), streams: streams}, nil
}

func (k *kernelConn) ReadMsg() ([]byte, uint16, error) {
	for {
		n, info, err := k.c.SCTPRead(k.buf)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			continue // a notification
		}
		stream := uint16(0)
		if info != nil {
			stream = info.Stream
		}
		return append([]byte(nil), k.buf[:n]...), stream, nil
	}
}

func (k *kernelConn) WriteMsg(pdu []byte, stream uint16) error {
	k.wmu.Lock()
	defer k.wmu.Unlock()
	_, err := k.c.SCTPWrite(pdu, &sctp.SndRcvInfo{Stream: stream, PPID: ppidNetworkOrder})
	return err
}

func (k *kernelConn) Close() error         { return k.c.Close() }
func (k *kernelConn) LocalAddr() net.Addr  { return k.c.LocalAddr() }
func (k *kernelConn) RemoteAddr() net.Addr { return k.c.RemoteAddr() }
func (k *kernelConn) Streams() uint16      { return k.streams }
