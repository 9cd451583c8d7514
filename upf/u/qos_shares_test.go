package u_test

import (
	"fmt"
	"math"
	"sort"
	"testing"
)

// The QoS lab tests judge how UPF-U divides bandwidth by the shares the
// flows got of what was forwarded in one interval, not by absolute Mbit/s:
// on a loaded machine (a slow CI runner, busy loops on every core) the
// sender, UPF-U and the receiver all run late, so every flow reads low
// together (25-90 % in stop 12's runs), while the split between flows,
// which is what the fair share decides, stays. A wrong split still fails:
// each test offers its flows so that a shaper that ignores the GBR, the
// MBR, the max-min rule or the sessions' isolation splits differently.
//
// Where the flows are at most UPF_MAX_URR (4) per session, the counts are
// UPF-U's own: each flow's downlink PDR has a URR of its own, read from the
// rule tables (Table.Usage) at the start and at the end of the interval.
// A URR counts a packet when the shaper takes it (sent or queued), so the
// two readings differ from what left by at most the queues' change over
// the interval (50 ms at a flow's share against a 2 s interval).

// labMbit is the lab's megabit: every rate in the QoS lab tests is a
// quarter of the paper's (bench qos), so that a loaded 2-core machine
// still carries what is offered and the shaper, not the CPU, is what
// limits the flows (at full rates a starved af_packet lab forwarded 5.6 of
// 10 Mbit/s and the split came from the scheduler). The verdicts are
// shares, ratios of rates, so they stay the same. At a quarter the buckets
// still hold whole packets of pktBytes: a Session-AMBR of 10 labMbit
// bursts 3 packets (rate × 10 ms, QOS_DEFAULT_BURST_NS, at least
// QOS_MIN_BURST_BYTES: 2), an MBR of 5 labMbit's meter 7 (rate × 50 ms,
// QOS_DEFAULT_METER_NS), and the smallest share judged, case 2's 3
// labMbit, queues 4 (50 ms, the lab's UPFQoS.Queue).
const labMbit = mbit / 4

// shareTolerance bounds a flow's share relative to its ideal share: 15 %
// of 0.5 is 0.075, so case 1's 50/50 split is told from a FIFO's 33/67.
const shareTolerance = 0.15

// urrOf is where UPF-U counts a flow: its session and the URR of its
// downlink PDR.
type urrOf struct {
	seid uint64
	urr  uint32
}

// downlinkBytes reads what UPF-U counted so far for each flow of counted.
func (l *lab) downlinkBytes(t *testing.T, counted map[flowKey]urrOf) map[flowKey]uint64 {
	t.Helper()
	out := map[flowKey]uint64{}
	bySession := map[uint64]map[uint32]uint64{}
	for k, c := range counted {
		if _, ok := bySession[c.seid]; !ok {
			usage, err := l.table.Usage(c.seid)
			if err != nil {
				t.Fatalf("usage of session %d: %v", c.seid, err)
			}
			bySession[c.seid] = map[uint32]uint64{}
			for _, u := range usage {
				bySession[c.seid][u.URRID] = u.DownlinkBytes
			}
		}
		out[k] = bySession[c.seid][c.urr]
	}
	return out
}

// shares is each flow's fraction of the total of m.
func shares(m map[flowKey]float64) map[flowKey]float64 {
	var sum float64
	for _, v := range m {
		sum += v
	}
	out := map[flowKey]float64{}
	for k, v := range m {
		if sum > 0 {
			out[k] = v / sum
		}
	}
	return out
}

// checkShares compares each flow's share of got with its share of want
// (the ideal rates, bit/s); every flow of want must be in got's total.
func checkShares(t *testing.T, what string, got, want map[flowKey]float64, name func(flowKey) string) {
	t.Helper()
	g := map[flowKey]float64{}
	for k := range want {
		g[k] = got[k]
	}
	gs, ws := shares(g), shares(want)
	keys := make([]flowKey, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return name(keys[i]) < name(keys[j]) })
	for _, k := range keys {
		t.Logf("%s, %s: share %.3f (%.2f Mbit/s), ideal %.3f (%.2f Mbit/s)", what, name(k), gs[k], g[k]/mbit, ws[k], want[k]/mbit)
		if math.Abs(gs[k]-ws[k]) > ws[k]*shareTolerance {
			t.Errorf("%s, %s: got %.3f of what was forwarded, want %.3f ± %.0f %%", what, name(k), gs[k], ws[k], shareTolerance*100)
		}
	}
}

// byPort names flows by the DN's port (the flows of one session).
func byPort(k flowKey) string { return fmt.Sprintf("port %d", k.sport) }

// byUE names flows by the UE (one flow per session).
func byUE(k flowKey) string { return k.ue.String() }

// notAbove fails when the flows together passed more than limit bit/s
// (with the tolerance): load only slows a lab down, so a rate above the
// AMBR is the shaper's fault whatever the machine.
func notAbove(t *testing.T, what string, got map[flowKey]float64, limit float64) {
	t.Helper()
	var sum float64
	for _, v := range got {
		sum += v
	}
	t.Logf("%s: %.2f Mbit/s in all (at most %.2f)", what, sum/mbit, limit/mbit)
	if sum > limit*(1+shareTolerance) {
		t.Errorf("%s: %.2f Mbit/s in all, above %.2f", what, sum/mbit, limit/mbit)
	}
}
