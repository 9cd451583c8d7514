// Package sbitest runs SBI handler tests over every SBI transport: TCP h2c
// (sbi.NewTCP), X-IO at the socket level (HTTP/2 over X-IO conns) and X-IO
// at the message level. NF code never knows which transport carries it, so
// the same test must pass over all three; a transport bug then shows up as
// a failing NF test (issue 3, "SBI over X-IO").
//
// A package using it calls Main from its TestMain: the X-IO transports need
// the onvm manager, which Main starts for the package's tests.
package sbitest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xiohttp"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// Main is the TestMain of a package whose tests use Run: a child process
// re-executed by xioproc becomes its role (the onvm manager); otherwise the
// manager starts, the tests run, and the manager stops. Without the manager
// the X-IO subtests could not run, and skipping them would hide exactly
// the bugs these tests exist to find, so Main fails the package instead.
func Main(m *testing.M) {
	if ok, code := xioproc.RunRole(nil); ok {
		os.Exit(code)
	}
	skipRaceExitSleep()
	mgr, err := xioproc.StartManager()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sbitest: the X-IO transports need the onvm manager, which needs root and hugepages:", err)
		os.Exit(1)
	}
	// Attach now, once: a failure is then one clear message, not a
	// failure in every X-IO subtest.
	if err := xio.Init(xio.Config{}); err != nil {
		mgr.Close()
		fmt.Fprintln(os.Stderr, "sbitest: attach to the onvm manager:", err)
		os.Exit(1)
	}
	before, _, _ := xio.PoolInUse()
	code := m.Run()
	if err := buffersReturned(before); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "sbitest:", err)
		code = 1
	}
	if err := mgr.Close(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "sbitest: onvm manager:", err)
		code = 1
	}
	os.Exit(code)
}

// skipRaceExitSleep spares the manager child, this same binary built with
// -race, the race runtime's 1 s sleep at exit (GORACE atexit_sleep_ms),
// which every package would otherwise wait through once more at the end.
// The variable is read at process start, so this process keeps its own.
func skipRaceExitSleep() {
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

// buffersReturned checks that the tests gave back every shared-memory
// buffer they took: with all servers shut down and clients closed, the
// pool's in-use count returns to what it was before them. Connection
// tear-down is asynchronous (the manager and the pollers still move the
// last messages), so it gets a moment.
func buffersReturned(before uint64) error {
	var inUse uint64
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if inUse, _, err = xio.PoolInUse(); err != nil {
			return err
		}
		if inUse <= before {
			return nil
		}
	}
	return fmt.Errorf("X-IO buffers leaked: %d in use after the tests, %d before", inUse, before)
}

// Transports returns fresh instances of the three SBI transports, so that
// no pooled connection is shared between tests.
func Transports() []sbi.Transport {
	return []sbi.Transport{sbi.NewTCP(), xiohttp.NewSocketTransport(), xiohttp.NewMessageTransport()}
}

// Run runs test once per transport, as a subtest named after it.
func Run(t *testing.T, test func(t *testing.T, tr sbi.Transport)) {
	t.Helper()
	for _, tr := range Transports() {
		t.Run(tr.Name(), func(t *testing.T) {
			t.Cleanup(func() { closeIdle(tr) })
			test(t, tr)
		})
	}
}

func closeIdle(tr sbi.Transport) {
	if c, ok := tr.RoundTripper().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Serve serves h, wrapped in sbi.Handler as nf.Run serves an NF, at a fresh
// address over tr, and returns its base URL ("http://127.0.0.1:port"). The
// server shuts down at the end of the test; a shutdown that hangs (a
// handler or a connection that never finishes) fails the test.
func Serve(t testing.TB, tr sbi.Transport, h http.Handler) string {
	t.Helper()
	srv, err := tr.Serve(freshAddr(tr), sbi.Handler(h, nil, logging.Discard()))
	if err != nil {
		t.Fatalf("serve over %s: %v", tr.Name(), err)
	}
	t.Cleanup(func() {
		// Clients first: an HTTP/2 server's graceful shutdown otherwise
		// waits up to a second for each client conn to leave after GOAWAY.
		closeIdle(tr)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown of the %s server at %s: %v", tr.Name(), srv.Addr(), err)
		}
	})
	return "http://" + srv.Addr()
}

// xioPort numbers X-IO addresses. They live in the service table of this
// process's own onvm manager, not in the kernel, so a counter cannot collide
// with other processes.
var xioPort atomic.Int32

func init() { xioPort.Store(40000) }

// freshAddr is an address nobody serves yet: the kernel picks a free port
// for TCP; X-IO addresses are bound in the manager's table.
func freshAddr(tr sbi.Transport) string {
	if tr.Name() == "tcp" {
		return "127.0.0.1:0"
	}
	return fmt.Sprintf("127.0.0.1:%d", xioPort.Add(1))
}

// Unserved returns the base URL of an address nobody serves over tr, for
// tests of a peer that is registered but gone: over TCP a port the kernel
// just handed out and took back, over X-IO an address never bound.
func Unserved(t testing.TB, tr sbi.Transport) string {
	t.Helper()
	if tr.Name() != "tcp" {
		return "http://" + freshAddr(tr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// Client is an SBI client over tr, as nf.NewEnv builds one.
func Client(tr sbi.Transport) *sbi.Client { return sbi.NewClient(tr.RoundTripper(), nil) }

// HTTPClient is a plain HTTP client over tr, for tests that need raw
// status codes and headers.
func HTTPClient(tr sbi.Transport) *http.Client {
	return &http.Client{Transport: tr.RoundTripper(), Timeout: 10 * time.Second}
}
