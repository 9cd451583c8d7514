package amf

import (
	"context"
	"errors"
	"net"
	"testing"
)

// fakeListener hands out one fake association, like n2's listener would.
type fakeListener struct {
	conns chan *fakeConn
	done  chan struct{}
}

func (l *fakeListener) Accept() (*fakeConn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *fakeListener) Close() error { close(l.done); return nil }

func TestStartAcceptsAssociations(t *testing.T) {
	h := newHarness(t, nil)
	ln := &fakeListener{conns: make(chan *fakeConn, 1), done: make(chan struct{})}
	var gotTransport string
	h.amf.opts.Listen = AdaptListen(func(transport, addr string) (*fakeListener, string, error) {
		gotTransport = transport
		return ln, "udp", nil
	})
	if err := h.amf.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if gotTransport != h.cfg.AMF.NGAP.Transport {
		t.Fatalf("listened with %q, config says %q", gotTransport, h.cfg.AMF.NGAP.Transport)
	}
	c := newFakeConn()
	ln.conns <- c
	g := &gnbSide{t: t, h: h, conn: c}
	g.setup()
}

func TestStartWithoutTransportFails(t *testing.T) {
	h := newHarness(t, nil)
	h.amf.opts.Listen = func(string, string) (Listener, string, error) { return nil, "", errors.New("no SCTP") }
	if err := h.amf.Start(context.Background()); err == nil {
		t.Fatal("Start succeeded without a listener")
	}
}
