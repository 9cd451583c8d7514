package amf

// Test helpers of the idle-mode procedures: the UE's Service Request, the
// gNB's reading of Paging and of an Initial Context Setup with sessions,
// the SMF's answer to an activation and its failure-notification callback.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/protocol/ngapx/ngapxtest"
	"github.com/l25gc/l25gc/sbi"
)

func psis(ids ...uint8) *nasx.PSISet { s := nasx.PSIs(ids...); return &s }

// serviceRequest is the UE's Service Request, integrity protected under its
// kept context (TS 24.501 4.4.6: an initial message is not ciphered).
func (u *testUE) serviceRequest(serviceType uint8, uplink, status *nasx.PSISet) []byte {
	u.t.Helper()
	return u.protect(must2(u.t)(nasx.BuildServiceRequest(nasx.ServiceRequest{ServiceType: serviceType, NgKSI: u.lastKSI,
		STMSI: u.guti.STMSI(), UplinkDataStatus: uplink, PDUSessionStatus: status})), nas.SecurityHeaderTypeIntegrityProtected)
}

// requestService sends nasPDU from CM-IDLE in an Initial UE Message with
// the 5G-S-TMSI on a new RAN UE NGAP ID.
func (u *testUE) requestService(ranID int64, nasPDU []byte) {
	u.t.Helper()
	u.ranID = ranID
	s := u.guti.STMSI()
	cause := ngapType.RRCEstablishmentCausePresentMoData
	u.g.send(must2(u.t)(ngapx.BuildInitialUEMessageWithCause(ranID, nasPDU, testCell, &s, cause)))
}

// readPaging reads a Paging as a gNB does.
func (g *gnbSide) readPaging() ngapx.Paging {
	g.t.Helper()
	p, err := ngapx.ParsePaging(g.expectPDU("Paging"))
	if err != nil {
		g.t.Fatal(err)
	}
	return p
}

// noMore checks that the AMF sent nothing more to this gNB for a while
// (used after the event that would have sent it was answered).
func (g *gnbSide) noMore(within time.Duration) {
	g.t.Helper()
	select {
	case m := <-g.conn.out:
		pdu, _ := ngapx.Decode(m.b)
		s, _ := ngapx.Summarize(pdu)
		g.t.Fatalf("AMF sent an unexpected %s", s.Name)
	case <-time.After(within):
	}
}

// readServiceAccept reads Initial Context Setup Request as the gNB does
// and the Service Accept inside as the UE does.
func (u *testUE) readServiceAccept() (*ngapx.RANInitialContext, nasx.ServiceAccept) {
	u.t.Helper()
	ics, err := ngapx.ParseRANInitialContextSetupRequest(u.g.expectPDU("InitialContextSetupRequest"))
	if err != nil {
		u.t.Fatal(err)
	}
	if ics.RANUEID != u.ranID {
		u.t.Fatalf("ICS for RAN UE %d, want %d", ics.RANUEID, u.ranID)
	}
	u.amfID = ics.AMFUEID
	m := u.decode(ics.NASPDU)
	if m.ServiceAccept == nil {
		u.t.Fatalf("ICS carries NAS message type %d, want Service Accept", m.GmmHeader.GetMessageType())
	}
	a, err := nasx.ParseServiceAccept(m.ServiceAccept)
	if err != nil {
		u.t.Fatal(err)
	}
	return ics, a
}

// readServiceReject reads Service Reject in Downlink NAS Transport.
func (u *testUE) readServiceReject() nasx.ServiceReject {
	u.t.Helper()
	m := u.dl("DownlinkNASTransport")
	if m.ServiceReject == nil {
		u.t.Fatalf("NAS message type %d, want Service Reject", m.GmmHeader.GetMessageType())
	}
	r, err := nasx.ParseServiceReject(m.ServiceReject)
	if err != nil {
		u.t.Fatal(err)
	}
	return r
}

// contextSetupResponse is the gNB's Initial Context Setup Response with the
// sessions set up on its N3 tunnel.
func (u *testUE) contextSetupResponse(ids ...uint8) {
	u.t.Helper()
	var res []ngapx.RANSessionResult
	for _, id := range ids {
		res = append(res, ngapx.RANSessionResult{ID: id, DL: gnbTunnel, QFIs: []uint8{1}})
	}
	u.g.send(must2(u.t)(ngapx.BuildRANInitialContextSetupResponse(u.amfID, u.ranID, res)))
}

var (
	upfTunnel = ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.1"), TEID: 0x100}
	gnbTunnel = ngapx.Tunnel{IPv4: netip.MustParseAddr("10.100.0.2"), TEID: 0x200}
)

// setupTransfer is an SMF's PDU Session Resource Setup Request Transfer.
func setupTransfer(t interface {
	Helper()
	Fatal(...any)
}, id uint8) []byte {
	t.Helper()
	b, err := ngapxtest.SetupRequestTransfer(ngapxtest.Session{ID: id, UL: upfTunnel, QFIs: []uint8{1}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answerActivation makes the fake SMF answer UpdateSMContext with N2 SM
// information PDU_RES_SETUP_REQ (TS 29.502 5.2.2.3.2.2).
func (f *fakeSMF) answerActivation(transfer []byte) {
	f.set("modify", smfReply{status: 200, body: models.SmContextUpdatedData{N2SmInfoType: models.N2SmInfoType_PDU_RES_SETUP_REQ,
		N2SmInfo: &models.RefToBinaryData{ContentId: "n2"}}, parts: []sbi.Part{{ContentID: "n2", ContentType: sbi.ContentTypeNGAP, Data: transfer}}})
}

// failureSink is an SMF's n1n2FailureTxfNotifURI.
type failureSink struct {
	srv   *httptest.Server
	notes chan models.N1N2MsgTxfrFailureNotification
}

func (h *harness) failureSink() *failureSink {
	s := &failureSink{notes: make(chan models.N1N2MsgTxfrFailureNotification, 256)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var n models.N1N2MsgTxfrFailureNotification
		if err := json.Unmarshal(b, &n); err != nil {
			w.WriteHeader(400)
			return
		}
		s.notes <- n
		w.WriteHeader(http.StatusNoContent)
	}))
	h.t.Cleanup(s.srv.Close)
	return s
}

func (s *failureSink) expect(h *harness) models.N1N2MsgTxfrFailureNotification {
	h.t.Helper()
	select {
	case n := <-s.notes:
		return n
	case <-time.After(10 * time.Second): // bounds a failing test only
		h.t.Fatal("no N1N2 transfer failure notification")
	}
	return models.N1N2MsgTxfrFailureNotification{}
}

// pageRequest is the SMF's N1N2MessageTransfer after a Downlink Data
// Report: N2 PDU_RES_SETUP_REQ for session id, failures to sink.
func (h *harness) pageRequest(supi string, id uint8, sink *failureSink) (*httptest.ResponseRecorder, []byte) {
	h.t.Helper()
	tr := setupTransfer(h.t, id)
	req, parts := transferRequest(int32(id), models.AmfCommunicationNgapIeType_PDU_RES_SETUP_REQ, nil, tr)
	if sink != nil {
		req.N1n2FailureTxfNotifURI = sink.srv.URL + "/n1n2-failure"
	}
	w, _ := h.n1n2(supi, req, parts...)
	return w, tr
}

const msec = time.Millisecond

// purged says whether the UDM registration of supi was purged.
func (p *fakePeers) purged(supi string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.purge, supi)
}

// policyOf says whether supi still has an AM policy association.
func (p *fakePeers) policyOf(supi string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.policies {
		if s == supi {
			return true
		}
	}
	return false
}

// releaseToIdle is the gNB's AN release, without waiting for the parked
// context (which short timers may end before a test sees it).
func (u *testUE) releaseToIdle() {
	u.t.Helper()
	u.g.send(releaseRequest(u.t, u.amfID, u.ranID))
	u.g.expect("UEContextReleaseCommand")
	u.g.send(releaseComplete(u.t, u.amfID, u.ranID))
}
