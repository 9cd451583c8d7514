package ngapx

// The AMF's side of the PDU Session Resource procedures (TS 38.413 8.2):
// the requests it sends (Setup 8.2.1, Release 8.2.2, Modify 8.2.3) and the
// gNB's answers it reads. The transfers inside (PDU Session Resource Setup
// Request Transfer, …) are the SMF's N2 SM information: the AMF carries
// them as octet strings and never looks inside (TS 23.502 4.3.2.2.1 step 12).

import (
	"errors"
	"fmt"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

// SessionResource is one PDU session of a request: its ID, the NAS-PDU for
// the UE (nil: none), the S-NSSAI (setup only) and the SMF's transfer.
type SessionResource struct {
	ID       int64 // PDU session ID, 1-15 (TS 24.007 11.2.3.1b), 0-255 on N2 (9.3.1.50)
	NASPDU   []byte
	SNSSAI   models.Snssai
	Transfer []byte
}

// SessionResourceRequest is the UE and the sessions of one request.
type SessionResourceRequest struct {
	AMFUEID, RANUEID int64
	Sessions         []SessionResource
	NASPDU           []byte // Release Command only: the message-level NAS-PDU (9.2.1.3)
}

func (r SessionResourceRequest) check(what string) error {
	if len(r.Sessions) == 0 || len(r.Sessions) > 256 {
		return fmt.Errorf("%s: %d PDU sessions, want 1-256", what, len(r.Sessions))
	}
	for _, s := range r.Sessions {
		if s.ID < 0 || s.ID > 255 {
			return fmt.Errorf("%s: PDU session ID %d out of 0-255", what, s.ID)
		}
		if len(s.Transfer) == 0 {
			return fmt.Errorf("%s: PDU session %d without its transfer", what, s.ID)
		}
	}
	return nil
}

func nasPDU(b []byte) *ngapType.NASPDU {
	if b == nil {
		return nil
	}
	return &ngapType.NASPDU{Value: b}
}

// BuildPDUSessionResourceSetupRequest builds PDU Session Resource Setup
// Request (TS 38.413 9.2.1.1): per session its NAS-PDU (the DL NAS
// Transport carrying the 5GSM message), S-NSSAI and the SMF's PDU Session
// Resource Setup Request Transfer.
func BuildPDUSessionResourceSetupRequest(r SessionResourceRequest) ([]byte, error) {
	if err := r.check("PDU Session Resource Setup Request"); err != nil {
		return nil, err
	}
	list := &ngapType.PDUSessionResourceSetupListSUReq{}
	for _, s := range r.Sessions {
		sn, err := snssaiIE(s.SNSSAI)
		if err != nil {
			return nil, fmt.Errorf("PDU session %d: %w", s.ID, err)
		}
		list.List = append(list.List, ngapType.PDUSessionResourceSetupItemSUReq{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
			PDUSessionNASPDU: nasPDU(s.NASPDU), SNSSAI: sn, PDUSessionResourceSetupRequestTransfer: s.Transfer})
	}
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceSetup, reject, ngapType.InitiatingMessagePresentPDUSessionResourceSetupRequest)
	m := &ngapType.PDUSessionResourceSetupRequest{}
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.PDUSessionResourceSetupRequestIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PDUSessionResourceSetupRequestIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.PDUSessionResourceSetupRequestIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: r.AMFUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.PDUSessionResourceSetupRequestIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: r.RANUEID}})
	add(ngapType.ProtocolIEIDPDUSessionResourceSetupListSUReq, reject, ngapType.PDUSessionResourceSetupRequestIEsValue{
		Present: ngapType.PDUSessionResourceSetupRequestIEsPresentPDUSessionResourceSetupListSUReq, PDUSessionResourceSetupListSUReq: list})
	pdu.InitiatingMessage.Value.PDUSessionResourceSetupRequest = m
	return Encode(pdu)
}

// BuildPDUSessionResourceModifyRequest builds PDU Session Resource Modify
// Request (TS 38.413 9.2.1.5).
func BuildPDUSessionResourceModifyRequest(r SessionResourceRequest) ([]byte, error) {
	if err := r.check("PDU Session Resource Modify Request"); err != nil {
		return nil, err
	}
	list := &ngapType.PDUSessionResourceModifyListModReq{}
	for _, s := range r.Sessions {
		list.List = append(list.List, ngapType.PDUSessionResourceModifyItemModReq{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
			NASPDU: nasPDU(s.NASPDU), PDUSessionResourceModifyRequestTransfer: s.Transfer})
	}
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceModify, reject, ngapType.InitiatingMessagePresentPDUSessionResourceModifyRequest)
	m := &ngapType.PDUSessionResourceModifyRequest{}
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.PDUSessionResourceModifyRequestIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PDUSessionResourceModifyRequestIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.PDUSessionResourceModifyRequestIEsValue{
		Present: ngapType.PDUSessionResourceModifyRequestIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: r.AMFUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.PDUSessionResourceModifyRequestIEsValue{
		Present: ngapType.PDUSessionResourceModifyRequestIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: r.RANUEID}})
	add(ngapType.ProtocolIEIDPDUSessionResourceModifyListModReq, reject, ngapType.PDUSessionResourceModifyRequestIEsValue{
		Present: ngapType.PDUSessionResourceModifyRequestIEsPresentPDUSessionResourceModifyListModReq, PDUSessionResourceModifyListModReq: list})
	pdu.InitiatingMessage.Value.PDUSessionResourceModifyRequest = m
	return Encode(pdu)
}

// BuildPDUSessionResourceReleaseCommand builds PDU Session Resource Release
// Command (TS 38.413 9.2.1.3); the NAS-PDU (PDU Session Release Command in
// DL NAS Transport) is at message level.
func BuildPDUSessionResourceReleaseCommand(r SessionResourceRequest) ([]byte, error) {
	if err := r.check("PDU Session Resource Release Command"); err != nil {
		return nil, err
	}
	list := &ngapType.PDUSessionResourceToReleaseListRelCmd{}
	for _, s := range r.Sessions {
		list.List = append(list.List, ngapType.PDUSessionResourceToReleaseItemRelCmd{PDUSessionID: ngapType.PDUSessionID{Value: s.ID},
			PDUSessionResourceReleaseCommandTransfer: s.Transfer})
	}
	pdu := initiating(ngapType.ProcedureCodePDUSessionResourceRelease, reject, ngapType.InitiatingMessagePresentPDUSessionResourceReleaseCommand)
	m := &ngapType.PDUSessionResourceReleaseCommand{}
	add := func(ieID int64, crit ngapType.Criticality, v ngapType.PDUSessionResourceReleaseCommandIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PDUSessionResourceReleaseCommandIEs{Id: id(ieID), Criticality: crit, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, reject, ngapType.PDUSessionResourceReleaseCommandIEsValue{
		Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: r.AMFUEID}})
	add(ngapType.ProtocolIEIDRANUENGAPID, reject, ngapType.PDUSessionResourceReleaseCommandIEsValue{
		Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: r.RANUEID}})
	if r.NASPDU != nil {
		add(ngapType.ProtocolIEIDNASPDU, ignore, ngapType.PDUSessionResourceReleaseCommandIEsValue{
			Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentNASPDU, NASPDU: nasPDU(r.NASPDU)})
	}
	add(ngapType.ProtocolIEIDPDUSessionResourceToReleaseListRelCmd, reject, ngapType.PDUSessionResourceReleaseCommandIEsValue{
		Present: ngapType.PDUSessionResourceReleaseCommandIEsPresentPDUSessionResourceToReleaseListRelCmd, PDUSessionResourceToReleaseListRelCmd: list})
	pdu.InitiatingMessage.Value.PDUSessionResourceReleaseCommand = m
	return Encode(pdu)
}

// SessionOutcome is one PDU session of a gNB's answer: the transfer it
// returns for the SMF and which N2 SM information type that is
// (TS 29.502 6.1.6.3.9).
type SessionOutcome struct {
	ID       int64
	Type     models.N2SmInfoType
	Transfer []byte
}

// errNoSessions: an answer that names no PDU session answers nothing.
var errNoSessions = errors.New("no PDU session in the answer")

// ParsePDUSessionResourceAnswer reads PDU Session Resource Setup Response
// (9.2.1.2), Modify Response (9.2.1.6) or Release Response (9.2.1.4): one
// outcome per session, succeeded or failed.
func ParsePDUSessionResourceAnswer(pdu *ngapType.NGAPPDU) ([]SessionOutcome, error) {
	if pdu == nil || pdu.SuccessfulOutcome == nil {
		return nil, errors.New("not a PDU Session Resource answer")
	}
	v := pdu.SuccessfulOutcome.Value
	var out []SessionOutcome
	switch {
	case v.PDUSessionResourceSetupResponse != nil:
		out = setupOutcomes(v.PDUSessionResourceSetupResponse)
	case v.PDUSessionResourceModifyResponse != nil:
		out = modifyOutcomes(v.PDUSessionResourceModifyResponse)
	case v.PDUSessionResourceReleaseResponse != nil:
		out = releaseOutcomes(v.PDUSessionResourceReleaseResponse)
	default:
		return nil, errors.New("not a PDU Session Resource answer")
	}
	if len(out) == 0 {
		return nil, errNoSessions
	}
	return out, nil
}

func setupOutcomes(m *ngapType.PDUSessionResourceSetupResponse) []SessionOutcome {
	var out []SessionOutcome
	for _, ie := range m.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceSetupListSURes; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_SETUP_RSP, it.PDUSessionResourceSetupResponseTransfer})
			}
		}
		if l := ie.Value.PDUSessionResourceFailedToSetupListSURes; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_SETUP_FAIL, it.PDUSessionResourceSetupUnsuccessfulTransfer})
			}
		}
	}
	return out
}

func modifyOutcomes(m *ngapType.PDUSessionResourceModifyResponse) []SessionOutcome {
	var out []SessionOutcome
	for _, ie := range m.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceModifyListModRes; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_MOD_RSP, it.PDUSessionResourceModifyResponseTransfer})
			}
		}
		if l := ie.Value.PDUSessionResourceFailedToModifyListModRes; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_MOD_FAIL, it.PDUSessionResourceModifyUnsuccessfulTransfer})
			}
		}
	}
	return out
}

func releaseOutcomes(m *ngapType.PDUSessionResourceReleaseResponse) []SessionOutcome {
	var out []SessionOutcome
	for _, ie := range m.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceReleasedListRelRes; l != nil {
			for _, it := range l.List {
				out = append(out, SessionOutcome{it.PDUSessionID.Value, models.N2SmInfoType_PDU_RES_REL_RSP, it.PDUSessionResourceReleaseResponseTransfer})
			}
		}
	}
	return out
}

// IsPDUSessionResourceAnswer says whether a summarized PDU is one of the
// answers ParsePDUSessionResourceAnswer reads.
func IsPDUSessionResourceAnswer(s Summary) bool {
	if s.Kind != Successful {
		return false
	}
	switch s.Procedure {
	case ngapType.ProcedureCodePDUSessionResourceSetup, ngapType.ProcedureCodePDUSessionResourceModify,
		ngapType.ProcedureCodePDUSessionResourceRelease:
		return true
	}
	return false
}
