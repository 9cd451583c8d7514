// Package xiohttp carries SBI HTTP over X-IO at both levels, as
// sbi.Transports:
//
//   - "xio" (NewMessageTransport): each request and response is one
//     shared-memory message (method, path?query, host, headers, status,
//     body) delivered straight to an unchanged http.Handler; no HTTP/2
//     framing or HPACK.
//   - "xio-socket" (NewSocketTransport): the standard library's HTTP/2
//     (h2c, prior knowledge) over X-IO net.Conns.
//
// Addresses are the same strings as over TCP ("127.0.0.1:8000"): Serve binds
// the address in the onvm service table, and clients use http://addr/ URLs.
package xiohttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio"
)

// Server is a running endpoint: sbi.Server itself, so that both transports
// are sbi.Transports.
type Server = sbi.Server

// MessageTransport is the message level ("xio"), the SBI default.
type MessageTransport struct{ rt *msgRoundTripper }

// NewMessageTransport returns the message-level transport. The process
// attaches to the onvm manager on first use (xio.Init to choose it).
func NewMessageTransport() *MessageTransport {
	return &MessageTransport{rt: newRoundTripper()}
}

func (t *MessageTransport) Name() string                    { return "xio" }
func (t *MessageTransport) RoundTripper() http.RoundTripper { return t.rt }

// Serve binds addr and serves h there at the message level.
func (t *MessageTransport) Serve(addr string, h http.Handler) (Server, error) {
	ln, err := xio.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("xiohttp: serve %s: %w", addr, err)
	}
	return serveMessages(ln, h), nil
}

// SocketTransport is the socket level ("xio-socket"): HTTP/2 h2c over X-IO.
type SocketTransport struct{ rt *http.Transport }

// NewSocketTransport returns the socket-level transport.
func NewSocketTransport() *SocketTransport {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &SocketTransport{rt: &http.Transport{
		Protocols: &p,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return xio.DialContext(ctx, addr)
		},
		IdleConnTimeout: 90 * time.Second,
		HTTP2:           &http.HTTP2Config{MaxConcurrentStreams: 1000},
	}}
}

func (t *SocketTransport) Name() string                    { return "xio-socket" }
func (t *SocketTransport) RoundTripper() http.RoundTripper { return t.rt }

// Serve binds addr and runs a standard http.Server (h2c and HTTP/1.1) on it.
func (t *SocketTransport) Serve(addr string, h http.Handler) (Server, error) {
	ln, err := xio.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("xiohttp: serve %s: %w", addr, err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &p, ReadHeaderTimeout: 10 * time.Second,
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000}}
	go srv.Serve(ln)
	return &socketServer{srv: srv, addr: addr}, nil
}

type socketServer struct {
	srv  *http.Server
	addr string
}

func (s *socketServer) Addr() string                       { return s.addr }
func (s *socketServer) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Both levels are SBI transports.
var (
	_ sbi.Transport = (*MessageTransport)(nil)
	_ sbi.Transport = (*SocketTransport)(nil)
)
