package amf

// NGAP Paging (TS 38.413 8.5.1; TS 23.502 4.2.3.3 step 4b): the AMF pages a
// CM-IDLE UE by its 5G-S-TMSI through every gNB that serves a TA of the
// UE's registration area. The registration area this AMF gives in
// Registration Accept is all its TAs (gmm_registration.go), so that is
// the TAI List for Paging.

import (
	"slices"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// sendPaging writes one Paging to each gNB serving the registration area
// of the UE supi; it counts the gNBs reached.
func (n *NF) sendPaging(s nasx.STMSI, supi string) int {
	b := n.built("Paging")(ngapx.BuildPaging(ngapx.Paging{STMSI: s, TAIs: n.pagingArea()}))
	if b == nil {
		return 0
	}
	// No RAN UE NGAP ID to join on: the paging breakdown pairs it with the
	// simulator's receive by SUPI (internal/tracing paging.go).
	n.trace.SentPaging(supi)
	sent := 0
	for _, g := range n.pagingGNBs() {
		n.metrics.pagingMessages.Inc()
		if err := g.conn.WriteMsg(b, 0); err != nil { // non-UE-associated (TS 38.412 7)
			n.log.Warn("N2 write", "gnb", g.id, "err", err)
			continue
		}
		sent++
	}
	if sent == 0 {
		n.log.Info("paging reached no gNB", "tmsi", s.TMSI)
	}
	return sent
}

// pagingArea is the TAI List for Paging: the registration area, at most
// the 16 TAIs an NGAP Paging holds (TS 38.413 9.4.7).
func (n *NF) pagingArea() []domain.TAI {
	return n.tais[:min(len(n.tais), 16)]
}

// pagingGNBs are the gNBs (after NG Setup) serving a TA of the area.
func (n *NF) pagingGNBs() []*gnb {
	area := n.pagingArea()
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*gnb
	for _, g := range n.gnbs {
		if tas := g.tais.Load(); g.ready.Load() && tas != nil && slices.ContainsFunc(*tas, func(t domain.TAI) bool {
			return slices.Contains(area, t)
		}) {
			out = append(out, g)
		}
	}
	return out
}

// servedTAIs are the TAs of ours in a gNB's Supported TA List, kept with
// the gNB for paging.
func (n *NF) servedTAIs(tas []ngapx.SupportedTA) []domain.TAI {
	var out []domain.TAI
	for _, ta := range tas {
		for _, p := range ta.PLMNs {
			if t := (domain.TAI{PLMN: p.PLMN, TAC: ta.TAC}); slices.Contains(n.tais, t) && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}
