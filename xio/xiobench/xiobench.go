// Package xiobench measures an SBI request + response (a 1 KB JSON body
// echoed by a trivial handler) between two processes over each transport:
// "xio" (message level), "xio-socket" (h2c over X-IO) and "tcp" (h2c over
// the kernel). It is a command (l25gc bench sbi), not a test.
//
// The benchmark starts its own onvm manager and one server process per
// transport by re-executing the current binary, so that binary must call
// RunChildRole first thing in main.
package xiobench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/xio/xiohttp"
	"github.com/l25gc/l25gc/xio/xioproc"
)

const (
	roleServer   = "xiobench-server"
	envTransport = "L25GC_XIOBENCH_TRANSPORT"
	envAddr      = "L25GC_XIOBENCH_ADDR"
	benchPath    = "/nbench/v1/echo"
)

// Latency is in milliseconds, as in DESIGN.md's result objects.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Result is one (transport, concurrency) point, shaped like DESIGN.md's
// benchmark result objects with procedure "sbi".
type Result struct {
	Procedure   string  `json:"procedure"`
	SBI         string  `json:"sbi"`
	UEs         int     `json:"ues"`
	Concurrency int     `json:"concurrency"`
	Succeeded   int     `json:"succeeded"`
	Failed      int     `json:"failed"`
	LatencyMS   Latency `json:"latency_ms"`
	Throughput  float64 `json:"throughput_per_s"`
	// CPU time and context switches per request of the client and the
	// server process together (all their threads).
	CPUMicrosPerReq float64 `json:"cpu_us_per_req"`
	SwitchesPerReq  float64 `json:"ctx_switches_per_req"`
	// The switches split by side: the client's (the bench process) and
	// the server's. A round trip with both pollers asleep needs one
	// wake-up per side; each further switch is a hand-off between
	// threads (poller to handler, Go's scheduler waking an idle P).
	ClientSwitchesPerReq float64 `json:"client_ctx_switches_per_req"`
	ServerSwitchesPerReq float64 `json:"server_ctx_switches_per_req"`
	// GapMS is the pause before each request (Options.Gap), if any.
	GapMS float64 `json:"gap_ms,omitempty"`
}

// Options tune a run; zero values take defaults.
type Options struct {
	Transports  []string // default xio, xio-socket, tcp
	Concurrency []int    // default 1, 32
	Requests    int      // measured requests per point; default 5000
	Warmup      int      // unmeasured requests first; default 500
	// Gap is a pause each worker takes before every request, not
	// counted in its latency. Calls inside a procedure come milliseconds
	// apart, so both sides' pollers are asleep when one comes: with a gap
	// of a millisecond or more the benchmark measures that cost, where
	// back-to-back requests find the pollers spinning.
	Gap time.Duration
}

func (o Options) withDefaults() Options {
	if len(o.Transports) == 0 {
		o.Transports = []string{"xio", "xio-socket", "tcp"}
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{1, 32}
	}
	if o.Requests == 0 {
		o.Requests = 5000
	}
	if o.Warmup == 0 {
		o.Warmup = 500
	}
	return o
}

// RunChildRole makes a re-executed benchmark child (the onvm manager or a
// server) do its job; it returns false in the parent. Call it first in main:
//
//	if ok, code := xiobench.RunChildRole(); ok { os.Exit(code) }
func RunChildRole() (bool, int) {
	roles := map[string]func(context.Context) error{roleServer: serverRole}
	for k, v := range extraRoles {
		roles[k] = v
	}
	return xioproc.RunRole(roles)
}

// extraRoles lets this package's tests add child roles.
var extraRoles = map[string]func(context.Context) error{}

// RunSBIBench runs every transport at every concurrency with default
// request counts.
func RunSBIBench(transports []string, conc []int) ([]Result, error) {
	return Run(Options{Transports: transports, Concurrency: conc})
}

// Run starts a manager, then per transport a server process, and measures.
func Run(o Options) ([]Result, error) {
	o = o.withDefaults()
	for _, name := range o.Transports {
		if _, err := transportByName(name); err != nil {
			return nil, err
		}
	}
	if err := startManager(); err != nil {
		return nil, err
	}
	var out []Result
	for _, name := range o.Transports {
		rs, err := runTransport(name, o)
		if err != nil {
			return out, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// The process attaches to one manager for its life (EAL initialises once),
// so every Run shares the manager the first one started.
var mgr struct {
	sync.Mutex
	m   *xioproc.Manager
	err error
}

func startManager() error {
	mgr.Lock()
	defer mgr.Unlock()
	if mgr.m == nil && mgr.err == nil {
		mgr.m, mgr.err = xioproc.StartManager()
		if mgr.err != nil {
			mgr.err = fmt.Errorf("xiobench: start onvm manager: %w", mgr.err)
		}
	}
	return mgr.err
}

// Close stops the manager Run started (it also exits with this process).
func Close() {
	mgr.Lock()
	defer mgr.Unlock()
	if mgr.m != nil {
		mgr.m.Close()
	}
}

func runTransport(name string, o Options) ([]Result, error) {
	tr, _ := transportByName(name)
	addr, err := benchAddr(name)
	if err != nil {
		return nil, err
	}
	srv, err := xioproc.Start(roleServer, envTransport+"="+name, envAddr+"="+addr)
	if err != nil {
		return nil, fmt.Errorf("xiobench: start %s server: %w", name, err)
	}
	defer srv.Stop()
	client := &http.Client{Transport: tr.RoundTripper(), Timeout: 10 * time.Second}
	url := "http://" + addr + benchPath
	var out []Result
	for _, c := range o.Concurrency {
		load(client, url, c, o.Warmup, o.Gap)
		out = append(out, measure(client, url, name, c, o.Requests, o.Gap, srv.Cmd.Process.Pid))
	}
	return out, nil
}

// benchAddr picks the server address: a free kernel port for tcp, a fixed
// name for X-IO (the manager is private to this run).
func benchAddr(name string) (string, error) {
	if name != "tcp" {
		return "127.0.0.1:18000", nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func serverRole(ctx context.Context) error {
	tr, err := transportByName(os.Getenv(envTransport))
	if err != nil {
		return err
	}
	srv, err := tr.Serve(os.Getenv(envAddr), echoHandler())
	if err != nil {
		return err
	}
	xioproc.Ready()
	<-ctx.Done()
	return srv.Shutdown(context.Background())
}

func echoHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+benchPath, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	return mux
}

// Body is the 1 KB JSON document every request carries.
var Body = func() []byte {
	head := `{"supi":"imsi-208930000000001","servingNetworkName":"5G:mnc093.mcc208.3gppnetwork.org","pad":"`
	return []byte(head + strings.Repeat("x", 1024-len(head)-2) + `"}`)
}()

func do(c *http.Client, url string) error {
	resp, err := c.Post(url, "application/json", bytes.NewReader(Body))
	if err != nil {
		return err
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, Body) {
		return fmt.Errorf("status %d, %d bytes back", resp.StatusCode, len(got))
	}
	return nil
}

// load runs n requests over conc workers, each pausing gap before every
// request, and returns per-request latencies (failed ones excluded), the
// failure count and the wall time.
func load(c *http.Client, url string, conc, n int, gap time.Duration) ([]time.Duration, int, time.Duration) {
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	failed := 0
	next := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		next <- struct{}{}
	}
	close(next)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				if gap > 0 {
					time.Sleep(gap)
				}
				t0 := time.Now()
				err := do(c, url)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					if failed == 0 {
						fmt.Fprintf(os.Stderr, "xiobench: first failure: %v\n", err)
					}
					failed++
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat, failed, time.Since(start)
}

func measure(c *http.Client, url, name string, conc, n int, gap time.Duration, server int) Result {
	clientBefore, serverBefore := costOf(os.Getpid()), costOf(server)
	lat, failed, wall := load(c, url, conc, n, gap)
	client, srv := costOf(os.Getpid()).sub(clientBefore), costOf(server).sub(serverBefore)
	cost := client.add(srv)
	r := Result{Procedure: "sbi", SBI: name, Concurrency: conc, Succeeded: len(lat), Failed: failed,
		LatencyMS: summarize(lat), Throughput: float64(len(lat)) / wall.Seconds(),
		GapMS: float64(gap.Microseconds()) / 1e3}
	if n > 0 {
		r.CPUMicrosPerReq = float64(cost.cpuNS) / 1e3 / float64(n)
		r.SwitchesPerReq = float64(cost.switches) / float64(n)
		r.ClientSwitchesPerReq = float64(client.switches) / float64(n)
		r.ServerSwitchesPerReq = float64(srv.switches) / float64(n)
	}
	return r
}

func summarize(lat []time.Duration) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	pct := func(p float64) float64 { return ms(lat[int(p*float64(len(lat)-1))]) }
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	return Latency{Mean: ms(sum / time.Duration(len(lat))), P50: pct(0.50), P90: pct(0.90),
		P99: pct(0.99), Max: ms(lat[len(lat)-1])}
}

// Table formats results for people: one line per point, with each
// transport's p50 ratio to tcp at the same concurrency.
func Table(rs []Result) string {
	tcp := map[int]float64{}
	for _, r := range rs {
		if r.SBI == "tcp" {
			tcp[r.Concurrency] = r.LatencyMS.P50
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %5s %10s %10s %10s %10s %8s %8s %11s %8s %s\n", "transport", "conc", "p50 µs", "p99 µs", "mean µs", "req/s", "cpu µs", "cs/req", "cs cli+srv", "failed", "tcp/p50")
	for _, r := range rs {
		ratio := "-"
		if t, ok := tcp[r.Concurrency]; ok && r.LatencyMS.P50 > 0 {
			ratio = fmt.Sprintf("%.1fx", t/r.LatencyMS.P50)
		}
		split := fmt.Sprintf("%.2f+%.2f", r.ClientSwitchesPerReq, r.ServerSwitchesPerReq)
		fmt.Fprintf(&b, "%-11s %5d %10.1f %10.1f %10.1f %10.0f %8.1f %8.2f %11s %8d %s\n", r.SBI, r.Concurrency,
			r.LatencyMS.P50*1000, r.LatencyMS.P99*1000, r.LatencyMS.Mean*1000, r.Throughput,
			r.CPUMicrosPerReq, r.SwitchesPerReq, split, r.Failed, ratio)
	}
	return b.String()
}

func transportByName(name string) (sbi.Transport, error) {
	switch name {
	case "xio":
		return xiohttp.NewMessageTransport(), nil
	case "xio-socket":
		return xiohttp.NewSocketTransport(), nil
	case "tcp":
		return sbi.NewTCP(), nil
	}
	return nil, fmt.Errorf("xiobench: unknown transport %q (want xio, xio-socket or tcp)", name)
}
