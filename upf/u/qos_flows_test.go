package u_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/l25gc/l25gc/qos"
	"github.com/l25gc/l25gc/upf/rules"
)

// eightFlowSession is bench qos --flows 8 at a fifth of its rates, in
// labMbit (a twentieth in Mbit/s): the default flow (QER 1) and seven QoS
// flows, flow i (1..7) matched by DN port qosFlowPort+i with GBR
// (i%3+1)·0.4 and MBR (i%4+2)·0.8 labMbit (the smallest MBR, 1.6 labMbit,
// meters 2 packets of pktBytes over its 50 ms), each with its uplink and
// downlink PDR, under a Session-AMBR of 16 labMbit (the session-level QER
// 64, listed last by every PDR): 16 PDRs and 9 QERs, the most a session
// holds besides the handover's forwarding PDR.
func eightFlowSession(seid uint64, ue netip.Addr, ambr uint64) (*rules.Session, []qos.FairFlow) {
	s := session(seid, ue, upTEID+uint32(seid), gnbTEID, qfi)
	s.PDRs[0].QERIDs = []uint32{1, 64}
	s.PDRs[1].QERIDs = []uint32{1, 64}
	s.QERs = append(s.QERs, rules.QER{ID: 64, GateULOpen: true, GateDLOpen: true, MBRUL: ambr, MBRDL: ambr})
	flows := []qos.FairFlow{{Active: true}}
	for i := 1; i < rules.MaxQoSFlows; i++ {
		gbr, mbr := uint64(i%3+1)*2*labMbit/5, uint64(i%4+2)*4*labMbit/5
		q := uint8(10 + i)
		sdf := []string{fmt.Sprintf("permit out 17 from %s %d to assigned", dnIP, qosFlowPort+i)}
		ul := s.PDRs[0]
		ul.ID, ul.Precedence, ul.QFI, ul.SDFFilters, ul.QERIDs = uint16(2*i+1), 100, q, sdf, []uint32{uint32(1 + i), 64}
		dl := s.PDRs[1]
		dl.ID, dl.Precedence, dl.SDFFilters, dl.QERIDs = uint16(2*i+2), 100, sdf, []uint32{uint32(1 + i), 64}
		s.PDRs = append(s.PDRs, ul, dl)
		s.QERs = append(s.QERs, rules.QER{ID: uint32(1 + i), QFI: q, GateULOpen: true, GateDLOpen: true,
			GBRUL: gbr, GBRDL: gbr, MBRUL: mbr, MBRDL: mbr})
		flows = append(flows, qos.FairFlow{GBR: gbr, MBR: mbr, Active: true})
	}
	return s, flows
}

// Eight flows of one session, each offered 10 labMbit (80 in all, five
// times the AMBR, and two and a half times the largest MBR, so the split
// holds while the lab delivers less than half of it), share what the
// session passes as qos.FairShare computes (GBRs first, the rest shared
// equally, MBRs capping) through a real UPF-U. A session has at most 4
// URRs, so the shares here are those the gNB end received: loss on the way
// takes from every flow alike. The seven QoS flows (GBR, MBR) are judged
// by their shares of what they passed together; the default flow, which
// alone has no MBR, only by not getting less than its share: when a
// loaded machine costs the others meter credit (a forwarder descheduled
// longer than a meter's 50 ms depth), work conservation hands it what
// they leave.
func TestQoSEightFlowsShareTheAMBRMaxMin(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	ue := netip.MustParseAddr("10.60.0.16")
	const ambr, offered = 16 * labMbit, 10 * labMbit
	s, flows := eightFlowSession(16, ue, ambr)
	l.install(t, s)
	ports := []uint16{plainPort}
	for i := 1; i < len(flows); i++ {
		ports = append(ports, uint16(qosFlowPort+i))
		flows[i].MBR = min(flows[i].MBR, offered) // what a flow offers caps it too
	}
	flows[0].MBR = offered
	share, err := qos.FairShare(ambr, flows)
	if err != nil {
		t.Fatal(err)
	}
	var offers []offer
	want := map[flowKey]float64{}
	for i, p := range ports {
		offers = append(offers, offer{ue, p, offered})
		if i > 0 {
			want[flowKey{ue, p}] = float64(share.Rates[i])
		}
	}
	r := l.measure(t, n6, offers...)
	checkShares(t, "the seven QoS flows", r, want, byPort)
	notAbove(t, "the session", r, ambr)
	def, all := shares(r)[flowKey{ue, plainPort}], float64(ambr)
	t.Logf("default flow: share %.3f of the session, ideal %.3f", def, float64(share.Rates[0])/all)
	if ideal := float64(share.Rates[0]) / all; def < ideal*(1-shareTolerance) {
		t.Errorf("default flow: %.3f of the session, want at least %.3f", def, ideal)
	}
}
