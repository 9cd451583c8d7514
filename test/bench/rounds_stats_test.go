package bench

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// Over a cycle of rounds (len(list), twice that for an odd count) every
// setting takes every place equally often and follows every other
// setting equally often: round 0 starts with the list's first.
func TestRoundOrderIsBalanced(t *testing.T) {
	for _, list := range [][]string{
		{"fixed:4", "fixed:8", "off", "adaptive"},
		{"fixed:2", "fixed:4", "fixed:8", "off", "adaptive"},
		{"fixed:2", "fixed:4", "fixed:8", "fixed:12", "fixed:16", "fixed:20", "off", "adaptive"},
	} {
		k := len(list)
		cycle, times := k, 1
		if k%2 == 1 {
			cycle, times = 2*k, 2
		}
		places := map[string]map[int]int{}
		follows := map[[2]string]int{}
		for r := range cycle {
			order := RoundOrder(list, r)
			if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, slices.Sorted(slices.Values(list))) {
				t.Fatalf("k=%d round %d visits %v, not each setting once", k, r, order)
			}
			for i, s := range order {
				if places[s] == nil {
					places[s] = map[int]int{}
				}
				places[s][i]++
				if i > 0 {
					follows[[2]string{order[i-1], s}]++
				}
			}
		}
		if first := RoundOrder(list, 0)[0]; first != list[0] {
			t.Errorf("k=%d: round 0 starts with %s", k, first)
		}
		for s, p := range places {
			for i := range k {
				if p[i] != times {
					t.Errorf("k=%d: %s at place %d %d times, want %d", k, s, i, p[i], times)
				}
			}
		}
		for _, a := range list {
			for _, b := range list {
				if a != b && follows[[2]string{a, b}] != times {
					t.Errorf("k=%d: %s right after %s %d times, want %d", k, b, a, follows[[2]string{a, b}], times)
				}
			}
		}
	}
}

func TestSpreadOf(t *testing.T) {
	odd := SpreadOf([]float64{5, 1, 9, 3, 7})
	if odd.Median != 5 || odd.Min != 1 || odd.Max != 9 {
		t.Fatalf("odd %+v", odd)
	}
	if odd.CILow > odd.Median || odd.CIHigh < odd.Median || odd.CILow < odd.Min || odd.CIHigh > odd.Max {
		t.Fatalf("the interval %+v does not hold the median within min-max", odd)
	}
	if again := SpreadOf([]float64{5, 1, 9, 3, 7}); again != odd {
		t.Fatalf("not reproducible: %+v then %+v", odd, again)
	}
	if even := SpreadOf([]float64{4, 1, 3, 2}); even.Median != 2.5 {
		t.Fatalf("even median %v, want 2.5", even.Median)
	}
	if one := SpreadOf([]float64{7}); one != (Spread{7, 7, 7, 7, 7}) {
		t.Fatalf("one value %+v", one)
	}
	if none := SpreadOf(nil); none != (Spread{}) {
		t.Fatalf("no value %+v", none)
	}
}

// roundsRun is a setting's run with the given per-round means (the batch
// makespans twice as long).
func roundsRun(setting string, means ...float64) BatchRun {
	rs := &RoundStats{MeanMS: means}
	for _, m := range means {
		rs.BatchMS = append(rs.BatchMS, 2*m)
	}
	rs.summarize()
	return BatchRun{Result: Result{Limiter: setting}, Rounds: rs}
}

// The goals compare adaptive round by round with the fixed limit of the
// lowest median and with off: a machine that slows down in one round
// slows every setting of it, and the ratio does not move.
func TestGoalsAreJudgedOnPairedRatios(t *testing.T) {
	runs := []BatchRun{
		roundsRun("fixed:2", 30, 60, 31, 29, 30),
		roundsRun("fixed:8", 10, 20, 10.5, 9.5, 10), // best by median; round 2 is slow for all
		roundsRun("off", 12, 24, 12, 11, 12),
		roundsRun("adaptive", 10.2, 20.4, 10.6, 9.6, 10.1),
	}
	judgeGoals(runs)
	goals := runs[3].Goals
	if len(goals) != 4 {
		t.Fatalf("goals %+v, want 2 per metric", goals)
	}
	for _, g := range goals {
		want := map[string]string{"adaptive ≤ 1.10 × best fixed": "fixed:8", "adaptive ≤ 1.05 × off": "off"}[g.Goal]
		if g.Against != want || g.Verdict != "holds" {
			t.Errorf("%s (%s) against %s: %s, want holds against %s (ratio %+v)", g.Goal, g.Metric, g.Against, g.Verdict, want, g.Ratio)
		}
	}
	if r := goals[0].Ratio; math.Abs(r.Median-1.0105) > 0.001 || r.Max > 1.021 {
		t.Fatalf("ratio to fixed:8 %+v, want 1.01-1.02 in every round despite the slow one", r)
	}
	if runs[0].Goals != nil || runs[1].Goals != nil {
		t.Fatal("goals on a run that is not adaptive")
	}
}

func TestGoalVerdicts(t *testing.T) {
	for _, c := range []struct {
		adaptive []float64
		want     string
	}{
		{[]float64{13, 13, 13, 13, 13}, "misses"},     // 1.3 every round
		{[]float64{10, 10, 10, 10, 10}, "holds"},      // 1.0
		{[]float64{9, 13, 10, 12, 11.5}, "undecided"}, // 0.9-1.3 around the bound
	} {
		runs := []BatchRun{roundsRun("fixed:8", 10, 10, 10, 10, 10), roundsRun("adaptive", c.adaptive...)}
		judgeGoals(runs)
		if g := runs[1].Goals[0]; g.Verdict != c.want {
			t.Errorf("adaptive %v: %s (ratio %+v), want %s", c.adaptive, g.Verdict, g.Ratio, c.want)
		}
	}
}

// Visits fold into one run per setting, in the list's order, each with
// its rounds and only the trace samples of its own visits.
func TestRoundRunsFoldVisits(t *testing.T) {
	ev := func(ms ...float64) []EventTime {
		var out []EventTime
		for _, m := range ms {
			out = append(out, EventTime{LatencyMS: m})
		}
		return out
	}
	visits := []visit{
		{setting: "off", round: 0, events: ev(10, 20), makespans: []time.Duration{30 * time.Millisecond}, from: 0, till: 100},
		{setting: "fixed:8", round: 0, events: ev(5, 7), makespans: []time.Duration{12 * time.Millisecond}, from: 100, till: 200},
		{setting: "fixed:8", round: 1, events: ev(9, 11), makespans: []time.Duration{20 * time.Millisecond}, from: 200, till: 300},
		{setting: "off", round: 1, events: append(ev(30), EventTime{LatencyMS: 999, Failed: true, Error: "x"}), makespans: []time.Duration{40 * time.Millisecond}, from: 300, till: 400},
	}
	trace := []LimiterSample{{AtMS: 50}, {AtMS: 150}, {AtMS: 250}, {AtMS: 350}}
	runs := roundRuns(BatchOptions{Batch: 2}, "tcp", []string{"fixed:8", "off", "adaptive"}, visits, trace, time.Second)
	if len(runs) != 2 || runs[0].Limiter != "fixed:8" || runs[1].Limiter != "off" {
		t.Fatalf("runs %+v", runs)
	}
	f, o := runs[0], runs[1]
	if !slices.Equal(f.Rounds.MeanMS, []float64{6, 10}) || !slices.Equal(f.Rounds.BatchMS, []float64{12, 20}) || f.Rounds.Mean.Median != 8 {
		t.Fatalf("fixed:8 rounds %+v", f.Rounds)
	}
	if !slices.Equal(o.Rounds.MeanMS, []float64{15, 30}) || o.Failed != 1 || o.Succeeded != 3 {
		t.Fatalf("off: rounds %+v, %d ok %d failed (a failed event is counted, not averaged)", o.Rounds, o.Succeeded, o.Failed)
	}
	if len(f.Trace) != 2 || f.Trace[0].AtMS != 150 || len(o.Trace) != 2 || o.Trace[1].AtMS != 350 {
		t.Fatalf("traces fixed:8 %v off %v", f.Trace, o.Trace)
	}
}

func TestRoundsRefuseOverridesAndZeroes(t *testing.T) {
	ok := BatchOptions{Batch: 32, Batches: 1, Rounds: 3}
	if err := checkRoundsOptions(ok, []string{"fixed:8", "adaptive"}); err != nil {
		t.Fatal(err)
	}
	if err := checkRoundsOptions(ok, []string{"fixed:8", "adaptive/threshold=25ms"}); err != nil {
		t.Fatalf("adaptive's override refused: %v", err)
	}
	if err := checkRoundsOptions(ok, []string{"off/threshold=25ms"}); err == nil || !strings.Contains(err.Error(), "switches only amf.limiter.mode") {
		t.Fatalf("override on off: %v", err)
	}
	if err := checkRoundsOptions(ok, []string{"adaptive", "adaptive/hold_rule=false"}); err == nil || !strings.Contains(err.Error(), "one adaptive setting") {
		t.Fatalf("two adaptives: %v", err)
	}
	bad := ok
	bad.Rounds = 0
	if err := checkRoundsOptions(bad, []string{"off"}); err == nil {
		t.Fatal("--rounds 0 accepted")
	}
}
