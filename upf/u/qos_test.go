package u_test

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
)

// Fair QoS in UPF-U (issue 13, TS 23.501 5.7.2.5-6): these tests offer
// downlink flows above the Session-AMBR from the DN and measure what the
// gNB end receives. The lab UPF-U shapes at most labShapedSessions
// sessions.
const labShapedSessions = 2

const urrPlain, urrQoS = 2, 3 // the URRs of qosSession's downlink flows

const (
	mbit        = 1_000_000
	qosFlowPort = 6001 // the DN's port of the QoS flow (its SDF filter)
	plainPort   = 7001 // non-QoS traffic: the default flow
	pktBytes    = 1000 // the UE's IPv4 packet (what the shaper counts)
	offerFor    = 3 * time.Second
	measureFrom = time.Second // skip the buckets' first burst
)

// qosSession is the paper's case 1: Session-AMBR ambr (a session-level
// QER, QFI 0, listed last by every PDR), a QoS flow (QFI 5, GBR gbr, MBR
// mbr) matched by its SDF filter, and the rest of the downlink as the
// default flow (QFI 9, no rates).
//
// Each downlink flow has a URR of its own (urrPlain, urrQoS): UPF-U's
// count of what it forwarded per flow (qos_shares_test.go).
func qosSession(seid uint64, ue netip.Addr, ambr, gbr, mbr uint64) *rules.Session {
	s := session(seid, ue, upTEID+uint32(seid), gnbTEID, qfi)
	s.PDRs[0].QERIDs = []uint32{1, 3}
	s.PDRs[1].QERIDs = []uint32{1, 3}
	s.PDRs[1].URRIDs = []uint32{urrPlain}
	s.PDRs = append(s.PDRs, rules.PDR{ID: 3, Precedence: 100, Source: rules.Core, UEIPv4: ue, NetworkInstance: "internet",
		SDFFilters: []string{fmt.Sprintf("permit out 17 from %s %d to assigned", dnIP, qosFlowPort)},
		FARID:      2, QERIDs: []uint32{2, 3}, URRIDs: []uint32{urrQoS}})
	s.URRs = []rules.URR{{ID: 1}, {ID: urrPlain}, {ID: urrQoS}}
	s.QERs = []rules.QER{
		{ID: 1, QFI: qfi, GateULOpen: true, GateDLOpen: true},
		{ID: 2, QFI: 5, GateULOpen: true, GateDLOpen: true, GBRUL: gbr, GBRDL: gbr, MBRUL: mbr, MBRDL: mbr},
		{ID: 3, QFI: 0, GateULOpen: true, GateDLOpen: true, MBRUL: ambr, MBRDL: ambr},
	}
	return s
}

// offer is a downlink flow: rate bit/s of pktBytes packets from the DN's
// port sport to ue.
type offer struct {
	ue    netip.Addr
	sport uint16
	rate  uint64
}

// flowKey names a flow by the UE and the DN's port.
type flowKey struct {
	ue    netip.Addr
	sport uint16
}

// measure sends the offers together for offerFor and returns each flow's
// received rate (bit/s of the UE's packets) from measureFrom on.
func (l *lab) measure(t *testing.T, n6 net.HardwareAddr, offers ...offer) map[flowKey]float64 {
	t.Helper()
	received, _ := l.measureCounted(t, n6, nil, offers...)
	return received
}

// measureCounted is measure that also returns the rate UPF-U counted for
// each flow of counted (its URR, qos_shares_test.go) over the same
// interval: from measureFrom to the end of the offer.
func (l *lab) measureCounted(t *testing.T, n6 net.HardwareAddr, counted map[flowKey]urrOf, offers ...offer) (received, forwarded map[flowKey]float64) {
	t.Helper()
	got := map[flowKey]uint64{}
	var mu sync.Mutex
	start := time.Now()
	end := start.Add(offerFor)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for time.Now().Before(end) {
			f, err := l.gnb.recv(20*time.Millisecond, func(f []byte) bool { return isGTPU(f) && f[43] == 0xff })
			if err != nil || time.Since(start) < measureFrom || len(f) < 58+24 {
				continue
			}
			in := f[58:]
			k := flowKey{netip.AddrFrom4([4]byte(in[16:20])), binary.BigEndian.Uint16(in[20:])}
			mu.Lock()
			got[k] += uint64(binary.BigEndian.Uint16(in[2:]))
			mu.Unlock()
		}
	}()
	frames := make([][]byte, len(offers))
	for i, o := range offers {
		payload := make([]byte, pktBytes-28)
		frames[i] = eth(n6, dnMAC, 0x0800, ipv4(dnIP, o.ue, 17, 64, udp(o.sport, 40000, payload)))
	}
	sent := make([]uint64, len(offers))
	var first map[flowKey]uint64
	var from time.Time
	for now := time.Now(); now.Before(end); now = time.Now() {
		if first == nil && now.Sub(start) >= measureFrom {
			first, from = l.downlinkBytes(t, counted), now
		}
		el := now.Sub(start).Seconds()
		for i, o := range offers {
			for ; float64(sent[i]*pktBytes*8) < el*float64(o.rate); sent[i]++ {
				l.dn.send(t, frames[i])
			}
		}
		time.Sleep(500 * time.Microsecond)
	}
	last, to := l.downlinkBytes(t, counted), time.Now()
	<-done
	secs := (offerFor - measureFrom).Seconds()
	received, forwarded = map[flowKey]float64{}, map[flowKey]float64{}
	for k, b := range got {
		received[k] = float64(b*8) / secs
	}
	for k, b := range last {
		forwarded[k] = float64((b-first[k])*8) / to.Sub(from).Seconds()
	}
	return received, forwarded
}

// counted names where UPF-U counts the downlink flows of qosSession seid
// for ue: the non-QoS flow (plainPort) and, with qosFlow, the QoS flow.
func counted(seid uint64, ue netip.Addr, qosFlow bool) map[flowKey]urrOf {
	c := map[flowKey]urrOf{{ue, plainPort}: {seid, urrPlain}}
	if qosFlow {
		c[flowKey{ue, qosFlowPort}] = urrOf{seid, urrQoS}
	}
	return c
}

func merge(ms ...map[flowKey]urrOf) map[flowKey]urrOf {
	out := map[flowKey]urrOf{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// pick is the part of m for the keys of like.
func pick(m map[flowKey]float64, like map[flowKey]urrOf) map[flowKey]float64 {
	out := map[flowKey]float64{}
	for k := range like {
		out[k] = m[k]
	}
	return out
}

// The paper's cases 1 and 2 side by side, one session each, both flows
// offered 16 Mbit/s (more than three times case 1's MBR, so the split
// holds while the lab delivers a third of it). Case 1: AMBR 10, the QoS
// flow GBR 2 MBR 5 gets GBR + (AMBR − GBR)/2 = 6 capped at 5, the non-QoS
// flow the rest: half each. Case 2: GBR 4 MBR 7 gets 7 of 10. A shaper
// sharing the AMBR in proportion to what arrives (FIFO) would give the
// QoS flows 24 % and 30 %; one ignoring the GBR, 50 % in case 2.
func TestQoSTwoFlowsShareTheAMBRFairly(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	ue1, ue2 := netip.MustParseAddr("10.60.0.11"), netip.MustParseAddr("10.60.0.19")
	l.install(t, qosSession(11, ue1, 10*labMbit, 2*labMbit, 5*labMbit))
	l.install(t, qosSession(19, ue2, 10*labMbit, 4*labMbit, 7*labMbit))
	c1, c2 := counted(11, ue1, true), counted(19, ue2, true)
	_, fwd := l.measureCounted(t, n6, merge(c1, c2), offer{ue1, qosFlowPort, 16 * labMbit}, offer{ue1, plainPort, 16 * labMbit},
		offer{ue2, qosFlowPort, 16 * labMbit}, offer{ue2, plainPort, 16 * labMbit})
	checkShares(t, "case 1", pick(fwd, c1), map[flowKey]float64{{ue1, qosFlowPort}: 5 * labMbit, {ue1, plainPort}: 5 * labMbit}, byPort)
	checkShares(t, "case 2", pick(fwd, c2), map[flowKey]float64{{ue2, qosFlowPort}: 7 * labMbit, {ue2, plainPort}: 3 * labMbit}, byPort)
	notAbove(t, "case 1", pick(fwd, c1), 10*labMbit)
	notAbove(t, "case 2", pick(fwd, c2), 10*labMbit)
}

// A flow alone gets its MBR (the meter drops red above it), and non-QoS
// traffic alone the whole AMBR (work conserving: nobody else uses it).
// Each is judged against a flow limited the same way in the same
// interval, since a loaded machine costs a meter and an AMBR bucket
// differently (a forwarder descheduled longer than a bucket's depth loses
// that credit): the QoS flow alone (MBR 5) against one of MBR 2.5, two
// thirds of the two (held to its GBR of 2, it would get a half); the
// non-QoS flow alone (AMBR 10) against that of a session with AMBR 5, two
// thirds (held to its fair share beside the idle QoS flow, a half). Every
// flow is offered twice what it should pass.
func TestQoSFlowAloneGetsItsMBRAndPlainTrafficTheAMBR(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	q, qRef := netip.MustParseAddr("10.60.0.12"), netip.MustParseAddr("10.60.0.31")
	p, pRef := netip.MustParseAddr("10.60.0.17"), netip.MustParseAddr("10.60.0.32")
	l.install(t, qosSession(12, q, 10*labMbit, 2*labMbit, 5*labMbit))
	l.install(t, qosSession(31, qRef, 10*labMbit, 2*labMbit, 5*labMbit/2))
	l.install(t, qosSession(17, p, 10*labMbit, 2*labMbit, 5*labMbit))
	l.install(t, qosSession(32, pRef, 5*labMbit, 1*labMbit, 2*labMbit))
	cq := map[flowKey]urrOf{{q, qosFlowPort}: {12, urrQoS}, {qRef, qosFlowPort}: {31, urrQoS}}
	cp := map[flowKey]urrOf{{p, plainPort}: {17, urrPlain}, {pRef, plainPort}: {32, urrPlain}}
	_, fwd := l.measureCounted(t, n6, merge(cq, cp), offer{q, qosFlowPort, 10 * labMbit}, offer{qRef, qosFlowPort, 5 * labMbit},
		offer{p, plainPort, 20 * labMbit}, offer{pRef, plainPort, 10 * labMbit})
	checkShares(t, "QoS flows alone", pick(fwd, cq), map[flowKey]float64{{q, qosFlowPort}: 5 * labMbit, {qRef, qosFlowPort}: 5 * labMbit / 2}, byUE)
	checkShares(t, "non-QoS flows alone", pick(fwd, cp), map[flowKey]float64{{p, plainPort}: 10 * labMbit, {pRef, plainPort}: 5 * labMbit}, byUE)
	notAbove(t, "QoS flow alone", pick(fwd, counted(12, q, true)), 5*labMbit)
	notAbove(t, "non-QoS flow alone", pick(fwd, counted(17, p, false)), 10*labMbit)
}

// One session's flood (four times its AMBR) does not take another
// session's rate: each gets its own AMBR, half of the two, though the
// other is offered half as much (a shared queue would give it a third).
func TestQoSFloodOfOneSessionLeavesAnotherItsAMBR(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	a, b := netip.MustParseAddr("10.60.0.13"), netip.MustParseAddr("10.60.0.14")
	l.install(t, qosSession(13, a, 5*labMbit, 1*labMbit, 2*labMbit))
	l.install(t, qosSession(14, b, 5*labMbit, 1*labMbit, 2*labMbit))
	c := merge(counted(13, a, false), counted(14, b, false))
	_, fwd := l.measureCounted(t, n6, c, offer{a, plainPort, 20 * labMbit}, offer{b, plainPort, 10 * labMbit})
	checkShares(t, "flood", fwd, map[flowKey]float64{{a, plainPort}: 5 * labMbit, {b, plainPort}: 5 * labMbit}, byUE)
	notAbove(t, "flooding session", pick(fwd, counted(13, a, false)), 5*labMbit)
}

// New rules take effect at once (the shaper is reconfigured when the
// session's seqlock moves): the QoS flow's MBR lowered from 5 to 3 Mbit/s
// caps it at 3, against a session left at 5 beside it (half of the two,
// then 3/8); a session over the shaper pool (labShapedSessions) is still
// forwarded, policed by its QERs' MBR buckets as before shaping existed
// (here the Session-AMBR QER's 10 Mbit/s), beside shaped ones.
func TestQoSRulesChangeAndSessionsBeyondThePool(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	ue, ref := netip.MustParseAddr("10.60.0.15"), netip.MustParseAddr("10.60.0.18")
	l.install(t, qosSession(15, ue, 10*labMbit, 2*labMbit, 5*labMbit))
	l.install(t, qosSession(18, ref, 10*labMbit, 2*labMbit, 5*labMbit))
	c := map[flowKey]urrOf{{ue, qosFlowPort}: {15, urrQoS}, {ref, qosFlowPort}: {18, urrQoS}}
	offers := []offer{{ue, qosFlowPort, 16 * labMbit}, {ref, qosFlowPort, 16 * labMbit}}
	_, fwd := l.measureCounted(t, n6, c, offers...)
	checkShares(t, "both at MBR 5", fwd, map[flowKey]float64{{ue, qosFlowPort}: 5 * labMbit, {ref, qosFlowPort}: 5 * labMbit}, byUE)
	l.install(t, qosSession(15, ue, 10*labMbit, 2*labMbit, 3*labMbit))
	_, fwd = l.measureCounted(t, n6, c, offers...)
	checkShares(t, "MBR 3 against 5", fwd, map[flowKey]float64{{ue, qosFlowPort}: 3 * labMbit, {ref, qosFlowPort}: 5 * labMbit}, byUE)

	// the pool holds labShapedSessions × 2 shapers, one per session and
	// direction: as many downlink-only sessions (two of them taken above),
	// and one more
	pool := map[flowKey]urrOf{}
	want := map[flowKey]float64{}
	var poolOffers []offer
	for i := range labShapedSessions*2 + 1 {
		a := netip.AddrFrom4([4]byte{10, 60, 0, byte(20 + i)})
		l.install(t, qosSession(uint64(20+i), a, 10*labMbit, 2*labMbit, 5*labMbit))
		pool[flowKey{a, plainPort}] = urrOf{uint64(20 + i), urrPlain}
		want[flowKey{a, plainPort}] = 2 * labMbit
		poolOffers = append(poolOffers, offer{a, plainPort, 2 * labMbit})
	}
	// Under every AMBR all of it passes, shaped or not; but a session
	// beyond the pool has only the QER's policer, 10 ms deep and with no
	// queue, which the bunched arrivals of a descheduled forwarder can
	// overflow on a loaded machine: it must get at least half its share.
	_, fwd = l.measureCounted(t, n6, pool, poolOffers...)
	got := shares(fwd)
	for k, w := range shares(want) {
		t.Logf("session %s: share %.3f (%.2f Mbit/s), ideal %.3f", k.ue, got[k], fwd[k]/mbit, w)
		if got[k] < w/2 {
			t.Errorf("session %s: %.3f of what was forwarded, want at least %.3f", k.ue, got[k], w/2)
		}
	}
}

// Weights (the QERs' Weight: smf.qos.weights by 5QI at the SMF, a vendor
// IE on N4) share the excess: two non-GBR flows without MBR, weighing 1
// (the default flow) and 3 (the QoS flow), both offered twice the AMBR,
// get a quarter and three quarters of it (equal weights: a half each).
// New weights in the session's rules take effect at once: swapped, the
// shares swap.
func TestQoSWeightsShareTheExcess(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	ue := netip.MustParseAddr("10.60.0.16")
	weighted := func(plain, qos uint16) *rules.Session {
		s := qosSession(16, ue, 8*labMbit, 0, 0)
		s.QERs[0].Weight, s.QERs[1].Weight = plain, qos
		return s
	}
	l.install(t, weighted(1, 3))
	c := counted(16, ue, true)
	offers := []offer{{ue, qosFlowPort, 16 * labMbit}, {ue, plainPort, 16 * labMbit}}
	_, fwd := l.measureCounted(t, n6, c, offers...)
	checkShares(t, "weights 1:3", fwd, map[flowKey]float64{{ue, plainPort}: 2 * labMbit, {ue, qosFlowPort}: 6 * labMbit}, byPort)
	notAbove(t, "weights 1:3", fwd, 8*labMbit)
	l.install(t, weighted(3, 1))
	_, fwd = l.measureCounted(t, n6, c, offers...)
	checkShares(t, "weights 3:1", fwd, map[flowKey]float64{{ue, plainPort}: 6 * labMbit, {ue, qosFlowPort}: 2 * labMbit}, byPort)
}

// An End Marker follows every packet sent into the old tunnel (TS 29.281
// 7.3.2), also those a shaper still held when the path switched: UPF-U
// sends the session's queue first.
func TestQoSQueueLeavesBeforeTheEndMarker(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	ue := netip.MustParseAddr("10.60.0.30")
	s := qosSession(30, ue, 1*mbit, 0, 0) // 1 Mbit/s: a 1000-byte packet every 8 ms
	l.install(t, s)
	payload := make([]byte, pktBytes-28)
	const sent = 6 // one burst: all six fit the 50 ms queue (6,250 bytes at 1 Mbit/s)
	for range sent {
		l.dn.send(t, eth(n6, dnMAC, 0x0800, ipv4(dnIP, ue, 17, 64, udp(plainPort, 40000, payload))))
	}
	// the third left the queue: UPF-U is shaping the session's packets
	for range 3 {
		if _, err := l.gnb.recv(wait, func(f []byte) bool { return isGTPU(f) && f[43] == 0xff }); err != nil {
			t.Fatal(err)
		}
	}
	l.install(t, forwarding(s, gnbTEID+1))
	if err := l.table.SendEndMarker(30, rules.OuterHeader{TEID: gnbTEID, PeerIPv4: gnbIP}); err != nil {
		t.Fatal(err)
	}
	old, fresh, afterEM := 3, 0, 0
	seenEM := false
	// Until every packet and the End Marker came (a UPF-U or test process
	// descheduled for a while on a loaded CI machine only makes them late):
	// the verdict is their order, and a missing one still fails at the bound.
	for end := time.Now().Add(10 * wait); (!seenEM || old+fresh < sent) && time.Now().Before(end); {
		f, err := l.gnb.recv(20*time.Millisecond, func(f []byte) bool { return isGTPU(f) })
		if err != nil {
			continue
		}
		switch {
		case f[43] == 254:
			seenEM = true
		case f[43] == 0xff && binary.BigEndian.Uint32(f[46:]) == gnbTEID:
			old++
			if seenEM {
				afterEM++
			}
		case f[43] == 0xff:
			fresh++
		}
	}
	if !seenEM || old+fresh != sent || afterEM != 0 {
		t.Fatalf("End Marker seen %v; %d packets in the old tunnel, %d in the new (want %d in all), %d old ones after the End Marker (want 0)",
			seenEM, old, fresh, sent, afterEM)
	}
}
