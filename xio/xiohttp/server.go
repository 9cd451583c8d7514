package xiohttp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
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
	conns   map[net.Conn]bool // conn -> busy (serving a request)
	wg      sync.WaitGroup
	idle    chan struct{} // signalled when a request finishes
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
			c.Close()
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

func (s *msgServer) setBusy(c net.Conn, busy bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !busy {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
	if s.closing.Load() && !busy {
		return false
	}
	s.conns[c] = busy
	return true
}

func (s *msgServer) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer s.untrack(c)
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
	for {
		frame, err := readFrame(r)
		if err != nil || !s.setBusy(c, true) {
			return
		}
		out := s.exchange(ctx, c, frame)
		_, werr := c.Write(out)
		if !s.setBusy(c, false) || werr != nil {
			return
		}
	}
}

func (s *msgServer) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// exchange turns one request frame into one response frame. A malformed
// frame gets 400; a panicking handler gets 500 and leaves the server up.
func (s *msgServer) exchange(ctx context.Context, c net.Conn, frame []byte) []byte {
	wr, err := decodeRequest(frame)
	if err != nil {
		return plainResponse(http.StatusBadRequest, err.Error())
	}
	req, err := buildRequest(ctx, wr, c.RemoteAddr().String())
	if err != nil {
		return plainResponse(http.StatusBadRequest, err.Error())
	}
	w := &responseWriter{header: http.Header{}}
	if !s.serveHTTP(w, req) {
		return plainResponse(http.StatusInternalServerError, "internal server error")
	}
	return encodeResponse(w.finish())
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

func buildRequest(ctx context.Context, wr *wireRequest, remote string) (*http.Request, error) {
	u, err := url.ParseRequestURI(wr.uri)
	if err != nil {
		return nil, fmt.Errorf("xiohttp: bad request URI %q: %w", wr.uri, err)
	}
	if wr.method == "" {
		return nil, fmt.Errorf("xiohttp: request without a method")
	}
	req := (&http.Request{
		Method: wr.method, URL: u, RequestURI: wr.uri, Host: wr.host,
		Proto: "HTTP/2.0", ProtoMajor: 2, Header: wr.header,
		ContentLength: int64(len(wr.body)), RemoteAddr: remote, Body: http.NoBody,
	}).WithContext(ctx)
	if len(wr.body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(wr.body))
	}
	return req, nil
}

func plainResponse(status int, msg string) []byte {
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	return encodeResponse(&wireResponse{status: status, header: h, body: []byte(msg + "\n")})
}

// responseWriter buffers the handler's response: the message level sends
// each response as one message.
type responseWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 100 && code <= 999 {
		w.status = code
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
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

// closeIdle closes conns not serving a request and returns how many remain.
func (s *msgServer) closeIdle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	busy := 0
	for c, b := range s.conns {
		if b {
			busy++
			continue
		}
		c.Close()
	}
	return busy
}
