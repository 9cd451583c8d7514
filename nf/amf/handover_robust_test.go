package amf

import (
	"testing"
	"time"

	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/ngapx"
)

// Every handover message of a UE the AMF serves, with each octet in turn
// inverted, from the gNB that would send it: whatever the AMF makes of
// it — a refusal, an Error Indication, a handover — no event panics (a
// panic would cost the UE its context, DESIGN.md "Bad input").
func TestMutatedHandoverMessagesNeverPanic(t *testing.T) {
	h, g, ue, smf := establishedUE(t, "0000000320", 5)
	g2 := h.connectTarget()
	smfAnswers(smf, models.HoState_PREPARING, models.N2SmInfoType_PDU_RES_SETUP_REQ, hoReq)
	stop := make(chan struct{})
	defer close(stop)
	for _, c := range []chan msg{g.conn.out, g2.conn.out} {
		go drainNGAP(c, stop)
	}
	go drainSMF(smf.calls, stop)

	ids := ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: ue.ranID}
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentUnspecified)
	counts, _ := ngapx.RANStatusContainer([]ngapx.DRBCount{{DRB: 1}})
	fromSource := [][]byte{
		n2Required(t, ue, 5, targetGNB),
		must2(t)(ngapx.BuildHandoverCancel(ids, cause)),
		must2(t)(ngapx.BuildUplinkRANStatusTransfer(ngapx.RANStatusTransfer{UEIDs: ids, Container: counts})),
	}
	fromTarget := [][]byte{
		pathSwitch(t, ue.amfID, 70, 5),
		n2Ack(t, ue.amfID, 71, 5),
		must2(t)(ngapx.BuildHandoverFailure(ue.amfID, cause)),
		must2(t)(ngapx.BuildHandoverNotify(ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 71}, targetCell)),
	}
	for side, list := range map[*gnbSide][][]byte{g: fromSource, g2: fromTarget} {
		for _, b := range list {
			for i := range b {
				m := append([]byte(nil), b...)
				m[i] ^= 0xFF
				side.send(m)
			}
		}
	}
	waitIdle(t, h)
	requireMetric(t, h, "l25gc_amf_dispatcher_panics_total")
	h.wantMetric("l25gc_amf_dispatcher_panics_total", nil, 0, "events that panicked")
}

// requireMetric fails unless the AMF exports the metric family at all (a
// missing one would read as 0).
func requireMetric(t *testing.T, h *harness, name string) {
	t.Helper()
	fams, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return
		}
	}
	t.Fatalf("no metric %s", name)
}

func drainNGAP(c chan msg, stop chan struct{}) {
	for {
		select {
		case <-c:
		case <-stop:
			return
		}
	}
}

func drainSMF(c chan smfCall, stop chan struct{}) {
	for {
		select {
		case <-c:
		case <-stop:
			return
		}
	}
}

// waitIdle waits until the AMF's dispatcher has run every event it was
// given (the bound only ends a failing test).
func waitIdle(t *testing.T, h *harness) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for idle := 0; idle < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the AMF never became idle")
		}
		if h.amf.disp.QueueLen() == 0 && h.amf.disp.InFlight() == 0 {
			idle++
		} else {
			idle = 0
		}
		time.Sleep(20 * time.Millisecond)
	}
}
