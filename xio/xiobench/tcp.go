package xiobench

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/l25gc/l25gc/xio/xiohttp"
)

// tcpH2C is HTTP/2 cleartext over the kernel, configured like package sbi's
// "tcp" transport, so the comparison is against what NFs use without X-IO.
type tcpH2C struct{}

func (tcpH2C) Name() string { return "tcp" }

func (tcpH2C) Serve(addr string, h http.Handler) (xiohttp.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &p, ReadHeaderTimeout: 10 * time.Second,
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000}}
	go srv.Serve(ln)
	return tcpServer{srv: srv, addr: addr}, nil
}

func (tcpH2C) RoundTripper() http.RoundTripper {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{Protocols: &p,
		DialContext:     (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		IdleConnTimeout: 90 * time.Second,
		HTTP2:           &http.HTTP2Config{MaxConcurrentStreams: 1000}}
}

type tcpServer struct {
	srv  *http.Server
	addr string
}

func (s tcpServer) Addr() string                       { return s.addr }
func (s tcpServer) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
