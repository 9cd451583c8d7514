package smf

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
	"github.com/l25gc/l25gc/upf/rules"
)

const (
	subscribed   = "imsi-208930000000001" // internet in 1/010203
	unsubscribed = "imsi-208930000000099" // no sm-data
	upfN3        = "10.100.0.1"
	gnbN3        = "10.100.0.2"
)

var slice1 = models.Snssai{Sst: 1, Sd: "010203"}

// fakeN4 is a UPF: sessions by UP SEID, F-TEIDs chosen in order.
type fakeN4 struct {
	mu         sync.Mutex
	sessions   map[uint64]*rules.Session
	next       uint64
	failCreate error // Establish refuses with it
	failModify error
	addrs      []string
	mods       []rules.Modification // every modification accepted, in order
	onReport   rules.ReportHandler  // the SMF's, registered through rules.Reporter
}

// OnReport makes the fake a rules.Reporter, as pfcpx's client is.
func (f *fakeN4) OnReport(h rules.ReportHandler) { f.onReport = h }

// report delivers a Session Report as the PFCP client would.
func (f *fakeN4) report(r *rules.Report) uint8 {
	return f.onReport(context.Background(), "udp:127.0.0.1:8805", r)
}

// ModifyCreated is Modify that returns the F-TEIDs chosen for created
// PDRs (the SMF's optional createdFTEIDsModifier).
func (f *fakeN4) ModifyCreated(ctx context.Context, upf string, seid uint64, m *rules.Modification) (map[uint16]rules.FTEID, error) {
	cp := *m
	cp.Create.PDRs = append([]rules.PDR(nil), m.Create.PDRs...)
	created := map[uint16]rules.FTEID{}
	for i, p := range cp.Create.PDRs {
		if p.LocalFTEID != nil && p.LocalFTEID.Choose {
			fteid := rules.FTEID{TEID: 0x9000 + uint32(p.ID), IPv4: netip.MustParseAddr(upfN3)}
			cp.Create.PDRs[i].LocalFTEID = &fteid
			created[p.ID] = fteid
		}
	}
	if _, err := f.Modify(ctx, upf, seid, &cp); err != nil {
		return nil, err
	}
	return created, nil
}

// setFailModify has Modify refuse with err (nil: accept again).
func (f *fakeN4) setFailModify(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failModify = err
}

// far is the session's FAR id (the one session installed).
func (f *fakeN4) far(t *testing.T, id uint32) (rules.FAR, bool) {
	t.Helper()
	for _, far := range f.only(t).FARs {
		if far.ID == id {
			return far, true
		}
	}
	return rules.FAR{}, false
}

// modifications are the modifications accepted so far.
func (f *fakeN4) modifications() []rules.Modification {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]rules.Modification(nil), f.mods...)
}

func newFakeN4() *fakeN4 { return &fakeN4{sessions: map[uint64]*rules.Session{}} }

func (f *fakeN4) Establish(_ context.Context, upf string, s *rules.Session) (*rules.Established, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addrs = append(f.addrs, upf)
	if f.failCreate != nil {
		return nil, f.failCreate
	}
	f.next++
	est := &rules.Established{UPSEID: 0x1000 + f.next, FTEIDs: map[uint16]rules.FTEID{}}
	cp := *s
	cp.UPSEID = est.UPSEID
	cp.PDRs = append([]rules.PDR(nil), s.PDRs...)
	for i, p := range cp.PDRs {
		if p.LocalFTEID != nil && p.LocalFTEID.Choose {
			fteid := rules.FTEID{TEID: uint32(0x100 + f.next), IPv4: netip.MustParseAddr(upfN3)}
			cp.PDRs[i].LocalFTEID = &fteid
			est.FTEIDs[p.ID] = fteid
		}
	}
	f.sessions[est.UPSEID] = &cp
	return est, nil
}

func (f *fakeN4) Modify(_ context.Context, _ string, seid uint64, m *rules.Modification) ([]rules.Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failModify != nil {
		return nil, f.failModify
	}
	s, ok := f.sessions[seid]
	if !ok {
		return nil, &rules.CauseError{Cause: 65, Detail: "session context not found"}
	}
	s.PDRs = removeIDs(s.PDRs, m.Remove.PDRs, func(p rules.PDR) uint16 { return p.ID })
	s.QERs = removeIDs(s.QERs, m.Remove.QERs, func(q rules.QER) uint32 { return q.ID })
	for _, q := range m.Update.QERs {
		for i := range s.QERs {
			if s.QERs[i].ID == q.ID {
				s.QERs[i] = q
			}
		}
	}
	for _, far := range m.Update.FARs {
		for i := range s.FARs {
			if s.FARs[i].ID == far.ID {
				s.FARs[i] = far
			}
		}
	}
	s.FARs = removeIDs(s.FARs, m.Remove.FARs, func(r rules.FAR) uint32 { return r.ID })
	s.PDRs = append(s.PDRs, m.Create.PDRs...)
	s.QERs = append(s.QERs, m.Create.QERs...)
	s.FARs = append(s.FARs, m.Create.FARs...)
	f.mods = append(f.mods, *m)
	return nil, nil
}

func removeIDs[T any, ID comparable](list []T, ids []ID, id func(T) ID) []T {
	var out []T
	for _, x := range list {
		drop := false
		for _, r := range ids {
			drop = drop || id(x) == r
		}
		if !drop {
			out = append(out, x)
		}
	}
	return out
}

func (f *fakeN4) Delete(_ context.Context, _ string, seid uint64) ([]rules.Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sessions[seid]; !ok {
		return nil, &rules.CauseError{Cause: 65, Detail: "session context not found"}
	}
	delete(f.sessions, seid)
	return nil, nil
}

func (f *fakeN4) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sessions)
}

// only is the one session installed.
func (f *fakeN4) only(t *testing.T) rules.Session {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sessions) != 1 {
		t.Fatalf("%d N4 sessions, want 1", len(f.sessions))
	}
	for _, s := range f.sessions {
		return *s
	}
	return rules.Session{}
}

// transfer is one N1N2MessageTransfer the fake AMF received.
type transfer struct {
	supi string
	req  models.N1N2MessageTransferReqData
	n1   []byte
	n2   []byte
}

// fakeCore serves the UDM, the PCF and the AMF the SMF consumes.
type fakeCore struct {
	mu         sync.Mutex
	uecm       map[string]bool // supi/psi registered
	policies   map[string]bool
	nextPolicy int
	pccRules   map[string]*models.PccRule // given at create
	qosDecs    map[string]*models.QosData
	pcfFails   bool
	uecmFails  bool
	// smDataAfterUECM holds each sm-data read until a UECM registration
	// has arrived (uecmPut), so it is answered only when both are asked at once.
	smDataAfterUECM bool
	uecmPut         chan struct{}
	transfers       chan transfer
	released        chan string // SM context status notifications (path)
	pcfURL          string
	// transferStatus is the AMF's answer to an N1N2MessageTransfer: 0 or
	// 200 N1_N2_TRANSFER_INITIATED, 202 ATTEMPTING_TO_REACH_UE (paging),
	// else a ProblemDetails with that status.
	// 409 is TEMPORARY_REJECT_REGISTRATION_ONGOING. The statuses given
	// are used in turn, the last one from then on.
	transferStatus []int
	// transferGate, when set, holds the AMF's answer to every transfer
	// until it is closed (an AMF that is slow to answer).
	transferGate chan struct{}
}

func (f *fakeCore) setTransferStatus(statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.transferStatus = statuses
}

func (f *fakeCore) gate() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.transferGate
}

// nextTransferStatus is the answer to the transfer that just arrived
// (taken before the test sees the transfer, so a test that sets the next
// answer cannot change this one's).
func (f *fakeCore) nextTransferStatus() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	status := 0
	if len(f.transferStatus) > 0 {
		status = f.transferStatus[0]
	}
	if len(f.transferStatus) > 1 {
		f.transferStatus = f.transferStatus[1:]
	}
	return status
}

func answerTransfer(w http.ResponseWriter, status int) {
	switch status {
	case 409:
		sbi.WriteProblem(w, status, "TEMPORARY_REJECT_REGISTRATION_ONGOING", "")
	case 0, 200:
		sbi.WriteJSON(w, 200, models.N1N2MessageTransferRspData{Cause: models.N1N2MessageTransferCause_N1_N2_TRANSFER_INITIATED})
	case 202:
		sbi.WriteJSON(w, 202, models.N1N2MessageTransferRspData{Cause: models.N1N2MessageTransferCause_ATTEMPTING_TO_REACH_UE})
	default:
		sbi.WriteProblem(w, status, "UE_NOT_REACHABLE", "")
	}
}

func newFakeCore() *fakeCore {
	return &fakeCore{uecm: map[string]bool{}, policies: map[string]bool{}, transfers: make(chan transfer, 16), released: make(chan string, 16),
		uecmPut: make(chan struct{}, 16)}
}

func (f *fakeCore) udm() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nudm-sdm/v2/{supi}/sm-data", func(w http.ResponseWriter, r *http.Request) {
		if f.smDataAfterUECM {
			select {
			case <-f.uecmPut:
			case <-r.Context().Done():
				return
			}
		}
		if r.PathValue("supi") != subscribed {
			sbi.WriteProblem(w, 404, "DATA_NOT_FOUND", "")
			return
		}
		s := slice1
		arp := models.Arp{PriorityLevel: 8, PreemptCap: models.PreemptionCapability_NOT_PREEMPT, PreemptVuln: models.PreemptionVulnerability_PREEMPTABLE}
		sbi.WriteJSON(w, 200, []models.SessionManagementSubscriptionData{{SingleNssai: &s, DnnConfigurations: map[string]models.DnnConfiguration{
			"internet": {SessionAmbr: &models.Ambr{Uplink: "500 Mbps", Downlink: "1 Gbps"}, Var5gQosProfile: &models.SubscribedDefaultQos{Var5qi: 9, Arp: &arp}},
			"ims":      {}}}})
	})
	uecm := func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		key := r.PathValue("supi") + "/" + r.PathValue("psi")
		if f.uecmFails {
			sbi.WriteProblem(w, 500, "SYSTEM_FAILURE", "")
			return
		}
		if r.Method == "PUT" {
			f.uecm[key] = true
			select {
			case f.uecmPut <- struct{}{}:
			default: // nobody waits (smDataAfterUECM off)
			}
			w.WriteHeader(201)
			return
		}
		delete(f.uecm, key)
		w.WriteHeader(204)
	}
	mux.HandleFunc("PUT /nudm-uecm/v1/{supi}/registrations/smf-registrations/{psi}", uecm)
	mux.HandleFunc("DELETE /nudm-uecm/v1/{supi}/registrations/smf-registrations/{psi}", uecm)
	return mux
}

func (f *fakeCore) pcf() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /npcf-smpolicycontrol/v1/sm-policies", func(w http.ResponseWriter, r *http.Request) {
		var d models.SmPolicyContextData
		if !sbi.DecodeJSON(w, r, &d) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.pcfFails || d.NotificationUri == "" || d.Ipv4Address == "" {
			sbi.WriteProblem(w, 500, "SYSTEM_FAILURE", "")
			return
		}
		f.nextPolicy++
		id := string(rune('a' + f.nextPolicy))
		f.policies[id] = true
		w.Header().Set("Location", f.pcfURL+"/npcf-smpolicycontrol/v1/sm-policies/"+id)
		sbi.WriteJSON(w, 201, models.SmPolicyDecision{
			SessRules: map[string]*models.SessionRule{"s1": {SessRuleId: "s1", AuthSessAmbr: &models.Ambr{Uplink: "100 Mbps", Downlink: "200 Mbps"},
				AuthDefQos: &models.AuthorizedDefaultQos{Var5qi: 9, Arp: &models.Arp{PriorityLevel: 7}}}},
			PccRules: f.pccRules, QosDecs: f.qosDecs})
	})
	mux.HandleFunc("POST /npcf-smpolicycontrol/v1/sm-policies/{id}/delete", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.policies, r.PathValue("id"))
		w.WriteHeader(204)
	})
	return mux
}

func (f *fakeCore) amf() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /namf-comm/v1/ue-contexts/{supi}/n1-n2-messages", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req models.N1N2MessageTransferReqData
		parts, err := sbi.DecodeRelated(r.Header.Get("Content-Type"), body, &req)
		if err != nil {
			sbi.WriteProblem(w, 400, "INVALID_MSG_FORMAT", err.Error())
			return
		}
		tr := transfer{supi: r.PathValue("supi"), req: req}
		if c := req.N1MessageContainer; c != nil {
			tr.n1 = parts[c.N1MessageContent.ContentId].Data
		}
		if c := req.N2InfoContainer; c != nil {
			tr.n2 = parts[c.SmInfo.N2InfoContent.NgapData.ContentId].Data
		}
		status := f.nextTransferStatus()
		f.transfers <- tr
		if gate := f.gate(); gate != nil {
			<-gate
		}
		answerTransfer(w, status)
	})
	mux.HandleFunc("POST /namf-callback/v1/smctx-status/{supi}/{psi}", func(w http.ResponseWriter, r *http.Request) {
		var n models.SmfPduSessionSmContextStatusNotification
		if !sbi.DecodeJSON(w, r, &n) {
			return
		}
		if n.StatusInfo != nil && n.StatusInfo.ResourceStatus == models.ResourceStatus_RELEASED {
			f.released <- r.PathValue("supi") + "/" + r.PathValue("psi")
		}
		w.WriteHeader(204)
	})
	return mux
}

func (f *fakeCore) live() (uecm, policies int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.uecm), len(f.policies)
}

// waitTransfer is the next N1N2MessageTransfer (the SMF sends it after
// answering; the wait bounds a broken SMF, it times nothing).
func (f *fakeCore) waitTransfer(t *testing.T) transfer {
	t.Helper()
	select {
	case tr := <-f.transfers:
		return tr
	case <-time.After(10 * time.Second):
		t.Fatal("no N1N2MessageTransfer reached the AMF")
	}
	return transfer{}
}

func (f *fakeCore) waitReleased(t *testing.T) string {
	t.Helper()
	select {
	case s := <-f.released:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no SM context status notification (RELEASED) reached the AMF")
	}
	return ""
}

// testSMF is an SMF under test with its fakes.
type testSMF struct {
	nf     *NF
	url    string
	http   *http.Client
	core   *fakeCore
	n4     *fakeN4
	amfURL string
	amfID  string
	wire   *wireUPF // the UPF when the SMF runs over real N4 (n4_wire_test.go)
}

type setup struct {
	cfg   func(*config.Config)
	noPCF bool
	noN4  bool
	n4    rules.N4 // instead of the fake UPF (a real N4 client)
}

func newTestSMF(t *testing.T, tr sbi.Transport, s setup) *testSMF {
	t.Helper()
	core := newFakeCore()
	udmURL := nrftest.Serve(t, tr, core.udm())
	amfURL := nrftest.Serve(t, tr, core.amf())
	amf := nrftest.Peer(t, models.NrfNfManagementNfType_AMF, amfURL, models.ServiceName_NAMF_COMM)
	peers := []models.NrfNfManagementNfProfile{
		nrftest.Peer(t, models.NrfNfManagementNfType_UDM, udmURL, models.ServiceName_NUDM_SDM, models.ServiceName_NUDM_UECM), amf}
	if !s.noPCF {
		core.pcfURL = nrftest.Serve(t, tr, core.pcf())
		peers = append(peers, nrftest.Peer(t, models.NrfNfManagementNfType_PCF, core.pcfURL, models.ServiceName_NPCF_SMPOLICYCONTROL))
	}
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	if s.cfg != nil {
		s.cfg(cfg)
	}
	env := nrftest.Env(t, tr, cfg, models.NrfNfManagementNfType_SMF, peers...)
	n4 := newFakeN4()
	o := Options{N4: n4, UPFAddr: "udp:127.0.0.1:8805"}
	if s.noN4 {
		o.N4 = nil
	}
	if s.n4 != nil {
		o.N4 = s.n4
	}
	n, err := NewWithOptions(env, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Stop(context.Background()) })
	return &testSMF{nf: n, url: nrftest.Serve(t, tr, n.Handler()), http: sbitest.HTTPClient(tr), core: core, n4: n4,
		amfURL: amfURL, amfID: amf.NfInstanceId}
}

// answer is an SBI answer with its binary parts.
type answer struct {
	status int
	header http.Header
	json   []byte
	parts  map[string]sbi.Part
}

func (s *testSMF) post(t *testing.T, path string, v any, parts ...sbi.Part) answer {
	t.Helper()
	body, ctype, err := sbi.EncodeRelated(v, parts...)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", s.url+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	rsp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	data, _ := io.ReadAll(rsp.Body)
	a := answer{status: rsp.StatusCode, header: rsp.Header}
	ct := rsp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "multipart/related") {
		var raw jsonRaw
		a.parts, err = sbi.DecodeRelated(ct, data, &raw)
		if err != nil {
			t.Fatalf("answer %d: %v", rsp.StatusCode, err)
		}
		a.json = raw
	} else {
		a.json = data
	}
	return a
}

type jsonRaw []byte

func (j *jsonRaw) UnmarshalJSON(b []byte) error { *j = append((*j)[:0], b...); return nil }

// createData is the AMF's CreateSMContext for the UE's request n1.
func (s *testSMF) createData(supi, dnn string, psi uint8) models.SmfPduSessionSmContextCreateData {
	sn := slice1
	return models.SmfPduSessionSmContextCreateData{Supi: supi, PduSessionId: int32(psi), Dnn: dnn, SNssai: &sn,
		ServingNfId: s.amfID, ServingNetwork: &models.PlmnIdNid{Mcc: "208", Mnc: "93"}, AnType: models.AccessType__3_GPP_ACCESS,
		RatType: models.RatType_NR, SmContextStatusUri: s.amfURL + "/namf-callback/v1/smctx-status/" + supi + "/" + string(rune('0'+psi)),
		N1SmMsg: &models.RefToBinaryData{ContentId: "n1"}}
}

func n1Part(b []byte) sbi.Part {
	return sbi.Part{ContentID: "n1", ContentType: sbi.ContentTypeNAS, Data: b}
}
func n2Part(b []byte) sbi.Part {
	return sbi.Part{ContentID: "n2", ContentType: sbi.ContentTypeNGAP, Data: b}
}

var errUPFDown = errors.New("udp 127.0.0.1:8805: no PFCP association: heartbeat timed out")
