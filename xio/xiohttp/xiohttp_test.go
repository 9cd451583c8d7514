package xiohttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xiohttp"
	"github.com/l25gc/l25gc/xio/xioproc"
)

func TestMain(m *testing.M) {
	if ok, code := xioproc.RunRole(map[string]func(context.Context) error{"server": serverRole, "node2": node2Role}); ok {
		os.Exit(code)
	}
	if fuzzWorker() { // runs only the fuzz targets: wire decoding, no shared memory
		os.Exit(m.Run())
	}
	mgr, err := xioproc.StartManager()
	if err != nil {
		fmt.Fprintln(os.Stderr, "xiohttp tests need root and hugepages:", err)
		os.Exit(1)
	}
	code := m.Run()
	mgr.Close()
	os.Exit(code)
}

// fuzzWorker says this process is one of the workers `go test -fuzz`
// starts (the coordinator runs TestMain in full).
func fuzzWorker() bool {
	flag.Parse()
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// transport is sbi.Transport (xiohttp.Server is sbi.Server).
type transport interface {
	Name() string
	Serve(addr string, h http.Handler) (xiohttp.Server, error)
	RoundTripper() http.RoundTripper
}

func transports() []transport {
	return []transport{sbi.NewTCP(), xiohttp.NewSocketTransport(), xiohttp.NewMessageTransport()}
}

// serverRole serves the test handler over $XIOHTTP_TRANSPORT at $XIOHTTP_ADDR
// in a separate NF process.
func serverRole(ctx context.Context) error {
	for _, tr := range transports() {
		if tr.Name() == os.Getenv("XIOHTTP_TRANSPORT") {
			srv, err := tr.Serve(os.Getenv("XIOHTTP_ADDR"), testHandler())
			if err != nil {
				return err
			}
			xioproc.Ready()
			<-ctx.Done()
			return srv.Shutdown(context.Background())
		}
	}
	return fmt.Errorf("no transport %q", os.Getenv("XIOHTTP_TRANSPORT"))
}

type echoed struct {
	Method, Path, Query, ID, Header, Body, Proto string
}

func testHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/nudm-sdm/v2/{id}/am-data", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/x/"+r.PathValue("id"))
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(echoed{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			ID: r.PathValue("id"), Header: r.Header.Get("X-Test"), Body: string(body)})
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("0123456789abcdef"), 1<<16))
	})
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("handler bug") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case slowStarted <- struct{}{}:
		default:
		}
		time.Sleep(50 * time.Millisecond)
		w.Write([]byte("done"))
	})
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		waitStarted <- struct{}{}
		select {
		case <-r.Context().Done():
			waitReleased <- struct{}{}
		case <-time.After(10 * time.Second):
		}
	})
	return mux
}

// waitStarted and waitReleased say a /wait handler began and that its
// request context ended.
var waitStarted, waitReleased = make(chan struct{}, 16), make(chan struct{}, 16)

var portSeq struct {
	sync.Mutex
	n int
}

func nextAddr() string {
	portSeq.Lock()
	defer portSeq.Unlock()
	portSeq.n++
	return fmt.Sprintf("127.0.0.1:%d", 31000+portSeq.n)
}

func serve(t *testing.T, tr transport) (string, xiohttp.Server) {
	t.Helper()
	addr := nextAddr()
	srv, err := tr.Serve(addr, testHandler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return addr, srv
}

func checkEcho(t *testing.T, c *http.Client, addr string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/nudm-sdm/v2/imsi-208930000000001/am-data?plmn-id=%7B%22mcc%22%3A%22208%22%7D&x=1",
		strings.NewReader(`{"supi":"imsi-208930000000001"}`))
	req.Header.Set("X-Test", "yes")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got echoed
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := echoed{Method: "POST", Path: "/nudm-sdm/v2/imsi-208930000000001/am-data",
		Query: "plmn-id=%7B%22mcc%22%3A%22208%22%7D&x=1", ID: "imsi-208930000000001", Header: "yes",
		Body: `{"supi":"imsi-208930000000001"}`}
	if resp.StatusCode != http.StatusCreated || got != want ||
		resp.Header.Get("Location") != "/x/imsi-208930000000001" ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Location %q, echoed %+v; want 201 and %+v", resp.StatusCode, resp.Header.Get("Location"), got, want)
	}
}

func TestHandlerOverEveryTransport(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.Name(), func(t *testing.T) {
			addr, _ := serve(t, tr)
			c := &http.Client{Transport: tr.RoundTripper()}
			checkEcho(t, c, addr)

			resp, err := c.Get("http://" + addr + "/big")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if len(body) != 1<<20 || !bytes.HasPrefix(body, []byte("0123456789abcdef0123")) {
				t.Fatalf("big body: %d bytes", len(body))
			}

			if resp, err := c.Get("http://" + addr + "/nothing"); err != nil || resp.StatusCode != 404 {
				t.Fatalf("unknown path: %v %v", resp, err)
			}
		})
	}
}

func TestConcurrentRequests(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.Name(), func(t *testing.T) {
			addr, _ := serve(t, tr)
			c := &http.Client{Transport: tr.RoundTripper()}
			var wg sync.WaitGroup
			for i := 0; i < 64; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					checkEcho(t, c, addr)
				}()
			}
			wg.Wait()
		})
	}
}

func TestPanickingHandlerIs500AndServerLives(t *testing.T) {
	tr := xiohttp.NewMessageTransport()
	addr, _ := serve(t, tr)
	c := &http.Client{Transport: tr.RoundTripper()}
	resp, err := c.Get("http://" + addr + "/panic")
	if err != nil || resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("panicking handler: %v %v, want 500", resp, err)
	}
	checkEcho(t, c, addr)
}

func TestNobodyServingIsRefused(t *testing.T) {
	for _, tr := range transports()[1:] {
		c := &http.Client{Transport: tr.RoundTripper()}
		if _, err := c.Get("http://" + nextAddr() + "/"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("%s to nobody: %v, want ECONNREFUSED", tr.Name(), err)
		}
	}
}

func TestShutdownWaitsForRequestsThenRefuses(t *testing.T) {
	tr := xiohttp.NewMessageTransport()
	addr, srv := serve(t, tr)
	c := &http.Client{Transport: tr.RoundTripper()}
	checkEcho(t, c, addr) // leaves an idle pooled conn
	done := make(chan string, 1)
	go func() {
		resp, err := c.Get("http://" + addr + "/slow")
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		done <- string(b)
	}()
	waitBusy(t, c, addr)
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != "done" {
		t.Fatalf("request in flight at shutdown: %q", got)
	}
	if _, err := c.Get("http://" + addr + "/big"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("after shutdown: %v, want ECONNREFUSED", err)
	}
}

// slowStarted says a /slow request reached its handler.
var slowStarted = make(chan struct{}, 16)

func waitBusy(t *testing.T, c *http.Client, addr string) { <-slowStarted }

func TestRequestContextCancels(t *testing.T) {
	tr := xiohttp.NewMessageTransport()
	addr, _ := serve(t, tr)
	c := &http.Client{Transport: tr.RoundTripper()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/slow", nil)
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("request past its context deadline: %v", err)
	}
	checkEcho(t, c, addr)
}

// A client that gives up ends the handler's context on every transport, so
// an NF stops the work (and its own SBI calls) nobody waits for any more.
func TestClientGivingUpEndsHandlerContext(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.Name(), func(t *testing.T) {
			addr, _ := serve(t, tr)
			c := &http.Client{Transport: tr.RoundTripper()}
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-waitStarted; cancel() }()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/wait", nil)
			if _, err := c.Do(req); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled request: %v, want context.Canceled", err)
			}
			select {
			case <-waitReleased:
			case <-time.After(5 * time.Second): // a bound on a hang, not a measurement
				t.Fatal("the handler's context is still live 5 s after its client gave up")
			}
			checkEcho(t, c, addr)
		})
	}
}

// The server is another NF process; killing it fails the client fast.
func TestServerInPeerProcessAndItsDeath(t *testing.T) {
	for _, tr := range transports()[1:] {
		t.Run(tr.Name(), func(t *testing.T) {
			addr := nextAddr()
			p, err := xioproc.Start("server", "XIOHTTP_TRANSPORT="+tr.Name(), "XIOHTTP_ADDR="+addr)
			if err != nil {
				t.Fatal(err)
			}
			c := &http.Client{Transport: tr.RoundTripper(), Timeout: 5 * time.Second}
			checkEcho(t, c, addr)
			p.Kill()
			start := time.Now()
			if _, err := c.Get("http://" + addr + "/big"); err == nil {
				t.Fatal("request to a killed server succeeded")
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("request to a killed server failed only after %v", d)
			}
		})
	}
}

func TestMalformedFrameGets400(t *testing.T) {
	addr, _ := serve(t, xiohttp.NewMessageTransport())
	c, err := xio.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{5, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	b := make([]byte, 512)
	n, _ := c.Read(b)
	if !bytes.Contains(b[:n], []byte("malformed")) || n < 7 || b[5] != 144 || b[6] != 1 {
		t.Fatalf("reply to a malformed frame: %q", b[:n])
	}
}
