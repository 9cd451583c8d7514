package ngapx

import "github.com/free5gc/ngap/ngapType"

// summarizeFast is Summarize for the hot messages without reflection: the
// AMF's reader runs it on every PDU, and the reflective walk cost 1-9 µs a
// message (BenchmarkSummarize), more than decoding them now does. It reads
// the same IEs in the same order (TestFastSummaryMatches, FuzzFastDecode).
func summarizeFast(pdu *ngapType.NGAPPDU) (Summary, bool) {
	s := Summary{Kind: Kind(pdu.Present), AMFUEID: -1, RANUEID: -1}
	switch pdu.Present {
	case ngapType.NGAPPDUPresentInitiatingMessage:
		if m := pdu.InitiatingMessage; m != nil {
			s.Procedure = m.ProcedureCode.Value
			return s, s.initiating(&m.Value)
		}
	case ngapType.NGAPPDUPresentSuccessfulOutcome:
		if m := pdu.SuccessfulOutcome; m != nil {
			s.Procedure = m.ProcedureCode.Value
			return s, s.successful(&m.Value)
		}
	}
	return s, false
}

// take records what one IE carries, as readIE does.
func (s *Summary) take(amf *ngapType.AMFUENGAPID, ran *ngapType.RANUENGAPID, nas *ngapType.NASPDU) {
	if amf != nil {
		s.AMFUEID = amf.Value
	}
	if ran != nil {
		s.RANUEID = ran.Value
	}
	if nas != nil {
		s.NASPDU = nas.Value
	}
}

func (s *Summary) takeCause(c *ngapType.Cause) {
	if c != nil {
		s.Cause = c
	}
}

// takeIDs reads UE NGAP IDs as readIE does: the pair, else the AMF's ID.
func (s *Summary) takeIDs(u *ngapType.UENGAPIDs) {
	switch {
	case u == nil:
	case u.UENGAPIDPair != nil:
		s.AMFUEID, s.RANUEID = u.UENGAPIDPair.AMFUENGAPID.Value, u.UENGAPIDPair.RANUENGAPID.Value
	case u.AMFUENGAPID != nil:
		s.AMFUEID = u.AMFUENGAPID.Value
	}
}

func (s *Summary) initiating(v *ngapType.InitiatingMessageValue) bool {
	switch {
	case v.Present == ngapType.InitiatingMessagePresentInitialUEMessage && v.InitialUEMessage != nil:
		s.Name = "InitialUEMessage"
		for i := range v.InitialUEMessage.ProtocolIEs.List {
			x := &v.InitialUEMessage.ProtocolIEs.List[i].Value
			s.take(nil, x.RANUENGAPID, x.NASPDU)
		}
	case v.Present == ngapType.InitiatingMessagePresentUplinkNASTransport && v.UplinkNASTransport != nil:
		s.Name = "UplinkNASTransport"
		for i := range v.UplinkNASTransport.ProtocolIEs.List {
			x := &v.UplinkNASTransport.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, x.NASPDU)
		}
	case v.Present == ngapType.InitiatingMessagePresentDownlinkNASTransport && v.DownlinkNASTransport != nil:
		s.Name = "DownlinkNASTransport"
		for i := range v.DownlinkNASTransport.ProtocolIEs.List {
			x := &v.DownlinkNASTransport.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, x.NASPDU)
		}
	case v.Present == ngapType.InitiatingMessagePresentInitialContextSetupRequest && v.InitialContextSetupRequest != nil:
		s.Name = "InitialContextSetupRequest"
		for i := range v.InitialContextSetupRequest.ProtocolIEs.List {
			x := &v.InitialContextSetupRequest.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, x.NASPDU)
		}
	case v.Present == ngapType.InitiatingMessagePresentPDUSessionResourceSetupRequest && v.PDUSessionResourceSetupRequest != nil:
		s.Name = "PDUSessionResourceSetupRequest"
		for i := range v.PDUSessionResourceSetupRequest.ProtocolIEs.List {
			x := &v.PDUSessionResourceSetupRequest.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, x.NASPDU)
		}
	case v.Present == ngapType.InitiatingMessagePresentUEContextReleaseRequest && v.UEContextReleaseRequest != nil:
		s.Name = "UEContextReleaseRequest"
		for i := range v.UEContextReleaseRequest.ProtocolIEs.List {
			x := &v.UEContextReleaseRequest.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, nil)
			s.takeCause(x.Cause)
		}
	case v.Present == ngapType.InitiatingMessagePresentUEContextReleaseCommand && v.UEContextReleaseCommand != nil:
		s.Name = "UEContextReleaseCommand"
		for i := range v.UEContextReleaseCommand.ProtocolIEs.List {
			x := &v.UEContextReleaseCommand.ProtocolIEs.List[i].Value
			s.takeCause(x.Cause)
			s.takeIDs(x.UENGAPIDs)
		}
	case v.Present == ngapType.InitiatingMessagePresentPDUSessionResourceReleaseCommand && v.PDUSessionResourceReleaseCommand != nil:
		s.Name = "PDUSessionResourceReleaseCommand"
		for i := range v.PDUSessionResourceReleaseCommand.ProtocolIEs.List {
			x := &v.PDUSessionResourceReleaseCommand.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, x.NASPDU)
		}
	case v.Present == ngapType.InitiatingMessagePresentPaging && v.Paging != nil:
		s.Name = "Paging" // names no UE by NGAP ID (TS 38.413 9.2.4.1)
	case v.Present == ngapType.InitiatingMessagePresentUERadioCapabilityInfoIndication && v.UERadioCapabilityInfoIndication != nil:
		s.Name = "UERadioCapabilityInfoIndication"
		for i := range v.UERadioCapabilityInfoIndication.ProtocolIEs.List {
			x := &v.UERadioCapabilityInfoIndication.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, nil)
		}
	default:
		return false
	}
	return true
}

func (s *Summary) successful(v *ngapType.SuccessfulOutcomeValue) bool {
	switch {
	case v.Present == ngapType.SuccessfulOutcomePresentInitialContextSetupResponse && v.InitialContextSetupResponse != nil:
		s.Name = "InitialContextSetupResponse"
		for i := range v.InitialContextSetupResponse.ProtocolIEs.List {
			x := &v.InitialContextSetupResponse.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, nil)
		}
	case v.Present == ngapType.SuccessfulOutcomePresentPDUSessionResourceReleaseResponse && v.PDUSessionResourceReleaseResponse != nil:
		s.Name = "PDUSessionResourceReleaseResponse"
		for i := range v.PDUSessionResourceReleaseResponse.ProtocolIEs.List {
			x := &v.PDUSessionResourceReleaseResponse.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, nil)
		}
	case v.Present == ngapType.SuccessfulOutcomePresentUEContextReleaseComplete && v.UEContextReleaseComplete != nil:
		s.Name = "UEContextReleaseComplete"
		for i := range v.UEContextReleaseComplete.ProtocolIEs.List {
			x := &v.UEContextReleaseComplete.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, nil)
		}
	case v.Present == ngapType.SuccessfulOutcomePresentPDUSessionResourceSetupResponse && v.PDUSessionResourceSetupResponse != nil:
		s.Name = "PDUSessionResourceSetupResponse"
		for i := range v.PDUSessionResourceSetupResponse.ProtocolIEs.List {
			x := &v.PDUSessionResourceSetupResponse.ProtocolIEs.List[i].Value
			s.take(x.AMFUENGAPID, x.RANUENGAPID, nil)
		}
	default:
		return false
	}
	return true
}
