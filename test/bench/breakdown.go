package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/tracing"
	"github.com/l25gc/l25gc/test/ransim"
)

// Tracing is a benchmark's tracing (issue 15): with Breakdown, an
// in-process OTLP/HTTP collector every fresh core and the simulator
// export to, from which each result gets its per-hop breakdown; with
// OTLP, a user's collectors (Jaeger, Tempo) receive the same spans.
type Tracing struct {
	collector *tracing.Collector // nil: no breakdown
	otlp      []string
	ran       *tracing.Provider
}

// StartTracing starts the collector (breakdown) and the simulator's span
// export; nil when neither is asked for.
func StartTracing(breakdown bool, otlp []string) (*Tracing, error) {
	return StartTracingAt("127.0.0.1:0", breakdown, otlp)
}

// StartTracingAt is StartTracing with the collector listening at addr: a
// running core (--amf) exports to the address its config names
// (tracing.otlp), so the breakdown's collector must listen there.
func StartTracingAt(addr string, breakdown bool, otlp []string) (*Tracing, error) {
	if !breakdown && len(otlp) == 0 {
		return nil, nil
	}
	t := &Tracing{otlp: otlp}
	if breakdown {
		c, err := tracing.StartCollector(addr)
		if err != nil {
			return nil, err
		}
		t.collector = c
	}
	ran, err := tracing.New(tracing.Options{Service: "l25gc-ransim", OTLP: t.Endpoints()})
	if err != nil {
		t.Close()
		return nil, err
	}
	t.ran = ran
	return t, nil
}

// Endpoints are where the cores and the simulator send spans.
func (t *Tracing) Endpoints() []string {
	var eps []string
	if t.collector != nil {
		eps = append(eps, t.collector.Addr())
	}
	for _, ep := range t.otlp {
		if t.collector == nil || ep != t.collector.Addr() {
			eps = append(eps, ep)
		}
	}
	return eps
}

// Close flushes the simulator's spans and stops the collector.
func (t *Tracing) Close() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = t.ran.Shutdown(ctx)
	if t.collector != nil {
		_ = t.collector.Close()
	}
}

// configure points a fresh core's NFs at the endpoints.
func (t *Tracing) configure(cfg *config.Config) {
	if t != nil {
		cfg.Tracing.OTLP = t.Endpoints()
	}
}

// trace has g record its N2 side and procedures from now on (after the
// warm-up).
func (t *Tracing) trace(g *ransim.GNB) {
	if t != nil {
		g.TraceWith(tracing.NewRAN(t.ran))
	}
}

// spansSettle bounds the wait for the last spans of a run: the exporters
// batch for 200 ms.
const spansSettle = 800 * time.Millisecond

// attach waits for the run's last spans, computes the breakdown of each
// procedure among them and gives it to the result of that procedure.
func (t *Tracing) attach(ctx context.Context, rs []Result) {
	if t == nil || t.collector == nil {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = t.ran.ForceFlush(fctx)
	t.collector.Quiet(fctx, spansSettle)
	bs := tracing.Compute(t.collector.Take())
	for i := range rs {
		for j := range bs {
			if bs[j].Procedure == rs[i].Procedure {
				rs[i].Breakdown = &bs[j]
			}
		}
	}
}

// PrintBreakdowns prints the breakdown table of every result that has one.
func PrintBreakdowns(w io.Writer, rs []Result) {
	for _, r := range rs {
		if r.Breakdown != nil {
			r.Breakdown.Write(w, fmt.Sprintf("%s over %s, %d UEs, concurrency %d", r.Procedure, r.SBI, r.UEs, r.Concurrency))
		}
	}
}
