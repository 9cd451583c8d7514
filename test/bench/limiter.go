package bench

// The paper's Fig. 3 experiment: the same PDU session benchmark on fresh
// cores that differ only in amf.limiter.mode (fixed:N, off, adaptive), so
// completion times can be compared per limiter setting.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/l25gc/l25gc/ratelimit"
)

// ParseLimiters reads --limiter: comma-separated amf.limiter.mode values,
// each optionally with other amf.limiter fields (limiter_setting.go).
func ParseLimiters(s string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		mode, _, _ := strings.Cut(m, "/")
		if _, _, err := ratelimit.ParseMode(mode); err != nil {
			return nil, fmt.Errorf("--limiter %q: %w", s, err)
		}
		if err := checkLimiterSetting(m); err != nil {
			return nil, fmt.Errorf("--limiter %q: %w", s, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// PDUByLimiter runs PDU once per limiter setting, each on fresh cores with
// amf.limiter.mode set to it; every result carries its setting.
func PDUByLimiter(ctx context.Context, o RegistrationOptions, limiters []string) ([]Result, error) {
	return ByLimiter(ctx, o, limiters, PDU)
}

// RegistrationByLimiter is Registration once per limiter setting (bench
// registration --limiter), each result carrying its setting.
// The limiter is sampled during every measured run (Result.Trace).
func RegistrationByLimiter(ctx context.Context, o RegistrationOptions, limiters []string) ([]Result, error) {
	return ByLimiter(ctx, o, limiters, func(ctx context.Context, o RegistrationOptions) ([]Result, error) {
		return measure(ctx, o, tracedRegistration(AMFMetricsURL(o.Config), 0))
	})
}

// ByLimiter runs bench once per limiter setting, each on fresh cores with
// amf.limiter.mode set to it; every result carries its setting.
func ByLimiter(ctx context.Context, o RegistrationOptions, limiters []string,
	bench func(context.Context, RegistrationOptions) ([]Result, error)) ([]Result, error) {
	if o.AMF != "" {
		return nil, errors.New("bench: --limiter needs fresh cores (the limiter is the AMF's config), not --amf")
	}
	var all []Result
	for _, l := range limiters {
		run := o
		run.Config = o.Config.Clone()
		if err := applyLimiterSetting(&run.Config.AMF.Limiter, l); err != nil {
			return all, err
		}
		if run.Out != nil {
			fmt.Fprintf(run.Out, "limiter %s\n", l)
		}
		results, err := bench(ctx, run)
		for i := range results {
			results[i].Limiter = l
		}
		all = append(all, results...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// PrintLimiterTable puts the limiter settings of each (procedure, SBI, UE
// count) side by side: mean, p50 and p99 completion time (the paper's
// Fig. 3 as a table).
func PrintLimiterTable(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PROCEDURE\tSBI\tUES\tCONC\tLIMITER\tMEAN ms\tP50 ms\tP99 ms\tPER s\t")
	for _, r := range results {
		if r.Limiter == "" {
			continue
		}
		l := r.LatencyMS
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.2f\t%.2f\t%.2f\t%.0f\t\n", r.Procedure, r.SBI, r.UEs, r.Concurrency,
			r.Limiter, l.Mean, l.P50, l.P99, r.ThroughputPerS)
	}
	tw.Flush()
}

// ByLimiterSeries relabels results so that the charts, which draw one
// series per SBI mode, draw one per SBI mode and limiter setting.
func ByLimiterSeries(results []Result) []Result {
	out := make([]Result, len(results))
	for i, r := range results {
		if r.Limiter != "" {
			r.SBI += " " + r.Limiter
		}
		out[i] = r
	}
	return out
}

// PrintOverloadTable is bench registration under congestion: per limiter
// setting and UE count the goodput (registrations completed per second),
// p99 (first attempt to accept, back-offs included), the #22 rejects the
// UEs backed off from and the attempts that reached T3510 (15 s).
func PrintOverloadTable(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LIMITER\tUES\tCONC\tOK\tFAILED\tGOODPUT /s\tP50 ms\tP99 ms\tBACK-OFFS\tT3510 HIT\t")
	for _, r := range results {
		if r.BackOffs == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.0f\t%.2f\t%.2f\t%d\t%d\t\n", orDash(r.Limiter), r.UEs, r.Concurrency, r.Succeeded, r.Failed,
			r.ThroughputPerS, r.LatencyMS.P50, r.LatencyMS.P99, *r.BackOffs, *r.T3510Expiries)
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
