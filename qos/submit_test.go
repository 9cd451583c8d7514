package qos

import (
	"fmt"
	"testing"
	"time"
)

// With nothing queued, a packet the session can pay for leaves at once;
// once something is queued, packets queue behind it and leave in order.
func TestSubmitSendsAtOnceOnlyWithNothingQueued(t *testing.T) {
	s, err := NewShaper(ShaperConfig{AMBR: 8 * mbit, Hz: nsHz, Flows: []FlowConfig{{GBR: 16 * mbit, MBR: 16 * mbit}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The AMBR bucket starts full: 10 ms at 8 Mbit/s = 10,000 bytes (the
	// meter's, at 16 Mbit/s, holds twice that: all of them are green).
	var sent, handle uint64
	for ; ; handle++ {
		v, p := s.Submit(0, 0, handle, 1000, Green)
		if !v.Sent() {
			if v != QueuedGreen {
				t.Fatalf("packet %d: %v, want queued green once the buckets are spent", handle, v)
			}
			break
		}
		if p.Handle != handle || p.Bytes != 1000 || p.Colour != Green {
			t.Fatalf("packet %d came back as %+v", handle, p)
		}
		sent += uint64(p.Bytes)
	}
	if sent != 10_000 {
		t.Errorf("sent %d bytes at once, want the AMBR bucket's 10000", sent)
	}
	// 1 ms later 1000 bytes of credit exist, but a packet is queued: the
	// next one queues behind it, and Dequeue hands both back in order.
	if v, _ := s.Submit(0, uint64(time.Millisecond), handle+1, 1000, Green); v.Sent() {
		t.Fatalf("a packet overtook the queued one: %v", v)
	}
	out := s.Dequeue(uint64(2*time.Millisecond), 8, nil)
	if len(out) != 2 || out[0].Handle != handle || out[1].Handle != handle+1 {
		t.Fatalf("dequeued %+v, want handles %d and %d", out, handle, handle+1)
	}
	// Queues empty again: the fast path is back.
	if v, _ := s.Submit(0, uint64(4*time.Millisecond), handle+2, 1000, Green); !v.Sent() {
		t.Fatalf("with nothing queued and credit: %v, want sent", v)
	}
	if v, _ := s.Submit(0, uint64(4*time.Millisecond), handle+3, 70000, Green); v != DropLength {
		t.Fatalf("70000 bytes: %v, want %v", v, DropLength)
	}
	if v, _ := s.Submit(3, 0, 1, 100, Green); v != DropNoFlow {
		t.Fatalf("flow 3 of 1: %v", v)
	}
}

// The fast path changes no rate: the paper's cases and 8 flows give the
// same shares through Submit as through Enqueue and Dequeue.
func TestSubmitKeepsTheFairShares(t *testing.T) {
	for _, c := range []struct{ gbr, mbr, wantQoS, wantBE uint64 }{{2, 5, 5, 5}, {4, 7, 7, 3}} {
		cfg := ShaperConfig{AMBR: 10 * mbit, Flows: []FlowConfig{{GBR: c.gbr * mbit, MBR: c.mbr * mbit}, {}}}
		r := simulateBy(t, cfg, []offer{{bps: 10 * mbit, bytes: 1250}, {bps: 10 * mbit, bytes: 1250}}, 10*time.Second, 10*time.Microsecond, true)
		within(t, fmt.Sprintf("GBR %d MBR %d: QoS flow", c.gbr, c.mbr), r.mbps[0], float64(c.wantQoS), 0.01)
		within(t, fmt.Sprintf("GBR %d MBR %d: non-QoS flow", c.gbr, c.mbr), r.mbps[1], float64(c.wantBE), 0.01)
	}
	cfg := ShaperConfig{AMBR: 10 * mbit, Flows: []FlowConfig{{}, {}}}
	r := simulateBy(t, cfg, []offer{{bps: 1 * mbit, bytes: 500}, {bps: 20 * mbit, bytes: 1500}}, 5*time.Second, 10*time.Microsecond, true)
	within(t, "light flow", r.mbps[0], 1, 0.01)
	within(t, "heavy flow", r.mbps[1], 9, 0.01)
	flows, want, offers := eightFlows()
	r = simulateBy(t, ShaperConfig{AMBR: 80 * mbit, Flows: flows}, offers, 4*time.Second, 10*time.Microsecond, true)
	for i := range offers {
		within(t, fmt.Sprintf("flow %d of 8", i), r.mbps[i], float64(want[i])/1e6, 0.01)
	}
}

// A tail drop says which colour it cost: UPF-U counts full queues by the
// guarantee lost (green within the GBR, yellow above it) from this alone.
func TestSubmitTailDropSaysItsColour(t *testing.T) {
	// GBR 1 Mbit/s: the C bucket (50 ms, floor 2048 bytes) holds 6250
	// bytes, so of 1000-byte packets the first six are green, the rest
	// yellow; an AMBR of 8 kbit/s passes almost nothing, and a queue of
	// 3000 bytes takes three.
	s, err := NewShaper(ShaperConfig{AMBR: 8000, Hz: nsHz, Flows: []FlowConfig{{GBR: 1 * mbit, MBR: 100 * mbit, QueueBytes: 3000}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var colours []Colour
	for h := uint64(0); h < 12; h++ {
		v, p := s.Submit(0, 0, h, 1000, Green)
		if v == DropFull {
			colours = append(colours, p.Colour)
		}
	}
	green, yellow := 0, 0
	for _, c := range colours {
		if c == Green {
			green++
		} else if c == Yellow {
			yellow++
		}
	}
	st := s.Stats(0)
	if uint64(green) != st.FullPackets[Green] || uint64(yellow) != st.FullPackets[Yellow] || green == 0 || yellow == 0 {
		t.Fatalf("tail drops said %d green, %d yellow; counters say %d green, %d yellow (want both > 0)",
			green, yellow, st.FullPackets[Green], st.FullPackets[Yellow])
	}
}
