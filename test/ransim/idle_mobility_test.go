package ransim

// Mobility in CM-IDLE through scripted AMFs (TS 24.501 5.5.1.3, TS 23.502
// 4.2.6 step 1b, 4.2.3.3): an idle UE reselects another gNB, updates its
// registration there without follow-on request, gets a new 5G-GUTI and the
// AMF's release, and is paged there under the new 5G-S-TMSI only; the
// Service Request sets its session up on a tunnel of the new gNB, which
// the UE's IP stack, bound to the first tunnel, follows.

import (
	"context"
	"testing"

	"github.com/free5gc/nas/nasMessage"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

func TestIdleUEReselectsUpdatesItsRegistrationAndIsPagedThere(t *testing.T) {
	src, amf := connectScripted(t)
	ue, s := amf.withIdleSession(src)
	first := s.Tunnel
	dst, amfDst := targetGNB(t)
	amfDst.sec = amf.sec // one AMF behind both associations

	if err := ue.Reselect(dst); err != nil {
		t.Fatal(err)
	}
	if src.IdleUEs() != 0 || dst.IdleUEs() != 1 || ue.GNB() != dst {
		t.Fatalf("after the reselection: source pages %d, target %d UEs: want 0 and 1", src.IdleUEs(), dst.IdleUEs())
	}

	done := make(chan error, 1)
	go func() { _, err := ue.UpdateRegistrationFromIdle(context.Background(), false); done <- err }()
	_, _, ranID, pdu := amfDst.initialNAS()
	plain, _, err := amfDst.sec.Unprotect(pdu)
	if err != nil {
		t.Fatal(err)
	}
	r := decodeRegistration(t, plain).NgksiAndRegistrationType5GS
	if r.GetRegistrationType5GS() != nasMessage.RegistrationType5GSMobilityRegistrationUpdating || r.GetFOR() != 0 {
		t.Fatalf("registration type %d, follow-on request %d: want mobility updating without follow-on request",
			r.GetRegistrationType5GS(), r.GetFOR())
	}
	// TS 24.501 5.5.1.3.4: the accept gives a new 5G-GUTI; with no
	// follow-on request the AMF releases the UE afterwards.
	newGUTI := nasx.GUTI{GUAMI: testGUAMI, TMSI: 6}
	amfDst.nasDown(ranID, amfDst.built(nasx.BuildRegistrationAccept(nasx.RegistrationAccept{GUTI: &newGUTI, Allowed: []models.Snssai{testSlice}})))
	if m := amfDst.uplinkNAS(); m.RegistrationComplete == nil {
		t.Fatalf("message type %d, want Registration Complete", m.GmmHeader.GetMessageType())
	}
	amfDst.send(ngapx.BuildUEContextReleaseCommand(testAMFUEID, ranID, ngapx.CauseNas(ngapType.CauseNasPresentNormalRelease)))
	amfDst.next("UEContextReleaseComplete")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ue.Idle() || *ue.GUTI() != newGUTI || ue.Session(1) != s || dst.IdleUEs() != 1 {
		t.Fatalf("after the update: idle %v, GUTI %v, session %v, target pages %d UEs: want CM-IDLE, the new GUTI, session 1, 1 UE",
			ue.Idle(), ue.GUTI(), ue.Session(1), dst.IdleUEs())
	}

	// The old 5G-S-TMSI pages nobody; the new one pages the UE.
	ta := []domain.TAI{{PLMN: testPLMN, TAC: 1}}
	amfDst.send(ngapx.BuildPaging(ngapx.Paging{STMSI: testSTMSI, TAIs: ta}))
	answered := make(chan error, 1)
	go func() { _, _, err := ue.AnswerPaging(context.Background()); answered <- err }()
	amfDst.send(ngapx.BuildPaging(ngapx.Paging{STMSI: newGUTI.STMSI(), TAIs: ta}))
	_, _, ranID, pdu = amfDst.initialNAS()
	if clear, _ := amfDst.serviceRequest(pdu); clear.STMSI != newGUTI.STMSI() {
		t.Fatalf("Service Request from %+v, want %+v", clear.STMSI, newGUTI.STMSI())
	}
	dl := amfDst.contextWithSession(ranID, testUPF)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if dst.PagingsForNobody.Load() != 1 {
		t.Errorf("Pagings for the old 5G-S-TMSI answered: %d for nobody, want 1", dst.PagingsForNobody.Load())
	}
	now := ue.Session(1).Tunnel
	if now.p != dst.up || now.DL() != dl || first.current() != now {
		t.Fatalf("session 1 on gNB %v, DL %v (announced %v), first tunnel leads to %p, want %p at the target",
			now.p.addr, now.DL(), dl, first.current(), now)
	}
}
