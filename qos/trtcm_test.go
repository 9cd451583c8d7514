package qos

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

const nsHz = 1_000_000_000

// A hand-worked sequence with CIR 1000 B/s, PIR 2000 B/s, CBS 1500, PBS 3000
// (RFC 2698 section 3, colour-blind), down to single bytes of credit.
func TestTrTCMBlindByHand(t *testing.T) {
	m, err := NewMeter(MeterConfig{CIR: 8000, PIR: 16000, CBS: 1500, PBS: 3000}, nsHz, 0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at    uint64
		bytes uint32
		want  Colour
	}{
		{0, 1000, Green},           // Tc 1500→500, Tp 3000→2000
		{0, 1000, Yellow},          // Tc 500 < 1000; Tp 2000→1000
		{0, 1001, Red},             // Tp 1000 < 1001: nothing taken
		{0, 1000, Yellow},          // Tp 1000→0
		{500_000_000, 1000, Green}, // +0.5 s: Tc 500+500, Tp 0+1000
		{500_000_001, 1, Red},      // +1 ns: Tp holds 2e-6 bytes
		{500_500_000, 1, Yellow},   // +0.5 ms: Tp exactly 1 byte, Tc 0.5 byte
		{501_000_000, 1, Green},    // +0.5 ms: Tc exactly 1 byte, Tp 1 byte
		{501_000_000, 1, Red},      // Tp 0
	}
	for i, s := range steps {
		if got := m.Blind(s.at, s.bytes); got != s.want {
			t.Fatalf("step %d (%d bytes at %d ns): %v, want %v", i, s.bytes, s.at, got, s.want)
		}
	}
}

// Colour-aware mode: pre-coloured yellow is never green and takes only
// from Tp; pre-coloured red is red and takes nothing (RFC 2698 section 3).
func TestTrTCMAwareByHand(t *testing.T) {
	m, err := NewMeter(MeterConfig{CIR: 8000, PIR: 16000, CBS: 1500, PBS: 3000}, nsHz, 0)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		in    Colour
		bytes uint32
		want  Colour
	}{
		{Red, 1, Red},          // takes nothing
		{Yellow, 1000, Yellow}, // Tp 3000→2000, Tc stays 1500
		{Green, 1500, Green},   // Tc 1500→0, Tp 2000→500
		{Green, 500, Yellow},   // Tc 0: Tp 500→0
		{Yellow, 1, Red},       // Tp 0
	}
	for i, s := range steps {
		if got := m.Aware(0, s.bytes, s.in); got != s.want {
			t.Fatalf("step %d (%v %d bytes): %v, want %v", i, s.in, s.bytes, got, s.want)
		}
	}
}

// A 1 kbit/s committed rate earns exactly one byte every 8 ms: no rate is
// rounded to whole Mbit/s.
func TestTrTCMKilobitRate(t *testing.T) {
	m, err := NewMeter(MeterConfig{CIR: 1000, PIR: 2000, CBS: 1, PBS: 1}, nsHz, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Blind(0, 1); got != Green {
		t.Fatalf("first byte: %v", got)
	}
	if got := m.Blind(7_999_999, 1); got != Yellow { // Tp refilled after 4 ms, Tc not yet
		t.Fatalf("after 7.999999 ms: %v, want yellow", got)
	}
	if got := m.Blind(16_000_000, 1); got != Green {
		t.Fatalf("after 16 ms: %v, want green", got)
	}
}

// A clock that goes back adds no credit.
func TestTrTCMClockBack(t *testing.T) {
	m, err := NewMeter(MeterConfig{CIR: 8000, PIR: 8000, CBS: 1000, PBS: 1000}, nsHz, 1_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if m.Blind(1_000_000_000, 1000) != Green {
		t.Fatal("full bucket refused")
	}
	if got := m.Blind(0, 1); got != Red {
		t.Fatalf("clock went back 1 s and the meter gave credit: %v", got)
	}
}

func TestTrTCMBursts(t *testing.T) {
	m, err := NewMeter(MeterConfig{CIR: 2_000_000, PIR: 100_000, Window: 0}, nsHz, 0)
	if !errors.Is(err, ErrCIRAbovePIR) {
		t.Fatalf("CIR above PIR: %v, %v", m, err)
	}
	m, err = NewMeter(MeterConfig{CIR: 8_000_000, PIR: 80_000_000, Window: 20 * time.Millisecond}, nsHz, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cbs, pbs := m.Sizes(); cbs != 20_000 || pbs != 200_000 {
		t.Fatalf("derived bursts %d, %d; want rate × 20 ms = 20000, 200000", cbs, pbs)
	}
	m, err = NewMeter(MeterConfig{CIR: 8000, PIR: 16000}, nsHz, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cbs, pbs := m.Sizes(); cbs != 2048 || pbs != 2048 {
		t.Fatalf("low-rate bursts %d, %d; want the 2048-byte floor", cbs, pbs)
	}
	if _, err := NewMeter(MeterConfig{CIR: 8000, CBS: 1 << 62}, nsHz, 0); !errors.Is(err, ErrBurst) {
		t.Fatalf("huge CBS: %v", err)
	}
	if _, err := NewMeter(MeterConfig{CIR: 8000}, 0, 0); !errors.Is(err, ErrClock) {
		t.Fatalf("hz 0: %v", err)
	}
}

// refTrTCM is RFC 2698 section 3 written out with exact rationals, to
// check the C on long random sequences.
type refTrTCM struct {
	cir, pir, cbs, pbs *big.Rat // bytes per second, bytes
	tc, tp             *big.Rat
	last               uint64
	hz                 int64
	noPeak             bool // PIR 0: no MBR, nothing is red for its rate
}

func newRef(cirBps, pirBps, cbs, pbs uint64, hz int64) *refTrTCM {
	r := &refTrTCM{
		cir: big.NewRat(int64(cirBps), 8), pir: big.NewRat(int64(pirBps), 8),
		cbs: new(big.Rat).SetUint64(cbs), pbs: new(big.Rat).SetUint64(pbs), hz: hz,
		noPeak: pirBps == 0,
	}
	r.tc, r.tp = new(big.Rat).Set(r.cbs), new(big.Rat).Set(r.pbs)
	return r
}

func (r *refTrTCM) fill(tok, rate, size *big.Rat, dt uint64) {
	add := new(big.Rat).Mul(rate, big.NewRat(int64(dt), r.hz))
	tok.Add(tok, add)
	if tok.Cmp(size) > 0 {
		tok.Set(size)
	}
}

func (r *refTrTCM) colour(now uint64, bytes uint32, in Colour) Colour {
	if now > r.last {
		r.fill(r.tc, r.cir, r.cbs, now-r.last)
		r.fill(r.tp, r.pir, r.pbs, now-r.last)
		r.last = now
	}
	b := new(big.Rat).SetUint64(uint64(bytes))
	if in == Red || (!r.noPeak && r.tp.Cmp(b) < 0) {
		return Red
	}
	if !r.noPeak {
		r.tp.Sub(r.tp, b)
	}
	if in == Yellow || r.tc.Cmp(b) < 0 {
		return Yellow
	}
	r.tc.Sub(r.tc, b)
	return Green
}

// Random arrivals at 1-3× the peak rate, both modes, two clocks (ns and a
// 2.5 GHz TSC): every colour matches the exact reference.
func TestTrTCMMatchesRFC2698(t *testing.T) {
	for _, hz := range []int64{nsHz, 2_500_000_000} {
		for _, aware := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(uint64(hz), 7))
			const cir, pir, cbs, pbs = 3_000_000, 7_000_000, 4000, 9000
			m, err := NewMeter(MeterConfig{CIR: cir, PIR: pir, CBS: cbs, PBS: pbs}, uint64(hz), 0)
			if err != nil {
				t.Fatal(err)
			}
			ref := newRef(cir, pir, cbs, pbs, hz)
			var now uint64
			var seen [3]int
			for i := 0; i < 20000; i++ {
				bytes := uint32(40 + rng.IntN(1460))
				// mean gap ≈ bytes at 1.5× PIR, jittered
				now += uint64(float64(bytes) * 8 / (1.5 * pir) * float64(hz) * (0.2 + 1.6*rng.Float64()))
				in := Green
				if aware {
					in = Colour(rng.IntN(3))
				}
				want := ref.colour(now, bytes, in)
				var got Colour
				if aware {
					got = m.Aware(now, bytes, in)
				} else {
					got = m.Blind(now, bytes)
				}
				if got != want {
					t.Fatalf("hz %d aware %v packet %d (%d bytes at tick %d): %v, want %v", hz, aware, i, bytes, now, got, want)
				}
				seen[got]++
			}
			for c, n := range seen {
				if n == 0 {
					t.Errorf("hz %d aware %v: no %v packet: the sequence does not exercise it", hz, aware, Colour(c))
				}
			}
		}
	}
}

// FuzzTrTCM checks the C against the exact reference for any rates,
// bursts (configured or derived) and arrivals, as config and traffic from
// outside may set them.
func FuzzTrTCM(f *testing.F) {
	f.Add(uint64(2_000_000), uint64(5_000_000), uint32(0), uint32(0), uint64(nsHz), []byte{10, 200, 0, 3, 90, 1, 0, 255, 2})
	f.Add(uint64(1000), uint64(0), uint32(1), uint32(1), uint64(2_500_000_000), []byte{255, 1, 0, 255, 1, 1})
	f.Fuzz(func(t *testing.T, cir, pir uint64, cbs, pbs uint32, hz uint64, arrivals []byte) {
		hz = hz%100_000_000_000 + 1
		cir %= 1 << 44 // up to 17 Tbit/s
		pir %= 1 << 44
		if pir != 0 && cir > pir {
			cir, pir = pir, cir
		}
		m, err := NewMeter(MeterConfig{CIR: cir, PIR: pir, CBS: uint64(cbs), PBS: uint64(pbs)}, hz, 0)
		if err != nil {
			t.Fatalf("valid config refused: %v", err)
		}
		c, p := m.Sizes()
		ref := newRef(cir, pir, c, p, int64(hz))
		var now uint64
		for i := 0; i+2 < len(arrivals); i += 3 {
			now += uint64(arrivals[i]) * uint64(arrivals[i]) * 997
			bytes := uint32(arrivals[i+1]) * 7
			in := Colour(arrivals[i+2] % 3)
			want := ref.colour(now, bytes, in)
			if got := m.Aware(now, bytes, in); got != want {
				t.Fatalf("CIR %d PIR %d CBS %d PBS %d hz %d, %d bytes %v at %d: %v, want %v", cir, pir, c, p, hz, bytes, in, now, got, want)
			}
		}
	})
}
