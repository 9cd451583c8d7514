package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/hosttune"
	"github.com/l25gc/l25gc/internal/profile"
	"github.com/l25gc/l25gc/test/ransim"
)

// IdleOptions configure `l25gc bench idle`.
type IdleOptions struct {
	Config   *config.Config
	Binary   string   // l25gc executable for the cores; "" = this one
	SBIModes []string // one fresh core per SBI transport
	// UEs register before the quiet window, so that the core holds a gNB
	// association and UE contexts while it idles, as a deployed core does.
	UEs    int
	Window time.Duration // how long the core is watched without traffic
	Out    io.Writer
}

// IdleResult is the CPU time a whole core spent in a window without
// traffic: the NF processes, the onvm manager (X-IO) and the supervisor.
type IdleResult struct {
	Procedure string  `json:"procedure"` // "idle"
	SBI       string  `json:"sbi"`
	UEs       int     `json:"ues"`
	Seconds   float64 `json:"seconds"`
	// CPUPercent is the CPU time of all processes together as a percentage
	// of one core over the window.
	CPUPercent float64 `json:"cpu_percent_of_one_core"`
	// PerProcess is each process's CPU time in the window, in milliseconds.
	PerProcess map[string]float64 `json:"cpu_ms"`
	// PollPercent is the time all vCPUs spent polling in the idle loop
	// (the cpuidle POLL state: the haltpoll window, README "Latency
	// tuning") as a percentage of one core: CPU the host does not get back
	// although the guest, and so CPUPercent, counts it idle. nil where the
	// CPUs have no POLL state.
	PollPercent *float64 `json:"vcpu_poll_percent_of_one_core,omitempty"`
}

// Idle starts a core per SBI mode, registers o.UEs through one gNB (which
// stays connected), then reads the CPU time of every process of the core
// over o.Window.
func Idle(ctx context.Context, o IdleOptions) ([]IdleResult, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	var results []IdleResult
	for _, mode := range o.SBIModes {
		r, err := idleOn(ctx, o, mode)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

func idleOn(ctx context.Context, o IdleOptions, mode string) (IdleResult, error) {
	core, err := StartFreshCore(ctx, FreshCore{Config: o.Config, Binary: o.Binary, SBI: mode,
		Subscribers: o.UEs, Out: o.Out})
	if err != nil {
		return IdleResult{}, err
	}
	defer core.Stop()
	cfg := core.Config
	g, err := ransim.Connect(ctx, GNBConfig(cfg, cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport))
	if err != nil {
		return IdleResult{}, fmt.Errorf("bench: gNB: %w", err)
	}
	defer g.Close()
	if o.UEs > 0 {
		fleet, err := FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
		if err != nil {
			return IdleResult{}, err
		}
		fleet.UEs, fleet.Concurrency = o.UEs, min(o.UEs, 64)
		fleet.Progress = ProgressLine(o.Out, fmt.Sprintf("registration %s %d UEs", mode, o.UEs))
		out, err := ransim.RegisterFleet(ctx, g, fleet)
		if err != nil {
			return IdleResult{}, err
		}
		if out.Failed > 0 {
			return IdleResult{}, fmt.Errorf("bench: %d of %d UEs failed to register before the idle window", out.Failed, o.UEs)
		}
	}
	// Let the registrations' after-effects (timers, logs, GC) settle first.
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return IdleResult{}, err
	}
	pids := core.PIDs()
	pids["supervisor"] = os.Getpid()
	fmt.Fprintf(o.Out, "  idle %s: watching %d processes for %s\n", mode, len(pids), o.Window)
	before, err := cpuTimes(pids)
	if err != nil {
		return IdleResult{}, err
	}
	poll0, polls := hosttune.PollTime()
	t0 := time.Now()
	if err := sleepCtx(ctx, o.Window); err != nil {
		return IdleResult{}, err
	}
	after, err := cpuTimes(pids)
	if err != nil {
		return IdleResult{}, err
	}
	window := time.Since(t0)
	r := IdleResult{Procedure: "idle", SBI: mode, UEs: o.UEs, Seconds: window.Seconds(), PerProcess: map[string]float64{}}
	if poll1, ok := hosttune.PollTime(); polls && ok {
		p := 100 * (poll1 - poll0).Seconds() / window.Seconds()
		r.PollPercent = &p
	}
	var total time.Duration
	for name := range pids {
		d := after[name] - before[name]
		total += d
		r.PerProcess[name] = float64(d.Microseconds()) / 1000
	}
	r.CPUPercent = 100 * total.Seconds() / window.Seconds()
	return r, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// cpuTimes reads each process's user + system CPU time, all threads
// included. A process that is gone is an error: the window would not be
// the whole core's.
func cpuTimes(pids map[string]int) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for name, pid := range pids {
		s, err := profile.ReadProc(pid)
		if err != nil {
			return nil, fmt.Errorf("bench: CPU time of %s (pid %d): %w", name, pid, err)
		}
		out[name] = s.CPU()
	}
	return out, nil
}

// PrintIdleTable writes one block per SBI mode: each process's CPU time in
// the window and the core's total as a percentage of one core.
func PrintIdleTable(w io.Writer, results []IdleResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SBI\tUES\tWINDOW s\tPROCESS\tCPU ms\t% OF ONE CORE\t")
	for _, r := range results {
		names := make([]string, 0, len(r.PerProcess))
		for name := range r.PerProcess {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%.0f\t%.2f\t\n", r.SBI, r.UEs, r.Seconds, name,
				r.PerProcess[name], r.PerProcess[name]/10/r.Seconds)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%.0f\t%.2f\t\n", r.SBI, r.UEs, r.Seconds, "TOTAL",
			r.CPUPercent*r.Seconds*10, r.CPUPercent)
	}
	tw.Flush()
	for _, r := range results {
		if r.PollPercent != nil {
			fmt.Fprintf(w, "%s: vCPUs polling in the idle loop (counted idle by the guest, not in TOTAL): %.2f %% of one core\n", r.SBI, *r.PollPercent)
		}
	}
}
