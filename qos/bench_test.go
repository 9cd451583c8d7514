package qos

import (
	"testing"
)

// BenchmarkPathC is the per-packet cost UPF-U pays: meter + enqueue, and a
// dequeue per burst of 32, all in C (bench.c), no cgo per packet. The goal
// is ≤ ~40 ns/packet (UPF-U ≥ 5 Mpps per core with QoS on). cpu-ns/pkt is
// the thread's CPU time: on a loaded machine ns/op counts time it waited.
func BenchmarkPathC(b *testing.B) {
	for _, c := range []struct {
		name   string
		flows  int
		ambr   uint64
		minOut float64 // share of packets that must be sent
	}{
		{"2flows-all-sent", 2, 100_000 * mbit, 0.9},
		{"8flows-all-sent", 8, 100_000 * mbit, 0.9},
		{"8flows-shaped-to-half", 8, 40_000 * mbit, 0.4},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			sent, cpu := benchPath(b.N, c.flows, c.ambr)
			b.StopTimer()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/pkt")
			if b.N >= 100_000 && float64(sent) < c.minOut*float64(b.N) {
				b.Fatalf("sent %d of %d: the benchmark does not exercise what it says", sent, b.N)
			}
		})
	}
}

// BenchmarkPathGo is the same path through the Go wrapper: one cgo call
// per packet plus one per burst (what a Go caller, such as a simulation,
// pays; UPF-U does not).
func BenchmarkPathGo(b *testing.B) {
	s, err := NewShaper(ShaperConfig{
		AMBR: 100_000 * mbit, Hz: nsHz,
		Flows: []FlowConfig{{GBR: 10_000 * mbit, MBR: 50_000 * mbit}, {}},
	}, 1)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]Packet, 0, 32)
	now := uint64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now += 100
		s.Enqueue(i&1, now, uint64(i), 1000, Green)
		if i&31 == 31 {
			out = s.Dequeue(now, 32, out[:0])
		}
	}
}

// BenchmarkFairShare is one recomputation for 8 flows (on rule or
// active-set changes only).
func BenchmarkFairShare(b *testing.B) {
	flows := []FairFlow{
		{GBR: 10 * mbit, MBR: 15 * mbit, Active: true}, {GBR: 20 * mbit, Active: true},
		{MBR: 5 * mbit, Active: true}, {Weight: 2, Active: true},
		{GBR: 5 * mbit, MBR: 5 * mbit, Active: true}, {GBR: 10 * mbit},
		{Active: true}, {MBR: 12 * mbit, Active: true},
	}
	for i := 0; i < b.N; i++ {
		if _, err := FairShare(100*mbit, flows); err != nil {
			b.Fatal(err)
		}
	}
}
