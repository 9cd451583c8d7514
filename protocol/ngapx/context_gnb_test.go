package ngapx_test

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/free5gc/ngap/ngapType"

	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/ngapx/ngapxtest"
)

// TS 23.502 4.2.3.2 step 12: the Service Accept and the sessions to
// re-activate arrive in Initial Context Setup Request; a broken transfer
// costs only its session.
func TestGNBReadsTheSessionsOfInitialContextSetup(t *testing.T) {
	pdu := decode(t)(ngapxtest.InitialContextSetupRequest(7, 3, []byte{0x7E, 0x00, 0x4E}, []ngapxtest.Session{
		{ID: 1, UL: upf, QFIs: []uint8{1}},
		{ID: 2, UL: upf, QFIs: []uint8{1}},
	}, map[uint8][]byte{2: {0xFF}}))
	c, err := ngapx.ParseRANInitialContextSetupRequest(pdu)
	if err != nil {
		t.Fatal(err)
	}
	if c.AMFUEID != 7 || c.RANUEID != 3 || !reflect.DeepEqual(c.NASPDU, []byte{0x7E, 0x00, 0x4E}) {
		t.Fatalf("%+v: want IDs 7/3 and the NAS-PDU", c)
	}
	if len(c.Sessions) != 1 || c.Sessions[0].ID != 1 || c.Sessions[0].UL != upf || len(c.Sessions[0].Flows) != 1 {
		t.Fatalf("sessions %+v: want session 1 with the UPF's tunnel and QFI 1", c.Sessions)
	}
	if !reflect.DeepEqual(c.Unreadable, []uint8{2}) {
		t.Fatalf("unreadable %v, want [2]", c.Unreadable)
	}
	if _, err := ngapx.ParseRANInitialContextSetupRequest(decode(t)(ngapx.BuildUEContextReleaseCommand(1, 2, ngapx.CauseMisc(0)))); err == nil {
		t.Fatal("a UE Context Release Command read as Initial Context Setup Request")
	}
}

func TestInitialContextSetupResponseCarriesTheDLTunnels(t *testing.T) {
	gnb := ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.2"), TEID: 42}
	cause := ngapx.CauseProtocol(ngapType.CauseProtocolPresentAbstractSyntaxErrorFalselyConstructedMessage)
	pdu := decode(t)(ngapx.BuildRANInitialContextSetupResponse(7, 3, []ngapx.RANSessionResult{{ID: 1, DL: gnb, QFIs: []uint8{1}}, {ID: 2, Cause: &cause}}))
	var ok *ngapType.PDUSessionResourceSetupListCxtRes
	var failed *ngapType.PDUSessionResourceFailedToSetupListCxtRes
	for _, ie := range pdu.SuccessfulOutcome.Value.InitialContextSetupResponse.ProtocolIEs.List {
		ok = orElse(ok, ie.Value.PDUSessionResourceSetupListCxtRes)
		failed = orElse(failed, ie.Value.PDUSessionResourceFailedToSetupListCxtRes)
	}
	if ok == nil || len(ok.List) != 1 || failed == nil || len(failed.List) != 1 || failed.List[0].PDUSessionID.Value != 2 {
		t.Fatalf("set up %+v, failed %+v: want session 1 set up and 2 failed", ok, failed)
	}
	r, err := ngapx.ParsePDUSessionResourceSetupResponseTransfer(ok.List[0].PDUSessionResourceSetupResponseTransfer)
	if err != nil || r.DL != gnb || !reflect.DeepEqual(r.QFIs, []uint8{1}) {
		t.Fatalf("response transfer %+v (%v): want DL %v, QFI 1", r, err, gnb)
	}
	c, err := ngapx.ParsePDUSessionResourceSetupUnsuccessfulTransfer(failed.List[0].PDUSessionResourceSetupUnsuccessfulTransfer)
	if err != nil || c.Protocol == nil {
		t.Fatalf("unsuccessful transfer cause %+v (%v)", c, err)
	}
	// Without sessions (a registration) neither list is there.
	bare := decode(t)(ngapx.BuildRANInitialContextSetupResponse(7, 3, nil))
	if n := len(bare.SuccessfulOutcome.Value.InitialContextSetupResponse.ProtocolIEs.List); n != 2 {
		t.Fatalf("response without sessions has %d IEs, want 2", n)
	}
}

func orElse[T any](have, v *T) *T {
	if have != nil {
		return have
	}
	return v
}

// TS 23.502 4.2.6 steps 1 and 5: the release messages name the sessions
// whose user plane goes with the UE context.
func TestContextReleaseNamesTheSessions(t *testing.T) {
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUserInactivity)
	req := decode(t)(ngapx.BuildRANContextReleaseRequest(7, 3, []uint8{1, 5}, cause))
	var reqIDs []int64
	for _, ie := range req.InitiatingMessage.Value.UEContextReleaseRequest.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceListCxtRelReq; l != nil {
			for _, item := range l.List {
				reqIDs = append(reqIDs, item.PDUSessionID.Value)
			}
		}
	}
	cpl := decode(t)(ngapx.BuildRANContextReleaseComplete(7, 3, []uint8{1}))
	var cplIDs []int64
	for _, ie := range cpl.SuccessfulOutcome.Value.UEContextReleaseComplete.ProtocolIEs.List {
		if l := ie.Value.PDUSessionResourceListCxtRelCpl; l != nil {
			for _, item := range l.List {
				cplIDs = append(cplIDs, item.PDUSessionID.Value)
			}
		}
	}
	if !reflect.DeepEqual(reqIDs, []int64{1, 5}) || !reflect.DeepEqual(cplIDs, []int64{1}) {
		t.Fatalf("request names %v, complete %v: want [1 5] and [1]", reqIDs, cplIDs)
	}
	s, err := ngapx.Summarize(req)
	if err != nil || s.AMFUEID != 7 || s.RANUEID != 3 || s.Cause == nil || s.Cause.RadioNetwork == nil {
		t.Fatalf("summary %+v (%v)", s, err)
	}
}
