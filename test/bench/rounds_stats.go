package bench

// Statistics of bench pdu --rounds: per setting, the median over rounds
// of a visit's average completion time (and mean batch makespan), with
// min-max and a bootstrap 95 % interval of the median; and the issue's
// goals (adaptive within 10 % of the best fixed limit, never more than
// 5 % worse than off) judged on per-round ratios. Ratios are paired by
// round because a round's settings ran back to back under the same load:
// the machine's drift cancels in the ratio, not in the raw times.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Spread is a sample's median, extremes and a bootstrap 95 % interval of
// the median.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	CILow  float64 `json:"ci95_low"`
	CIHigh float64 `json:"ci95_high"`
}

// RoundStats is one setting over the rounds.
type RoundStats struct {
	// MeanMS and BatchMS are, per round, the visit's average completion
	// time and mean batch makespan (first request to last Accept).
	MeanMS  []float64 `json:"mean_ms"`
	BatchMS []float64 `json:"batch_ms"`
	Mean    Spread    `json:"mean"`
	Batch   Spread    `json:"batch"`
}

// GoalCheck is one goal judged on the per-round ratios of adaptive to a
// reference setting.
type GoalCheck struct {
	Goal    string  `json:"goal"`
	Metric  string  `json:"metric"`  // "mean" (completion time) or "batch" (makespan)
	Against string  `json:"against"` // the reference setting
	Bound   float64 `json:"bound"`   // the ratio the goal allows
	Ratio   Spread  `json:"ratio"`
	// Verdict: "holds" (the interval's top within the bound), "misses"
	// (its bottom above it) or "undecided" (the interval straddles it).
	Verdict string `json:"verdict"`
}

// bootstrapResamples is enough for a stable 2.5/97.5 % pair; the seed is
// fixed so a report's numbers can be recomputed from its JSON.
const bootstrapResamples = 2000

// add folds one visit in.
func (rs *RoundStats) add(v visit) {
	var sum float64
	n := 0
	for _, e := range v.events {
		if !e.Failed {
			sum, n = sum+e.LatencyMS, n+1
		}
	}
	var span time.Duration
	for _, m := range v.makespans {
		span += m
	}
	rs.MeanMS = append(rs.MeanMS, sum/float64(max(n, 1)))
	rs.BatchMS = append(rs.BatchMS, ms(span/time.Duration(max(len(v.makespans), 1))))
}

func (rs *RoundStats) summarize() {
	rs.Mean, rs.Batch = SpreadOf(rs.MeanMS), SpreadOf(rs.BatchMS)
}

// SpreadOf is xs's median, min, max and bootstrap 95 % interval of the
// median (zero for no xs).
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	sp := Spread{Median: median(s), Min: s[0], Max: s[len(s)-1]}
	rng := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, bootstrapResamples)
	pick := make([]float64, len(xs))
	for i := range meds {
		for j := range pick {
			pick[j] = xs[rng.IntN(len(xs))]
		}
		slices.Sort(pick)
		meds[i] = median(pick)
	}
	slices.Sort(meds)
	sp.CILow, sp.CIHigh = meds[int(0.025*float64(len(meds)))], meds[int(0.975*float64(len(meds)))-1]
	return sp
}

// median of sorted values: the middle one, or the mean of the two.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// judgeGoals puts the goals on adaptive's run: against the fixed limit
// with the lowest median, and against off, for both metrics.
func judgeGoals(runs []BatchRun) {
	ai := slices.IndexFunc(runs, func(r BatchRun) bool { return isAdaptive(r.Limiter) })
	if ai < 0 {
		return
	}
	metrics := []struct {
		name string
		of   func(*RoundStats) ([]float64, Spread)
	}{
		{"mean", func(rs *RoundStats) ([]float64, Spread) { return rs.MeanMS, rs.Mean }},
		{"batch", func(rs *RoundStats) ([]float64, Spread) { return rs.BatchMS, rs.Batch }},
	}
	var goals []GoalCheck
	for _, m := range metrics {
		if best := bestFixed(runs, m.of); best >= 0 {
			goals = append(goals, goal("adaptive ≤ 1.10 × best fixed", m.name, runs[ai], runs[best], 1.10, m.of))
		}
		if off := slices.IndexFunc(runs, func(r BatchRun) bool { return r.Limiter == "off" }); off >= 0 {
			goals = append(goals, goal("adaptive ≤ 1.05 × off", m.name, runs[ai], runs[off], 1.05, m.of))
		}
	}
	runs[ai].Goals = goals
}

// bestFixed is the index of the fixed:N run with the lowest median, -1
// if there is none.
func bestFixed(runs []BatchRun, of func(*RoundStats) ([]float64, Spread)) int {
	best := -1
	for i, r := range runs {
		if !strings.HasPrefix(r.Limiter, "fixed:") || r.Rounds == nil {
			continue
		}
		if _, s := of(r.Rounds); best < 0 || s.Median < bestMedian(runs[best], of) {
			best = i
		}
	}
	return best
}

func bestMedian(r BatchRun, of func(*RoundStats) ([]float64, Spread)) float64 {
	_, s := of(r.Rounds)
	return s.Median
}

// goal judges adaptive/ref ≤ bound on the rounds both ran.
func goal(name, metric string, adaptive, ref BatchRun, bound float64, of func(*RoundStats) ([]float64, Spread)) GoalCheck {
	a, _ := of(adaptive.Rounds)
	b, _ := of(ref.Rounds)
	var ratios []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			ratios = append(ratios, a[i]/b[i])
		}
	}
	g := GoalCheck{Goal: name, Metric: metric, Against: ref.Limiter, Bound: bound, Ratio: SpreadOf(ratios)}
	switch {
	case len(ratios) == 0:
		g.Verdict = "undecided"
	case g.Ratio.CIHigh <= bound:
		g.Verdict = "holds"
	case g.Ratio.CILow > bound:
		g.Verdict = "misses"
	default:
		g.Verdict = "undecided"
	}
	return g
}

// PrintRoundsTable is Fig. 3 with --rounds: the usual table, then per
// setting the medians over rounds with their spread, then the goals.
func PrintRoundsTable(w io.Writer, runs []BatchRun) {
	PrintBatchTable(w, runs)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LIMITER\tROUNDS\tMEAN ms median\tmin-max\t95% CI\tBATCH ms median\tmin-max\t95% CI\t")
	for _, r := range runs {
		if r.Rounds == nil {
			continue
		}
		m, b := r.Rounds.Mean, r.Rounds.Batch
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f-%.2f\t%.2f-%.2f\t%.2f\t%.2f-%.2f\t%.2f-%.2f\t\n", r.Limiter, len(r.Rounds.MeanMS),
			m.Median, m.Min, m.Max, m.CILow, m.CIHigh, b.Median, b.Min, b.Max, b.CILow, b.CIHigh)
	}
	tw.Flush()
	for _, r := range runs {
		for _, g := range r.Goals {
			fmt.Fprintf(w, "goal %s (%s, against %s): per-round ratio median %.3f, min-max %.3f-%.3f, 95%% CI %.3f-%.3f: %s\n",
				g.Goal, metricName(g.Metric), g.Against, g.Ratio.Median, g.Ratio.Min, g.Ratio.Max, g.Ratio.CILow, g.Ratio.CIHigh, g.Verdict)
		}
	}
}

func metricName(m string) string {
	if m == "batch" {
		return "batch makespan"
	}
	return "average completion time"
}
