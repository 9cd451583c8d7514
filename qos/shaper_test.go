package qos

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"testing"
	"time"
)

// offer is one flow's constant-rate source in a simulation.
type offer struct {
	bps   uint64 // offered rate; 0 = silent
	bytes uint32 // packet size
	from  time.Duration
}

// simResult is what each flow got.
type simResult struct {
	mbps  []float64
	stats []FlowStats
	sent  []uint64 // bytes
}

// simulate offers each flow's packets at its constant rate for d of
// virtual time (the clock c.Hz, ns by default) and calls Dequeue every tick, as UPF-U's loop
// would, counting the bytes each flow gets out.
func simulate(t *testing.T, c ShaperConfig, offers []offer, d, tick time.Duration) simResult {
	t.Helper()
	return simulateBy(t, c, offers, d, tick, false)
}

// simulateBy is simulate with the packets handed in by Submit (UPF-U's
// fast path: a packet that can leave at once is not queued) when submit.
func simulateBy(t *testing.T, c ShaperConfig, offers []offer, d, tick time.Duration, submit bool) simResult {
	t.Helper()
	if c.Hz == 0 {
		c.Hz = nsHz
	}
	ticks := func(ns uint64) uint64 { // the shaper's clock: a TSC when Hz is not 1e9
		hi, lo := bits.Mul64(ns, c.Hz)
		q, _ := bits.Div64(hi, lo, nsHz)
		return q
	}
	s, err := NewShaper(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	next := make([]uint64, len(offers))
	for i, o := range offers {
		next[i] = uint64(o.from)
	}
	sent := make([]uint64, len(offers))
	var handle, total uint64
	var out []Packet
	ambrBurst := max(c.AMBR/8/100, 2048) // 10 ms, at least the floor
	for now := uint64(0); now <= uint64(d); now += uint64(tick) {
		for i, o := range offers {
			for o.bps != 0 && next[i] <= now {
				handle++
				if !submit {
					s.Enqueue(i, ticks(next[i]), handle, o.bytes, Green)
				} else if v, _ := s.Submit(i, ticks(next[i]), handle, o.bytes, Green); v.Sent() {
					sent[i] += uint64(o.bytes)
					total += uint64(o.bytes)
				}
				next[i] += uint64(o.bytes) * 8 * nsHz / o.bps
			}
		}
		out = s.Dequeue(ticks(now), 32, out[:0])
		for _, p := range out {
			sent[p.Flow] += uint64(p.Bytes)
			total += uint64(p.Bytes)
		}
		// TS 23.501 5.7.2.6: the session never passes its AMBR by more
		// than the AMBR bucket (and the debt of one bucket that keeps
		// shares from borrowers), at any instant.
		if limit := c.AMBR*now/8/nsHz + 2*ambrBurst; total > limit {
			t.Fatalf("at %v the session sent %d bytes, above AMBR×t + 2 buckets = %d", time.Duration(now), total, limit)
		}
	}
	r := simResult{sent: sent}
	for i := range offers {
		r.mbps = append(r.mbps, float64(sent[i])*8/d.Seconds()/1e6)
		r.stats = append(r.stats, s.Stats(i))
	}
	return r
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	t.Logf("%s: %.4f Mbit/s (want %.4f)", what, got, want)
	if math.Abs(got-want) > tol*want {
		t.Errorf("%s: %.3f Mbit/s, want %.3f ±%.0f %%", what, got, want, tol*100)
	}
}

// The paper's cases: AMBR 10 Mbit/s, both flows offering 10 Mbit/s for
// 10 s: case 1 (GBR 2, MBR 5) → 5/5, case 2 (GBR 4, MBR 7) → 7/3.
func TestShaperPaperCases(t *testing.T) {
	for _, c := range []struct {
		name            string
		gbr, mbr        uint64
		wantQoS, wantBE float64
	}{
		{"case 1", 2, 5, 5, 5},
		{"case 2", 4, 7, 7, 3},
	} {
		for _, hz := range []uint64{nsHz, 2_800_000_000} {
			t.Run(fmt.Sprintf("%s %d Hz", c.name, hz), func(t *testing.T) {
				cfg := ShaperConfig{AMBR: 10 * mbit, Hz: hz, Flows: []FlowConfig{{GBR: c.gbr * mbit, MBR: c.mbr * mbit}, {}}}
				r := simulate(t, cfg, []offer{{bps: 10 * mbit, bytes: 1250}, {bps: 10 * mbit, bytes: 1250}}, 10*time.Second, 10*time.Microsecond)
				within(t, "QoS flow", r.mbps[0], c.wantQoS, 0.01)
				within(t, "non-QoS flow", r.mbps[1], c.wantBE, 0.01)
				// The QoS flow's excess above its MBR is red; what it keeps
				// is yellow and sent, never dropped for being yellow.
				q := r.stats[0]
				if q.InPackets[Red] == 0 || q.FullPackets[Yellow] != 0 || q.OutBytes[Yellow] == 0 {
					t.Errorf("QoS flow counters: %+v", q)
				}
				within(t, "QoS flow green", float64(q.OutBytes[Green])*8/10/1e6, float64(c.gbr), 0.01)
			})
		}
	}
}

func TestShaperFlowAlone(t *testing.T) {
	cfg := ShaperConfig{AMBR: 10 * mbit, Flows: []FlowConfig{{GBR: 2 * mbit, MBR: 5 * mbit}, {}}}
	r := simulate(t, cfg, []offer{{}, {bps: 20 * mbit, bytes: 1400}}, 5*time.Second, 10*time.Microsecond)
	within(t, "non-QoS flow alone", r.mbps[1], 10, 0.01)
	r = simulate(t, cfg, []offer{{bps: 20 * mbit, bytes: 1400}, {}}, 5*time.Second, 10*time.Microsecond)
	within(t, "QoS flow alone", r.mbps[0], 5, 0.01)
}

// Work conserving: a flow offering less than its share leaves the rest to
// the other at once.
func TestShaperRedistributesUnusedShare(t *testing.T) {
	cfg := ShaperConfig{AMBR: 10 * mbit, Flows: []FlowConfig{{}, {}}}
	r := simulate(t, cfg, []offer{{bps: 1 * mbit, bytes: 500}, {bps: 20 * mbit, bytes: 1500}}, 5*time.Second, 10*time.Microsecond)
	within(t, "light flow", r.mbps[0], 1, 0.01)
	within(t, "heavy flow", r.mbps[1], 9, 0.01)
	if r.stats[0].FullPackets != [2]uint64{} {
		t.Errorf("light flow lost packets: %+v", r.stats[0])
	}
}

// A flood at 1 Gbit/s into one flow neither delays nor drops a 3 Mbit/s
// flow of the same session, and the flood gets the rest of the AMBR.
func TestShaperIsolatesFlood(t *testing.T) {
	cfg := ShaperConfig{AMBR: 10 * mbit, Flows: []FlowConfig{{}, {GBR: 1 * mbit}}}
	r := simulate(t, cfg, []offer{{bps: 1000 * mbit, bytes: 1500}, {bps: 3 * mbit, bytes: 1000}}, 2*time.Second, 10*time.Microsecond)
	within(t, "steady flow", r.mbps[1], 3, 0.01)
	within(t, "flood", r.mbps[0], 7, 0.01)
	st := r.stats[1]
	if st.FullPackets != [2]uint64{} || st.InPackets[Red] != 0 {
		t.Errorf("steady flow lost packets: %+v", st)
	}
	if r.stats[0].FullPackets[Yellow] == 0 {
		t.Errorf("flood was not tail dropped: %+v", r.stats[0])
	}
}

// 8 flows offering 20 Mbit/s each get the fair share's rates.
func TestShaperEightFlows(t *testing.T) {
	flows := []FlowConfig{
		{GBR: 10 * mbit, MBR: 15 * mbit}, {GBR: 20 * mbit}, {MBR: 5 * mbit}, {Weight: 2},
		{GBR: 5 * mbit, MBR: 5 * mbit}, {GBR: 10 * mbit}, {}, {MBR: 12 * mbit},
	}
	offers := make([]offer, 8)
	for i := range offers {
		offers[i] = offer{bps: 40 * mbit, bytes: 1250}
	}
	offers[5] = offer{} // idle: its GBR is not reserved
	r := simulate(t, ShaperConfig{AMBR: 100 * mbit, Flows: flows}, offers, 4*time.Second, 10*time.Microsecond)
	for i, want := range []float64{15, 31, 5, 22, 5, 0, 11, 11} {
		if want == 0 {
			if r.sent[i] != 0 {
				t.Errorf("idle flow %d sent %d bytes", i, r.sent[i])
			}
			continue
		}
		within(t, "flow "+string(rune('0'+i)), r.mbps[i], want, 0.01)
	}
}

// No rate is too low: 1 kbit/s passes 1500-byte packets (longer than a
// bucket's worth of seconds) at 1 kbit/s instead of stalling.
func TestShaperKilobit(t *testing.T) {
	cfg := ShaperConfig{AMBR: 1000, Flows: []FlowConfig{{}}}
	r := simulate(t, cfg, []offer{{bps: 2000, bytes: 1500}}, 600*time.Second, time.Millisecond)
	// ±5 %: the first 2048-byte bucket alone is 2.7 % of 600 s at 1 kbit/s.
	within(t, "1 kbit/s session", r.mbps[0]*1e3, 1, 0.05)
}

// A flow's packets leave in the order they came, whatever their colour;
// across flows, green heads go before yellow ones.
func TestShaperOrder(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 100 * mbit, Hz: nsHz, Flows: []FlowConfig{{}, {GBR: 8000, MBR: 50 * mbit, CBS: 1000}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	must := func(v Verdict, want Verdict) {
		t.Helper()
		if v != want {
			t.Fatalf("enqueue: %v, want %v", v, want)
		}
	}
	must(s.Enqueue(0, 0, 1, 100, Green), QueuedYellow) // non-GBR: all yellow
	must(s.Enqueue(1, 0, 2, 600, Green), QueuedGreen)
	must(s.Enqueue(1, 0, 3, 600, Green), QueuedYellow) // CBS spent
	must(s.Enqueue(1, 0, 4, 300, Green), QueuedGreen)
	out := s.Dequeue(0, 32, nil)
	var got []uint64
	for _, p := range out {
		got = append(got, p.Handle)
	}
	if len(got) != 4 || got[0] != 2 || got[1] != 1 || got[2] != 3 || got[3] != 4 {
		t.Fatalf("order %v, want [2 1 3 4]: flow 1's green head first, then round robin in each flow's order", got)
	}
}

func TestShaperTailDropAndRed(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 8000, Hz: nsHz, Flows: []FlowConfig{{GBR: 8000, MBR: 16000, CBS: 1000, PBS: 4000, QueueBytes: 2500}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var v []Verdict
	for h := uint64(1); h <= 5; h++ {
		v = append(v, s.Enqueue(0, 0, h, 1000, Green))
	}
	want := []Verdict{QueuedGreen, QueuedYellow, DropFull, DropFull, DropRed}
	for i := range want {
		if v[i] != want[i] {
			t.Fatalf("verdicts %v, want %v", v, want)
		}
	}
	st := s.Stats(0)
	if st.FullPackets != [2]uint64{0, 2} || st.FullBytes != [2]uint64{0, 2000} || st.InPackets != [3]uint64{1, 3, 1} {
		t.Fatalf("counters %+v", st)
	}
	if v := s.Enqueue(1, 0, 9, 100, Green); v != DropNoFlow {
		t.Fatalf("flow 1: %v", v)
	}
	if v := s.Enqueue(0, 0, 9, 0, Green); v != DropLength {
		t.Fatalf("0 bytes: %v", v)
	}
	if v := s.Enqueue(0, 0, 9, 70000, Green); v != DropLength {
		t.Fatalf("70000 bytes: %v", v)
	}
}

// One Dequeue returns at most max packets, whatever is queued.
func TestShaperDequeueBounded(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 1000 * mbit, Hz: nsHz, Flows: []FlowConfig{{}, {}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for h := uint64(0); h < 100; h++ {
		s.Enqueue(int(h%2), 0, h, 64, Green)
	}
	if n := len(s.Dequeue(1000, 8, nil)); n != 8 {
		t.Fatalf("dequeued %d, want 8", n)
	}
}

// The shares follow the set of active flows, and are recomputed on its
// changes only, not per packet.
func TestShaperActiveSet(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 10 * mbit, Hz: nsHz, Idle: 100 * time.Millisecond, Flows: []FlowConfig{{GBR: 2 * mbit, MBR: 5 * mbit}, {}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	base := s.Rebalances()
	for now := uint64(0); now < uint64(time.Second); now += uint64(time.Millisecond) {
		s.Enqueue(0, now, now, 1000, Green)
		s.Enqueue(1, now, now, 1000, Green)
		s.Dequeue(now, 32, nil)
	}
	if r := s.Rates(); r[0] != 5*mbit || r[1] != 5*mbit {
		t.Fatalf("both active: %v", r)
	}
	if n := s.Rebalances() - base; n != 2 {
		t.Fatalf("%d recomputations for 2 flows joining, want 2", n)
	}
	for now := uint64(time.Second); now < uint64(1300*time.Millisecond); now += uint64(time.Millisecond) {
		s.Enqueue(1, now, now, 1000, Green)
		s.Dequeue(now, 32, nil)
	}
	if r := s.Rates(); r[0] != 0 || r[1] != 10*mbit || s.Active() != 2 {
		t.Fatalf("flow 0 idle 300 ms: rates %v active %b", r, s.Active())
	}
}

// A network-requested PDU session modification changes a GBR at run time:
// the queues stay, the shares follow.
func TestShaperReconfigure(t *testing.T) {
	cfg := ShaperConfig{AMBR: 10 * mbit, Hz: nsHz, Flows: []FlowConfig{{GBR: 2 * mbit, MBR: 5 * mbit}, {}}}
	s, err := NewShaper(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Enqueue(0, 0, 1, 1000, Green)
	s.Enqueue(1, 0, 2, 1000, Green)
	cfg.Flows[0] = FlowConfig{GBR: 4 * mbit, MBR: 7 * mbit}
	if err := s.Configure(cfg, 10); err != nil {
		t.Fatal(err)
	}
	if r := s.Rates(); r[0] != 7*mbit || r[1] != 3*mbit {
		t.Fatalf("after modification: %v", r)
	}
	cfg.Flows[0].Removed = true
	if err := s.Configure(cfg, 20); !errors.Is(err, ErrBusy) {
		t.Fatalf("removing a flow with a queued packet: %v", err)
	}
	if p := s.Flush(0); len(p) != 1 || p[0].Handle != 1 {
		t.Fatalf("flush: %+v", p)
	}
	if err := s.Configure(cfg, 20); err != nil {
		t.Fatal(err)
	}
	if r := s.Rates(); r[1] != 10*mbit {
		t.Fatalf("flow 0 removed: %v", r)
	}
	if p := s.Dequeue(30, 32, nil); len(p) != 1 || p[0].Handle != 2 {
		t.Fatalf("flow 1 lost its queue: %+v", p)
	}
}

func TestShaperConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  ShaperConfig
		want error
	}{
		{ShaperConfig{Hz: nsHz, Flows: []FlowConfig{{}}}, ErrAMBR},
		{ShaperConfig{AMBR: mbit, Flows: []FlowConfig{{}}}, ErrClock},
		{ShaperConfig{AMBR: mbit, Hz: nsHz, Flows: make([]FlowConfig, MaxFlows+1)}, ErrFlows},
		{ShaperConfig{AMBR: mbit, Hz: nsHz, Flows: []FlowConfig{{GBR: 2 * mbit, MBR: mbit}}}, ErrCIRAbovePIR},
		{ShaperConfig{AMBR: mbit, Hz: nsHz, Flows: []FlowConfig{{QueueBytes: 1 << 50}}}, ErrBurst},
	} {
		if _, err := NewShaper(c.cfg, 0); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.cfg, err, c.want)
		}
	}
}

// Spare share is borrowed by weight: A uses 1 of its 2.5, and B and C
// (weights 1 and 2) split the rest 1:2, the weighted max-min ideal 1/3/6.
func TestShaperWeightedBorrowing(t *testing.T) {
	cfg := ShaperConfig{AMBR: 10 * mbit, Flows: []FlowConfig{{}, {}, {Weight: 2}}}
	r := simulate(t, cfg, []offer{{bps: 1 * mbit, bytes: 1250}, {bps: 20 * mbit, bytes: 1250}, {bps: 20 * mbit, bytes: 1250}}, 5*time.Second, 10*time.Microsecond)
	within(t, "light flow", r.mbps[0], 1, 0.01)
	within(t, "weight 1", r.mbps[1], 3, 0.01)
	within(t, "weight 2", r.mbps[2], 6, 0.01)
}

// A queue bounded in time holds that long at the flow's share: 10 ms at
// 8 Mbit/s is 10 packets of 1000 bytes.
func TestShaperQueueTime(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 8 * mbit, Hz: nsHz, Flows: []FlowConfig{{QueueTime: 10 * time.Millisecond}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	for h := uint64(0); h < 20; h++ {
		if s.Enqueue(0, 0, h, 1000, Green).Queued() {
			queued++
		}
	}
	if queued != 10 || s.Stats(0).FullPackets[Yellow] != 10 {
		t.Fatalf("queued %d, stats %+v; want 10 queued, 10 tail drops", queued, s.Stats(0))
	}
}

// Colour-aware callers keep their pre-colouring: yellow stays yellow with
// committed credit left, red is dropped (RFC 2698 section 3).
func TestShaperColourAware(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 10 * mbit, Hz: nsHz, Flows: []FlowConfig{{GBR: 2 * mbit, MBR: 5 * mbit}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   Colour
		want Verdict
	}{{Yellow, QueuedYellow}, {Green, QueuedGreen}, {Red, DropRed}} {
		if v := s.Enqueue(0, 0, 1, 100, c.in); v != c.want {
			t.Fatalf("pre-coloured %v: %v, want %v", c.in, v, c.want)
		}
	}
}

// GBRs above the AMBR: the shaper scales them and says so.
func TestShaperGBRAboveAMBR(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 10 * mbit, Hz: nsHz, Flows: []FlowConfig{{GBR: 12 * mbit}, {GBR: 8 * mbit}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Enqueue(0, 0, 1, 100, Green)
	s.Enqueue(1, 0, 2, 100, Green)
	if r := s.Rates(); r[0] != 6*mbit || r[1] != 4*mbit || !s.GBRScaled() {
		t.Fatalf("rates %v scaled %v; want 6/4 Mbit/s, scaled", r, s.GBRScaled())
	}
}

// One packet per call and eight backlogged flows: every flow is served
// within eight calls, none waits behind another's queue.
func TestShaperServesEveryFlowInTurn(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 1000 * mbit, Hz: nsHz, Flows: make([]FlowConfig, MaxFlows)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for h := uint64(0); h < 10*MaxFlows; h++ {
		if v := s.Enqueue(int(h%MaxFlows), 0, h, 1000, Green); !v.Queued() {
			t.Fatalf("enqueue %d: %v", h, v)
		}
	}
	served := map[int]int{}
	for call := 0; call < MaxFlows; call++ {
		for _, p := range s.Dequeue(uint64(call+1)*1000, 1, nil) {
			served[p.Flow]++
		}
	}
	if len(served) != MaxFlows {
		t.Fatalf("flows served in %d calls of one packet: %v, want each once", MaxFlows, served)
	}
}
