package udm

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/sbi"
)

// fakeUDR stands in for the UDR: TS 29.505 subscription data on the paths
// the UDM uses, SQN written back by JSON Patch.
type fakeUDR struct {
	mu      sync.Mutex
	auth    map[string]json.RawMessage // supi → authentication subscription document
	sqns    map[string][]string        // supi → every SQN written, in order
	am      map[string]models.AccessAndMobilitySubscriptionData
	amfRegs map[string]models.Amf3GppAccessRegistration
	// moveOnce is an SQN another UDM writes just before our next patch.
	moveOnce string
}

func newFakeUDR() *fakeUDR {
	return &fakeUDR{auth: map[string]json.RawMessage{}, sqns: map[string][]string{},
		am: map[string]models.AccessAndMobilitySubscriptionData{}, amfRegs: map[string]models.Amf3GppAccessRegistration{}}
}

// add provisions a subscriber with an authentication subscription document
// (any JSON shape) and AM data for PLMN 20893.
func (f *fakeUDR) add(t *testing.T, supi string, authDoc any) {
	t.Helper()
	b, err := json.Marshal(authDoc)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth[supi] = b
	f.am[supi] = models.AccessAndMobilitySubscriptionData{Nssai: &models.Nssai{
		DefaultSingleNssais: []models.Snssai{{Sst: 1, Sd: "010203"}}, SingleNssais: []models.Snssai{{Sst: 1, Sd: "112233"}}}}
}

func (f *fakeUDR) written(supi string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sqns[supi]...)
}

func (f *fakeUDR) handler() http.Handler {
	mux := http.NewServeMux()
	const base = "/nudr-dr/v1/subscription-data/{ueId}"
	mux.HandleFunc("GET "+base+"/authentication-data/authentication-subscription", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		doc, ok := f.auth[r.PathValue("ueId")]
		f.mu.Unlock()
		if !ok {
			sbi.WriteProblem(w, 404, "USER_NOT_FOUND", "")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	mux.HandleFunc("PATCH "+base+"/authentication-data/authentication-subscription", f.patchSQN)
	mux.HandleFunc("GET "+base+"/{plmn}/provisioned-data/am-data", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		am, ok := f.am[r.PathValue("ueId")]
		f.mu.Unlock()
		if !ok || r.PathValue("plmn") != "20893" {
			sbi.WriteProblem(w, 404, "USER_NOT_FOUND", "")
			return
		}
		sbi.WriteJSON(w, 200, am)
	})
	mux.HandleFunc("GET "+base+"/context-data/smf-registrations", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		_, ok := f.auth[r.PathValue("ueId")]
		f.mu.Unlock()
		if !ok {
			sbi.WriteProblem(w, 404, "USER_NOT_FOUND", "")
			return
		}
		sbi.WriteJSON(w, 200, []models.SmfRegistration{})
	})
	mux.HandleFunc("PUT "+base+"/context-data/amf-3gpp-access", func(w http.ResponseWriter, r *http.Request) {
		var reg models.Amf3GppAccessRegistration
		if !sbi.DecodeJSON(w, r, &reg) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.auth[r.PathValue("ueId")]; !ok {
			sbi.WriteProblem(w, 404, "USER_NOT_FOUND", "")
			return
		}
		f.amfRegs[r.PathValue("ueId")] = reg
		w.WriteHeader(204)
	})
	return mux
}

// patchSQN applies [{op: test, path: /sequenceNumber/sqn, value: SQN},
// {op: replace, path: /sequenceNumber, value: SequenceNumber}]: 409 when
// the tested SQN is not the stored one. moveOnce, when set, plays another
// UDM that moves the SQN just before the next patch.
func (f *fakeUDR) patchSQN(w http.ResponseWriter, r *http.Request) {
	var patch []struct {
		Op, Path string
		Value    json.RawMessage
	}
	if !sbi.DecodeJSON(w, r, &patch) {
		return
	}
	var tested string
	var seq models.SequenceNumber
	if len(patch) != 2 || patch[0].Op != "test" || patch[0].Path != "/sequenceNumber/sqn" || json.Unmarshal(patch[0].Value, &tested) != nil ||
		patch[1].Op != "replace" || patch[1].Path != "/sequenceNumber" || json.Unmarshal(patch[1].Value, &seq) != nil {
		sbi.WriteProblem(w, 400, "INVALID_MSG_FORMAT", "unexpected patch")
		return
	}
	supi := r.PathValue("ueId")
	f.mu.Lock()
	defer f.mu.Unlock()
	var doc struct {
		SequenceNumber models.SequenceNumber `json:"sequenceNumber"`
	}
	if err := json.Unmarshal(f.auth[supi], &doc); err != nil {
		sbi.WriteProblem(w, 404, "USER_NOT_FOUND", "")
		return
	}
	if f.moveOnce != "" {
		f.setSQN(supi, models.SequenceNumber{Sqn: f.moveOnce})
		doc.SequenceNumber.Sqn, f.moveOnce = f.moveOnce, ""
	}
	if doc.SequenceNumber.Sqn != tested {
		sbi.WriteProblem(w, 409, "MODIFICATION_NOT_ALLOWED", "SQN moved")
		return
	}
	f.setSQN(supi, seq)
	f.sqns[supi] = append(f.sqns[supi], seq.Sqn)
	w.WriteHeader(204)
}

func (f *fakeUDR) setSQN(supi string, seq models.SequenceNumber) {
	var doc map[string]any
	_ = json.Unmarshal(f.auth[supi], &doc)
	doc["sequenceNumber"] = seq
	f.auth[supi], _ = json.Marshal(doc)
}

// newUDM serves a UDM (default config) over tr whose UDR is fake, through
// the NRF.
func newUDM(t *testing.T, tr sbi.Transport, udr *fakeUDR) (*NF, string, *sbi.Client) {
	t.Helper()
	return newUDMOn(t, tr, udr.handler())
}

// newUDMOn is newUDM with the UDR served by udr.
func newUDMOn(t *testing.T, tr sbi.Transport, udr http.Handler) (*NF, string, *sbi.Client) {
	t.Helper()
	udrURL := nrftest.Serve(t, tr, udr)
	env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_UDM,
		nrftest.Peer(t, models.NrfNfManagementNfType_UDR, udrURL, models.ServiceName_NUDR_DR))
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return n, nrftest.Serve(t, tr, n.Handler()), env.Client
}

// countRequests passes requests to h and counts those whose path ends in
// suffix.
func countRequests(h http.Handler, suffix string) (http.Handler, *atomic.Int32) {
	var n atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, suffix) {
			n.Add(1)
		}
		h.ServeHTTP(w, r)
	}), &n
}
