package amf

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

func TestMain(m *testing.M) { sbitest.Main(m) }

// peerServer is one server playing NRF, AUSF, UDM and PCF with the TS
// 29.5xx paths and free5gc/openapi JSON; it records what it was sent.
type peerServer struct {
	URL  string
	mu   sync.Mutex
	seen []string
	body map[string]json.RawMessage
}

func newPeerServer(t *testing.T, tr sbi.Transport) *peerServer {
	p := &peerServer{body: map[string]json.RawMessage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nnrf-disc/v1/nf-instances", func(w http.ResponseWriter, r *http.Request) {
		svc := map[string]models.ServiceName{"AUSF": models.ServiceName_NAUSF_AUTH, "UDM": models.ServiceName_NUDM_UECM,
			"PCF": models.ServiceName_NPCF_AM_POLICY_CONTROL}[r.URL.Query().Get("target-nf-type")]
		services := []models.NrfNfDiscoveryNfService{{ServiceName: svc, ApiPrefix: p.URL}}
		if svc == models.ServiceName_NUDM_UECM {
			services = append(services, models.NrfNfDiscoveryNfService{ServiceName: models.ServiceName_NUDM_SDM, ApiPrefix: p.URL})
		}
		sbi.WriteJSON(w, 200, models.SearchResult{ValidityPeriod: 3600, NfInstances: []models.NrfNfDiscoveryNfProfile{{NfServices: services}}})
	})
	mux.HandleFunc("POST /nausf-auth/v1/ue-authentications", func(w http.ResponseWriter, r *http.Request) {
		var in models.AuthenticationInfo
		if !sbi.DecodeJSON(w, r, &in) {
			return
		}
		if strings.HasSuffix(in.SupiOrSuci, "9999") {
			sbi.WriteProblem(w, 404, "USER_NOT_FOUND", "no such subscriber")
			return
		}
		p.record(r, in)
		w.Header().Set("Location", p.URL+"/nausf-auth/v1/ue-authentications/ctx1")
		sbi.WriteJSON(w, 201, map[string]any{"authType": "5G_AKA",
			"5gAuthData": models.Av5gAka{Rand: strings.Repeat("11", 16), Autn: strings.Repeat("22", 16), HxresStar: strings.Repeat("33", 16)},
			"_links":     map[string]any{"5g-aka": map[string]string{"href": "/nausf-auth/v1/ue-authentications/ctx1/5g-aka-confirmation"}}})
	})
	mux.HandleFunc("PUT /nausf-auth/v1/ue-authentications/ctx1/5g-aka-confirmation", func(w http.ResponseWriter, r *http.Request) {
		var in models.ConfirmationData
		_ = sbi.DecodeJSON(w, r, &in)
		p.record(r, in)
		sbi.WriteJSON(w, 200, models.ConfirmationDataResponse{AuthResult: models.AusfUeAuthenticationAuthResult_SUCCESS,
			Supi: "imsi-208930000000001", Kseaf: strings.Repeat("44", 32)})
	})
	ok := func(status int, out any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var in json.RawMessage
			if r.ContentLength > 0 {
				_ = json.NewDecoder(r.Body).Decode(&in)
			}
			p.record(r, in)
			if status == 201 && strings.Contains(r.URL.Path, "policies") {
				w.Header().Set("Location", p.URL+"/npcf-am-policy-control/v1/policies/pol-7")
			}
			if out == nil {
				w.WriteHeader(status)
				return
			}
			sbi.WriteJSON(w, status, out)
		}
	}
	mux.HandleFunc("PUT /nudm-uecm/v1/{supi}/registrations/amf-3gpp-access", ok(201, nil))
	mux.HandleFunc("PATCH /nudm-uecm/v1/{supi}/registrations/amf-3gpp-access", ok(204, nil))
	mux.HandleFunc("GET /nudm-sdm/v2/{supi}/am-data", ok(200, models.AccessAndMobilitySubscriptionData{
		Nssai: &models.Nssai{DefaultSingleNssais: []models.Snssai{{Sst: 1, Sd: "010203"}}}}))
	mux.HandleFunc("POST /nudm-sdm/v2/{supi}/sdm-subscriptions", ok(201, nil))
	mux.HandleFunc("POST /npcf-am-policy-control/v1/policies", ok(201, nil))
	mux.HandleFunc("DELETE /npcf-am-policy-control/v1/policies/{id}", ok(204, nil))
	p.URL = sbitest.Serve(t, tr, mux)
	return p
}

func (p *peerServer) record(r *http.Request, in any) {
	b, _ := json.Marshal(in)
	p.mu.Lock()
	defer p.mu.Unlock()
	k := r.Method + " " + r.URL.Path
	p.seen = append(p.seen, k)
	p.body[k] = b
}

func TestSBIConsumerSpeaksTS295xx(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		p := newPeerServer(t, tr)
		c := sbitest.Client(tr)
		con := NewSBIConsumer(c, sbi.NewNRFClient(c, p.URL, models.NrfNfManagementNfType_AMF))
		ctx := context.Background()

		av, err := con.Authenticate(ctx, "suci-0-208-93-0000-0-0-0000000001", "5G:mnc093.mcc208.3gppnetwork.org", nil)
		if err != nil || av.RAND != strings.Repeat("11", 16) || av.ConfirmURI != p.URL+"/nausf-auth/v1/ue-authentications/ctx1/5g-aka-confirmation" {
			t.Fatalf("Authenticate = %+v, %v", av, err)
		}
		conf, err := con.ConfirmAuth(ctx, av.ConfirmURI, strings.Repeat("55", 16))
		if err != nil || !conf.Success || conf.SUPI != "imsi-208930000000001" || len(conf.KSEAF) != 64 {
			t.Fatalf("ConfirmAuth = %+v, %v", conf, err)
		}
		if _, err := con.Authenticate(ctx, "suci-0-208-93-0000-0-0-0000009999", "sn", nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("unknown subscriber: %v", err)
		}
		supi := "imsi-208930000000001"
		if err := con.RegisterUECM(ctx, supi, models.Amf3GppAccessRegistration{AmfInstanceId: "a"}); err != nil {
			t.Fatal(err)
		}
		am, err := con.AMData(ctx, supi, models.PlmnId{Mcc: "208", Mnc: "93"})
		if err != nil || am.Nssai == nil || len(am.Nssai.DefaultSingleNssais) != 1 {
			t.Fatalf("AMData = %+v, %v", am, err)
		}
		if err := con.SubscribeSDM(ctx, supi, models.SdmSubscription{NfInstanceId: "a"}); err != nil {
			t.Fatal(err)
		}
		id, err := con.CreateAMPolicy(ctx, models.PcfAmPolicyControlPolicyAssociationRequest{Supi: supi})
		if err != nil || id != "pol-7" {
			t.Fatalf("CreateAMPolicy = %q, %v", id, err)
		}
		if err := con.DeleteAMPolicy(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := con.DeregisterUECM(ctx, supi, models.Guami{AmfId: "cafe00"}); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"POST /nausf-auth/v1/ue-authentications",
			"PUT /nausf-auth/v1/ue-authentications/ctx1/5g-aka-confirmation",
			"PUT /nudm-uecm/v1/imsi-208930000000001/registrations/amf-3gpp-access",
			"GET /nudm-sdm/v2/imsi-208930000000001/am-data",
			"POST /nudm-sdm/v2/imsi-208930000000001/sdm-subscriptions",
			"POST /npcf-am-policy-control/v1/policies",
			"DELETE /npcf-am-policy-control/v1/policies/pol-7",
			"PATCH /nudm-uecm/v1/imsi-208930000000001/registrations/amf-3gpp-access",
		}
		if strings.Join(p.seen, "\n") != strings.Join(want, "\n") {
			t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(p.seen, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(string(p.body["PATCH /nudm-uecm/v1/imsi-208930000000001/registrations/amf-3gpp-access"]), `"purgeFlag":true`) {
			t.Fatal("UECM deregistration is not a purge")
		}
	})
}
