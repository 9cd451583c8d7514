package xiohttp

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/l25gc/l25gc/xio"
)

// internalPort numbers the X-IO addresses of this file's tests, apart from
// the external tests' range.
var internalPort atomic.Int32

func init() { internalPort.Store(33000) }

func internalAddr() string { return fmt.Sprintf("127.0.0.1:%d", internalPort.Add(1)) }

// serveInternal serves h at the message level at a fresh address.
func serveInternal(t *testing.T, h http.Handler) (string, *msgServer) {
	t.Helper()
	addr := internalAddr()
	ln, err := xio.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	s := serveMessages(ln, h)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return addr, s
}

// cancelOnResponse is a client conn that, once it has received a whole
// response frame, cancels the request's context and waits until the
// cancellation has reached the conn (a deadline in the past) before it
// hands the last bytes to the reader: a context that ends just as a
// successful exchange completes.
type cancelOnResponse struct {
	net.Conn
	cancel   context.CancelFunc
	deadline chan struct{}
	mu       sync.Mutex
	got      []byte
	armed    bool
}

func (c *cancelOnResponse) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	c.got = append(c.got, b[:n]...)
	fire := c.armed && len(c.got) >= 4 && len(c.got) >= 4+int(binary.LittleEndian.Uint32(c.got))
	if fire {
		c.armed = false
	}
	c.mu.Unlock()
	if fire {
		c.cancel()
		<-c.deadline
	}
	return n, err
}

func (c *cancelOnResponse) SetDeadline(t time.Time) error {
	err := c.Conn.SetDeadline(t)
	if !t.IsZero() && t.Before(time.Now()) {
		close(c.deadline)
	}
	return err
}

// A context that ends as its exchange succeeds leaves a deadline in the
// past on the conn; that conn must not serve the next, unrelated request.
func TestConnOfACancelledExchangeIsNotReused(t *testing.T) {
	addr, _ := serveInternal(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt := newRoundTripper()
	dials := 0
	rt.dial = func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := xio.DialContext(ctx, addr)
		dials++
		if err != nil || dials > 1 {
			return c, err
		}
		return &cancelOnResponse{Conn: c, cancel: cancel, deadline: make(chan struct{}), armed: true}, nil
	}
	defer rt.CloseIdleConnections()
	c := &http.Client{Transport: rt}

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
	}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("the request after a cancelled exchange: %v", err)
	}
	resp.Body.Close()
	if dials != 2 {
		t.Fatalf("%d dials, want 2 (the conn whose context ended is closed, not pooled)", dials)
	}
}
