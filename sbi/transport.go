// Package sbi is the service-based interface plumbing that every NF of L25GC+
// shares: the transport seam (TCP h2c here, X-IO in package xio), the server
// middleware (metrics, panic containment), ProblemDetails (TS 29.500 5.2.7),
// the JSON client, and the NRF client with its discovery cache (TS 29.510).
// NF handlers are plain net/http: they never know which transport carries them.
package sbi

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Transport carries SBI HTTP exchanges between NFs. "tcp" is HTTP/2 cleartext
// over the kernel; the X-IO transports ("xio", "xio-socket") carry the same
// requests over shared memory.
type Transport interface {
	Name() string
	// Serve starts serving h at addr and returns once it accepts requests.
	Serve(addr string, h http.Handler) (Server, error)
	// RoundTripper reaches servers started by Serve of the same transport.
	RoundTripper() http.RoundTripper
}

// Server is a running SBI endpoint.
type Server interface {
	Addr() string
	Shutdown(ctx context.Context) error
}

// TCP is HTTP/2 with prior knowledge over cleartext TCP (h2c), the transport
// TS 29.500 5.2 allows inside a trusted node and the one other cores speak.
type TCP struct {
	rt        *http.Transport
	serverTLS *tls.Config // nil: h2c (NewTCPTLS sets it, tls.go)
}

// NewTCP returns the kernel transport.
func NewTCP() *TCP {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &TCP{rt: &http.Transport{
		Protocols:       &p,
		DialContext:     (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		IdleConnTimeout: 90 * time.Second,
		HTTP2:           &http.HTTP2Config{MaxConcurrentStreams: 1000},
	}}
}

func (t *TCP) Name() string                    { return "tcp" }
func (t *TCP) RoundTripper() http.RoundTripper { return t.rt }

// Serve listens on addr and serves both h2c and HTTP/1.1 (for curl and tools).
func (t *TCP) Serve(addr string, h http.Handler) (Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sbi listen %s: %w", addr, err)
	}
	if t.serverTLS != nil {
		return serveTLS(ln, h, t.serverTLS), nil
	}
	return ServeListener(ln, h), nil
}

// ServeListener serves h2c and HTTP/1.1 on an existing listener. X-IO's socket
// level reuses it with its own net.Listener.
func ServeListener(ln net.Listener, h http.Handler) Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv := newHTTPServer(h, &p, nil)
	go func() {
		// The listener failed under us, or Shutdown: nothing more to report.
		_ = srv.Serve(ln)
	}()
	return &httpServer{srv: srv, addr: ln.Addr().String()}
}

// serveTLS serves HTTP/2 over TLS (ALPN h2) and HTTP/1.1 on ln.
func serveTLS(ln net.Listener, h http.Handler, cfg *tls.Config) Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	srv := newHTTPServer(h, &p, cfg)
	go func() {
		// ServeTLS adds h2 to the ALPN protocols of a clone of TLSConfig.
		_ = srv.ServeTLS(ln, "", "")
	}()
	return &httpServer{srv: srv, addr: ln.Addr().String()}
}

// newHTTPServer is the one SBI server configuration, with or without TLS.
func newHTTPServer(h http.Handler, p *http.Protocols, cfg *tls.Config) *http.Server {
	return &http.Server{
		Handler:           h,
		Protocols:         p,
		TLSConfig:         cfg,
		ReadHeaderTimeout: 10 * time.Second,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: 1000},
	}
}

type httpServer struct {
	srv  *http.Server
	addr string
}

func (s *httpServer) Addr() string                       { return s.addr }
func (s *httpServer) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
