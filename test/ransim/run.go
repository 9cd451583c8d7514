package ransim

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Fleet is many UEs with consecutive IMSIs and the same keys, the way
// `l25gc subscriber add --count` provisions them.
type Fleet struct {
	FirstIMSI   string
	UEs         int
	K, OPc      []byte
	Conceal     Concealment
	Concurrency int           // procedures in flight at once
	Timeout     time.Duration // per procedure; 0: 30 s
	// Deregister deregisters each UE after it registered (switch-off), so
	// a run leaves no state behind in the AMF.
	Deregister bool
	// BackOff, when set, makes RegisterFleet's UEs register again after a
	// #22 congestion reject, as real ones do (overload.go); then Timeout
	// bounds each attempt, not the whole registration.
	BackOff *BackOff
	// Progress, when set, is called about every 200 ms and once at the end.
	Progress func(done, failed, total int)
}

// Outcome is what a run measured.
type Outcome struct {
	Latencies []time.Duration // of the successful registrations, sorted
	Failed    int
	Errors    []string // distinct failure reasons with counts, most frequent first
	Elapsed   time.Duration
	// BackOffs, WithT3346 and T3510Expiries: congestion met by
	// RegisterFleet with BackOff (OverloadStats).
	BackOffs, WithT3346, T3510Expiries int
	BackedOff                          bool // the run's UEs backed off at #22 (the counts above are meaningful)
}

// IMSI returns the i-th IMSI after first (same length, zero padded).
func IMSI(first string, i int) (string, error) {
	n, err := strconv.ParseUint(first, 10, 64)
	if err != nil || len(first) < 6 || len(first) > 15 {
		return "", fmt.Errorf("IMSI %q: want 6-15 digits", first)
	}
	return fmt.Sprintf("%0*d", len(first), n+uint64(i)), nil
}

// RegisterFleet registers every UE of f through g with f.Concurrency
// registrations in flight, and reports the latency of each.
func RegisterFleet(ctx context.Context, g *GNB, f Fleet) (Outcome, error) {
	ues, err := g.FleetUEs(f)
	if err != nil {
		return Outcome{}, err
	}
	if f.BackOff != nil {
		return registerFleetWithBackOff(ctx, ues, f), nil
	}
	return RunFleet(ctx, ues, f, func(ctx context.Context, ue *UE) (time.Duration, error) { return registerOne(ctx, ue, f) }), nil
}

// FleetUEs puts the UEs of f under g, switched off.
func (g *GNB) FleetUEs(f Fleet) ([]*UE, error) {
	ues := make([]*UE, f.UEs)
	for i := range ues {
		imsi, err := IMSI(f.FirstIMSI, i)
		if err != nil {
			return nil, err
		}
		ues[i] = g.NewUE(Subscriber{IMSI: imsi, K: f.K, OPc: f.OPc}, f.Conceal)
	}
	return ues, nil
}

// Procedure is one procedure of one UE, returning its latency.
type Procedure func(ctx context.Context, ue *UE) (time.Duration, error)

// Establish is UE-requested PDU session establishment of r, measured from
// the request to the Accept.
func Establish(r SessionRequest) Procedure {
	return func(ctx context.Context, ue *UE) (time.Duration, error) {
		_, lat, err := ue.EstablishPDUSession(ctx, r)
		return lat, err
	}
}

// Release is UE-requested release of PDU session id.
func Release(id uint8) Procedure {
	return func(ctx context.Context, ue *UE) (time.Duration, error) { return ue.ReleasePDUSession(ctx, id) }
}

// RunFleet runs proc for every UE with f.Concurrency in flight, each
// within f.Timeout, and reports the latency of each success.
func RunFleet(ctx context.Context, ues []*UE, f Fleet, proc Procedure) Outcome {
	if f.Concurrency < 1 {
		f.Concurrency = 1
	}
	if f.Timeout == 0 {
		f.Timeout = 30 * time.Second
	}
	f.UEs = len(ues)
	var (
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, len(ues))
		reasons   = map[string]int{}
		done      atomic.Int64
		failed    atomic.Int64
	)
	stopProgress := startProgress(f, &done, &failed)
	start := time.Now()
	work := make(chan *UE)
	var wg sync.WaitGroup
	for w := 0; w < f.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ue := range work {
				pctx, cancel := context.WithTimeout(ctx, f.Timeout)
				lat, err := proc(pctx, ue)
				cancel()
				mu.Lock()
				if err != nil {
					reasons[err.Error()]++
					failed.Add(1)
				} else {
					latencies = append(latencies, lat)
				}
				mu.Unlock()
				done.Add(1)
			}
		}()
	}
	for _, ue := range ues {
		select {
		case work <- ue:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	skipped := len(ues) - int(done.Load())
	out := Outcome{Latencies: latencies, Failed: int(failed.Load()) + skipped, Elapsed: elapsed, Errors: topReasons(reasons)}
	if skipped > 0 {
		out.Errors = append(out.Errors, fmt.Sprintf("%d not started: %v", skipped, ctx.Err()))
	}
	return out
}

// WithSession are the UEs that hold PDU session id.
func WithSession(ues []*UE, id uint8) []*UE {
	var out []*UE
	for _, ue := range ues {
		if ue.Session(id) != nil {
			out = append(out, ue)
		}
	}
	return out
}

func registerOne(ctx context.Context, ue *UE, f Fleet) (time.Duration, error) {
	lat, err := ue.Register(ctx)
	if err != nil || !f.Deregister {
		return lat, err
	}
	if _, err := ue.Deregister(ctx, true); err != nil {
		return 0, err
	}
	return lat, nil
}

func startProgress(f Fleet, done, failed *atomic.Int64) (stop func()) {
	if f.Progress == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				f.Progress(int(done.Load()), int(failed.Load()), f.UEs)
			case <-quit:
				f.Progress(int(done.Load()), int(failed.Load()), f.UEs)
				return
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

func topReasons(m map[string]int) []string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
	out := make([]string, 0, len(all))
	for i, e := range all {
		if i == 5 {
			break
		}
		out = append(out, fmt.Sprintf("%d× %s", e.v, e.k))
	}
	return out
}
