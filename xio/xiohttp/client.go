package xiohttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/l25gc/l25gc/xio"
)

// maxIdlePerHost bounds the pooled idle conns kept per server address.
const maxIdlePerHost = 256

// msgRoundTripper carries each request as one frame on a pooled X-IO conn
// to the server whose address is the URL's host ("127.0.0.1:8000"), and
// reads the response as one frame. A conn carries one exchange at a time,
// so concurrency is the number of conns in use.
type msgRoundTripper struct {
	dial func(ctx context.Context, addr string) (net.Conn, error)
	mu   sync.Mutex
	idle map[string][]*clientConn
}

type clientConn struct {
	net.Conn
	r *bufio.Reader
	// cc is the conn when it reads and writes with a context (X-IO's
	// does): an exchange then waits on its request's context, and ctx is
	// the context of the exchange in progress (Background between them).
	cc  ctxConn
	rc  replyConn // the conn if it is one; the client reads only replies
	ctx context.Context
}

type ctxConn interface {
	ReadContext(ctx context.Context, b []byte) (int, error)
	WriteContext(ctx context.Context, b []byte) (int, error)
}

// replyConn is a conn whose reader may poll for the reply to the request
// it just wrote instead of waiting to be woken (X-IO's, xio/reply.go).
type replyConn interface {
	ReadReply(ctx context.Context, b []byte) (int, error)
}

func newClientConn(nc net.Conn) *clientConn {
	c := &clientConn{Conn: nc, ctx: context.Background()}
	c.cc, _ = nc.(ctxConn)
	c.rc, _ = nc.(replyConn)
	c.r = bufio.NewReaderSize(c, 16<<10)
	return c
}

// Read reads for the exchange in progress (through c.r).
func (c *clientConn) Read(b []byte) (int, error) {
	if c.rc != nil {
		return c.rc.ReadReply(c.ctx, b)
	}
	if c.cc != nil {
		return c.cc.ReadContext(c.ctx, b)
	}
	return c.Conn.Read(b)
}

func (c *clientConn) write(b []byte) (int, error) {
	if c.cc != nil {
		return c.cc.WriteContext(c.ctx, b)
	}
	return c.Conn.Write(b)
}

func newRoundTripper() *msgRoundTripper {
	return &msgRoundTripper{dial: xio.DialContext, idle: map[string][]*clientConn{}}
}

func (t *msgRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	e, err := newRequestFrame(req)
	if err != nil {
		return nil, err
	}
	defer e.release() // written (copied into shared memory) or given up
	frame := e.finish()
	ctx, host := req.Context(), req.URL.Host
	for fresh := false; ; fresh = true {
		c, err := t.get(ctx, host, fresh)
		if err != nil {
			return nil, err
		}
		wr, reusable, err := exchange(ctx, c, frame)
		if err == nil {
			if reusable {
				t.put(host, c)
			} else {
				c.Close()
			}
			return buildResponse(req, wr), nil
		}
		c.Close()
		// Send once more, on a fresh conn, only what the server provably
		// did not serve: none of it went out, or the server said goodbye
		// (it closed the conn without serving it, e.g. in Shutdown). An EOF
		// or reset after the request went out may follow a request the
		// server served before it died: like net/http, do not resend it.
		if fresh || ctx.Err() != nil || !unserved(err) {
			return nil, fmt.Errorf("xiohttp: %s %s: %w", req.Method, req.URL, err)
		}
		t.closeIdle(host) // the server is gone or going: its other conns too
	}
}

// errServerClosedIdle is the server's goodbye frame in place of a response.
var errServerClosedIdle = errors.New("server closed the connection without serving the request")

// notSentError is a write that failed before any byte of the request went out.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

func unserved(err error) bool {
	var ns *notSentError
	return errors.Is(err, errServerClosedIdle) || errors.As(err, &ns)
}

func requestFrame(req *http.Request) ([]byte, error) {
	e, err := newRequestFrame(req)
	if err != nil {
		return nil, err
	}
	return e.finish(), nil
}

// newRequestFrame encodes req into a recycled frame; its body goes
// straight into the frame, sized from ContentLength where known.
func newRequestFrame(req *http.Request) (*encoder, error) {
	if req.URL == nil || req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("xiohttp: request URL has no host")
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	uri := req.URL.RequestURI()
	e := newFrame(int(min(max(req.ContentLength, 0), maxBodyHint)) + len(uri) + len(host))
	e.str(methodOf(req))
	e.str(uri)
	e.str(host)
	e.header(req.Header)
	if req.Body == nil || req.Body == http.NoBody {
		e.bytes(nil)
		return e, nil
	}
	err := e.readBody(req.Body)
	req.Body.Close()
	if err != nil {
		e.release()
		return nil, fmt.Errorf("xiohttp: read request body: %w", err)
	}
	return e, nil
}

// maxBodyHint bounds the room a request's ContentLength reserves up front.
const maxBodyHint = 1 << 20

// closeBody closes a request body not sent, as a RoundTripper must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

func methodOf(req *http.Request) string {
	if req.Method == "" {
		return http.MethodGet
	}
	return req.Method
}

// get returns a pooled conn to host, or a new one if there is none or fresh.
func (t *msgRoundTripper) get(ctx context.Context, host string, fresh bool) (*clientConn, error) {
	if !fresh {
		t.mu.Lock()
		if q := t.idle[host]; len(q) > 0 {
			c := q[len(q)-1]
			t.idle[host] = q[:len(q)-1]
			t.mu.Unlock()
			return c, nil
		}
		t.mu.Unlock()
	}
	nc, err := t.dial(ctx, host)
	if err != nil {
		return nil, err
	}
	return newClientConn(nc), nil
}

func (t *msgRoundTripper) put(host string, c *clientConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle[host]) >= maxIdlePerHost {
		c.Close()
		return
	}
	t.idle[host] = append(t.idle[host], c)
}

// closeIdle closes the pooled conns to host.
func (t *msgRoundTripper) closeIdle(host string) {
	t.mu.Lock()
	q := t.idle[host]
	delete(t.idle, host)
	t.mu.Unlock()
	for _, c := range q {
		c.Close()
	}
}

// CloseIdleConnections closes pooled conns (http.Client calls it).
func (t *msgRoundTripper) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*clientConn{}
	t.mu.Unlock()
	for _, q := range idle {
		for _, c := range q {
			c.Close()
		}
	}
}

// exchange writes the request frame and reads the response frame; ctx's
// end interrupts both: an X-IO conn's reads and writes watch ctx, another
// conn's are cut by a deadline armed when ctx ends. reusable says the conn
// may serve another request: a deadline set by ctx's end stays on the conn
// (nothing clears it, and clearing it costs every request), so only a conn
// whose AfterFunc was stopped before it ran goes back to the pool, and
// none whose exchange ctx ended.
func exchange(ctx context.Context, c *clientConn, frame []byte) (wr *wireResponse, reusable bool, err error) {
	stop := noStop
	if c.cc != nil {
		c.ctx = ctx
		defer func() { c.ctx = context.Background() }()
	} else if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	}
	if n, err := c.write(frame); err != nil {
		stop()
		if n == 0 && ctx.Err() == nil {
			return nil, false, &notSentError{err}
		}
		return nil, false, ctxErr(ctx, err)
	}
	f, err := readPooledFrame(c.r)
	reusable = stop() && ctx.Err() == nil
	if err != nil {
		return nil, false, ctxErr(ctx, err)
	}
	if len(f.b) == 0 {
		f.release()
		return nil, false, errServerClosedIdle
	}
	if wr, err = decodeResponse(f.b); err != nil {
		f.release()
		return nil, false, err
	}
	wr.frame = f // the body's: released when the caller closes it
	return wr, reusable, nil
}

func noStop() bool { return true }

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func buildResponse(req *http.Request, wr *wireResponse) *http.Response {
	return &http.Response{
		Status:     statusLine(wr.status),
		StatusCode: wr.status, Proto: "HTTP/2.0", ProtoMajor: 2,
		Header: wr.header, Body: newBody(wr.body, wr.frame),
		ContentLength: int64(len(wr.body)), Request: req,
	}
}

// statusLines are the Status strings of the codes net/http names, built
// once rather than per response.
var statusLines = func() map[int]string {
	m := map[int]string{}
	for code := 100; code <= 599; code++ {
		if text := http.StatusText(code); text != "" {
			m[code] = strconv.Itoa(code) + " " + text
		}
	}
	return m
}()

func statusLine(code int) string {
	if s, ok := statusLines[code]; ok {
		return s
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
}
