package pfcpx

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/free5gc/pfcp/pfcpType"

	"github.com/l25gc/l25gc/upf/rules"
)

// Rules to IEs: what the SMF sends (TS 29.244 7.5.2, 7.5.4).

// maxRate is the largest bit rate MBR and GBR carry: 40 bits of kbit/s
// (TS 29.244 8.2.8, 8.2.9).
const maxRate = (1<<40 - 1) * 1000

// KbpsOf is a bit rate in bit/s as MBR/GBR carry it: kbit/s, rounded up,
// so a flow is never limited below what the SMF asked (TS 29.244 8.2.8).
func KbpsOf(bps uint64) uint64 { return bps/1000 + min(bps%1000, 1) }

// BpsOf is a wire rate of kbit/s in bit/s.
func BpsOf(kbps uint64) uint64 { return kbps * 1000 }

// PDRIEOf is a PDR as a Create PDR or Update PDR IE.
func PDRIEOf(p rules.PDR) (*PDRIE, error) {
	pdi, err := pdiOf(p)
	if err != nil {
		return nil, fmt.Errorf("PDR %d: %w", p.ID, err)
	}
	ie := &PDRIE{
		PDRID:      &pfcpType.PacketDetectionRuleID{RuleId: p.ID},
		Precedence: &pfcpType.Precedence{PrecedenceValue: p.Precedence},
		PDI:        pdi,
		FARID:      &pfcpType.FARID{FarIdValue: p.FARID},
	}
	if p.OuterHeaderRemoval {
		ie.OuterHeaderRemoval = &pfcpType.OuterHeaderRemoval{OuterHeaderRemovalDescription: pfcpType.OuterHeaderRemovalGtpUUdpIpv4}
	}
	for _, id := range p.QERIDs {
		ie.QERID = append(ie.QERID, &pfcpType.QERID{QERID: id})
	}
	for _, id := range p.URRIDs {
		ie.URRID = append(ie.URRID, &pfcpType.URRID{UrrIdValue: id})
	}
	return ie, nil
}

func pdiOf(p rules.PDR) (*PDI, error) {
	pdi := &PDI{SourceInterface: &pfcpType.SourceInterface{InterfaceValue: uint8(p.Source)}}
	if p.LocalFTEID != nil {
		f, err := fteidOf(*p.LocalFTEID)
		if err != nil {
			return nil, err
		}
		pdi.LocalFTEID = f
	}
	if p.NetworkInstance != "" {
		pdi.NetworkInstance = &NetworkInstance{Name: p.NetworkInstance}
	}
	if p.UEIPv4.IsValid() {
		if !p.UEIPv4.Is4() {
			return nil, fmt.Errorf("UE address %v is not IPv4", p.UEIPv4)
		}
		// TS 29.244 8.2.62: S/D says whether the UE address is the
		// packets' source (uplink, from Access) or destination.
		pdi.UEIPAddress = &pfcpType.UEIPAddress{V4: true, Sd: p.Source != rules.Access, Ipv4Address: ip4(p.UEIPv4)}
	}
	for _, fd := range p.SDFFilters {
		if len(fd) == 0 || len(fd) > 0xffff-16 {
			return nil, fmt.Errorf("SDF filter of %d octets", len(fd))
		}
		pdi.SDFFilter = append(pdi.SDFFilter, &pfcpType.SDFFilter{Fd: true,
			LengthOfFlowDescription: uint16(len(fd)), FlowDescription: []byte(fd)})
	}
	if p.QFI != 0 {
		pdi.QFI = []*pfcpType.QFI{{QFI: p.QFI}}
	}
	return pdi, nil
}

// fteidOf: CH asks the UP function to allocate (TS 29.244 8.2.3); CHID
// (Choose ID, non-zero here) makes PDRs share one allocation.
func fteidOf(f rules.FTEID) (*pfcpType.FTEID, error) {
	if f.Choose {
		return &pfcpType.FTEID{Ch: true, V4: true, Chid: f.ChooseID != 0, ChooseId: f.ChooseID}, nil
	}
	if !f.IPv4.Is4() {
		return nil, fmt.Errorf("F-TEID %#x without an IPv4 address", f.TEID)
	}
	return &pfcpType.FTEID{V4: true, Teid: f.TEID, Ipv4Address: ip4(f.IPv4)}, nil
}

// CreateFAROf is a FAR as a Create FAR IE.
func CreateFAROf(f rules.FAR) (*CreateFAR, error) {
	fp, err := forwardingOf(f)
	if err != nil {
		return nil, err
	}
	return &CreateFAR{FARID: &pfcpType.FARID{FarIdValue: f.ID}, ApplyAction: applyActionOf(f.Action), ForwardingParameters: fp}, nil
}

// UpdateFAROf is a FAR as an Update FAR IE that replaces it whole.
func UpdateFAROf(f rules.FAR) (*UpdateFAR, error) {
	fp, err := forwardingOf(f)
	if err != nil {
		return nil, err
	}
	if f.SendEndMarker {
		// TS 29.244 7.5.4.3-2: SNDEM rides in the Update Forwarding
		// Parameters that change the outer header.
		if fp == nil || fp.OuterHeaderCreation == nil {
			return nil, fmt.Errorf("FAR %d: End Marker asked for without a new outer header", f.ID)
		}
		fp.PFCPSMReqFlags = &pfcpType.PFCPSMReqFlags{Sndem: true}
	}
	return &UpdateFAR{FARID: &pfcpType.FARID{FarIdValue: f.ID}, ApplyAction: applyActionOf(f.Action), UpdateForwardingParameters: fp}, nil
}

func applyActionOf(a rules.ApplyAction) *pfcpType.ApplyAction {
	return &pfcpType.ApplyAction{Drop: a&rules.ActionDrop != 0, Forw: a&rules.ActionForward != 0,
		Buff: a&rules.ActionBuffer != 0, Nocp: a&rules.ActionNotify != 0}
}

// forwardingOf: Forwarding Parameters are present when the FAR forwards
// (TS 29.244 7.5.2.3-1: C, "when the Apply Action requests forwarding").
func forwardingOf(f rules.FAR) (*ForwardingParameters, error) {
	if f.Action&rules.ActionForward == 0 && f.OuterHeader == nil && f.NetworkInstance == "" {
		return nil, nil
	}
	fp := &ForwardingParameters{DestinationInterface: &pfcpType.DestinationInterface{InterfaceValue: uint8(f.Destination)}}
	if f.NetworkInstance != "" {
		fp.NetworkInstance = &NetworkInstance{Name: f.NetworkInstance}
	}
	if oh := f.OuterHeader; oh != nil {
		if !oh.PeerIPv4.Is4() {
			return nil, fmt.Errorf("FAR %d: outer header toward %v, not IPv4", f.ID, oh.PeerIPv4)
		}
		fp.OuterHeaderCreation = &pfcpType.OuterHeaderCreation{
			OuterHeaderCreationDescription: pfcpType.OuterHeaderCreationGtpUUdpIpv4,
			Teid:                           oh.TEID, Ipv4Address: ip4(oh.PeerIPv4)}
	}
	return fp, nil
}

// QERIEOf is a QER as a Create QER or Update QER IE.
func QERIEOf(q rules.QER) (*QERIE, error) {
	for _, r := range []uint64{q.MBRUL, q.MBRDL, q.GBRUL, q.GBRDL} {
		if r > maxRate {
			return nil, fmt.Errorf("QER %d: rate %d bit/s beyond the 40 bits of kbit/s MBR/GBR carry (TS 29.244 8.2.8)", q.ID, r)
		}
	}
	ie := &QERIE{QERID: &pfcpType.QERID{QERID: q.ID}, GateStatus: &pfcpType.GateStatus{ULGate: gate(q.GateULOpen), DLGate: gate(q.GateDLOpen)}}
	if q.MBRUL != 0 || q.MBRDL != 0 {
		ie.MaximumBitrate = &pfcpType.MBR{ULMBR: KbpsOf(q.MBRUL), DLMBR: KbpsOf(q.MBRDL)}
	}
	if q.GBRUL != 0 || q.GBRDL != 0 {
		ie.GuaranteedBitrate = &pfcpType.GBR{ULGBR: KbpsOf(q.GBRUL), DLGBR: KbpsOf(q.GBRDL)}
	}
	if q.QFI != 0 {
		ie.QFI = &pfcpType.QFI{QFI: q.QFI}
	}
	if q.Weight > rules.MaxWeight {
		return nil, fmt.Errorf("QER %d: weight %d, want 1..%d", q.ID, q.Weight, rules.MaxWeight)
	}
	ie.Weight = weightIEs(q.Weight)
	return ie, nil
}

// gate is TS 29.244 8.2.7: 0 open, 1 closed.
func gate(open bool) uint8 {
	if open {
		return pfcpType.GateOpen
	}
	return pfcpType.GateClose
}

// URRIEOf is a URR as a Create URR or Update URR IE: volume measured,
// reported at a volume threshold when it has one (TS 29.244 8.2.40, 8.2.19).
func URRIEOf(u rules.URR) *URRIE {
	ie := &URRIE{URRID: &pfcpType.URRID{UrrIdValue: u.ID},
		MeasurementMethod: &pfcpType.MeasurementMethod{Volum: true},
		ReportingTriggers: &pfcpType.ReportingTriggers{Volth: u.VolumeThreshold != 0}}
	if u.VolumeThreshold != 0 {
		ie.VolumeThreshold = &pfcpType.VolumeThreshold{Tovol: true, TotalVolume: u.VolumeThreshold}
	}
	return ie
}

// createIEs are the Create IEs of r.
func createIEs(r rules.Rules) (pdrs []*PDRIE, fars []*CreateFAR, qers []*QERIE, urrs []*URRIE, err error) {
	for _, p := range r.PDRs {
		ie, err := PDRIEOf(p)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		pdrs = append(pdrs, ie)
	}
	for _, f := range r.FARs {
		ie, err := CreateFAROf(f)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		fars = append(fars, ie)
	}
	for _, q := range r.QERs {
		ie, err := QERIEOf(q)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		qers = append(qers, ie)
	}
	for _, u := range r.URRs {
		urrs = append(urrs, URRIEOf(u))
	}
	return pdrs, fars, qers, urrs, nil
}

// EstablishmentRequestOf is the Session Establishment Request (TS 29.244
// 7.5.2) of session s from the CP node nodeID.
func EstablishmentRequestOf(nodeID netip.Addr, s *rules.Session) (*SessionEstablishmentRequest, error) {
	pdrs, fars, qers, urrs, err := createIEs(s.Rules)
	if err != nil {
		return nil, err
	}
	cp := s.CPAddr
	if !cp.IsValid() {
		cp = nodeID
	}
	return &SessionEstablishmentRequest{
		NodeID:    NodeIDOf(nodeID),
		CPFSEID:   fseidOf(s.CPSEID, cp),
		CreatePDR: pdrs, CreateFAR: fars, CreateQER: qers, CreateURR: urrs,
		PDNType: &pfcpType.PDNType{PdnType: pfcpType.PDNTypeIpv4},
	}, nil
}

// ModificationRequestOf is the Session Modification Request (TS 29.244
// 7.5.4) of m. Update IEs carry every IE of the rule, so they replace it.
func ModificationRequestOf(m *rules.Modification) (*SessionModificationRequest, error) {
	req := &SessionModificationRequest{}
	var err error
	if req.CreatePDR, req.CreateFAR, req.CreateQER, req.CreateURR, err = createIEs(m.Create); err != nil {
		return nil, err
	}
	if req.UpdatePDR, _, req.UpdateQER, req.UpdateURR, err = createIEs(m.Update); err != nil {
		return nil, err
	}
	for _, f := range m.Update.FARs {
		u, err := UpdateFAROf(f)
		if err != nil {
			return nil, err
		}
		req.UpdateFAR = append(req.UpdateFAR, u)
	}
	for _, id := range m.Remove.PDRs {
		req.RemovePDR = append(req.RemovePDR, &RemovePDR{PDRID: &pfcpType.PacketDetectionRuleID{RuleId: id}})
	}
	for _, id := range m.Remove.FARs {
		req.RemoveFAR = append(req.RemoveFAR, &RemoveFAR{FARID: &pfcpType.FARID{FarIdValue: id}})
	}
	for _, id := range m.Remove.QERs {
		req.RemoveQER = append(req.RemoveQER, &RemoveQER{QERID: &pfcpType.QERID{QERID: id}})
	}
	for _, id := range m.Remove.URRs {
		req.RemoveURR = append(req.RemoveURR, &RemoveURR{URRID: &pfcpType.URRID{UrrIdValue: id}})
	}
	return req, nil
}

// NodeIDOf is an IPv4 Node ID (TS 29.244 8.2.38).
func NodeIDOf(a netip.Addr) *pfcpType.NodeID {
	return &pfcpType.NodeID{NodeIdType: pfcpType.NodeIdTypeIpv4Address, IP: ip4(a)}
}

func fseidOf(seid uint64, a netip.Addr) *pfcpType.FSEID {
	return &pfcpType.FSEID{V4: true, Seid: seid, Ipv4Address: ip4(a)}
}

// UsageReportsOf are usage reports (TS 29.244 7.5.5.2, 7.5.7.2) with
// trigger: TERMR on deletion, IMMER for a query (8.2.41).
func UsageReportsOf(us []rules.Usage, trigger pfcpType.UsageReportTrigger, seqn uint32) []*UsageReport {
	var out []*UsageReport
	for _, u := range us {
		t := trigger
		out = append(out, &UsageReport{
			URRID:              &pfcpType.URRID{UrrIdValue: u.URRID},
			URSEQN:             &pfcpType.URSEQN{UrseqnValue: seqn},
			UsageReportTrigger: &t,
			VolumeMeasurement: &pfcpType.VolumeMeasurement{
				Tovol: true, Ulvol: true, Dlvol: true, Tonop: true, Ulnop: true, Dlnop: true,
				TotalVolume: u.UplinkBytes + u.DownlinkBytes, UplinkVolume: u.UplinkBytes, DownlinkVolume: u.DownlinkBytes,
				TotalPktNum: u.UplinkPackets + u.DownlinkPackets, UplinkPktNum: u.UplinkPackets, DownlinkPktNum: u.DownlinkPackets,
			},
		})
	}
	return out
}

// ip4 is a's four octets (the library's IEs take net.IP).
func ip4(a netip.Addr) net.IP {
	if !a.Is4() {
		return net.IPv4zero.To4()
	}
	b := a.As4()
	return net.IP(b[:])
}
