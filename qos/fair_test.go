package qos

import (
	"errors"
	"slices"
	"testing"
)

const mbit = 1_000_000

func TestFairShareTable(t *testing.T) {
	on := func(gbr, mbr uint64) FairFlow { return FairFlow{GBR: gbr * mbit, MBR: mbr * mbit, Active: true} }
	off := func(gbr, mbr uint64) FairFlow { return FairFlow{GBR: gbr * mbit, MBR: mbr * mbit} }
	weighted := func(f FairFlow, w uint32) FairFlow { f.Weight = w; return f }
	cases := []struct {
		name       string
		ambr       uint64
		flows      []FairFlow
		want       []uint64 // Mbit/s
		unassigned uint64
		scaled     bool
	}{
		{"paper case 1", 10, []FairFlow{on(2, 5), on(0, 0)}, []uint64{5, 5}, 0, false},
		{"paper case 2", 10, []FairFlow{on(4, 7), on(0, 0)}, []uint64{7, 3}, 0, false},
		{"QoS flow alone gets its MBR", 10, []FairFlow{on(2, 5), off(0, 0)}, []uint64{5, 0}, 5, false},
		{"non-QoS flow alone gets the AMBR", 10, []FairFlow{off(2, 5), on(0, 0)}, []uint64{0, 10}, 0, false},
		{"MBR cap gives the rest to the others", 9, []FairFlow{on(0, 1), on(0, 0), on(0, 0)}, []uint64{1, 4, 4}, 0, false},
		{"idle flow's share goes to the active", 10, []FairFlow{on(0, 0), off(0, 0), on(0, 0)}, []uint64{5, 0, 5}, 0, false},
		{"every flow at its MBR", 10, []FairFlow{on(1, 2), on(0, 3)}, []uint64{2, 3}, 5, false},
		{"weights share the excess", 12, []FairFlow{weighted(on(0, 0), 1), weighted(on(0, 0), 2)}, []uint64{4, 8}, 0, false},
		{"weights share only the excess beyond GBR", 10, []FairFlow{weighted(on(4, 0), 1), weighted(on(0, 0), 2)}, []uint64{6, 4}, 0, false},
		{"GBR equal to AMBR", 10, []FairFlow{on(10, 10), on(0, 0)}, []uint64{10, 0}, 0, false},
		{"GBR sum above AMBR: scaled by AMBR/ΣGBR", 10, []FairFlow{on(12, 0), on(8, 0), on(0, 0)}, []uint64{6, 4, 0}, 0, true},
		{"no active flow", 10, []FairFlow{off(1, 2), off(0, 0)}, []uint64{0, 0}, 10, false},
		// ΣGBR 35, excess 65 over weights 7: f0 and f2 saturate at
		// their MBR (room 5 each), then 55 over weights 5: 11 each.
		{"8 flows", 100, []FairFlow{
			on(10, 15), on(20, 0), on(0, 5), weighted(on(0, 0), 2),
			on(5, 5), off(10, 0), on(0, 0), on(0, 12),
		}, []uint64{15, 31, 5, 22, 5, 0, 11, 11}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := FairShare(c.ambr*mbit, c.flows)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]uint64, len(c.want))
			for i, w := range c.want {
				want[i] = w * mbit
			}
			if !slices.Equal(s.Rates, want) || s.Unassigned != c.unassigned*mbit || s.GBRScaled != c.scaled {
				t.Fatalf("got %v unassigned %d scaled %v; want %v unassigned %d scaled %v",
					s.Rates, s.Unassigned, s.GBRScaled, want, c.unassigned*mbit, c.scaled)
			}
		})
	}
}

// The paper's two-flow formula, R_QoS = min(GBR + (AMBR − GBR)/2, MBR),
// R_nonQoS = AMBR − R_QoS, over a grid of GBR and MBR.
func TestFairShareMatchesPaperFormula(t *testing.T) {
	const ambr = 10 * mbit
	for gbr := uint64(0); gbr <= ambr; gbr += mbit / 2 {
		for mbr := max(gbr, mbit/2); mbr <= ambr; mbr += mbit / 2 {
			s, err := FairShare(ambr, []FairFlow{{GBR: gbr, MBR: mbr, Active: true}, {Active: true}})
			if err != nil {
				t.Fatal(err)
			}
			qos := min(gbr+(ambr-gbr)/2, mbr)
			if s.Rates[0] != qos || s.Rates[1] != ambr-qos {
				t.Fatalf("GBR %d MBR %d: %v, want %d/%d", gbr, mbr, s.Rates, qos, ambr-qos)
			}
		}
	}
}

// Rates are bit/s: a 1 kbit/s AMBR is shared to the bit.
func TestFairShareKilobit(t *testing.T) {
	s, err := FairShare(1000, []FairFlow{{GBR: 100, MBR: 300, Active: true}, {Active: true}, {Active: true}})
	if err != nil {
		t.Fatal(err)
	}
	// excess 900 over 3: the GBR flow's room is 200, then 700 over 2.
	if want := []uint64{300, 350, 350}; !slices.Equal(s.Rates, want) {
		t.Fatalf("%v, want %v", s.Rates, want)
	}
}

func TestFairShareClampsGBRAboveMBR(t *testing.T) {
	s, err := FairShare(10*mbit, []FairFlow{{GBR: 6 * mbit, MBR: 4 * mbit, Active: true}, {Active: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.GBRClamped || s.Rates[0] != 4*mbit || s.Rates[1] != 6*mbit {
		t.Fatalf("%+v", s)
	}
}

func TestFairShareErrors(t *testing.T) {
	if _, err := FairShare(0, []FairFlow{{Active: true}}); !errors.Is(err, ErrAMBR) {
		t.Fatalf("AMBR 0: %v", err)
	}
	if _, err := FairShare(mbit, make([]FairFlow, MaxFlows+1)); !errors.Is(err, ErrFlows) {
		t.Fatalf("%d flows: %v", MaxFlows+1, err)
	}
	if s, err := FairShare(mbit, nil); err != nil || s.Unassigned != mbit {
		t.Fatalf("no flows: %+v %v", s, err)
	}
}

// FuzzFairShare checks what must hold for any input: the AMBR is all given
// or unassigned, no flow above its cap, idle flows get nothing, GBRs are
// kept unless scaled, and the excess is max-min fair by weight.
func FuzzFairShare(f *testing.F) {
	f.Add(uint64(10*mbit), []byte{2, 5, 1, 1, 0, 0, 1, 1})
	f.Add(uint64(10*mbit), []byte{12, 0, 1, 1, 8, 0, 3, 1, 0, 0, 1, 1})
	f.Fuzz(func(t *testing.T, ambr uint64, spec []byte) {
		ambr = ambr%(1<<40) + 1
		var flows []FairFlow
		for i := 0; i+3 < len(spec) && len(flows) < MaxFlows; i += 4 {
			unit := ambr/16 + 1
			fl := FairFlow{GBR: uint64(spec[i]%32) * unit, MBR: uint64(spec[i+1]%32) * unit, Weight: uint32(spec[i+2] % 5), Active: spec[i+3]%4 != 0}
			if fl.MBR != 0 && fl.GBR > fl.MBR {
				fl.GBR = fl.MBR
			}
			flows = append(flows, fl)
		}
		s, err := FairShare(ambr, flows)
		if err != nil {
			t.Fatal(err)
		}
		checkFairShare(t, ambr, flows, s)
	})
}

func checkFairShare(t *testing.T, ambr uint64, flows []FairFlow, s Share) {
	t.Helper()
	var sum, gsum uint64
	for _, f := range flows {
		if f.Active {
			gsum += f.GBR
		}
	}
	capOf := func(f FairFlow) uint64 {
		if f.MBR != 0 && f.MBR < ambr {
			return f.MBR
		}
		return ambr
	}
	for i, f := range flows {
		r := s.Rates[i]
		sum += r
		if !f.Active && r != 0 {
			t.Fatalf("idle flow %d got %d", i, r)
		}
		if r > capOf(f) {
			t.Fatalf("flow %d got %d above its cap %d", i, r, capOf(f))
		}
		if f.Active && !s.GBRScaled && r < f.GBR {
			t.Fatalf("flow %d got %d below its GBR %d", i, r, f.GBR)
		}
	}
	if sum+s.Unassigned != ambr {
		t.Fatalf("given %d + unassigned %d != AMBR %d", sum, s.Unassigned, ambr)
	}
	if s.GBRScaled != (gsum > ambr) {
		t.Fatalf("scaled %v with ΣGBR %d, AMBR %d", s.GBRScaled, gsum, ambr)
	}
	if s.GBRScaled {
		return
	}
	// Max-min: a flow below its cap has at least every other flow's excess
	// per weight (within the 1 bit/s of the division's remainder).
	for i, f := range flows {
		if !f.Active || s.Rates[i] >= capOf(f) {
			continue
		}
		wi := float64(max(f.Weight, 1))
		for j, g := range flows {
			if !g.Active {
				continue
			}
			wj := float64(max(g.Weight, 1))
			ei, ej := float64(s.Rates[i]-f.GBR)/wi, float64(s.Rates[j]-g.GBR)/wj
			if ei+1 < ej-1/wj {
				t.Fatalf("flow %d below its cap has excess/weight %.1f < flow %d's %.1f: %v", i, ei, j, ej, s.Rates)
			}
		}
	}
}
