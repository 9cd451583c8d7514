package ngapx

import (
	"bytes"
	"testing"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"
)

var testSession = SessionResource{ID: 5, NASPDU: []byte{0x7e, 0x02, 1, 2, 3, 4, 5}, SNSSAI: models.Snssai{Sst: 1, Sd: "010203"}, Transfer: []byte{0x00, 0x03, 0x01}}

// Each request decodes to what was built: the IDs of the UE, the session
// with its transfer, and the NAS-PDU where TS 38.413 puts it.
func TestPDUSessionResourceRequestsRoundTrip(t *testing.T) {
	req := SessionResourceRequest{AMFUEID: 7, RANUEID: 9, Sessions: []SessionResource{testSession}}
	for _, c := range []struct {
		name  string
		build func(SessionResourceRequest) ([]byte, error)
		check func(t *testing.T, v ngapType.InitiatingMessageValue)
	}{
		{"PDUSessionResourceSetupRequest", BuildPDUSessionResourceSetupRequest, func(t *testing.T, v ngapType.InitiatingMessageValue) {
			for _, ie := range v.PDUSessionResourceSetupRequest.ProtocolIEs.List {
				if l := ie.Value.PDUSessionResourceSetupListSUReq; l != nil {
					it := l.List[0]
					if it.PDUSessionID.Value != 5 || !bytes.Equal(it.PDUSessionNASPDU.Value, testSession.NASPDU) ||
						!bytes.Equal(it.PDUSessionResourceSetupRequestTransfer, testSession.Transfer) ||
						it.SNSSAI.SST.Value[0] != 1 || !bytes.Equal(it.SNSSAI.SD.Value, []byte{1, 2, 3}) {
						t.Fatalf("item %+v", it)
					}
					return
				}
			}
			t.Fatal("no setup list")
		}},
		{"PDUSessionResourceModifyRequest", BuildPDUSessionResourceModifyRequest, func(t *testing.T, v ngapType.InitiatingMessageValue) {
			for _, ie := range v.PDUSessionResourceModifyRequest.ProtocolIEs.List {
				if l := ie.Value.PDUSessionResourceModifyListModReq; l != nil {
					if it := l.List[0]; it.PDUSessionID.Value != 5 || !bytes.Equal(it.NASPDU.Value, testSession.NASPDU) {
						t.Fatalf("item %+v", it)
					}
					return
				}
			}
			t.Fatal("no modify list")
		}},
		{"PDUSessionResourceReleaseCommand", func(r SessionResourceRequest) ([]byte, error) {
			r.NASPDU = testSession.NASPDU
			return BuildPDUSessionResourceReleaseCommand(r)
		}, func(t *testing.T, v ngapType.InitiatingMessageValue) {
			for _, ie := range v.PDUSessionResourceReleaseCommand.ProtocolIEs.List {
				if l := ie.Value.PDUSessionResourceToReleaseListRelCmd; l != nil {
					if it := l.List[0]; it.PDUSessionID.Value != 5 || !bytes.Equal(it.PDUSessionResourceReleaseCommandTransfer, testSession.Transfer) {
						t.Fatalf("item %+v", it)
					}
					return
				}
			}
			t.Fatal("no release list")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.build(req)
			if err != nil {
				t.Fatal(err)
			}
			pdu, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Summarize(pdu)
			if err != nil || s.Name != c.name || s.AMFUEID != 7 || s.RANUEID != 9 {
				t.Fatalf("%+v %v", s, err)
			}
			if c.name == "PDUSessionResourceReleaseCommand" && !bytes.Equal(s.NASPDU, testSession.NASPDU) {
				t.Fatal("release command without its message-level NAS-PDU")
			}
			c.check(t, pdu.InitiatingMessage.Value)
		})
	}
}

// Requests the SMF's input cannot make valid are refused, never encoded.
func TestPDUSessionResourceRequestRefusals(t *testing.T) {
	bad := []SessionResourceRequest{
		{AMFUEID: 1, RANUEID: 1},
		{AMFUEID: 1, RANUEID: 1, Sessions: []SessionResource{{ID: 300, Transfer: []byte{1}}}},
		{AMFUEID: 1, RANUEID: 1, Sessions: []SessionResource{{ID: 1}}},
		{AMFUEID: 1, RANUEID: 1, Sessions: []SessionResource{{ID: 1, Transfer: []byte{1}, SNSSAI: models.Snssai{Sst: 1, Sd: "xyz"}}}},
	}
	for i, r := range bad {
		if _, err := BuildPDUSessionResourceSetupRequest(r); err == nil {
			t.Errorf("request %d built", i)
		}
	}
}

func answerPDU(code int64, present int, set func(*ngapType.SuccessfulOutcomeValue)) *ngapType.NGAPPDU {
	pdu := successful(code, present)
	set(&pdu.SuccessfulOutcome.Value)
	return pdu
}

// The gNB's answers give one outcome per session, typed for the SMF.
func TestParsePDUSessionResourceAnswers(t *testing.T) {
	setup := answerPDU(ngapType.ProcedureCodePDUSessionResourceSetup, ngapType.SuccessfulOutcomePresentPDUSessionResourceSetupResponse, func(v *ngapType.SuccessfulOutcomeValue) {
		v.PDUSessionResourceSetupResponse = &ngapType.PDUSessionResourceSetupResponse{ProtocolIEs: ngapType.ProtocolIEContainerPDUSessionResourceSetupResponseIEs{
			List: []ngapType.PDUSessionResourceSetupResponseIEs{
				{Id: id(ngapType.ProtocolIEIDPDUSessionResourceSetupListSURes), Criticality: ignore, Value: ngapType.PDUSessionResourceSetupResponseIEsValue{
					Present: ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceSetupListSURes,
					PDUSessionResourceSetupListSURes: &ngapType.PDUSessionResourceSetupListSURes{List: []ngapType.PDUSessionResourceSetupItemSURes{
						{PDUSessionID: ngapType.PDUSessionID{Value: 1}, PDUSessionResourceSetupResponseTransfer: []byte{1}}}}}},
				{Id: id(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListSURes), Criticality: ignore, Value: ngapType.PDUSessionResourceSetupResponseIEsValue{
					Present: ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceFailedToSetupListSURes,
					PDUSessionResourceFailedToSetupListSURes: &ngapType.PDUSessionResourceFailedToSetupListSURes{List: []ngapType.PDUSessionResourceFailedToSetupItemSURes{
						{PDUSessionID: ngapType.PDUSessionID{Value: 2}, PDUSessionResourceSetupUnsuccessfulTransfer: []byte{2}}}}}},
			}}}
	})
	got, err := ParsePDUSessionResourceAnswer(setup)
	if err != nil || len(got) != 2 || got[0].Type != models.N2SmInfoType_PDU_RES_SETUP_RSP || got[1].Type != models.N2SmInfoType_PDU_RES_SETUP_FAIL ||
		got[1].ID != 2 || !bytes.Equal(got[1].Transfer, []byte{2}) {
		t.Fatalf("%+v %v", got, err)
	}
	empty := answerPDU(ngapType.ProcedureCodePDUSessionResourceRelease, ngapType.SuccessfulOutcomePresentPDUSessionResourceReleaseResponse, func(v *ngapType.SuccessfulOutcomeValue) {
		v.PDUSessionResourceReleaseResponse = &ngapType.PDUSessionResourceReleaseResponse{}
	})
	if _, err := ParsePDUSessionResourceAnswer(empty); err == nil {
		t.Fatal("an answer naming no session parsed")
	}
	if _, err := ParsePDUSessionResourceAnswer(initiating(ngapType.ProcedureCodeNGSetup, reject, ngapType.InitiatingMessagePresentNGSetupRequest)); err == nil {
		t.Fatal("an NG Setup Request parsed as a session answer")
	}
}
