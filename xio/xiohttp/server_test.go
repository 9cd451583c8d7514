package xiohttp

import (
	"bufio"
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/l25gc/l25gc/xio"
)

// holdListener hands out conns that stop after their second request frame
// has been read in full: they tell read, and hand the frame's last bytes to
// the server only once release is closed. The server then has the request
// but has not begun to serve it.
type holdListener struct {
	net.Listener
	read, release chan struct{}
}

func (l *holdListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &holdConn{Conn: c, l: l}, nil
}

type holdConn struct {
	net.Conn
	l      *holdListener
	got    []byte
	frames int
}

func (c *holdConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.got = append(c.got, b[:n]...)
	for len(c.got) >= 4 && len(c.got) >= 4+int(binary.LittleEndian.Uint32(c.got)) {
		c.got = c.got[4+int(binary.LittleEndian.Uint32(c.got)):]
		if c.frames++; c.frames == 2 {
			close(c.l.read)
			<-c.l.release
		}
	}
	return n, err
}

// A Shutdown that meets a conn whose request frame is read but not yet
// being served must not let that request run twice: once there, and once
// more where the client sends it again (here a new server at the same
// address, as after a restart or the hybrid's TCP).
func TestShutdownNeverRunsARequestTwice(t *testing.T) {
	var runs atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			runs.Add(1)
		}
		w.WriteHeader(http.StatusCreated)
	})
	addr := internalAddr()
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	hl := &holdListener{Listener: ln, read: make(chan struct{}), release: make(chan struct{})}
	first := serveMessages(hl, h)

	rt := newRoundTripper()
	defer rt.CloseIdleConnections()
	restarted := make(chan struct{})
	dials := 0
	rt.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		if dials++; dials > 1 {
			<-restarted // a second attempt reaches the new server
		}
		return xio.DialContext(ctx, addr)
	}
	c := &http.Client{Transport: rt}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // the conn is pooled

	posted := make(chan error, 1)
	go func() {
		resp, err := c.Post("http://"+addr+"/things", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
		}
		posted <- err
	}()
	<-hl.read
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, second := serveAt(t, addr, h)
	defer second.Shutdown(context.Background())
	close(restarted)
	close(hl.release)
	if err := <-posted; err != nil {
		t.Fatalf("POST: %v", err)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the POST ran %d times", n)
	}
}

func serveAt(t *testing.T, addr string, h http.Handler) (string, *msgServer) {
	t.Helper()
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	return addr, serveMessages(ln, h)
}

// A server that reads a request and then goes away without answering may
// have served it (it died in the handler): the client reports the failure
// and does not send the request again, as net/http does not resend a
// request it has written.
func TestRequestTheServerMayHaveServedIsNotResent(t *testing.T) {
	addr := internalAddr()
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var frames atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := readFrame(r); err != nil {
						return
					}
					if frames.Add(1) == 2 {
						return // the second request: gone without an answer
					}
					c.Write(plainResponse(http.StatusOK, "ok").finish())
				}
			}()
		}
	}()
	rt := newRoundTripper()
	defer rt.CloseIdleConnections()
	c := &http.Client{Transport: rt}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := c.Post("http://"+addr+"/things", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Fatal("a request the server dropped succeeded")
	}
	if n := frames.Load(); n != 2 {
		t.Fatalf("the server got %d requests, want 2 (the dropped one not resent)", n)
	}
}
