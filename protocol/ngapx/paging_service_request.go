package ngapx

// The N2 side of a Service Request (TS 23.502 4.2.3.2 steps 12-13, 4.2.3.3
// step 6): Initial Context Setup carrying the PDU sessions to activate, the
// gNB's reading of it and its answer, and the AMF's reading of that answer
// (TS 38.413 8.3.1). The transfers inside stay the SMF's (sm_transfer.go).

import (
	"errors"
	"fmt"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

// setupListCxtReq is the PDU Session Resource Setup Request List of an
// Initial Context Setup Request (TS 38.413 9.2.2.1).
func setupListCxtReq(sessions []SessionResource) (*ngapType.PDUSessionResourceSetupListCxtReq, error) {
	if err := (SessionResourceRequest{Sessions: sessions}).check("Initial Context Setup Request"); err != nil {
		return nil, err
	}
	list := &ngapType.PDUSessionResourceSetupListCxtReq{}
	for _, s := range sessions {
		n, err := snssaiIE(s.SNSSAI)
		if err != nil {
			return nil, fmt.Errorf("Initial Context Setup Request: PDU session %d: %w", s.ID, err)
		}
		list.List = append(list.List, ngapType.PDUSessionResourceSetupItemCxtReq{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
			NASPDU: nasPDU(s.NASPDU), SNSSAI: n, PDUSessionResourceSetupRequestTransfer: s.Transfer})
	}
	return list, nil
}

// RANInitialContext is what the gNB reads of an Initial Context Setup
// Request: the UE, the NAS-PDU (Registration or Service Accept) and the PDU
// sessions to set up with their transfers decoded.
type RANInitialContext struct {
	AMFUEID, RANUEID int64
	NASPDU           []byte
	Sessions         []RANSessionSetup
	Unreadable       []uint8 // sessions whose transfer does not decode: answer them failed
	// RadioCapability is the UE Radio Capability the AMF gave (nil: none;
	// the gNB then asks the UE and reports it, TS 38.413 8.14.1).
	RadioCapability []byte
}

// ParseRANInitialContextSetupRequest reads an Initial Context Setup Request
// (the gNB's side).
func ParseRANInitialContextSetupRequest(pdu *ngapType.NGAPPDU) (out *RANInitialContext, err error) {
	defer ranSideRecover(&err, "Initial Context Setup Request")
	if pdu == nil || pdu.InitiatingMessage == nil || pdu.InitiatingMessage.Value.InitialContextSetupRequest == nil {
		return nil, ErrNotThisMessage
	}
	out = &RANInitialContext{}
	if out.AMFUEID, out.RANUEID, out.NASPDU, err = ranSideUEIDs(pdu, "Initial Context Setup Request"); err != nil {
		return nil, err
	}
	for _, ie := range pdu.InitiatingMessage.Value.InitialContextSetupRequest.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceSetupListCxtReq; l != nil {
			out.readSessions(l)
		}
		if c := ie.Value.UERadioCapability; c != nil {
			out.RadioCapability = c.Value
		}
	}
	return out, nil
}

func (c *RANInitialContext) readSessions(l *ngapType.PDUSessionResourceSetupListCxtReq) {
	for _, item := range l.List {
		s, err := DecodeSetupRequestTransfer(item.PDUSessionResourceSetupRequestTransfer)
		if err != nil {
			c.Unreadable = append(c.Unreadable, uint8(item.PDUSessionID.Value))
			continue
		}
		s.ID = uint8(item.PDUSessionID.Value)
		if item.NASPDU != nil {
			s.NASPDU = item.NASPDU.Value
		}
		c.Sessions = append(c.Sessions, *s)
	}
}

// BuildRANInitialContextSetupResponse builds Initial Context Setup Response
// (TS 38.413 9.2.2.2) with the PDU sessions set up and those that failed.
func BuildRANInitialContextSetupResponse(amfUEID, ranUEID int64, results []RANSessionResult) ([]byte, error) {
	pdu := successful(ngapType.ProcedureCodeInitialContextSetup, ngapType.SuccessfulOutcomePresentInitialContextSetupResponse)
	r := &ngapType.InitialContextSetupResponse{}
	pdu.SuccessfulOutcome.Value.InitialContextSetupResponse = r
	add := func(ieID int64, v ngapType.InitialContextSetupResponseIEsValue) {
		r.ProtocolIEs.List = append(r.ProtocolIEs.List, ngapType.InitialContextSetupResponseIEs{Id: id(ieID), Criticality: ignore, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.InitialContextSetupResponseIEsValue{
		Present: ngapType.InitialContextSetupResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.InitialContextSetupResponseIEsValue{
		Present: ngapType.InitialContextSetupResponseIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranUEID}})
	ok, failed, err := cxtResLists(results)
	if err != nil {
		return nil, err
	}
	// TS 38.413 9.2.2.2: each list is present only with at least one item.
	if len(ok.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceSetupListCxtRes, ngapType.InitialContextSetupResponseIEsValue{
			Present: ngapType.InitialContextSetupResponseIEsPresentPDUSessionResourceSetupListCxtRes, PDUSessionResourceSetupListCxtRes: ok})
	}
	if len(failed.List) > 0 {
		add(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListCxtRes, ngapType.InitialContextSetupResponseIEsValue{
			Present: ngapType.InitialContextSetupResponseIEsPresentPDUSessionResourceFailedToSetupListCxtRes,
			PDUSessionResourceFailedToSetupListCxtRes: failed})
	}
	return Encode(pdu)
}

func cxtResLists(results []RANSessionResult) (*ngapType.PDUSessionResourceSetupListCxtRes, *ngapType.PDUSessionResourceFailedToSetupListCxtRes, error) {
	ok := &ngapType.PDUSessionResourceSetupListCxtRes{}
	failed := &ngapType.PDUSessionResourceFailedToSetupListCxtRes{}
	for _, res := range results {
		if res.Cause != nil {
			t, err := BuildPDUSessionResourceSetupUnsuccessfulTransfer(*res.Cause)
			if err != nil {
				return nil, nil, err
			}
			failed.List = append(failed.List, ngapType.PDUSessionResourceFailedToSetupItemCxtRes{
				PDUSessionID: ngapType.PDUSessionID{Value: int64(res.ID)}, PDUSessionResourceSetupUnsuccessfulTransfer: t})
			continue
		}
		t, err := EncodeSetupResponseTransfer(res.DL, res.QFIs)
		if err != nil {
			return nil, nil, err
		}
		ok.List = append(ok.List, ngapType.PDUSessionResourceSetupItemCxtRes{
			PDUSessionID: ngapType.PDUSessionID{Value: int64(res.ID)}, PDUSessionResourceSetupResponseTransfer: t})
	}
	return ok, failed, nil
}

// ParseInitialContextSetupOutcomes reads the PDU sessions of an Initial
// Context Setup Response (9.2.2.2) or Failure (9.2.2.3), the AMF's side: one
// outcome per session for the SMF (PDU_RES_SETUP_RSP or PDU_RES_SETUP_FAIL,
// TS 29.502 6.1.6.3.9). No session is no outcome, not an error: a
// registration's Initial Context Setup carries none.
func ParseInitialContextSetupOutcomes(pdu *ngapType.NGAPPDU) ([]SessionOutcome, error) {
	switch {
	case pdu == nil:
	case pdu.SuccessfulOutcome != nil && pdu.SuccessfulOutcome.Value.InitialContextSetupResponse != nil:
		return cxtResOutcomes(pdu.SuccessfulOutcome.Value.InitialContextSetupResponse), nil
	case pdu.UnsuccessfulOutcome != nil && pdu.UnsuccessfulOutcome.Value.InitialContextSetupFailure != nil:
		return cxtFailOutcomes(pdu.UnsuccessfulOutcome.Value.InitialContextSetupFailure), nil
	}
	return nil, errors.New("not an Initial Context Setup Response or Failure")
}

func cxtResOutcomes(m *ngapType.InitialContextSetupResponse) []SessionOutcome {
	var out []SessionOutcome
	for _, ie := range m.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceSetupListCxtRes; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_SETUP_RSP, it.PDUSessionResourceSetupResponseTransfer})
			}
		}
		if l := ie.Value.PDUSessionResourceFailedToSetupListCxtRes; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_SETUP_FAIL, it.PDUSessionResourceSetupUnsuccessfulTransfer})
			}
		}
	}
	return out
}

func cxtFailOutcomes(m *ngapType.InitialContextSetupFailure) []SessionOutcome {
	var out []SessionOutcome
	for _, ie := range m.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceFailedToSetupListCxtFail; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_SETUP_FAIL, it.PDUSessionResourceSetupUnsuccessfulTransfer})
			}
		}
	}
	return out
}
