package smf

import "slices"

// FlowView is one QoS flow of a session as the admin API shows it (what
// `l25gc session show` prints and feeds to qos.FairShare): its QFI, 5QI,
// GBR/MBR per direction in bit/s (0 = none) and its SDF filters (none for
// the default flow), and its weight in the fair share.
type FlowView struct {
	QFI            uint8    `json:"qfi"`
	FiveQI         uint8    `json:"5qi"`
	GBRFlow        bool     `json:"gbrFlow"`
	GBRUplinkBps   uint64   `json:"gbrUplinkBps"`
	GBRDownlinkBps uint64   `json:"gbrDownlinkBps"`
	MBRUplinkBps   uint64   `json:"mbrUplinkBps"`
	MBRDownlinkBps uint64   `json:"mbrDownlinkBps"`
	Filters        []string `json:"filters,omitempty"`
	PCCRuleID      string   `json:"pccRuleId,omitempty"`
	// Pending: at the UPF, but the gNB has not confirmed it yet (TS 23.502
	// 4.3.3.2 step 11).
	Pending bool `json:"pending,omitempty"`
	// Weight is the flow's share of the AMBR left after the GBRs, as its
	// QER tells the UPF (smf.qos.weights by 5QI; 1 when none is given).
	Weight uint16 `json:"weight"`
}

// flowViews shows the session's flows, then those still pending.
func (c *smContext) flowViews() []FlowView {
	out := make([]FlowView, 0, len(c.flows)+len(c.pending))
	for i, f := range append(slices.Clip(c.flows), c.pending...) {
		out = append(out, FlowView{Pending: i >= len(c.flows), QFI: f.QFI, FiveQI: f.FiveQI, GBRFlow: f.GBR, GBRUplinkBps: f.GBRUp, GBRDownlinkBps: f.GBRDown,
			MBRUplinkBps: f.MBRUp, MBRDownlinkBps: f.MBRDown, Filters: f.Filters, PCCRuleID: f.PCCRuleID, Weight: max(c.flowQER(f).Weight, 1)})
	}
	return out
}
