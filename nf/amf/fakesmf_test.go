package amf

// An SMF stand-in for the AMF's PDU session tests: an httptest server
// speaking Nsmf_PDUSession (TS 29.502) in multipart/related, reached by
// the production SessionConsumer, plus a gNB side for the PDU Session
// Resource procedures and the SMF's own call, N1N2MessageTransfer.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/nas"
	"github.com/free5gc/ngap/ngapType"
	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/protocol/nasx"
	"github.com/l25gc/l25gc/protocol/ngapx"
	"github.com/l25gc/l25gc/sbi"
)

// smfCall is one request the fake SMF received.
type smfCall struct {
	op     string // create, modify, release
	ref    string // SM context id
	create models.SmfPduSessionSmContextCreateData
	update models.SmfPduSessionSmContextUpdateData
	n1, n2 []byte
}

// smfReply is what the fake SMF answers to one operation: status, JSON and parts.
type smfReply struct {
	status int
	body   any
	parts  []sbi.Part
	// wait, when set, holds the answer until it is closed (the call is
	// reported first): the AMF's side of the exchange goes on meanwhile.
	wait chan struct{}
}

type fakeSMF struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	calls chan smfCall
	next  int
	// reply, when set for an op, answers it instead of the default success.
	reply map[string]smfReply
}

func newFakeSMF(t *testing.T) *fakeSMF {
	f := &fakeSMF{t: t, calls: make(chan smfCall, 64), reply: map[string]smfReply{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nsmf-pdusession/v1/sm-contexts", f.create)
	mux.HandleFunc("POST /nsmf-pdusession/v1/sm-contexts/{ref}/modify", f.modify)
	mux.HandleFunc("POST /nsmf-pdusession/v1/sm-contexts/{ref}/release", f.release)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeSMF) read(w http.ResponseWriter, r *http.Request, v any) (map[string]sbi.Part, bool) {
	body, _ := io.ReadAll(r.Body)
	parts, err := sbi.DecodeRelated(r.Header.Get("Content-Type"), body, v)
	if err != nil {
		sbi.WriteProblem(w, 400, sbi.CauseInvalidMsgFormat, err.Error())
		return nil, false
	}
	return parts, true
}

// replyFor is the answer to op, taken before the call is reported: a test
// that sets the next answer once it saw a call does not change this one's.
func (f *fakeSMF) replyFor(op string, fallback smfReply) smfReply {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rep, ok := f.reply[op]; ok {
		return rep
	}
	return fallback
}

func (f *fakeSMF) answer(w http.ResponseWriter, rep smfReply) {
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	b, ct, err := sbi.EncodeRelated(rep.body, rep.parts...)
	if err != nil {
		f.t.Error(err)
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(rep.status)
	_, _ = w.Write(b)
}

func (f *fakeSMF) create(w http.ResponseWriter, r *http.Request) {
	var d models.SmfPduSessionSmContextCreateData
	parts, ok := f.read(w, r, &d)
	if !ok {
		return
	}
	f.mu.Lock()
	f.next++
	ref := fmt.Sprint(f.next)
	f.mu.Unlock()
	rep := f.replyFor("create", smfReply{status: 201, body: models.SmfPduSessionSmContextCreatedData{PduSessionId: d.PduSessionId}})
	f.calls <- smfCall{op: "create", ref: ref, create: d, n1: partOf(parts, d.N1SmMsg)}
	if rep.wait != nil {
		<-rep.wait
	}
	w.Header().Set("Location", f.srv.URL+"/nsmf-pdusession/v1/sm-contexts/"+ref)
	f.answer(w, rep)
}

func (f *fakeSMF) modify(w http.ResponseWriter, r *http.Request) {
	var d models.SmfPduSessionSmContextUpdateData
	parts, ok := f.read(w, r, &d)
	if !ok {
		return
	}
	rep := f.replyFor("modify", smfReply{status: 204})
	f.calls <- smfCall{op: "modify", ref: r.PathValue("ref"), update: d, n1: partOf(parts, d.N1SmMsg), n2: partOf(parts, d.N2SmInfo)}
	f.answer(w, rep)
}

func (f *fakeSMF) release(w http.ResponseWriter, r *http.Request) {
	var d models.SmfPduSessionSmContextReleaseData
	if _, ok := f.read(w, r, &d); !ok {
		return
	}
	f.calls <- smfCall{op: "release", ref: r.PathValue("ref")}
	w.WriteHeader(204)
}

func (f *fakeSMF) set(op string, rep smfReply) {
	f.mu.Lock()
	f.reply[op] = rep
	f.mu.Unlock()
}

// expect returns the next call, which must be op.
func (f *fakeSMF) expect(op string) smfCall {
	f.t.Helper()
	select {
	case c := <-f.calls:
		if c.op != op {
			f.t.Fatalf("SMF got %s, want %s", c.op, op)
		}
		return c
	case <-time.After(10 * time.Second): // bounds a failing test only
		f.t.Fatalf("SMF got no %s", op)
	}
	return smfCall{}
}

// expect2 returns the next two calls, ops a and b in either order (they
// run on goroutines of their own).
func (f *fakeSMF) expect2(a, b string) (smfCall, smfCall) {
	f.t.Helper()
	x, y := f.next1(), f.next1()
	if x.op == b && y.op == a {
		x, y = y, x
	}
	if x.op != a || y.op != b {
		f.t.Fatalf("SMF got %s and %s, want %s and %s", x.op, y.op, a, b)
	}
	return x, y
}

func (f *fakeSMF) next1() smfCall {
	f.t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(10 * time.Second): // bounds a failing test only
		f.t.Fatal("SMF got no call")
	}
	return smfCall{}
}

// none checks that the SMF got nothing more (after the AMF answered the
// UE, so anything sent would already be queued).
func (f *fakeSMF) none() {
	f.t.Helper()
	select {
	case c := <-f.calls:
		f.t.Fatalf("SMF got an unexpected %s", c.op)
	default:
	}
}

// testSessions is the production SessionConsumer towards the fake SMF,
// with the two NRF/UDM look-ups played by the test.
type testSessions struct {
	SessionConsumer
	smf       *fakeSMF
	selection *models.SmfSelectionSubscriptionData // nil: the UDM has none (404)
	noSMF     bool
}

func (s *testSessions) SMFSelectionData(context.Context, string, models.PlmnId) (models.SmfSelectionSubscriptionData, error) {
	if s.selection == nil {
		return models.SmfSelectionSubscriptionData{}, &sbi.ProblemError{Status: 404, Problem: models.ProblemDetails{Cause: sbi.CauseDataNotFound}}
	}
	return *s.selection, nil
}

func (s *testSessions) SelectSMF(_ context.Context, _ models.Snssai, _ string) (string, error) {
	if s.noSMF {
		return "", errNoSMF
	}
	return s.smf.srv.URL, nil
}

// internetOnly is a subscription with DNN internet (default) in slice 1/010203.
func internetOnly() *models.SmfSelectionSubscriptionData {
	return &models.SmfSelectionSubscriptionData{SubscribedSnssaiInfos: map[string]models.SnssaiInfo{
		"01010203": {DnnInfos: []models.DnnInfo{{Dnn: "internet", DefaultDnnIndicator: true}}}}}
}

// withSMF points the harness's AMF at a fake SMF.
func (h *harness) withSMF() (*fakeSMF, *testSessions) {
	f := newFakeSMF(h.t)
	s := &testSessions{SessionConsumer: NewSBISessions(sbi.NewClient(http.DefaultTransport, nil), nil), smf: f, selection: internetOnly()}
	h.amf.opts.Sessions = s
	return f, s
}

// ---- the SMF's N1N2MessageTransfer into the AMF ----

func (h *harness) n1n2(supi string, req models.N1N2MessageTransferReqData, parts ...sbi.Part) (*httptest.ResponseRecorder, models.ProblemDetails) {
	h.t.Helper()
	b, ct, err := sbi.EncodeRelated(req, parts...)
	if err != nil {
		h.t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/namf-comm/v1/ue-contexts/"+supi+"/n1-n2-messages", bytes.NewReader(b))
	r.Header.Set("Content-Type", ct)
	w := httptest.NewRecorder()
	h.amf.Handler().ServeHTTP(w, r)
	var p models.ProblemDetails
	if w.Code/100 != 2 {
		_ = json.Unmarshal(w.Body.Bytes(), &p)
	}
	return w, p
}

// transferRequest is N1N2MessageTransfer data with an N1 SM message and N2
// SM information of type ie for PDU session id.
func transferRequest(id int32, ie models.AmfCommunicationNgapIeType, n1, n2 []byte) (models.N1N2MessageTransferReqData, []sbi.Part) {
	req := models.N1N2MessageTransferReqData{PduSessionId: id}
	var parts []sbi.Part
	if n1 != nil {
		req.N1MessageContainer = &models.N1MessageContainer{N1MessageClass: models.N1MessageClass_SM,
			N1MessageContent: &models.RefToBinaryData{ContentId: "n1"}}
		parts = append(parts, sbi.Part{ContentID: "n1", ContentType: sbi.ContentTypeNAS, Data: n1})
	}
	if n2 != nil {
		req.N2InfoContainer = &models.N2InfoContainer{N2InformationClass: models.N2InformationClass_SM,
			SmInfo: &models.N2SmInformation{PduSessionId: id, N2InfoContent: &models.N2InfoContent{NgapIeType: ie,
				NgapData: &models.RefToBinaryData{ContentId: "n2"}}}}
		parts = append(parts, sbi.Part{ContentID: "n2", ContentType: sbi.ContentTypeNGAP, Data: n2})
	}
	return req, parts
}

// ---- gNB side of TS 38.413 8.2 ----

// sessionItem is what the test reads of one PDU session of a request.
type sessionItem struct {
	id       int64
	nasPDU   []byte
	snssai   *ngapType.SNSSAI
	transfer []byte
}

// readSessionRequest decodes a PDU Session Resource Setup/Modify Request
// or Release Command as a gNB does.
func (g *gnbSide) readSessionRequest(name string) (ngapx.Summary, []sessionItem, []byte) {
	g.t.Helper()
	var m msg
	select {
	case m = <-g.conn.out:
	case <-time.After(10 * time.Second): // bounds a failing test only
		g.t.Fatalf("no %s from the AMF", name)
	}
	pdu, err := ngapx.Decode(m.b)
	if err != nil {
		g.t.Fatalf("AMF sent undecodable NGAP: %v", err)
	}
	s, err := ngapx.Summarize(pdu)
	if err != nil || s.Name != name {
		g.t.Fatalf("AMF sent %s (%v), want %s", s.Name, err, name)
	}
	if m.stream == 0 {
		g.t.Fatalf("%s on stream 0", name)
	}
	var items []sessionItem
	v := pdu.InitiatingMessage.Value
	switch {
	case v.PDUSessionResourceSetupRequest != nil:
		for _, ie := range v.PDUSessionResourceSetupRequest.ProtocolIEs.List {
			if l := ie.Value.PDUSessionResourceSetupListSUReq; l != nil {
				for _, it := range l.List {
					sn := it.SNSSAI
					items = append(items, sessionItem{it.PDUSessionID.Value, nasValue(it.PDUSessionNASPDU), &sn, it.PDUSessionResourceSetupRequestTransfer})
				}
			}
		}
	case v.PDUSessionResourceModifyRequest != nil:
		for _, ie := range v.PDUSessionResourceModifyRequest.ProtocolIEs.List {
			if l := ie.Value.PDUSessionResourceModifyListModReq; l != nil {
				for _, it := range l.List {
					items = append(items, sessionItem{it.PDUSessionID.Value, nasValue(it.NASPDU), nil, it.PDUSessionResourceModifyRequestTransfer})
				}
			}
		}
	case v.PDUSessionResourceReleaseCommand != nil:
		for _, ie := range v.PDUSessionResourceReleaseCommand.ProtocolIEs.List {
			if l := ie.Value.PDUSessionResourceToReleaseListRelCmd; l != nil {
				for _, it := range l.List {
					items = append(items, sessionItem{it.PDUSessionID.Value, nil, nil, it.PDUSessionResourceReleaseCommandTransfer})
				}
			}
		}
	}
	return s, items, s.NASPDU
}

func nasValue(p *ngapType.NASPDU) []byte {
	if p == nil {
		return nil
	}
	return p.Value
}

func ueIDs(amfID, ranID int64) (ngapType.AMFUENGAPID, ngapType.RANUENGAPID) {
	return ngapType.AMFUENGAPID{Value: amfID}, ngapType.RANUENGAPID{Value: ranID}
}

// setupResponse builds PDU Session Resource Setup Response (TS 38.413
// 9.2.1.2) with ok sessions set up and failed ones not.
func setupResponse(t testing.TB, amfID, ranID int64, ok, failed map[int64][]byte) []byte {
	a, r := ueIDs(amfID, ranID)
	m := &ngapType.PDUSessionResourceSetupResponse{}
	add := func(ie int64, v ngapType.PDUSessionResourceSetupResponseIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PDUSessionResourceSetupResponseIEs{Id: ngapType.ProtocolIEID{Value: ie},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore}, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.PDUSessionResourceSetupResponseIEsValue{Present: ngapType.PDUSessionResourceSetupResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &a})
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.PDUSessionResourceSetupResponseIEsValue{Present: ngapType.PDUSessionResourceSetupResponseIEsPresentRANUENGAPID, RANUENGAPID: &r})
	if len(ok) > 0 {
		l := &ngapType.PDUSessionResourceSetupListSURes{}
		for id, tr := range ok {
			l.List = append(l.List, ngapType.PDUSessionResourceSetupItemSURes{PDUSessionID: ngapType.PDUSessionID{Value: id}, PDUSessionResourceSetupResponseTransfer: tr})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceSetupListSURes, ngapType.PDUSessionResourceSetupResponseIEsValue{
			Present: ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceSetupListSURes, PDUSessionResourceSetupListSURes: l})
	}
	if len(failed) > 0 {
		l := &ngapType.PDUSessionResourceFailedToSetupListSURes{}
		for id, tr := range failed {
			l.List = append(l.List, ngapType.PDUSessionResourceFailedToSetupItemSURes{PDUSessionID: ngapType.PDUSessionID{Value: id}, PDUSessionResourceSetupUnsuccessfulTransfer: tr})
		}
		add(ngapType.ProtocolIEIDPDUSessionResourceFailedToSetupListSURes, ngapType.PDUSessionResourceSetupResponseIEsValue{
			Present: ngapType.PDUSessionResourceSetupResponseIEsPresentPDUSessionResourceFailedToSetupListSURes, PDUSessionResourceFailedToSetupListSURes: l})
	}
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentSuccessfulOutcome, SuccessfulOutcome: &ngapType.SuccessfulOutcome{
		ProcedureCode: ngapType.ProcedureCode{Value: ngapType.ProcedureCodePDUSessionResourceSetup},
		Criticality:   ngapType.Criticality{Value: ngapType.CriticalityPresentReject}}}
	pdu.SuccessfulOutcome.Value.Present = ngapType.SuccessfulOutcomePresentPDUSessionResourceSetupResponse
	pdu.SuccessfulOutcome.Value.PDUSessionResourceSetupResponse = m
	return must2(t)(ngapx.Encode(pdu))
}

// releaseResponse builds PDU Session Resource Release Response (9.2.1.4).
func releaseResponse(t testing.TB, amfID, ranID, id int64, transfer []byte) []byte {
	a, r := ueIDs(amfID, ranID)
	m := &ngapType.PDUSessionResourceReleaseResponse{}
	add := func(ie int64, v ngapType.PDUSessionResourceReleaseResponseIEsValue) {
		m.ProtocolIEs.List = append(m.ProtocolIEs.List, ngapType.PDUSessionResourceReleaseResponseIEs{Id: ngapType.ProtocolIEID{Value: ie},
			Criticality: ngapType.Criticality{Value: ngapType.CriticalityPresentIgnore}, Value: v})
	}
	add(ngapType.ProtocolIEIDAMFUENGAPID, ngapType.PDUSessionResourceReleaseResponseIEsValue{Present: ngapType.PDUSessionResourceReleaseResponseIEsPresentAMFUENGAPID, AMFUENGAPID: &a})
	add(ngapType.ProtocolIEIDRANUENGAPID, ngapType.PDUSessionResourceReleaseResponseIEsValue{Present: ngapType.PDUSessionResourceReleaseResponseIEsPresentRANUENGAPID, RANUENGAPID: &r})
	add(ngapType.ProtocolIEIDPDUSessionResourceReleasedListRelRes, ngapType.PDUSessionResourceReleaseResponseIEsValue{
		Present: ngapType.PDUSessionResourceReleaseResponseIEsPresentPDUSessionResourceReleasedListRelRes,
		PDUSessionResourceReleasedListRelRes: &ngapType.PDUSessionResourceReleasedListRelRes{List: []ngapType.PDUSessionResourceReleasedItemRelRes{
			{PDUSessionID: ngapType.PDUSessionID{Value: id}, PDUSessionResourceReleaseResponseTransfer: transfer}}}})
	pdu := &ngapType.NGAPPDU{Present: ngapType.NGAPPDUPresentSuccessfulOutcome, SuccessfulOutcome: &ngapType.SuccessfulOutcome{
		ProcedureCode: ngapType.ProcedureCode{Value: ngapType.ProcedureCodePDUSessionResourceRelease},
		Criticality:   ngapType.Criticality{Value: ngapType.CriticalityPresentReject}}}
	pdu.SuccessfulOutcome.Value.Present = ngapType.SuccessfulOutcomePresentPDUSessionResourceReleaseResponse
	pdu.SuccessfulOutcome.Value.PDUSessionResourceReleaseResponse = m
	return must2(t)(ngapx.Encode(pdu))
}

// ---- UE side ----

// requestSession sends a PDU Session Establishment Request in UL NAS
// Transport and returns the 5GSM message.
func (u *testUE) requestSession(id uint8, snssai *models.Snssai, dnn string) []byte {
	sm := must2(u.t)(nasx.BuildPDUSessionEstablishmentRequest(id, 1))
	u.up(u.ulNASTransport(nasx.ULNASTransport{PayloadType: nasx.PayloadN1SMInformation, Payload: sm,
		PDUSessionID: id, RequestType: nasx.RequestInitial, SNSSAI: snssai, DNN: dnn}))
	return sm
}

// sentBack reads the DL NAS Transport of a 5GSM message not forwarded and
// checks the message, its PDU session ID and the 5GMM cause.
func (u *testUE) sentBack(sm []byte, id, cause uint8) {
	u.t.Helper()
	d := u.dl("DownlinkNASTransport").DLNASTransport
	switch {
	case d == nil:
		u.t.Fatal("want DL NAS Transport")
	case !bytes.Equal(d.GetPayloadContainerContents(), sm):
		u.t.Fatalf("payload % x, want the 5GSM message back", d.GetPayloadContainerContents())
	case d.PduSessionID2Value == nil || d.GetPduSessionID2Value() != id:
		u.t.Fatalf("PDU session ID not %d", id)
	case d.Cause5GMM == nil || d.Cause5GMM.GetCauseValue() != cause:
		u.t.Fatalf("5GMM cause %+v, want #%d", d.Cause5GMM, cause)
	}
}

// n1In decodes a NAS-PDU carried in NGAP: DL NAS Transport (protected)
// with N1 SM information; it returns the 5GSM message and PDU session ID.
func (u *testUE) n1In(pdu []byte) ([]byte, uint8) {
	u.t.Helper()
	h, _ := nasx.PeekHeader(pdu)
	if h.SecurityHeaderType != nas.SecurityHeaderTypeIntegrityProtectedAndCiphered {
		u.t.Fatalf("5GSM carried with security header type %d, want integrity protected and ciphered", h.SecurityHeaderType)
	}
	d := u.decode(pdu).DLNASTransport
	if d == nil || d.GetPayloadContainerType() != nasx.PayloadN1SMInformation || d.PduSessionID2Value == nil {
		u.t.Fatalf("NAS-PDU is not DL NAS Transport with N1 SM information: %+v", d)
	}
	return d.GetPayloadContainerContents(), d.GetPduSessionID2Value()
}
