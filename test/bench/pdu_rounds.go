package bench

// bench pdu --batch B --rounds R: Fig. 3 fair against drift. On a shared
// machine, fresh cores per setting run minutes apart and meet different
// loads: the spread between runs was as large as the spread between
// settings (stop 12). Here one core serves every setting: its AMF's
// amf.limiter.mode is switched at run time (PUT /amf-admin/v1/limiter on
// the metrics port) and each round visits every setting, in the order
// of a row of a balanced Latin square (RoundOrder), so each setting meets
// the same conditions and no setting always follows the same neighbour. Per setting and
// round, the visit's average completion time; across rounds, the median
// and a spread (rounds_stats.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/amf"
	"github.com/l25gc/l25gc/nf/udr/prov"
)

// visit is one setting's turn in a round: its batches' events and
// makespans, and its time window for the limiter trace.
type visit struct {
	setting    string
	round      int
	events     []EventTime
	makespans  []time.Duration
	from, till float64 // ms since the run's start
}

// RoundOrder is round r's order of the settings: a row of a Williams
// design (a balanced Latin square). Over len(list) rounds (2·len(list)
// for an odd count) each setting takes each place once and follows each
// other setting once, so neither a slow place in the round nor what the
// setting before left behind (a burst under off) falls on one setting.
// A plain rotation would keep every setting behind the same neighbour.
func RoundOrder(list []string, r int) []string {
	k := len(list)
	base := williamsRow(k)
	if k%2 == 1 && (r/k)%2 == 1 {
		slices.Reverse(base)
	}
	out := make([]string, k)
	for i, b := range base {
		out[i] = list[(b+r)%k]
	}
	return out
}

// williamsRow is the first row of a Williams design, 0, k−1, 1, k−2, 2,
// ...: the steps between neighbours are all different modulo k.
func williamsRow(k int) []int {
	row := make([]int, 0, k)
	lo, hi := 0, k-1
	for i := range k {
		if i%2 == 0 {
			row, lo = append(row, lo), lo+1
		} else {
			row, hi = append(row, hi), hi-1
		}
	}
	return row
}

// PDURounds runs the experiment on one fresh core: WarmupBatches
// unmeasured batches under off (a fresh core's first batches were twice
// as slow as its tenth, stop 12's fig3-q*.txt), then Rounds rounds, each
// visiting every setting (a mode; adaptive's overrides are the core's
// config) for o.Batches batches. One BatchRun per setting, in the list's
// order, with Rounds.
func PDURounds(ctx context.Context, o BatchOptions, limiters []string) ([]BatchRun, error) {
	if err := checkRoundsOptions(o, limiters); err != nil {
		return nil, err
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	cfg, err := roundsConfig(o, limiters)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "one core, %d rounds of %s, %d batches of %d PDU session establishments per visit\n",
		o.Rounds, strings.Join(limiters, ","), o.Batches, o.Batch)
	bc, err := startBatchCore(ctx, o, cfg)
	if err != nil {
		return nil, err
	}
	defer bc.close()
	sw, err := NewLimiterSwitch(bc.core.Config)
	if err != nil {
		return nil, err
	}
	sampler := startLimiterSampler(AMFMetricsURL(bc.core.Config), o.SampleEvery)
	start := time.Now()
	visits, err := runRounds(ctx, o, bc, sw, limiters, start)
	elapsed := time.Since(start)
	trace := sampler.stop(start)
	return roundRuns(o, bc.mode, limiters, visits, trace, elapsed), err
}

func checkRoundsOptions(o BatchOptions, limiters []string) error {
	if o.AMF != "" {
		return errors.New("bench: --rounds needs a fresh core (its limiter mode is switched), not --amf")
	}
	if o.Batch < 1 || o.Batches < 1 || o.Rounds < 1 || o.WarmupBatches < 0 {
		return fmt.Errorf("bench: --batch %d --batches %d --rounds %d --warmup-batches %d: want the first three positive, the last not negative",
			o.Batch, o.Batches, o.Rounds, o.WarmupBatches)
	}
	adaptives := 0
	for _, l := range limiters {
		if isAdaptive(l) {
			adaptives++
		}
		if strings.Contains(l, "/") && !isAdaptive(l) {
			return fmt.Errorf("bench: --rounds switches only amf.limiter.mode on one core; %q has overrides, which shape adaptive only: drop them or --rounds", l)
		}
	}
	if adaptives > 1 {
		return fmt.Errorf("bench: --rounds has one core, so one adaptive setting (its overrides are the core's config); got %d", adaptives)
	}
	return nil
}

// roundsConfig is the core's config: an adaptive setting's overrides
// (adaptive/hold_load=8) are its amf.limiter, which only adaptive reads.
func roundsConfig(o BatchOptions, limiters []string) (*config.Config, error) {
	for _, l := range limiters {
		if isAdaptive(l) {
			return batchConfig(o, l)
		}
	}
	return o.Config.Clone(), nil
}

// modeOf is a setting's amf.limiter.mode ("adaptive/hold_load=8" → "adaptive").
func modeOf(setting string) string {
	mode, _, _ := strings.Cut(setting, "/")
	return mode
}

// runRounds is the warm-up and the rounds; the visits so far on error.
func runRounds(ctx context.Context, o BatchOptions, bc *batchCore, sw *LimiterSwitch, limiters []string, t0 time.Time) ([]visit, error) {
	b := 0 // batches so far: each its own PDU session identity
	if err := sw.Set(ctx, "off"); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Out, "warm-up: %d batches under off, not measured\n", o.WarmupBatches)
	for ; b < o.WarmupBatches; b++ {
		if _, _, err := bc.batch(ctx, o, b, t0); err != nil {
			return nil, err
		}
	}
	var visits []visit
	for r := range o.Rounds {
		for _, setting := range RoundOrder(limiters, r) {
			if err := sw.Set(ctx, modeOf(setting)); err != nil {
				return visits, err
			}
			fmt.Fprintf(o.Out, "round %d, limiter %s\n", r+1, setting)
			v := visit{setting: setting, round: r, from: ms(time.Since(t0))}
			for range o.Batches {
				events, span, err := bc.batch(ctx, o, b, t0)
				b++
				v.events, v.makespans = append(v.events, events...), append(v.makespans, span)
				if err != nil {
					return append(visits, v), fmt.Errorf("round %d, limiter %s: %w", r+1, setting, err)
				}
			}
			v.till = ms(time.Since(t0))
			visits = append(visits, v)
		}
	}
	return visits, nil
}

// roundRuns folds the visits into one BatchRun per setting: the usual
// summary over all its events, its share of the trace, and Rounds.
func roundRuns(o BatchOptions, mode string, limiters []string, visits []visit, trace []LimiterSample, elapsed time.Duration) []BatchRun {
	runs := make([]BatchRun, 0, len(limiters))
	for _, l := range limiters {
		run := BatchRun{Result: Result{Procedure: ProcedurePDUSessionBatch, SBI: mode, UEs: o.Batch, Concurrency: o.Batch, Limiter: l}}
		var makespans []time.Duration
		var busy time.Duration
		rs := &RoundStats{}
		for _, v := range visits {
			if v.setting != l {
				continue
			}
			run.Events = append(run.Events, v.events...)
			makespans = append(makespans, v.makespans...)
			busy += time.Duration((v.till - v.from) * float64(time.Millisecond))
			run.Trace = append(run.Trace, samplesIn(trace, v.from, v.till)...)
			rs.add(v)
		}
		if len(rs.MeanMS) == 0 {
			continue // the run ended before this setting's first visit
		}
		summarizeBatches(&run, makespans, busy)
		rs.summarize()
		run.Rounds = rs
		runs = append(runs, run)
	}
	judgeGoals(runs)
	return runs
}

// samplesIn is the trace's samples within [from, till] ms.
func samplesIn(trace []LimiterSample, from, till float64) []LimiterSample {
	var out []LimiterSample
	for _, s := range trace {
		if s.AtMS >= from && s.AtMS <= till {
			out = append(out, s)
		}
	}
	return out
}

// LimiterSwitch sets the limiter mode of cfg's AMF over its admin
// resource (amf.LimiterAdminPath on the metrics port).
type LimiterSwitch struct {
	url, token string
	client     *http.Client
}

// NewLimiterSwitch reads the core's admin token (the UDR creates it).
func NewLimiterSwitch(cfg *config.Config) (*LimiterSwitch, error) {
	tok, err := prov.ReadToken(cfg.AdminTokenPath())
	if err != nil {
		return nil, fmt.Errorf("the AMF's limiter switch needs the admin token: %w", err)
	}
	url := strings.TrimSuffix(AMFMetricsURL(cfg), "/metrics") + amf.LimiterAdminPath
	return &LimiterSwitch{url: url, token: tok, client: &http.Client{Timeout: 5 * time.Second}}, nil
}

// Set switches the mode and checks the AMF reports it; the AMF's
// refusal (a ProblemDetails) is in the error.
func (s *LimiterSwitch) Set(ctx context.Context, mode string) error {
	body, _ := json.Marshal(amf.LimiterView{Mode: mode})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("limiter mode %s: %w", mode, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var v amf.LimiterView
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &v) != nil || v.Mode != mode {
		return fmt.Errorf("limiter mode %s: the AMF answered %s: %s", mode, resp.Status, bytes.TrimSpace(b))
	}
	return nil
}
