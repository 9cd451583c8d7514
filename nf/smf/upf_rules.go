package smf

// The N4 rules of a PDU session (TS 29.244 5.2, TS 23.501 5.8.2.11): per
// QoS flow an uplink PDR (the UPF's F-TEID, the flow's QFI and SDF
// filters), a downlink PDR (the UE's address and the SDF filters) and a
// flow QER (the QFI, its GBR and MBR); one session-level QER (QFI 0, MBR =
// the Session-AMBR, TS 29.244 5.2.4 / TS 23.501 5.7.2.6) that every PDR
// lists last, so the UPF shares the AMBR among all the session's flows;
// two FARs shared by all flows (uplink to the data network, downlink into
// the gNB's tunnel) and one URR counting the session's volume.

import (
	"net/netip"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/upf/rules"
)

const (
	farUplink   uint32 = 1
	farDownlink uint32 = 2
	urrSession  uint32 = 1
	chooseN3    uint8  = 1 // every uplink PDR shares one F-TEID UPF-C picks (TS 29.244 5.2.1, CHOOSE ID)
)

// qerSession is the session-level QER: above every QFI's flow QER (QFIs
// are 1..63, TS 23.501 5.7.1.1).
const qerSession uint32 = 64

func pdrUplink(qfi uint8) uint16   { return 2*uint16(qfi) - 1 }
func pdrDownlink(qfi uint8) uint16 { return 2 * uint16(qfi) }
func qerOf(qfi uint8) uint32       { return uint32(qfi) }

// sessionRules are the rules a new session is established with: the
// downlink FAR drops until the gNB's tunnel is known (step 16 of TS 23.502
// 4.3.2.2.1 adds it).
func (c *smContext) sessionRules(cpAddr netip.Addr) *rules.Session {
	s := &rules.Session{CPSEID: c.cpSEID, CPAddr: cpAddr, Rules: rules.Rules{
		FARs: []rules.FAR{
			{ID: farUplink, Action: rules.ActionForward, Destination: rules.Core, NetworkInstance: c.dnn},
			{ID: farDownlink, Action: rules.ActionDrop, Destination: rules.Access},
		},
		URRs: []rules.URR{{ID: urrSession}},
		QERs: []rules.QER{c.sessionQER()},
	}}
	for _, f := range c.flows {
		s.PDRs = append(s.PDRs, c.flowPDRs(f, &rules.FTEID{Choose: true, ChooseID: chooseN3})...)
		s.QERs = append(s.QERs, c.flowQER(f))
	}
	return s
}

// flowPDRs are the two PDRs of flow f; uplink packets arrive on local.
func (c *smContext) flowPDRs(f qosFlow, local *rules.FTEID) []rules.PDR {
	prec := uint32(f.Precedence)
	ul := rules.PDR{ID: pdrUplink(f.QFI), Precedence: prec, Source: rules.Access, LocalFTEID: local,
		UEIPv4: c.ueIP, NetworkInstance: c.dnn, SDFFilters: f.Filters, OuterHeaderRemoval: true,
		FARID: farUplink, QERIDs: flowQERIDs(f), URRIDs: []uint32{urrSession}}
	if len(f.Filters) > 0 {
		ul.QFI = f.QFI // TS 29.244 5.2.1: the UE marks the flow's QFI uplink
	}
	dl := rules.PDR{ID: pdrDownlink(f.QFI), Precedence: prec, Source: rules.Core, UEIPv4: c.ueIP,
		NetworkInstance: c.dnn, SDFFilters: f.Filters, FARID: farDownlink,
		QERIDs: flowQERIDs(f), URRIDs: []uint32{urrSession}}
	return []rules.PDR{ul, dl}
}

// flowQERIDs: the flow's own QER first, the session-level one last (the
// order the UPF applies them: flow meter, then the session's AMBR shaper).
func flowQERIDs(f qosFlow) []uint32 { return []uint32{qerOf(f.QFI), qerSession} }

// flowQER marks the flow's QFI and carries its GBR and MBR (0 = none: the
// default, non-GBR flow has neither and takes its share of the AMBR) and
// its 5QI's weight in that share (smf.qos.weights; 0 when the operator
// gave none, so N4 carries only TS 29.244's IEs). A flow whose 5QI a
// policy changes gets an Update QER (sameQoS compares 5QIs), so its
// weight follows.
func (c *smContext) flowQER(f qosFlow) rules.QER {
	return rules.QER{ID: qerOf(f.QFI), QFI: f.QFI, GateULOpen: true, GateDLOpen: true,
		MBRUL: f.MBRUp, MBRDL: f.MBRDown, GBRUL: f.GBRUp, GBRDL: f.GBRDown, Weight: c.weights.Weight(f.FiveQI)}
}

// sessionQER is the session-level QER: QFI 0, MBR = the Session-AMBR per
// direction (TS 23.501 5.7.2.6: the UPF enforces the Session-AMBR over
// all non-GBR flows; here over all flows, GBR ones first served their GBR).
func (c *smContext) sessionQER() rules.QER { return sessionQERWith(c.ambrUp, c.ambrDown) }

func sessionQERWith(ambrUp, ambrDown uint64) rules.QER {
	return rules.QER{ID: qerSession, GateULOpen: true, GateDLOpen: true, MBRUL: ambrUp, MBRDL: ambrDown}
}

// downlinkTo points the downlink FAR at the gNB's tunnel (TS 29.244
// 8.2.56 Outer Header Creation, GTP-U/UDP/IPv4).
func downlinkTo(dl ngapx.Tunnel) *rules.Modification {
	return &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{{ID: farDownlink, Action: rules.ActionForward,
		Destination: rules.Access, OuterHeader: &rules.OuterHeader{TEID: dl.TEID, PeerIPv4: dl.IPv4}}}}}
}

// downlinkBuffered takes the gNB's tunnel away and has the UPF buffer
// downlink data and report the first packet (AN release, TS 23.502 4.2.6
// step 5; TS 29.244 5.2.3: BUFF|NOCP), which starts paging (4.2.3.3).
func downlinkBuffered() *rules.Modification {
	return &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{{ID: farDownlink,
		Action: rules.ActionBuffer | rules.ActionNotify, Destination: rules.Access}}}}
}

// downlinkDiscarded drops what the UPF buffered for a UE that could not be
// reached (TS 23.502 4.2.3.3 step 3c: the SMF tells the UPF to discard).
func downlinkDiscarded() *rules.Modification {
	return &rules.Modification{Update: rules.Rules{FARs: []rules.FAR{{ID: farDownlink, Action: rules.ActionDrop, Destination: rules.Access}}}}
}

// downlinkSwitched moves the downlink to another gNB's tunnel and asks the
// UPF for End Markers on the old one (TS 23.502 4.9.1.2.2 step 6,
// 4.9.1.3.3 step 6; TS 29.281 7.3.2).
func downlinkSwitched(dl ngapx.Tunnel) *rules.Modification {
	m := downlinkTo(dl)
	m.Update.FARs[0].SendEndMarker = true
	return m
}

// addFlows creates the PDRs and QERs of new flows; their uplink PDRs
// share the session's F-TEID.
func (c *smContext) addFlows(flows []qosFlow) *rules.Modification {
	m := &rules.Modification{}
	for _, f := range flows {
		m.Create.PDRs = append(m.Create.PDRs, c.flowPDRs(f, &rules.FTEID{TEID: c.ul.TEID, IPv4: c.ul.IPv4})...)
		m.Create.QERs = append(m.Create.QERs, c.flowQER(f))
	}
	return m
}

// removeFlows deletes the PDRs and QERs of flows.
func removeFlows(flows []qosFlow) *rules.Modification {
	m := &rules.Modification{}
	for _, f := range flows {
		m.Remove.PDRs = append(m.Remove.PDRs, pdrUplink(f.QFI), pdrDownlink(f.QFI))
		m.Remove.QERs = append(m.Remove.QERs, qerOf(f.QFI))
	}
	return m
}
