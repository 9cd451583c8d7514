package pfcpx

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/upf/rules"
)

// IEs to rules: what UPF-C reads (TS 29.244 7.5.2, 7.5.4). Each function
// checks the IEs TS 29.244 marks mandatory and answers a missing one with
// cause 66 and an incorrect one with 69, naming the IE (7.2.2.4.2).

// PDROf reads a Create PDR.
func PDROf(ie *PDRIE) (rules.PDR, error) {
	const where = "Create PDR"
	switch {
	case ie.PDRID == nil:
		return rules.PDR{}, missing(IEPDRID, where)
	case ie.Precedence == nil:
		return rules.PDR{}, missing(IEPrecedence, where)
	case ie.PDI == nil:
		return rules.PDR{}, missing(IEPDI, where)
	case ie.FARID == nil:
		// TS 29.244 7.5.2.2-1: C, present unless the PDR activates
		// predefined rules, which this user plane has none of.
		return rules.PDR{}, &Error{Cause: CauseConditionalIEMissing, OffendingIE: IEFARID, Detail: fmt.Sprintf("PDR %d has no FAR ID", ie.PDRID.RuleId)}
	}
	p := rules.PDR{ID: ie.PDRID.RuleId}
	if err := patchPDR(&p, ie); err != nil {
		return p, err
	}
	return p, nil
}

// PatchPDR applies an Update PDR to p: each IE present replaces what it
// names (TS 29.244 7.5.4.2; the PDI and the URR/QER ID lists whole).
func PatchPDR(p *rules.PDR, ie *PDRIE) error {
	if ie.PDRID == nil {
		return missing(IEPDRID, "Update PDR")
	}
	return patchPDR(p, ie)
}

func patchPDR(p *rules.PDR, ie *PDRIE) error {
	if ie.Precedence != nil {
		p.Precedence = ie.Precedence.PrecedenceValue
	}
	if ie.PDI != nil {
		if err := readPDI(p, ie.PDI); err != nil {
			return err
		}
	}
	if r := ie.OuterHeaderRemoval; r != nil {
		if r.OuterHeaderRemovalDescription != pfcpType.OuterHeaderRemovalGtpUUdpIpv4 {
			return incorrect(IEOuterHeaderRemoval, "PDR %d: outer header removal %d; this UPF removes GTP-U/UDP/IPv4 (0) only", p.ID, r.OuterHeaderRemovalDescription)
		}
		p.OuterHeaderRemoval = true
	}
	if ie.FARID != nil {
		p.FARID = ie.FARID.FarIdValue
	}
	if ie.QERID != nil {
		p.QERIDs = nil
		for _, q := range ie.QERID {
			p.QERIDs = append(p.QERIDs, q.QERID)
		}
	}
	if ie.URRID != nil {
		p.URRIDs = nil
		for _, u := range ie.URRID {
			p.URRIDs = append(p.URRIDs, u.UrrIdValue)
		}
	}
	return nil
}

// readPDI replaces p's packet detection information.
func readPDI(p *rules.PDR, pdi *PDI) error {
	if pdi.SourceInterface == nil {
		return missing(IESourceInterface, "PDI")
	}
	if v := pdi.SourceInterface.InterfaceValue; v > uint8(rules.CPFunction) {
		return incorrect(IESourceInterface, "PDR %d: source interface %d (TS 29.244 8.2.2: 0..3)", p.ID, v)
	}
	p.Source = rules.Interface(pdi.SourceInterface.InterfaceValue)
	p.LocalFTEID, p.UEIPv4, p.NetworkInstance, p.QFI, p.SDFFilters = nil, netip.Addr{}, "", 0, nil
	if pdi.LocalFTEID != nil {
		f, err := fteidFrom(pdi.LocalFTEID)
		if err != nil {
			return err
		}
		p.LocalFTEID = &f
	}
	if pdi.NetworkInstance != nil {
		p.NetworkInstance = pdi.NetworkInstance.Name
	}
	if u := pdi.UEIPAddress; u != nil {
		a, ok := addrFrom(u.Ipv4Address)
		if !u.V4 || !ok {
			return incorrect(IEUEIPAddress, "PDR %d: UE IP address without IPv4 (this UPF serves IPv4 sessions)", p.ID)
		}
		p.UEIPv4 = a
	}
	for _, f := range pdi.SDFFilter {
		if !f.Fd || len(f.FlowDescription) == 0 {
			return incorrect(IESDFFilter, "PDR %d: SDF filter without a flow description (the only kind this UPF matches)", p.ID)
		}
		p.SDFFilters = append(p.SDFFilters, string(f.FlowDescription))
	}
	switch len(pdi.QFI) {
	case 0:
	case 1:
		p.QFI = pdi.QFI[0].QFI
	default:
		return &Error{Cause: CauseServiceNotSupported, OffendingIE: IEQFI, Detail: fmt.Sprintf("PDR %d matches %d QFIs; this UPF matches one", p.ID, len(pdi.QFI))}
	}
	return nil
}

func fteidFrom(f *pfcpType.FTEID) (rules.FTEID, error) {
	if f.Ch {
		if !f.V4 {
			return rules.FTEID{}, &Error{Cause: CauseInvalidFTEIDAllocation, OffendingIE: IEFTEID, Detail: "F-TEID to choose without V4 (this UPF allocates IPv4 F-TEIDs)"}
		}
		return rules.FTEID{Choose: true, ChooseID: f.ChooseId}, nil
	}
	a, ok := addrFrom(f.Ipv4Address)
	if !f.V4 || !ok {
		return rules.FTEID{}, incorrect(IEFTEID, "F-TEID %#x without an IPv4 address", f.Teid)
	}
	return rules.FTEID{TEID: f.Teid, IPv4: a}, nil
}

// FAROf reads a Create FAR.
func FAROf(ie *CreateFAR) (rules.FAR, error) {
	switch {
	case ie.FARID == nil:
		return rules.FAR{}, missing(IEFARID, "Create FAR")
	case ie.ApplyAction == nil:
		return rules.FAR{}, missing(IEApplyAction, "Create FAR")
	}
	f := rules.FAR{ID: ie.FARID.FarIdValue}
	if err := patchFAR(&f, ie.ApplyAction, ie.ForwardingParameters); err != nil {
		return rules.FAR{}, err
	}
	if f.Action&rules.ActionForward != 0 && ie.ForwardingParameters == nil {
		return rules.FAR{}, &Error{Cause: CauseConditionalIEMissing, OffendingIE: IEForwardingParameters,
			Detail: fmt.Sprintf("FAR %d forwards without Forwarding Parameters (TS 29.244 7.5.2.3-1)", f.ID)}
	}
	f.SendEndMarker = false // SNDEM belongs to Update Forwarding Parameters only (7.5.4.3-2)
	return f, nil
}

// PatchFAR applies an Update FAR to f (TS 29.244 7.5.4.3).
func PatchFAR(f *rules.FAR, ie *UpdateFAR) error {
	if ie.FARID == nil {
		return missing(IEFARID, "Update FAR")
	}
	return patchFAR(f, ie.ApplyAction, ie.UpdateForwardingParameters)
}

func patchFAR(f *rules.FAR, aa *pfcpType.ApplyAction, fp *ForwardingParameters) error {
	if aa != nil {
		a, err := applyActionFrom(f.ID, aa)
		if err != nil {
			return err
		}
		f.Action = a
	}
	if fp == nil {
		return nil
	}
	if fp.DestinationInterface != nil {
		if v := fp.DestinationInterface.InterfaceValue; v > uint8(rules.CPFunction) {
			return incorrect(IEDestinationInterface, "FAR %d: destination interface %d (TS 29.244 8.2.24: 0..4, LI not served)", f.ID, v)
		}
		f.Destination = rules.Interface(fp.DestinationInterface.InterfaceValue)
	}
	if fp.NetworkInstance != nil {
		f.NetworkInstance = fp.NetworkInstance.Name
	}
	if oh := fp.OuterHeaderCreation; oh != nil {
		a, ok := addrFrom(oh.Ipv4Address)
		if oh.OuterHeaderCreationDescription&0xff != pfcpType.OuterHeaderCreationGtpUUdpIpv4 || !ok {
			return incorrect(IEOuterHeaderCreation, "FAR %d: outer header creation %#x; this UPF creates GTP-U/UDP/IPv4 only", f.ID, oh.OuterHeaderCreationDescription)
		}
		f.OuterHeader = &rules.OuterHeader{TEID: oh.Teid, PeerIPv4: a}
	}
	// TS 29.244 8.2.58 SNDEM: a one-off request, the UP function sends
	// End Marker into the tunnel this update replaces.
	f.SendEndMarker = fp.PFCPSMReqFlags != nil && fp.PFCPSMReqFlags.Sndem
	return nil
}

// applyActionFrom: exactly one of DROP, FORW, BUFF (TS 29.244 8.2.26);
// NOCP only with BUFF.
func applyActionFrom(far uint32, aa *pfcpType.ApplyAction) (rules.ApplyAction, error) {
	var a rules.ApplyAction
	n := 0
	for _, b := range []struct {
		set bool
		bit rules.ApplyAction
	}{{aa.Drop, rules.ActionDrop}, {aa.Forw, rules.ActionForward}, {aa.Buff, rules.ActionBuffer}} {
		if b.set {
			a |= b.bit
			n++
		}
	}
	if n != 1 || (aa.Nocp && !aa.Buff) || aa.Dupl {
		return 0, incorrect(IEApplyAction, "FAR %d: apply action %+v; want one of DROP, FORW, BUFF (NOCP with BUFF)", far, *aa)
	}
	if aa.Nocp {
		a |= rules.ActionNotify
	}
	return a, nil
}

// QEROf reads a Create QER.
func QEROf(ie *QERIE) (rules.QER, error) {
	switch {
	case ie.QERID == nil:
		return rules.QER{}, missing(IEQERID, "Create QER")
	case ie.GateStatus == nil:
		return rules.QER{}, missing(IEGateStatus, "Create QER")
	}
	q := rules.QER{ID: ie.QERID.QERID}
	if err := PatchQER(&q, ie); err != nil {
		return q, err
	}
	return q, nil
}

// PatchQER applies a Create or Update QER to q (TS 29.244 7.5.4.5).
func PatchQER(q *rules.QER, ie *QERIE) error {
	if ie.QERID == nil {
		return missing(IEQERID, "Update QER")
	}
	if g := ie.GateStatus; g != nil {
		if g.ULGate > 1 || g.DLGate > 1 {
			return incorrect(IEGateStatus, "QER %d: gate status UL %d DL %d (TS 29.244 8.2.7: 0 open, 1 closed)", q.ID, g.ULGate, g.DLGate)
		}
		q.GateULOpen, q.GateDLOpen = g.ULGate == pfcpType.GateOpen, g.DLGate == pfcpType.GateOpen
	}
	if m := ie.MaximumBitrate; m != nil {
		q.MBRUL, q.MBRDL = BpsOf(m.ULMBR), BpsOf(m.DLMBR)
	}
	if g := ie.GuaranteedBitrate; g != nil {
		q.GBRUL, q.GBRDL = BpsOf(g.ULGBR), BpsOf(g.DLGBR)
	}
	if ie.QFI != nil {
		if ie.QFI.QFI > 63 {
			return incorrect(IEQFI, "QER %d: QFI %d (TS 23.501 5.7.1.1: 0..63)", q.ID, ie.QFI.QFI)
		}
		q.QFI = ie.QFI.QFI
	}
	w, err := weightOf(q.ID, ie.Weight)
	if err != nil {
		return err
	}
	if w != 0 { // absent: 1 in a Create QER (Weight 0), unchanged in an Update QER
		q.Weight = w
	}
	return nil
}

// URROf reads a Create URR.
func URROf(ie *URRIE) (rules.URR, error) {
	switch {
	case ie.URRID == nil:
		return rules.URR{}, missing(IEURRID, "Create URR")
	case ie.MeasurementMethod == nil:
		return rules.URR{}, missing(IEMeasurementMethod, "Create URR")
	case ie.ReportingTriggers == nil:
		return rules.URR{}, missing(IEReportingTriggers, "Create URR")
	}
	u := rules.URR{ID: ie.URRID.UrrIdValue}
	if err := PatchURR(&u, ie); err != nil {
		return u, err
	}
	return u, nil
}

// PatchURR applies a Create or Update URR to u (TS 29.244 7.5.4.4).
func PatchURR(u *rules.URR, ie *URRIE) error {
	if ie.URRID == nil {
		return missing(IEURRID, "Update URR")
	}
	if t := ie.VolumeThreshold; t != nil {
		switch {
		case t.Tovol:
			u.VolumeThreshold = t.TotalVolume
		case t.Ulvol || t.Dlvol:
			u.VolumeThreshold = t.UplinkVolume + t.DownlinkVolume
		}
	}
	return nil
}

// RulesOf reads the Create IEs of a request into rules, checking each.
func RulesOf(pdrs []*PDRIE, fars []*CreateFAR, qers []*QERIE, urrs []*URRIE) (rules.Rules, error) {
	var r rules.Rules
	for _, ie := range pdrs {
		p, err := PDROf(ie)
		if err != nil {
			return r, err
		}
		r.PDRs = append(r.PDRs, p)
	}
	for _, ie := range fars {
		f, err := FAROf(ie)
		if err != nil {
			return r, err
		}
		r.FARs = append(r.FARs, f)
	}
	for _, ie := range qers {
		q, err := QEROf(ie)
		if err != nil {
			return r, err
		}
		r.QERs = append(r.QERs, q)
	}
	for _, ie := range urrs {
		u, err := URROf(ie)
		if err != nil {
			return r, err
		}
		r.URRs = append(r.URRs, u)
	}
	return r, nil
}

// SessionOf reads a Session Establishment Request: the session as the CP
// function asks for it (UP SEID 0, F-TEIDs to choose still unchosen).
func SessionOf(req *SessionEstablishmentRequest) (*rules.Session, error) {
	const where = "Session Establishment Request"
	switch {
	case req.NodeID == nil:
		return nil, missing(IENodeID, where)
	case req.CPFSEID == nil:
		return nil, missing(IEFSEID, where)
	case len(req.CreatePDR) == 0:
		return nil, missing(IECreatePDR, where)
	case len(req.CreateFAR) == 0:
		return nil, missing(IECreateFAR, where)
	}
	cp, ok := addrFrom(req.CPFSEID.Ipv4Address)
	if !req.CPFSEID.V4 || !ok {
		return nil, incorrect(IEFSEID, "CP F-SEID without an IPv4 address")
	}
	r, err := RulesOf(req.CreatePDR, req.CreateFAR, req.CreateQER, req.CreateURR)
	if err != nil {
		return nil, err
	}
	return &rules.Session{CPSEID: req.CPFSEID.Seid, CPAddr: cp, Rules: r}, nil
}

// NodeAddr is the address of an IPv4 or IPv6 Node ID, or false for an
// FQDN or a malformed one.
func NodeAddr(n *pfcpType.NodeID) (netip.Addr, bool) {
	if n == nil || n.NodeIdType == pfcpType.NodeIdTypeFqdn {
		return netip.Addr{}, false
	}
	return addrFrom(n.IP)
}

// NodeKey names a Node ID: its address, or its FQDN.
func NodeKey(n *pfcpType.NodeID) string {
	if a, ok := NodeAddr(n); ok {
		return a.String()
	}
	return n.FQDN
}

// UsagesOf reads usage reports.
func UsagesOf(reports []*UsageReport) []rules.Usage {
	var out []rules.Usage
	for _, r := range reports {
		if r.URRID == nil {
			continue
		}
		u := rules.Usage{URRID: r.URRID.UrrIdValue}
		if v := r.VolumeMeasurement; v != nil {
			u.UplinkBytes, u.DownlinkBytes = v.UplinkVolume, v.DownlinkVolume
			u.UplinkPackets, u.DownlinkPackets = v.UplinkPktNum, v.DownlinkPktNum
		}
		out = append(out, u)
	}
	return out
}

// EstablishedOf reads an accepting Session Establishment Response.
func EstablishedOf(rsp *SessionEstablishmentResponse) (*rules.Established, error) {
	if rsp.UPFSEID == nil {
		return nil, missing(IEFSEID, "Session Establishment Response")
	}
	fteids, err := CreatedFTEIDsOf(rsp.CreatedPDR)
	if err != nil {
		return nil, err
	}
	return &rules.Established{UPSEID: rsp.UPFSEID.Seid, FTEIDs: fteids}, nil
}

// CreatedFTEIDsOf reads the F-TEIDs the UPF chose, by PDR ID (Created PDR,
// TS 29.244 7.5.3.2, 7.5.5.2).
func CreatedFTEIDsOf(created []*CreatedPDR) (map[uint16]rules.FTEID, error) {
	out := map[uint16]rules.FTEID{}
	for _, c := range created {
		if c.PDRID == nil || c.LocalFTEID == nil {
			continue
		}
		f, err := fteidFrom(c.LocalFTEID)
		if err != nil {
			return nil, err
		}
		out[c.PDRID.RuleId] = f
	}
	return out, nil
}

// ResponseError is the rejection a response's Cause says, or nil when it
// accepts (TS 29.244 8.2.1: 1 accepted, 64 and up rejected).
func ResponseError(cause *pfcpType.Cause, offending *pfcpType.OffendingIE, failed *pfcpType.FailedRuleID) *Error {
	if cause == nil {
		return &Error{Cause: CauseMandatoryIEMissing, OffendingIE: IECause, Detail: "response without Cause"}
	}
	if cause.CauseValue == CauseAccepted {
		return nil
	}
	e := &Error{Cause: cause.CauseValue}
	if offending != nil {
		e.OffendingIE = offending.TypeOfOffendingIe
	}
	if failed != nil {
		e.Rule = &FailedRule{Type: failed.RuleIdType, ID: ruleIDValue(failed.RuleIdValue)}
		e.Detail = fmt.Sprintf("failed rule %s %d", ruleTypeName(e.Rule.Type), e.Rule.ID)
	}
	return e
}

func ruleIDValue(b []byte) uint32 {
	var v uint32
	for _, x := range b {
		v = v<<8 | uint32(x)
	}
	return v
}

func ruleTypeName(t uint8) string {
	if int(t) < len(ruleTypes) {
		return ruleTypes[t]
	}
	return fmt.Sprintf("rule type %d", t)
}

var ruleTypes = []string{"PDR", "FAR", "QER", "URR", "BAR"}

// FailedRuleIE is the Failed Rule ID IE of r (TS 29.244 8.2.80: a PDR ID
// is 2 octets, the other rule IDs 4).
func FailedRuleIE(r *FailedRule) *pfcpType.FailedRuleID {
	if r == nil {
		return nil
	}
	if r.Type == RulePDR {
		return &pfcpType.FailedRuleID{RuleIdType: r.Type, RuleIdValue: []byte{byte(r.ID >> 8), byte(r.ID)}}
	}
	return &pfcpType.FailedRuleID{RuleIdType: r.Type, RuleIdValue: []byte{byte(r.ID >> 24), byte(r.ID >> 16), byte(r.ID >> 8), byte(r.ID)}}
}

// addrFrom is ip as a netip IPv4 address, or false.
func addrFrom(ip net.IP) (netip.Addr, bool) {
	v4 := ip.To4()
	if v4 == nil {
		return netip.Addr{}, false
	}
	a, ok := netip.AddrFromSlice(v4)
	return a, ok && !a.IsUnspecified()
}
