package ngapx_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/free5gc/aper"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/ngapx/ngapxtest"
)

var (
	pagedUE  = nasx.STMSI{SetID: 1, Pointer: 1, TMSI: 0xCAFE0001}
	plmn     = domain.PLMN{MCC: "208", MNC: "93"}
	pagedTAs = []domain.TAI{{PLMN: plmn, TAC: 1}, {PLMN: plmn, TAC: 2}}
)

func TestPagingRoundTrip(t *testing.T) {
	drx := ngapType.PagingDRXPresentV64
	for _, in := range []ngapx.Paging{
		{STMSI: pagedUE, TAIs: pagedTAs},
		{STMSI: pagedUE, TAIs: pagedTAs[:1], DRX: &drx, Priority: 3},
	} {
		pdu := decode(t)(ngapx.BuildPaging(in))
		if pdu.InitiatingMessage.ProcedureCode.Value != ngapType.ProcedureCodePaging {
			t.Fatalf("procedure %d", pdu.InitiatingMessage.ProcedureCode.Value)
		}
		out, err := ngapx.ParsePaging(pdu)
		if err != nil || !reflect.DeepEqual(in, out) {
			t.Fatalf("round trip: got %+v, %v; want %+v", out, err, in)
		}
	}
}

func TestPagingBuilderRefusesWhatTheIECannotHold(t *testing.T) {
	many := make([]domain.TAI, 17)
	for i := range many {
		many[i] = domain.TAI{PLMN: plmn, TAC: domain.TAC(i + 1)}
	}
	for name, p := range map[string]ngapx.Paging{
		"no TAI":       {STMSI: pagedUE},
		"17 TAIs":      {STMSI: pagedUE, TAIs: many},
		"priority 9":   {STMSI: pagedUE, TAIs: pagedTAs, Priority: 9},
		"invalid PLMN": {STMSI: pagedUE, TAIs: []domain.TAI{{PLMN: domain.PLMN{MCC: "2x8", MNC: "93"}, TAC: 1}}},
	} {
		if _, err := ngapx.BuildPaging(p); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

func TestPagingWithoutTAIListIsMissingAnIE(t *testing.T) {
	pdu := decode(t)(ngapx.BuildPaging(ngapx.Paging{STMSI: pagedUE, TAIs: pagedTAs}))
	ies := &pdu.InitiatingMessage.Value.Paging.ProtocolIEs
	ies.List = ies.List[:1] // the UE Paging Identity alone
	if _, err := ngapx.ParsePaging(pdu); !errors.Is(err, ngapx.ErrMissingIE) {
		t.Fatalf("got %v, want ErrMissingIE", err)
	}
	other := decode(t)(ngapx.BuildErrorIndication(1, 1, ngapx.CauseMisc(0)))
	if _, err := ngapx.ParsePaging(other); !errors.Is(err, ngapx.ErrNotThisMessage) {
		t.Fatalf("Error Indication read as paging: %v", err)
	}
}

func TestInitialUEMessageCarriesTheRRCCause(t *testing.T) {
	cell := ngapx.Cell{TAI: pagedTAs[0], CellID: 1}
	pdu := decode(t)(ngapx.BuildInitialUEMessageWithCause(5, []byte{0x7E, 0x00, 0x4C}, cell, &pagedUE, ngapType.RRCEstablishmentCausePresentMtAccess))
	cause := aper.Enumerated(99)
	for _, ie := range pdu.InitiatingMessage.Value.InitialUEMessage.ProtocolIEs.List {
		if ie.Value.RRCEstablishmentCause != nil {
			cause = ie.Value.RRCEstablishmentCause.Value
		}
	}
	m, err := ngapx.ParseInitialUEMessage(pdu)
	if err != nil || cause != ngapType.RRCEstablishmentCausePresentMtAccess || m.STMSI == nil || *m.STMSI != pagedUE {
		t.Fatalf("cause %d, message %+v, %v", cause, m, err)
	}
}

// A Service Request's Initial Context Setup: the AMF sends the sessions'
// transfers, the gNB reads them and answers per session, and the AMF reads
// back the outcomes for the SMF.
func TestInitialContextSetupCarriesSessionsBothWays(t *testing.T) {
	tr, err := ngapxtest.SetupRequestTransfer(ngapxtest.Session{ID: 1, UL: upf, QFIs: []uint8{1}})
	if err != nil {
		t.Fatal(err)
	}
	slice := models.Snssai{Sst: 1, Sd: "010203"}
	req := ngapx.InitialContext{AMFUEID: 9, RANUEID: 4, GUAMI: testGUAMI(t), Allowed: []models.Snssai{slice}, KgNB: make([]byte, 32), AMBRUL: 1e8, AMBRDL: 1e9,
		NASPDU: []byte{0x7E, 0x00, 0x4E}, Sessions: []ngapx.SessionResource{
			{ID: 1, SNSSAI: slice, Transfer: tr}, {ID: 2, SNSSAI: slice, Transfer: []byte{0xFF}}}}
	gnbSide, err := ngapx.ParseRANInitialContextSetupRequest(decode(t)(ngapx.BuildInitialContextSetupRequest(req)))
	if err != nil {
		t.Fatal(err)
	}
	if gnbSide.AMFUEID != 9 || gnbSide.RANUEID != 4 || len(gnbSide.Sessions) != 1 || gnbSide.Sessions[0].ID != 1 ||
		gnbSide.Sessions[0].UL != upf || !reflect.DeepEqual(gnbSide.Unreadable, []uint8{2}) || len(gnbSide.NASPDU) != 3 {
		t.Fatalf("gNB read %+v", gnbSide)
	}
	gnb := ngapx.Tunnel{IPv4: upf.IPv4.Next(), TEID: 7}
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
	answer := decode(t)(ngapx.BuildRANInitialContextSetupResponse(9, 4, []ngapx.RANSessionResult{
		{ID: 1, DL: gnb, QFIs: []uint8{1}}, {ID: 2, Cause: &cause}}))
	out, err := ngapx.ParseInitialContextSetupOutcomes(answer)
	if err != nil || len(out) != 2 {
		t.Fatalf("outcomes %+v, %v", out, err)
	}
	if out[0].ID != 1 || out[0].Type != models.N2SmInfoType_PDU_RES_SETUP_RSP || out[1].ID != 2 || out[1].Type != models.N2SmInfoType_PDU_RES_SETUP_FAIL {
		t.Fatalf("outcomes %+v", out)
	}
	rsp, err := ngapx.ParsePDUSessionResourceSetupResponseTransfer(out[0].Transfer)
	if err != nil || rsp.DL != gnb {
		t.Fatalf("gNB tunnel %+v, %v", rsp.DL, err)
	}
	none, err := ngapx.ParseInitialContextSetupOutcomes(decode(t)(ngapx.BuildInitialContextSetupResponse(9, 4)))
	if err != nil || len(none) != 0 {
		t.Fatalf("registration's answer: %+v, %v", none, err)
	}
}

func testGUAMI(t *testing.T) domain.GUAMI {
	g, err := domain.ParseGUAMI("20893-cafe00")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// FuzzRANSideIdle: what a gNB reads of the idle-mode procedures (Paging,
// an Initial Context Setup Request with sessions) and the AMF of the
// answer never panics.
func FuzzRANSideIdle(f *testing.F) {
	if b, err := ngapx.BuildPaging(ngapx.Paging{STMSI: pagedUE, TAIs: pagedTAs}); err == nil {
		f.Add(b)
	}
	cause := ngapx.CauseMisc(0)
	if b, err := ngapx.BuildRANInitialContextSetupResponse(1, 2, []ngapx.RANSessionResult{{ID: 1, DL: upf, QFIs: []uint8{1}}, {ID: 2, Cause: &cause}}); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pdu, err := ngapx.Decode(b)
		if err != nil {
			return
		}
		_, _ = ngapx.ParsePaging(pdu)
		_, _ = ngapx.ParseRANInitialContextSetupRequest(pdu)
		_, _ = ngapx.ParseInitialContextSetupOutcomes(pdu)
	})
}

func TestReleaseRequestListsItsSessions(t *testing.T) {
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)
	ids, listed, err := ngapx.ReleaseRequestSessions(decode(t)(ngapx.BuildUEContextReleaseRequestWithSessions(3, 4, cause, []uint8{1, 5})))
	if err != nil || !listed || !reflect.DeepEqual(ids, []int64{1, 5}) {
		t.Fatalf("ids %v listed %v err %v", ids, listed, err)
	}
	if _, listed, err := ngapx.ReleaseRequestSessions(decode(t)(ngapx.BuildUEContextReleaseRequest(3, 4, cause))); err != nil || listed {
		t.Fatalf("no list: listed %v err %v", listed, err)
	}
}
