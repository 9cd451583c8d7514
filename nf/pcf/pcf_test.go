package pcf

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

const (
	plainUE = "imsi-208930000000001" // no AM policy data in the UDR
	praUE   = "imsi-208930000000002" // AM policy data with a presence reporting area
)

func TestMain(m *testing.M) { sbitest.Main(m) }

func fakeUDR() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nudr-dr/v1/policy-data/ues/{ueId}/am-data", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("ueId") != praUE {
			sbi.WriteProblem(w, 404, "DATA_NOT_FOUND", "")
			return
		}
		sbi.WriteJSON(w, 200, models.AmPolicyData{PraInfos: map[string]models.PresenceInfo{"1": {PraId: "1"}}, SubscCats: []string{"gold"}})
	})
	return mux
}

func newPCF(t *testing.T, tr sbi.Transport, withUDR bool) (string, *sbi.Client) {
	t.Helper()
	var peers []models.NrfNfManagementNfProfile
	if withUDR {
		peers = append(peers, nrftest.Peer(t, models.NrfNfManagementNfType_UDR, nrftest.Serve(t, tr, fakeUDR()), models.ServiceName_NUDR_DR))
	}
	env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_PCF, peers...)
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return nrftest.Serve(t, tr, n.Handler()), env.Client
}

func request(supi string) models.PcfAmPolicyControlPolicyAssociationRequest {
	return models.PcfAmPolicyControlPolicyAssociationRequest{NotificationUri: "http://amf/cb", Supi: supi,
		AccessType: models.AccessType__3_GPP_ACCESS, RatType: models.RatType_NR, Rfsp: 3,
		ServingPlmn: &models.PlmnIdNid{Mcc: "208", Mnc: "93"}}
}

func create(t *testing.T, c *sbi.Client, base, supi string) (string, models.PcfAmPolicyControlPolicyAssociation) {
	t.Helper()
	var pa models.PcfAmPolicyControlPolicyAssociation
	h, err := c.Do(context.Background(), "POST", base+policiesPath, request(supi), &pa)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	loc := h.Get("Location")
	if !strings.HasPrefix(loc, base+policiesPath+"/") {
		t.Fatalf("Location %q", loc)
	}
	return loc, pa
}

func TestCreateGetUpdateDelete(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newPCF(t, tr, true)
		ctx := context.Background()
		uri, pa := create(t, c, base, plainUE)
		if pa.Request == nil || pa.Request.Supi != plainUE || pa.Rfsp != 3 || len(pa.Triggers) != 0 {
			t.Fatalf("association without policy data: %+v", pa)
		}
		var got models.PcfAmPolicyControlPolicyAssociation
		if _, err := c.Do(ctx, "GET", uri, nil, &got); err != nil || got.Request.Supi != plainUE {
			t.Fatalf("GET: %v %+v", err, got)
		}
		var upd models.PcfAmPolicyControlPolicyUpdate
		if _, err := c.Do(ctx, "POST", uri+"/update", models.PcfAmPolicyControlPolicyAssociationUpdateRequest{Rfsp: 7}, &upd); err != nil ||
			upd.Rfsp != 7 || upd.ResourceUri != uri {
			t.Fatalf("update: %v %+v", err, upd)
		}
		if _, err := c.Do(ctx, "DELETE", uri, nil, nil); err != nil {
			t.Fatalf("DELETE: %v", err)
		}
		for _, op := range []struct{ method, uri string }{{"DELETE", uri}, {"GET", uri}, {"POST", uri + "/update"}} {
			var body any
			if op.method == "POST" {
				body = models.PcfAmPolicyControlPolicyAssociationUpdateRequest{}
			}
			if _, err := c.Do(ctx, op.method, op.uri, body, nil); sbi.StatusOf(err) != 404 || sbi.CauseOf(err) != "CONTEXT_NOT_FOUND" {
				t.Errorf("%s after delete: %v, want 404 CONTEXT_NOT_FOUND", op.method, err)
			}
		}
	})
}

func TestPolicyDataAddsPresenceReporting(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newPCF(t, tr, true)
		_, pa := create(t, c, base, praUE)
		if len(pa.Triggers) != 1 || pa.Triggers[0] != models.PcfAmPolicyControlRequestTrigger_PRA_CH || len(pa.Pras) != 1 {
			t.Fatalf("association with PRA policy data: %+v", pa)
		}
	})
}

func TestOneAssociationPerUE(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newPCF(t, tr, true)
		first, _ := create(t, c, base, plainUE)
		second, _ := create(t, c, base, plainUE)
		if first == second {
			t.Fatal("the same association id twice")
		}
		if _, err := c.Do(context.Background(), "GET", first, nil, nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("replaced association: %v, want 404", err)
		}
		if _, err := c.Do(context.Background(), "GET", second, nil, nil); err != nil {
			t.Fatalf("new association: %v", err)
		}
	})
}

func TestCreateErrors(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newPCF(t, tr, true)
		ctx := context.Background()
		noSUPI := request("")
		if _, err := c.Do(ctx, "POST", base+policiesPath, noSUPI, nil); sbi.StatusOf(err) != 400 || sbi.CauseOf(err) != "MANDATORY_IE_MISSING" {
			t.Fatalf("no supi: %v, want 400 MANDATORY_IE_MISSING", err)
		}
		if _, err := c.Do(ctx, "POST", base+policiesPath, []string{"x"}, nil); sbi.StatusOf(err) != 400 {
			t.Fatalf("bad body: %v, want 400", err)
		}
		base, c = newPCF(t, tr, false)
		if _, err := c.Do(ctx, "POST", base+policiesPath, request(plainUE), nil); sbi.StatusOf(err) != 504 {
			t.Fatalf("no UDR: %v, want 504", err)
		}
	})
}
