package xiohttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// msgServer serves an unchanged http.Handler at the message level: each
// request frame becomes an *http.Request, the handler's buffered response
// goes back as one response frame.
type msgServer struct {
	ln   net.Listener
	h    http.Handler
	addr string

	closing atomic.Bool
	mu      sync.Mutex
	// conns are the conns the server may serve: conn -> busy (serving a
	// request). Shutdown takes idle ones out; a conn not in the map is
	// never served again, so a request frame read on it just before is
	// dropped, and the client told so (goodbye).
	conns map[net.Conn]bool
	wg    sync.WaitGroup
	idle  chan struct{} // signalled when a request finishes
}

func serveMessages(ln net.Listener, h http.Handler) *msgServer {
	s := &msgServer{ln: ln, h: h, addr: ln.Addr().String(),
		conns: map[net.Conn]bool{}, idle: make(chan struct{}, 1)}
	go s.acceptLoop()
	return s
}

func (s *msgServer) Addr() string { return s.addr }

func (s *msgServer) acceptLoop() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if !s.track(c) {
			goodbye(c)
			return
		}
		go s.serveConn(c)
	}
}

func (s *msgServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.conns[c] = false
	s.wg.Add(1)
	return true
}

// setBusy marks c as serving the request just read; false if Shutdown
// took c out, and the request must not be served.
func (s *msgServer) setBusy(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return false
	}
	s.conns[c] = true
	return true
}

// setIdle marks c as waiting for its next request; false (and c no longer
// the server's) once the server is shutting down.
func (s *msgServer) setIdle(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.idle <- struct{}{}:
	default:
	}
	if s.closing.Load() {
		delete(s.conns, c)
		return false
	}
	s.conns[c] = false
	return true
}

// release takes c out of the server's conns and closes it, unless
// Shutdown took it out first (and closes it itself).
func (s *msgServer) release(c net.Conn) {
	s.mu.Lock()
	_, owned := s.conns[c]
	delete(s.conns, c)
	s.mu.Unlock()
	if owned {
		c.Close()
	}
}

// goodbyeFrame is an empty frame: the server closes the conn and has not
// served, and will not serve, anything the client sent after its last
// response. A request frame is never empty (it starts with the version),
// so the client knows it may send the request again (see RoundTrip).
var goodbyeFrame [4]byte

// goodbyeTimeout bounds the goodbye to a client that no longer reads.
const goodbyeTimeout = 100 * time.Millisecond

// goodbye closes c, a conn the server no longer serves, with the empty frame.
func goodbye(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(goodbyeTimeout))
	c.Write(goodbyeFrame[:])
	c.Close()
}

func (s *msgServer) serveConn(c net.Conn) {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A client that gives up closes its conn: end the context of the
	// handler serving it, so the handler's own SBI calls are cancelled too.
	if pc, ok := c.(interface{ PeerGone() <-chan struct{} }); ok {
		go func() {
			select {
			case <-pc.PeerGone():
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	r := bufio.NewReaderSize(c, 16<<10)
	remote := c.RemoteAddr().String()
	for {
		frame, err := readPooledFrame(r)
		if err != nil {
			s.release(c)
			return
		}
		if !s.setBusy(c) {
			frame.release()
			return // Shutdown took c out and says goodbye: the frame is not served
		}
		out := s.exchange(ctx, remote, frame)
		_, err = c.Write(out.finish())
		out.release() // copied into shared memory by Write
		if err != nil {
			s.release(c)
			return
		}
		if !s.setIdle(c) {
			goodbye(c) // shutting down: a request sent after this response is not served
			return
		}
	}
}

// exchange turns one request frame into one response frame (to finish,
// send and release), and hands the request frame back once the handler
// has returned. A malformed frame gets 400; a panicking handler gets 500
// and leaves the server up.
func (s *msgServer) exchange(ctx context.Context, remote string, frame *inFrame) *encoder {
	wr, err := decodeRequest(frame.b)
	if err != nil {
		frame.release()
		return plainResponse(http.StatusBadRequest, err.Error())
	}
	req, err := buildRequest(ctx, wr, remote, frame)
	if err != nil {
		return plainResponse(http.StatusBadRequest, err.Error())
	}
	// The handler's body reads end here (also if it handed the body to a
	// goroutine of its own): the frame is the next request's.
	if b, ok := req.Body.(*body); ok {
		defer b.Close()
	}
	w := newResponseWriter()
	defer w.release()
	if !s.serveHTTP(w, req) {
		return plainResponse(http.StatusInternalServerError, "internal server error")
	}
	wr2 := w.finish()
	e := newFrame(len(wr2.body))
	appendResponse(e, wr2)
	return e
}

func (s *msgServer) serveHTTP(w *responseWriter, req *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				log.Printf("xiohttp: panic serving %s %s: %v\n%s", req.Method, req.URL, p, debug.Stack())
			}
			ok = false
		}
	}()
	s.h.ServeHTTP(w, req)
	return true
}

// buildRequest makes the handler's request of wr, whose body lies in
// frame; the frame is released here unless the request's body holds it.
func buildRequest(ctx context.Context, wr *wireRequest, remote string, frame *inFrame) (*http.Request, error) {
	u, err := url.ParseRequestURI(wr.uri)
	if err != nil {
		frame.release()
		return nil, fmt.Errorf("xiohttp: bad request URI %q: %w", wr.uri, err)
	}
	if wr.method == "" {
		frame.release()
		return nil, fmt.Errorf("xiohttp: request without a method")
	}
	req := (&http.Request{
		Method: wr.method, URL: u, RequestURI: wr.uri, Host: wr.host,
		Proto: "HTTP/2.0", ProtoMajor: 2, Header: wr.header,
		ContentLength: int64(len(wr.body)), RemoteAddr: remote, Body: http.NoBody,
	}).WithContext(ctx)
	if len(wr.body) > 0 {
		req.Body = newBody(wr.body, frame)
	} else {
		frame.release()
	}
	return req, nil
}

func plainResponse(status int, msg string) *encoder {
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	e := newFrame(len(msg) + 1)
	appendResponse(e, &wireResponse{status: status, header: h, body: []byte(msg + "\n")})
	return e
}

// responseWriter buffers the handler's response: the message level sends
// each response as one message. Its body buffer is recycled once the
// response is encoded; a handler that writes after it returned (which
// net/http forbids too) gets an error, never another response's buffer.
type responseWriter struct {
	header http.Header
	status int
	body   *bytes.Buffer
	done   bool
}

// bodyPool recycles response body buffers.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func newResponseWriter() *responseWriter {
	b := bodyPool.Get().(*bytes.Buffer)
	b.Reset()
	return &responseWriter{header: http.Header{}, body: b}
}

// release recycles the body buffer; the frame holds a copy of it.
func (w *responseWriter) release() {
	w.done = true
	if b := w.body; b != nil && b.Cap() <= maxPooled {
		w.body = nil
		bodyPool.Put(b)
	}
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 100 && code <= 999 {
		w.status = code
	}
}

// errHandlerDone is a Write after the handler returned.
var errHandlerDone = errors.New("xiohttp: write after the handler returned")

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errHandlerDone
	}
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush is accepted and ignored: the response goes out when the handler returns.
func (w *responseWriter) Flush() {}

func (w *responseWriter) finish() *wireResponse {
	w.WriteHeader(http.StatusOK)
	if w.body.Len() > 0 && w.header.Get("Content-Type") == "" {
		w.header.Set("Content-Type", http.DetectContentType(w.body.Bytes()))
	}
	return &wireResponse{status: w.status, header: w.header, body: w.body.Bytes()}
}

// Shutdown stops accepting, closes idle conns, and waits for requests in
// progress to finish (or ctx to end).
func (s *msgServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	s.mu.Unlock()
	s.ln.Close()
	for {
		if s.closeIdle() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.idle:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// closeIdle takes the conns not serving a request out of the server's (so
// a request frame read on one of them is never served), says goodbye on
// them, and returns how many conns are still serving.
func (s *msgServer) closeIdle() int {
	s.mu.Lock()
	busy := 0
	var idle []net.Conn
	for c, b := range s.conns {
		if b {
			busy++
			continue
		}
		idle = append(idle, c)
		delete(s.conns, c)
	}
	s.mu.Unlock()
	for _, c := range idle {
		goodbye(c)
	}
	return busy
}
