package bench

// The paper's limiter experiment (its Fig. 3, 9a, 9b): on a fresh core per
// amf.limiter.mode, a batch of UEs registers (not measured), then all of
// them request a PDU session establishment at once, batch after batch
// (each batch's sessions released, unmeasured, before the next). Measured:
// each establishment's completion time (request to Accept), its order
// among all events, and, sampled from the AMF's /metrics, E_max and
// E_current over time.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/test/ransim"
)

// ProcedurePDUSessionBatch names the results of the batch experiment.
const ProcedurePDUSessionBatch = "pdu_session_batch"

// BatchOptions configure `bench pdu --batch`.
type BatchOptions struct {
	RegistrationOptions               // Config, Binary, SBIModes[0], Transport, Out, DNN, N3
	Batch, Batches      int           // UEs per batch, batches per limiter setting (per visit with Rounds)
	SampleEvery         time.Duration // /metrics sampling period; 0: 50 ms
	// Rounds > 0: one core whose limiter mode is switched, each round
	// visiting every setting in a balanced order (pdu_rounds.go), after
	// WarmupBatches unmeasured ones.
	Rounds, WarmupBatches int
}

// BatchRun is one limiter setting's outcome: the usual result fields
// (procedure pdu_session_batch, limiter set) and, for the figures, the
// limiter's trace and every event's completion time in arrival order.
type BatchRun struct {
	Result
	// BatchMS summarises the batches' makespans (first request to last Accept).
	BatchMS Latency     `json:"batch_ms"`
	Events  []EventTime `json:"events,omitempty"`
	// Rounds (bench pdu --rounds): the setting's figures per round and
	// their median and spread (rounds_stats.go).
	Rounds *RoundStats `json:"rounds,omitempty"`
	// Goals (on adaptive's run, with --rounds): the goals judged
	// on per-round ratios against the best fixed limit and off.
	Goals []GoalCheck `json:"goals,omitempty"`
}

// LimiterSample is the AMF's limiter at a moment of the run (Fig. 9a).
type LimiterSample struct {
	AtMS     float64 `json:"at_ms"`
	EMax     float64 `json:"emax"`
	ECurrent float64 `json:"ecurrent"`
	Queue    float64 `json:"queue"`
	// EWMAMS and LatencyMS are the monitor's EWMA and its last interval's
	// scheduler latency, the two figures E_max is steered by.
	EWMAMS    float64 `json:"ewma_ms"`
	LatencyMS float64 `json:"interval_latency_ms"`
	// HoldRatio is the hold-time rule's last round at low load (mean
	// hold over the shortest recent hold; 0 before its first round).
	HoldRatio float64 `json:"hold_ratio,omitempty"`
}

// EventTime is one establishment (Fig. 9b): its place among all events by
// request time, when it was requested and how long it took.
type EventTime struct {
	Order     int     `json:"order"`
	AtMS      float64 `json:"at_ms"`
	LatencyMS float64 `json:"latency_ms"`
	Failed    bool    `json:"failed,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// PDUBatches runs the experiment once per limiter setting, each on a fresh
// core whose amf.limiter.mode is that setting.
func PDUBatches(ctx context.Context, o BatchOptions, limiters []string) ([]BatchRun, error) {
	if o.AMF != "" {
		return nil, errors.New("bench: --batch needs fresh cores (the limiter is the AMF's config), not --amf")
	}
	if o.Batch < 1 || o.Batches < 1 {
		return nil, fmt.Errorf("bench: --batch %d --batches %d: want both positive", o.Batch, o.Batches)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	var runs []BatchRun
	for _, l := range limiters {
		r, err := pduBatchesOn(ctx, o, l)
		if err != nil {
			return runs, fmt.Errorf("limiter %s: %w", l, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// pduBatchesOn is one limiter setting (a mode, maybe with other
// amf.limiter fields: limiter_setting.go) on its own fresh core.
func pduBatchesOn(ctx context.Context, o BatchOptions, limiter string) (BatchRun, error) {
	cfg, err := batchConfig(o, limiter)
	if err != nil {
		return BatchRun{}, err
	}
	fmt.Fprintf(o.Out, "limiter %s: %d batches of %d PDU session establishments\n", limiter, o.Batches, o.Batch)
	bc, err := startBatchCore(ctx, o, cfg)
	if err != nil {
		return BatchRun{}, err
	}
	defer bc.close()
	run := BatchRun{Result: Result{Procedure: ProcedurePDUSessionBatch, SBI: bc.mode, UEs: o.Batch, Concurrency: o.Batch, Limiter: limiter}}
	sampler := startLimiterSampler(AMFMetricsURL(bc.core.Config), o.SampleEvery)
	start := time.Now()
	var makespans []time.Duration
	for b := range o.Batches {
		events, span, err := bc.batch(ctx, o, b, start)
		run.Events = append(run.Events, events...)
		makespans = append(makespans, span)
		if err != nil {
			run.Trace = sampler.stop(start)
			return run, err
		}
	}
	elapsed := time.Since(start)
	run.Trace = sampler.stop(start)
	summarizeBatches(&run, makespans, elapsed)
	return run, nil
}

// batchCore is a fresh core with a gNB and the batch's UEs registered.
type batchCore struct {
	core *RunningCore
	gnb  *ransim.GNB
	ues  []*ransim.UE
	mode string // the SBI transport
}

// startBatchCore starts cfg's core, connects a gNB and registers the
// batch's UEs (unmeasured).
func startBatchCore(ctx context.Context, o BatchOptions, cfg *config.Config) (*batchCore, error) {
	if o.Transport != "" {
		cfg.AMF.NGAP.Transport = o.Transport
	}
	bc := &batchCore{mode: cfg.SBI.Transport}
	if len(o.SBIModes) > 0 {
		bc.mode = o.SBIModes[0]
	}
	core, err := StartFreshCore(ctx, FreshCore{Config: cfg, Binary: o.Binary, SBI: bc.mode, FirstIMSI: o.FirstIMSI,
		Subscribers: o.Batch, Out: o.Out})
	if err != nil {
		return nil, err
	}
	bc.core = core
	gcfg := GNBConfig(core.Config, core.Config.AMF.NGAP.Addr, core.Config.AMF.NGAP.Transport)
	if o.N3.IsValid() {
		gcfg.N3 = o.N3
	}
	if bc.gnb, err = ransim.Connect(ctx, gcfg); err != nil {
		core.Stop()
		return nil, fmt.Errorf("gNB: %w", err)
	}
	if bc.ues, err = registeredBatch(ctx, bc.gnb, core.Config, o); err != nil {
		bc.close()
		return nil, err
	}
	return bc, nil
}

func (bc *batchCore) close() {
	bc.gnb.Close()
	bc.core.Stop()
}

// batch is the b-th batch (0-based): every UE requests a session at once,
// then all are released (unmeasured). A new PDU session identity per
// batch: reusing the one just released met 5GMM #90 (not forwarded) while
// the core still finished that release, which would measure the release,
// not the limiter.
func (bc *batchCore) batch(ctx context.Context, o BatchOptions, b int, t0 time.Time) ([]EventTime, time.Duration, error) {
	psi := uint8(b%15 + 1)
	events, span := establishBatch(ctx, bc.ues, ransim.SessionRequest{ID: psi, DNN: o.dnn()}, t0)
	fmt.Fprintf(o.Out, "  batch %d: %v\n", b+1, span.Round(time.Millisecond))
	return events, span, releaseBatch(ctx, bc.ues, psi)
}

// batchConfig is the run's config with amf.limiter set from the whole
// setting: "adaptive/hold_rule=false" is adaptive without the hold-time
// rule, not a mode of that name.
func batchConfig(o BatchOptions, limiter string) (*config.Config, error) {
	cfg := o.Config.Clone()
	if err := applyLimiterSetting(&cfg.AMF.Limiter, limiter); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (o BatchOptions) dnn() string {
	if o.DNN == "" {
		return "internet"
	}
	return o.DNN
}

// registeredBatch registers the batch's UEs, unmeasured.
func registeredBatch(ctx context.Context, g *ransim.GNB, cfg *config.Config, o BatchOptions) ([]*ransim.UE, error) {
	first := o.FirstIMSI
	if first == "" {
		first = cfg.Subscribers[0].IMSI
	}
	f, err := FleetFor(cfg, first, "null")
	if err != nil {
		return nil, err
	}
	f.UEs, f.Concurrency = o.Batch, min(o.Batch, 64)
	ues, err := g.FleetUEs(f)
	if err != nil {
		return nil, err
	}
	reg := ransim.RunFleet(ctx, ues, f, func(ctx context.Context, ue *ransim.UE) (time.Duration, error) { return ue.Register(ctx) })
	if reg.Failed > 0 {
		return nil, fmt.Errorf("%d of %d registrations failed: %v", reg.Failed, o.Batch, reg.Errors)
	}
	return ues, nil
}

// establishBatch has every UE request session r at once and returns each
// event (at relative to t0) and the batch's makespan.
func establishBatch(ctx context.Context, ues []*ransim.UE, r ransim.SessionRequest, t0 time.Time) ([]EventTime, time.Duration) {
	events := make([]EventTime, len(ues))
	var wg sync.WaitGroup
	begin := time.Now()
	for i, ue := range ues {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			at := time.Now()
			_, lat, err := ue.EstablishPDUSession(pctx, r)
			events[i] = EventTime{AtMS: ms(at.Sub(t0)), LatencyMS: ms(lat)}
			if err != nil {
				events[i].LatencyMS, events[i].Failed, events[i].Error = ms(time.Since(at)), true, err.Error()
			}
		}()
	}
	wg.Wait()
	return events, time.Since(begin)
}

// releaseBatch releases the sessions of the batch so the next can start
// afresh (unmeasured).
func releaseBatch(ctx context.Context, ues []*ransim.UE, psi uint8) error {
	f := ransim.Fleet{Concurrency: len(ues)}
	rel := ransim.RunFleet(ctx, ransim.WithSession(ues, psi), f, ransim.Release(psi))
	if rel.Failed > 0 {
		return fmt.Errorf("%d session releases between batches failed: %v", rel.Failed, rel.Errors)
	}
	return nil
}

// summarizeBatches numbers the events by request time and fills the
// result's statistics.
func summarizeBatches(run *BatchRun, makespans []time.Duration, elapsed time.Duration) {
	sort.SliceStable(run.Events, func(a, b int) bool { return run.Events[a].AtMS < run.Events[b].AtMS })
	var lats []time.Duration
	reasons := map[string]int{}
	for i := range run.Events {
		e := &run.Events[i]
		e.Order = i + 1
		if e.Failed {
			run.Failed++
			reasons[e.Error]++
			continue
		}
		lats = append(lats, time.Duration(e.LatencyMS*float64(time.Millisecond)))
	}
	sort.Slice(lats, func(a, b int) bool { return lats[a] < lats[b] })
	sort.Slice(makespans, func(a, b int) bool { return makespans[a] < makespans[b] })
	run.Succeeded, run.LatencyMS, run.BatchMS = len(lats), Summarize(lats), Summarize(makespans)
	for e, n := range reasons {
		run.Errors = append(run.Errors, fmt.Sprintf("%d× %s", n, e))
	}
	sort.Strings(run.Errors)
	if elapsed > 0 {
		run.ThroughputPerS = float64(len(lats)) / elapsed.Seconds()
	}
}

// AMFMetricsURL is the AMF's /metrics of cfg.
func AMFMetricsURL(cfg *config.Config) string {
	spec, _ := config.Builtin.Lookup("amf")
	return "http://" + cfg.Addr(spec.PortsIn(cfg).MetricsPort) + "/metrics"
}

// limiterSampler scrapes the AMF's limiter gauges until stopped.
type limiterSampler struct {
	quit    chan struct{}
	done    chan struct{}
	samples []LimiterSample
	times   []time.Time
}

func startLimiterSampler(url string, every time.Duration) *limiterSampler {
	if every <= 0 {
		every = 50 * time.Millisecond
	}
	s := &limiterSampler{quit: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: time.Second}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if v, err := scrapeLimiter(client, url); err == nil {
				s.samples, s.times = append(s.samples, v), append(s.times, time.Now())
			}
			select {
			case <-t.C:
			case <-s.quit:
				return
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the samples timed from t0.
func (s *limiterSampler) stop(t0 time.Time) []LimiterSample {
	close(s.quit)
	<-s.done
	for i := range s.samples {
		s.samples[i].AtMS = ms(s.times[i].Sub(t0))
	}
	return s.samples
}

// scrapeLimiter reads E_max, E_current, the queue length, the EWMA and
// the interval latency off /metrics.
func scrapeLimiter(c *http.Client, url string) (LimiterSample, error) {
	resp, err := c.Get(url)
	if err != nil {
		return LimiterSample{}, err
	}
	defer resp.Body.Close()
	return parseLimiterMetrics(resp.Body)
}

// parseLimiterMetrics picks the limiter's gauges out of a Prometheus text page.
func parseLimiterMetrics(r io.Reader) (LimiterSample, error) {
	var s LimiterSample
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "l25gc_amf_limiter_emax":
			s.EMax, found = v, found+1
		case "l25gc_amf_limiter_ecurrent":
			s.ECurrent, found = v, found+1
		case "l25gc_amf_limiter_queue_length":
			s.Queue = v
		case "l25gc_amf_limiter_ewma_seconds":
			s.EWMAMS = v * 1000
		case "l25gc_amf_limiter_interval_latency_seconds":
			s.LatencyMS = v * 1000
		case "l25gc_amf_limiter_hold_ratio":
			s.HoldRatio = v
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if found < 2 {
		return s, errors.New("no l25gc_amf_limiter_emax/ecurrent on the page: not an AMF with the limiter")
	}
	return s, nil
}

// PrintBatchTable is Fig. 3 as a table: per limiter setting, the mean, p50
// and p99 completion time of an establishment and the mean batch makespan.
func PrintBatchTable(w io.Writer, runs []BatchRun) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LIMITER\tBATCH\tEVENTS\tFAILED\tMEAN ms\tP50 ms\tP99 ms\tBATCH MEAN ms\tPER s\tE_MAX LAST\t")
	for _, r := range runs {
		last := "-"
		if n := len(r.Trace); n > 0 {
			last = fmt.Sprintf("%.0f", r.Trace[n-1].EMax)
		}
		l := r.LatencyMS
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t\n", r.Limiter, r.UEs, r.Succeeded+r.Failed, r.Failed,
			l.Mean, l.P50, l.P99, r.BatchMS.Mean, r.ThroughputPerS, last)
	}
	tw.Flush()
}
