package amf

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// counted waits until nothing is counted or waiting and returns how many
// procedures the limiter counted so far: the base a case adds its own to.
func (h *harness) counted() uint64 {
	h.t.Helper()
	h.eventually("E_current and the queue at 0", func() bool {
		s := h.amf.limiter.State()
		return s.ECurrent == 0 && s.Queue == 0
	})
	return h.amf.limiter.State().Started
}

// wantCurrent checks E_current right after the message the test saw (the
// UE's key is done with it by then).
func (h *harness) wantCurrent(n int, why string) {
	h.t.Helper()
	h.eventually(fmt.Sprintf("E_current %d: %s", n, why), func() bool { return h.amf.limiter.State().ECurrent == n })
}

// contextSetupFailure is the gNB's Initial Context Setup Failure (TS 38.413
// 8.3.1.3), which no builder of the AMF's side needs.
func contextSetupFailure(t *testing.T, amfID, ranID int64) []byte {
	t.Helper()
	cause := ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentRadioResourcesNotAvailable)
	ie := func(id int64, v ngapType.InitialContextSetupFailureIEsValue) ngapType.InitialContextSetupFailureIEs {
		return ngapType.InitialContextSetupFailureIEs{Id: ngapType.ProtocolIEID{Value: id},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore}, Value: v}
	}
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentUnsuccessfulOutcome, UnsuccessfulOutcome: &ngapType.UnsuccessfulOutcome{
		ProcedureCode: ngapType.ProcedureCode{Value: ngapType.ProcedureCodeInitialContextSetup},
		Criticality:   ngapType.Criticality{Value: ngapType.CriticalityPresentReject},
		Value: ngapType.UnsuccessfulOutcomeValue{Present: ngapType.UnsuccessfulOutcomePresentInitialContextSetupFailure,
			InitialContextSetupFailure: &ngapType.InitialContextSetupFailure{ProtocolIEs: ngapType.ProtocolIEContainerInitialContextSetupFailureIEs{
				List: []ngapType.InitialContextSetupFailureIEs{
					ie(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.InitialContextSetupFailureIEsValue{
						Present: ngapType.InitialContextSetupFailureIEsPresentAMFUENGAPID, AMFUENGAPID: &ngapType.AMFUENGAPID{Value: amfID}}),
					ie(ngapType.ProtocolIEIDRANUENGAPID, ngapType.InitialContextSetupFailureIEsValue{
						Present: ngapType.InitialContextSetupFailureIEsPresentRANUENGAPID, RANUENGAPID: &ngapType.RANUENGAPID{Value: ranID}}),
					ie(ngapType.ProtocolIEIDCause, ngapType.InitialContextSetupFailureIEsValue{
						Present: ngapType.InitialContextSetupFailureIEsPresentCause, Cause: &cause}),
				}}}}}}
	return must2(t)(ngapx.Encode(pdu))
}

// serviceFromIdle is an idle UE's Service Request for its session id up to
// the Service Accept in Initial Context Setup: the Service Request is
// still counted, since the gNB's answer completes it.
func serviceFromIdle(t *testing.T, h *harness, ue *testUE, smf *fakeSMF, id uint8) {
	t.Helper()
	smf.answerActivation(setupTransfer(t, id))
	ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, psis(id), psis(id)))
	smf.expect("modify")
	ue.readServiceAccept()
	h.wantCurrent(1, "the Service Request until the gNB answers")
	smf.set("modify", smfReply{status: 204})
}

// connectedServiceRequest is a connected UE's Service Request for session id.
func connectedServiceRequest(t *testing.T, ue *testUE, id uint8) []byte {
	return ue.protect(must2(t)(nasx.BuildServiceRequest(nasx.ServiceRequest{ServiceType: nasx.ServiceTypeData, NgKSI: ue.lastKSI,
		STMSI: ue.guti.STMSI(), UplinkDataStatus: psis(id)})), nas.SecurityHeaderTypeIntegrityProtectedAndCiphered)
}

// pagedUE is an idle UE with a paging for session 5 running (counted).
func pagedUE(t *testing.T, msin string, edit func(*config.Config)) (*harness, *gnbSide, *testUE, *fakeSMF, *failureSink, uint64) {
	t.Helper()
	h, g, ue, smf := idleUEWith(t, msin, 5, edit)
	base := h.counted()
	sink := h.failureSink()
	if w, _ := h.pageRequest(ue.supi, 5, sink); w.Code != http.StatusAccepted {
		t.Fatalf("transfer for the idle UE: %d %s", w.Code, w.Body)
	}
	g.readPaging()
	h.wantCurrent(1, "the network-triggered Service Request")
	return h, g, ue, smf, sink, base
}

// handoverUE is a connected UE with session 5 and a second gNB to go to.
func handoverUE(t *testing.T, msin string, edit func(*config.Config)) (*harness, *gnbSide, *gnbSide, *testUE, *fakeSMF, uint64) {
	t.Helper()
	h, g, ue, smf := establishedUEWith(t, msin, 5, edit)
	g2 := h.connectTarget()
	return h, g, g2, ue, smf, h.counted()
}

// No path of the Service Request (UE- and network-triggered), the N2
// handover or the Xn handover leaks a slot: each way they end brings
// E_current back to 0, and each counts as one procedure (one for a paging
// and the Service Request that answers it). Each case returns the
// harness and how many procedures it expects counted in all.
func TestNoSlotLeaksServiceRequestAndHandover(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T) (*harness, uint64)
	}{
		{"service request from idle: accepted, the gNB sets the context up", func(t *testing.T) (*harness, uint64) {
			h, _, ue, smf := idleUE(t, "0000001101", 5)
			base := h.counted()
			serviceFromIdle(t, h, ue, smf, 5)
			ue.contextSetupResponse(5)
			smf.expect("modify")
			h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": procService, "result": resultSuccess}, 1, "completed")
			return h, base + 1
		}},
		{"service request from idle: Initial Context Setup fails", func(t *testing.T) (*harness, uint64) {
			h, g, ue, smf := idleUE(t, "0000001102", 5)
			base := h.counted()
			serviceFromIdle(t, h, ue, smf, 5)
			g.send(contextSetupFailure(t, ue.amfID, ue.ranID))
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, ue.ranID))
			h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": procService, "result": resultFailure}, 1, "failed")
			return h, base + 1
		}},
		{"service request from idle: the UE is gone before the gNB answers", func(t *testing.T) (*harness, uint64) {
			h, g, ue, smf := idleUE(t, "0000001103", 5)
			base := h.counted()
			serviceFromIdle(t, h, ue, smf, 5)
			g.send(releaseRequest(t, ue.amfID, ue.ranID))
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, ue.ranID))
			return h, base + 1
		}},
		{"service request: unknown 5G-S-TMSI, reject #9", func(t *testing.T) (*harness, uint64) {
			h, g, ue, _ := idleUE(t, "0000001104", 5)
			base := h.counted()
			ue.guti.TMSI += 1000
			ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, nil, nil))
			if r := ue.readServiceReject(); r.Cause != nasx.CauseUEIdentityCannotBeDerived {
				t.Fatalf("cause #%d, want #9", r.Cause)
			}
			g.expect("UEContextReleaseCommand")
			h.wantMetric("l25gc_amf_procedures_total", map[string]string{"procedure": procService, "result": resultReject}, 1, "rejected")
			return h, base + 1
		}},
		{"service request: implicitly deregistered, reject #10", func(t *testing.T) (*harness, uint64) {
			h, g, ue, _ := idleUE(t, "0000001105", 5)
			base := h.counted()
			ue.guti.TMSI += 1000
			h.amf.ues.deregistered.add(ue.guti.TMSI)
			ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeData, nil, nil))
			if r := ue.readServiceReject(); r.Cause != nasx.CauseImplicitlyDeregistered {
				t.Fatalf("cause #%d, want #10", r.Cause)
			}
			g.expect("UEContextReleaseCommand")
			return h, base + 1
		}},
		{"service request: malformed, reject #96", func(t *testing.T) (*harness, uint64) {
			h, g := newSetUpHarness(t, nil)
			b := must2(t)(nasx.BuildServiceRequest(nasx.ServiceRequest{STMSI: nasx.STMSI{TMSI: 1}}))
			b[6] = 0xF2 // identity type 5G-GUTI in the 5G-S-TMSI IE
			g.send(initialUEMessage(t, 1, b))
			g.expect("DownlinkNASTransport")
			g.expect("UEContextReleaseCommand")
			return h, 1
		}},
		{"service request: connected UE, accepted", func(t *testing.T) (*harness, uint64) {
			h, g, ue, smf := establishedUE(t, "0000001106", 5)
			base := h.counted()
			smf.answerActivation(setupTransfer(t, 5))
			ue.up(connectedServiceRequest(t, ue, 5))
			smf.expect("modify")
			if m := ue.dl("DownlinkNASTransport"); m.ServiceAccept == nil {
				t.Fatalf("NAS message type %d, want Service Accept", m.GmmHeader.GetMessageType())
			}
			g.readSessionRequest("PDUSessionResourceSetupRequest")
			return h, base + 1
		}},
		{"service request: authenticated first (integrity check failed)", func(t *testing.T) (*harness, uint64) {
			h, _, ue, _ := idleUE(t, "0000001107", 5)
			base := h.counted()
			sr := ue.serviceRequest(nasx.ServiceTypeData, nil, psis(5))
			sr[3] ^= 0xFF // the MAC
			ue.requestService(2, sr)
			ue.up(ue.authResponse(ue.dl("DownlinkNASTransport")))
			ue.up(ue.acceptSMC(ue.g.expect("DownlinkNASTransport").NASPDU, nil))
			ue.readServiceAccept()
			ue.contextSetupResponse()
			return h, base + 1
		}},
		{"paging answered by the UE's Service Request: one procedure", func(t *testing.T) (*harness, uint64) {
			h, _, ue, smf, _, base := pagedUE(t, "0000001108", func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
			ue.requestService(2, ue.serviceRequest(nasx.ServiceTypeMobileTerminated, nil, psis(5)))
			ue.readServiceAccept()
			h.wantCurrent(1, "the paging and its answer are one procedure")
			smf.set("modify", smfReply{status: 204})
			ue.contextSetupResponse(5)
			smf.expect("modify")
			return h, base + 1
		}},
		{"paging fails: T3513 expires with no retransmission left", func(t *testing.T) (*harness, uint64) {
			h, _, _, _, sink, base := pagedUE(t, "0000001109", func(c *config.Config) {
				c.AMF.NAS.T3513 = 20 * msec
				c.AMF.NAS.PagingRetransmissions = 0
			})
			sink.expect(h)
			return h, base + 1
		}},
		{"paging fails: mobile reachable timer expires", func(t *testing.T) (*harness, uint64) {
			h, _, ue, _, sink, base := pagedUE(t, "0000001110", func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
			h.expireReachability(ue.guti.TMSI)
			sink.expect(h)
			return h, base + 1
		}},
		{"paging ends: the UE registers instead", func(t *testing.T) (*harness, uint64) {
			h, _, ue, _, sink, base := pagedUE(t, "0000001111", func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
			ue.returnWithGUTI(2)
			sink.expect(h)
			ue.up(ue.registrationComplete())
			ue.dl("DownlinkNASTransport")
			return h, base + 2
		}},
		{"paging ends: the UDM deregisters the UE", func(t *testing.T) (*harness, uint64) {
			h, _, ue, _, sink, base := pagedUE(t, "0000001112", func(c *config.Config) { c.AMF.NAS.T3513 = time.Hour })
			if code, p := h.callback("/namf-callback/v1/"+ue.supi+"/dereg-notify", `{"deregReason":"SUBSCRIPTION_WITHDRAWN"}`); code != http.StatusNoContent {
				t.Fatalf("%d %+v", code, p)
			}
			sink.expect(h)
			return h, base + 2 // the paging, and the UDM's deregistration (limiter_deregistration.go)
		}},
		{"Xn handover: Path Switch Request Acknowledge", func(t *testing.T) (*harness, uint64) {
			h, g, g2, ue, smf, base := handoverUE(t, "0000001113", nil)
			smfAnswers(smf, "", models.N2SmInfoType_PATH_SWITCH_REQ_ACK, ackTransfer)
			g2.send(pathSwitch(t, ue.amfID, 50, 5))
			smf.expect("modify")
			g2.expectPDU("PathSwitchRequestAcknowledge")
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, 1))
			return h, base + 1
		}},
		{"Xn handover: Path Switch Request Failure, nothing switched", func(t *testing.T) (*harness, uint64) {
			h, _, g2, ue, smf, base := handoverUE(t, "0000001114", nil)
			smfAnswers(smf, "", models.N2SmInfoType_PATH_SWITCH_SETUP_FAIL, []byte{0, 0})
			g2.send(pathSwitch(t, ue.amfID, 52, 5))
			smf.expect("modify")
			g2.expectPDU("PathSwitchRequestFailure")
			return h, base + 1
		}},
		{"Xn handover: Path Switch Request for an unknown UE starts nothing", func(t *testing.T) (*harness, uint64) {
			h, _, g2, _, _, base := handoverUE(t, "0000001115", nil)
			g2.send(pathSwitch(t, 4242, 51, 3))
			g2.expectPDU("PathSwitchRequestFailure")
			return h, base
		}},
		{"N2 handover: Handover Notify", func(t *testing.T) (*harness, uint64) {
			h, g, g2, ue, smf, base := handoverUE(t, "0000001116", nil)
			prepareN2(t, g, g2, ue, smf, 5)
			h.wantCurrent(1, "the handover until its end")
			smfAnswers(smf, models.HoState_PREPARED, models.N2SmInfoType_HANDOVER_CMD, hoCmd)
			g2.send(n2Ack(t, ue.amfID, 60, 5))
			smf.expect("modify")
			g.expect("HandoverCommand")
			smf.set("modify", smfReply{status: 204})
			g2.send(must2(t)(ngapx.BuildHandoverNotify(ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 60}, targetCell)))
			smf.expect("modify")
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, 1))
			return h, base + 1
		}},
		{"N2 handover: the source cancels", func(t *testing.T) (*harness, uint64) {
			h, g, g2, ue, smf, base := handoverUE(t, "0000001117", nil)
			prepareN2(t, g, g2, ue, smf, 5)
			smf.set("modify", smfReply{status: 204})
			g.send(must2(t)(ngapx.BuildHandoverCancel(ngapx.UEIDs{AMFUEID: ue.amfID, RANUEID: 1},
				ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentHandoverCancelled))))
			expectCancelled(t, smf)
			g2.expect("UEContextReleaseCommand")
			g.expect("HandoverCancelAcknowledge")
			return h, base + 1
		}},
		{"N2 handover: the target fails", func(t *testing.T) (*harness, uint64) {
			h, g, g2, ue, smf, base := handoverUE(t, "0000001118", nil)
			prepareN2(t, g, g2, ue, smf, 5)
			smf.set("modify", smfReply{status: 204})
			g2.send(must2(t)(ngapx.BuildHandoverFailure(ue.amfID, ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentNoRadioResourcesAvailableInTargetCell))))
			g.expect("HandoverPreparationFailure")
			expectCancelled(t, smf)
			return h, base + 1
		}},
		{"N2 handover: TNGRELOCprep expires", func(t *testing.T) (*harness, uint64) {
			// Long enough for the SMF's answer and the Handover Request on a loaded machine.
			h, g, g2, ue, smf, base := handoverUE(t, "0000001119", func(c *config.Config) { c.AMF.NGAP.TNGRELOCprep = time.Second })
			prepareN2(t, g, g2, ue, smf, 5)
			smf.set("modify", smfReply{status: 204})
			wantCause(t, g.expect("HandoverPreparationFailure"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocprepExpiry))
			expectCancelled(t, smf)
			g2.expect("UEContextReleaseCommand")
			return h, base + 1
		}},
		{"N2 handover: TNGRELOCoverall expires", func(t *testing.T) (*harness, uint64) {
			h, g, g2, ue, smf, base := handoverUE(t, "0000001120", func(c *config.Config) { c.AMF.NGAP.TNGRELOCoverall = 100 * msec })
			prepareN2(t, g, g2, ue, smf, 5)
			smfAnswers(smf, models.HoState_PREPARED, models.N2SmInfoType_HANDOVER_CMD, hoCmd)
			g2.send(n2Ack(t, ue.amfID, 62, 5))
			smf.expect("modify")
			g.expect("HandoverCommand")
			smf.set("modify", smfReply{status: 204})
			wantCause(t, g2.expect("UEContextReleaseCommand"), ngapx.CauseRadioNetwork(ngapType.CauseRadioNetworkPresentTngrelocoverallExpiry))
			expectCancelled(t, smf)
			return h, base + 1
		}},
		{"N2 handover: refused before it starts (unknown target)", func(t *testing.T) (*harness, uint64) {
			h, g, _, ue, _, base := handoverUE(t, "0000001121", nil)
			g.send(n2Required(t, ue, 5, ngapx.GlobalGNBID{PLMN: testPLMN, ID: 0x77, Bits: 24}))
			g.expect("HandoverPreparationFailure")
			return h, base + 1 // the gate's slot, given back unclaimed
		}},
		{"N2 handover: the source loses the UE", func(t *testing.T) (*harness, uint64) {
			h, g, g2, ue, smf, base := handoverUE(t, "0000001122", nil)
			prepareN2(t, g, g2, ue, smf, 5)
			smf.set("modify", smfReply{status: 204})
			g.send(releaseRequest(t, ue.amfID, 1))
			g.expect("UEContextReleaseCommand")
			g.send(releaseComplete(t, ue.amfID, 1))
			g2.expect("UEContextReleaseCommand")
			return h, base + 1
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, started := c.run(t)
			h.settled(started)
		})
	}
}

// With fixed:1 and the only slot held by A's PDU session establishment,
// B's Service Request and C's Handover Required wait at the gate, while a
// paging of D and D's answer go through (a network-triggered Service
// Request is counted, never held, and its answer is its follow-up). Once
// A completes, B's Service Request runs and completes, then C's handover:
// their follow-ups (the SMFs' answers, the Initial Context Setup answer,
// the target's acknowledgement, Handover Notify) never wait at the gate.
func TestFixedOneServiceRequestAndHandoverWaitAndComplete(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.Limiter.Mode = "fixed:1"
		c.AMF.NAS.T3513 = time.Hour
	})
	smf, _ := h.withSMF()
	a, b, c, d := h.newUE(g, "0000001200", 1), h.newUE(g, "0000001201", 2), h.newUE(g, "0000001202", 3), h.newUE(g, "0000001203", 4)
	establishOn(t, h, g, b, smf, 5)
	b.goIdle(1)
	smf.expect("modify")
	establishOn(t, h, g, d, smf, 5)
	d.goIdle(2)
	smf.expect("modify")
	establishOn(t, h, g, c, smf, 5)
	g2 := h.connectTarget()
	a.register()
	base, queued := h.counted(), h.amf.limiter.State().Queued

	a.requestSession(1, &slice1, "internet")
	smf.expect("create") // A holds the only slot
	b.requestService(10, b.serviceRequest(nasx.ServiceTypeSignalling, nil, psis(5)))
	h.eventually("B's Service Request waiting", func() bool { return h.amf.limiter.State().Queue == 1 })
	g.send(n2Required(t, c, 5, targetGNB))
	h.eventually("C's Handover Required waiting", func() bool { return h.amf.limiter.State().Queue == 2 })

	if w, _ := h.pageRequest(d.supi, 5, nil); w.Code != http.StatusAccepted {
		t.Fatalf("transfer for idle D: %d %s", w.Code, w.Body)
	}
	g.readPaging()
	g2.readPaging()
	d.requestService(11, d.serviceRequest(nasx.ServiceTypeMobileTerminated, nil, psis(5)))
	if ics, _ := d.readServiceAccept(); len(ics.Sessions) != 1 {
		t.Fatalf("D's sessions %+v", ics.Sessions)
	}
	smf.set("modify", smfReply{status: 204})
	d.contextSetupResponse(5)
	if u := smf.expect("modify"); u.update.N2SmInfoType != models.N2SmInfoType_PDU_RES_SETUP_RSP {
		t.Fatalf("D's setup answer to the SMF: %+v", u.update)
	}
	h.wantCurrent(1, "D's paging ended with its Service Request")
	if q := h.amf.limiter.State().Queue; q != 2 {
		t.Fatalf("queue %d, want B and C still waiting", q)
	}

	establish(t, h, g, smf, a, 1) // A ends: B's turn
	b.readServiceAccept()
	if s := h.amf.limiter.State(); s.ECurrent != 1 || s.Queue != 1 {
		t.Fatalf("E_current %d queue %d: want B running and C waiting", s.ECurrent, s.Queue)
	}
	smfAnswers(smf, models.HoState_PREPARING, models.N2SmInfoType_PDU_RES_SETUP_REQ, hoReq)
	b.contextSetupResponse() // B ends: C's turn
	if u := smf.expect("modify"); u.update.HoState != models.HoState_PREPARING {
		t.Fatalf("C's preparation: %+v", u.update)
	}
	if req, err := ngapx.ParseHandoverRequest(g2.expectPDU("HandoverRequest")); err != nil || req.AMFUEID != c.amfID {
		t.Fatalf("handover request %+v, %v", req, err)
	}
	smfAnswers(smf, models.HoState_PREPARED, models.N2SmInfoType_HANDOVER_CMD, hoCmd)
	g2.send(n2Ack(t, c.amfID, 70, 5))
	smf.expect("modify")
	g.expect("HandoverCommand")
	smf.set("modify", smfReply{status: 204})
	g2.send(must2(t)(ngapx.BuildHandoverNotify(ngapx.UEIDs{AMFUEID: c.amfID, RANUEID: 70}, targetCell)))
	if u := smf.expect("modify"); u.update.HoState != models.HoState_COMPLETED {
		t.Fatalf("C's completion: %+v", u.update)
	}
	g.expect("UEContextReleaseCommand")
	g.send(releaseComplete(t, c.amfID, c.ranID))

	h.settled(base + 4) // A's establishment, B's Service Request, D's paging with its answer, C's handover
	if q := h.amf.limiter.State().Queued - queued; q != 2 {
		t.Fatalf("%d initiating messages waited, want B's and C's", q)
	}
}

// With the limiter's queue full, a Handover Required gets Handover
// Preparation Failure and a Path Switch Request gets Path Switch Request
// Failure, both with cause control processing overload (TS 38.413
// 9.3.1.2): the gNB keeps the UE where it is instead of waiting for its
// timer, and nothing stays counted.
func TestFullQueueRefusesHandoversWithOverload(t *testing.T) {
	h, g := newSetUpHarness(t, func(c *config.Config) {
		c.AMF.Limiter.Mode = "fixed:1"
		c.AMF.Limiter.Queue = 1
	})
	smf, _ := h.withSMF()
	a, b, c := h.newUE(g, "0000001300", 1), h.newUE(g, "0000001301", 2), h.newUE(g, "0000001302", 3)
	establishOn(t, h, g, c, smf, 5)
	g2 := h.connectTarget()
	a.register()
	b.register()
	base := h.counted()
	a.requestSession(1, &slice1, "internet")
	smf.expect("create") // A holds the only slot
	b.requestSession(1, &slice1, "internet")
	h.eventually("B waiting: the queue is full", func() bool { return h.amf.limiter.State().Queue == 1 })

	overload := ngapx.CauseMisc(ngapType.CauseMiscPresentControlProcessingOverload)
	g.send(n2Required(t, c, 5, targetGNB))
	wantCause(t, g.expect("HandoverPreparationFailure"), overload)
	g2.send(pathSwitch(t, c.amfID, 80, 5))
	f, err := ngapx.ParsePathSwitchRequestFailure(g2.expectPDU("PathSwitchRequestFailure"))
	if err != nil || f.AMFUEID != c.amfID || f.RANUEID != 80 || len(f.Released) != 1 || f.Released[0].ID != 5 {
		t.Fatalf("path switch failure %+v, %v", f, err)
	}
	if cause, err := ngapx.ParsePathSwitchRequestSetupFailedTransfer(f.Released[0].Transfer); err != nil ||
		cause.Misc == nil || cause.Misc.Value != ngapType.CauseMiscPresentControlProcessingOverload {
		t.Fatalf("session released with %+v, %v", cause, err)
	}
	h.wantMetric("l25gc_amf_limiter_dropped_total", map[string]string{"procedure": kindHandover}, 1, "handovers turned away")
	h.wantMetric("l25gc_amf_limiter_dropped_total", map[string]string{"procedure": kindPathSwitch}, 1, "path switches turned away")
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "n2", "outcome": "failed", "reason": "overload"}, 1, "N2 refused")
	h.wantMetric("l25gc_amf_handovers_total", map[string]string{"kind": "xn", "outcome": "failed", "reason": "overload"}, 1, "Xn refused")

	establish(t, h, g, smf, a, 1)
	smf.expect("create") // B's turn
	establish(t, h, g, smf, b, 1)
	h.settled(base + 2)
}
