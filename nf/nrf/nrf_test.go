package nrf

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/logging"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// newNRF serves an NRF with a 90 s validity period over tr and returns its
// URL and a client.
func newNRF(t *testing.T, tr sbi.Transport) (string, *sbi.Client) {
	t.Helper()
	cfg := config.Default()
	cfg.NRF.ValidityPeriod = 90 * time.Second
	n, err := New(&nf.Env{Config: cfg, Log: logging.Discard(), Client: sbitest.Client(tr)})
	if err != nil {
		t.Fatal(err)
	}
	if n.Profile().NfInstanceId != "" {
		t.Fatal("the NRF must not register with itself")
	}
	return sbitest.Serve(t, tr, n.Handler()), sbitest.Client(tr)
}

func TestMain(m *testing.M) { sbitest.Main(m) }

func udmProfile() models.NrfNfManagementNfProfile {
	return sbi.Profile(sbi.InstanceID(models.NrfNfManagementNfType_UDM, "127.0.0.1:29503"), models.NrfNfManagementNfType_UDM,
		"127.0.0.1", 29503, models.PlmnId{Mcc: "208", Mnc: "93"}, models.ServiceName_NUDM_UEAU, models.ServiceName_NUDM_SDM)
}

func discover(t *testing.T, c *sbi.Client, base string, q url.Values) (models.SearchResult, error) {
	t.Helper()
	var res models.SearchResult
	_, err := c.Do(context.Background(), "GET", base+sbi.NFDiscoveryPath+"?"+q.Encode(), nil, &res)
	return res, err
}

func TestRegisterDiscoverDeregister(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newNRF(t, tr)
		ctx := context.Background()
		p := udmProfile()
		uri := base + sbi.NFManagementPath + p.NfInstanceId

		h, err := c.Do(ctx, "PUT", uri, p, nil)
		if err != nil || h.Get("Location") != uri {
			t.Fatalf("first PUT: %v, Location %q", err, h.Get("Location"))
		}
		// The status code tells create from replace (TS 29.510 5.2.2.2.2).
		resp := rawPut(t, tr, uri, p)
		if resp != http.StatusOK {
			t.Fatalf("second PUT of the same instance: %d, want 200", resp)
		}

		nrfc := sbi.NewNRFClient(c, base, models.NrfNfManagementNfType_AUSF)
		got, err := nrfc.ServiceURI(ctx, models.NrfNfManagementNfType_UDM, models.ServiceName_NUDM_UEAU)
		if err != nil || got != "http://127.0.0.1:29503" {
			t.Fatalf("ServiceURI = %q, %v", got, err)
		}
		res, err := discover(t, c, base, url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AUSF"}})
		if err != nil || res.ValidityPeriod != 90 || len(res.NfInstances) != 1 || res.NfInstances[0].NfInstanceId != p.NfInstanceId {
			t.Fatalf("discovery: %v %+v", err, res)
		}
		if s := res.NfInstances[0].NfServices; len(s) != 2 || s[0].ApiPrefix != "http://127.0.0.1:29503" {
			t.Fatalf("discovered services lost in conversion: %+v", s)
		}

		if _, err := c.Do(ctx, "DELETE", uri, nil, nil); err != nil {
			t.Fatalf("DELETE: %v", err)
		}
		if _, err := c.Do(ctx, "DELETE", uri, nil, nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("second DELETE: %v, want 404", err)
		}
		res, err = discover(t, c, base, url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AUSF"}})
		if err != nil || len(res.NfInstances) != 0 {
			t.Fatalf("discovery after deregistration: %v %+v", err, res)
		}
	})
}

func rawPut(t *testing.T, tr sbi.Transport, uri string, p models.NrfNfManagementNfProfile) int {
	t.Helper()
	resp, err := sbitest.HTTPClient(tr).Do(mustJSONRequest(t, "PUT", uri, p))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRegisterRejectsBadProfiles(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newNRF(t, tr)
		good := udmProfile()
		uri := base + sbi.NFManagementPath + good.NfInstanceId
		for name, mutate := range map[string]func(*models.NrfNfManagementNfProfile){
			"id mismatch": func(p *models.NrfNfManagementNfProfile) { p.NfInstanceId = "other" },
			"no nfType":   func(p *models.NrfNfManagementNfProfile) { p.NfType = "" },
			"no nfStatus": func(p *models.NrfNfManagementNfProfile) { p.NfStatus = "" },
			"bad status":  func(p *models.NrfNfManagementNfProfile) { p.NfStatus = "ASLEEP" },
		} {
			p := udmProfile()
			mutate(&p)
			if _, err := c.Do(context.Background(), "PUT", uri, p, nil); sbi.StatusOf(err) != 400 || sbi.CauseOf(err) != "INVALID_MSG_FORMAT" {
				t.Errorf("%s: %v, want 400 INVALID_MSG_FORMAT", name, err)
			}
		}
		if _, err := c.Do(context.Background(), "PUT", uri, "not a profile", nil); sbi.StatusOf(err) != 400 {
			t.Errorf("non-object body: %v, want 400", err)
		}
	})
}

func TestDiscoveryWithoutMandatoryParameters(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newNRF(t, tr)
		for _, q := range []url.Values{{"requester-nf-type": {"AMF"}}, {"target-nf-type": {"AUSF"}}} {
			if _, err := discover(t, c, base, q); sbi.StatusOf(err) != 400 || sbi.CauseOf(err) != "MANDATORY_QUERY_PARAM_MISSING" {
				t.Errorf("query %v: %v, want 400 MANDATORY_QUERY_PARAM_MISSING", q, err)
			}
		}
		q := url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AMF"}, "snssais": {"[{sst"}}
		if _, err := discover(t, c, base, q); sbi.StatusOf(err) != 400 || sbi.CauseOf(err) != "INVALID_QUERY_PARAM" {
			t.Errorf("bad snssais: %v, want 400 INVALID_QUERY_PARAM", err)
		}
	})
}

func TestDiscoveryFilters(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newNRF(t, tr)
		ctx := context.Background()
		udm := udmProfile()
		sliced := sbi.Profile("smf-slice-2", models.NrfNfManagementNfType_SMF, "127.0.0.2", 29502, models.PlmnId{Mcc: "208", Mnc: "93"},
			models.ServiceName_NSMF_PDUSESSION)
		sliced.SNssais = []models.ExtSnssai{{Sst: 1, Sd: "112233"}}
		for _, p := range []models.NrfNfManagementNfProfile{udm, sliced} {
			if _, err := c.Do(ctx, "PUT", base+sbi.NFManagementPath+p.NfInstanceId, p, nil); err != nil {
				t.Fatal(err)
			}
		}
		count := func(q url.Values) int {
			q.Set("requester-nf-type", "AMF")
			res, err := discover(t, c, base, q)
			if err != nil {
				t.Fatalf("%v: %v", q, err)
			}
			return len(res.NfInstances)
		}
		cases := []struct {
			q    url.Values
			want int
		}{
			{url.Values{"target-nf-type": {"UDM"}, "service-names": {"nudm-sdm,nudm-uecm"}}, 1},
			{url.Values{"target-nf-type": {"UDM"}, "service-names": {"nudm-uecm"}}, 0},
			{url.Values{"target-nf-type": {"SMF"}, "snssais": {`[{"sst":1,"sd":"112233"}]`}}, 1},
			{url.Values{"target-nf-type": {"SMF"}, "snssais": {`[{"sst":1,"sd":"010203"}]`}}, 0},
			{url.Values{"target-nf-type": {"SMF"}, "snssais": {`[{"sst":1,"sd":"11223A"}]`}}, 0},
			{url.Values{"target-nf-type": {"SMF"}, "snssais": {`[{"sst":1,"sd":"112233"},{"sst":2}]`}}, 1},
			// An S-NSSAI without an SD is the SST-only slice, not any SD (TS 23.501 5.15.2.1).
			{url.Values{"target-nf-type": {"SMF"}, "snssais": {`[{"sst":1}]`}}, 0},
			{url.Values{"target-nf-type": {"UDM"}, "target-plmn-list": {`[{"mcc":"001","mnc":"01"}]`}}, 0},
		}
		for _, tc := range cases {
			if got := count(tc.q); got != tc.want {
				t.Errorf("%v: %d instances, want %d", tc.q, got, tc.want)
			}
		}

		// A suspended NF is not discovered (TS 29.510 5.3.2.2.2: REGISTERED only).
		patch := []models.PatchItem{{Op: models.PatchOperation_REPLACE, Path: "/nfStatus", Value: "SUSPENDED"}}
		if _, err := c.Do(ctx, "PATCH", base+sbi.NFManagementPath+udm.NfInstanceId, patch, nil); err != nil {
			t.Fatal(err)
		}
		if got := count(url.Values{"target-nf-type": {"UDM"}}); got != 0 {
			t.Fatalf("suspended UDM discovered %d times", got)
		}
	})
}

func TestHeartbeatPatch(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newNRF(t, tr)
		ctx := context.Background()
		p := udmProfile()
		uri := base + sbi.NFManagementPath + p.NfInstanceId
		if _, err := c.Do(ctx, "PUT", uri, p, nil); err != nil {
			t.Fatal(err)
		}
		ok := []models.PatchItem{
			{Op: models.PatchOperation_REPLACE, Path: "/nfStatus", Value: "REGISTERED"},
			{Op: models.PatchOperation_REPLACE, Path: "/load", Value: 42},
		}
		if _, err := c.Do(ctx, "PATCH", uri, ok, nil); err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
		var got models.NrfNfManagementNfProfile
		if _, err := c.Do(ctx, "GET", uri, nil, &got); err != nil || got.Load != 42 {
			t.Fatalf("after heartbeat: %v load %d", err, got.Load)
		}
		// A refused patch changes nothing, not even its valid first item.
		bad := []models.PatchItem{
			{Op: models.PatchOperation_REPLACE, Path: "/load", Value: 7},
			{Op: models.PatchOperation_REPLACE, Path: "/nfType", Value: "AMF"},
		}
		if _, err := c.Do(ctx, "PATCH", uri, bad, nil); sbi.StatusOf(err) != 403 || sbi.CauseOf(err) != "MODIFICATION_NOT_ALLOWED" {
			t.Fatalf("patch of nfType: %v, want 403 MODIFICATION_NOT_ALLOWED", err)
		}
		if _, err := c.Do(ctx, "GET", uri, nil, &got); err != nil || got.Load != 42 || got.NfType != "UDM" {
			t.Fatalf("refused patch was applied: %+v", got)
		}
		if _, err := c.Do(ctx, "PATCH", base+sbi.NFManagementPath+"unknown", ok, nil); sbi.StatusOf(err) != 404 {
			t.Fatalf("heartbeat of unknown NF: %v, want 404", err)
		}
	})
}

func TestListInstances(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newNRF(t, tr)
		ctx := context.Background()
		p := udmProfile()
		if _, err := c.Do(ctx, "PUT", base+sbi.NFManagementPath+p.NfInstanceId, p, nil); err != nil {
			t.Fatal(err)
		}
		var l models.UriList
		if _, err := c.Do(ctx, "GET", base+"/nnrf-nfm/v1/nf-instances?nf-type=UDM", nil, &l); err != nil ||
			len(l.Links["items"]) != 1 || l.Links["items"][0].Href != base+sbi.NFManagementPath+p.NfInstanceId {
			t.Fatalf("list UDM: %v %+v", err, l)
		}
		if _, err := c.Do(ctx, "GET", base+"/nnrf-nfm/v1/nf-instances?nf-type=AMF", nil, &l); err != nil || len(l.Links["items"]) != 0 {
			t.Fatalf("list AMF: %v %+v", err, l)
		}
	})
}

func TestConcurrentRegistrationsAndDiscoveries(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := newNRF(t, tr)
		ctx := context.Background()
		const n = 20
		done := make(chan error, 2*n)
		for i := range n {
			go func() {
				p := sbi.Profile(sbi.InstanceID(models.NrfNfManagementNfType_SMF, fmt.Sprint("127.0.0.1:", 30000+i)),
					models.NrfNfManagementNfType_SMF, "127.0.0.1", 30000+i, models.PlmnId{Mcc: "208", Mnc: "93"}, models.ServiceName_NSMF_PDUSESSION)
				_, err := c.Do(ctx, "PUT", base+sbi.NFManagementPath+p.NfInstanceId, p, nil)
				done <- err
			}()
			go func() {
				_, err := discover(t, c, base, url.Values{"target-nf-type": {"SMF"}, "requester-nf-type": {"AMF"}})
				done <- err
			}()
		}
		for range 2 * n {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		res, err := discover(t, c, base, url.Values{"target-nf-type": {"SMF"}, "requester-nf-type": {"AMF"}})
		if err != nil || len(res.NfInstances) != n {
			t.Fatalf("after %d registrations: %v, %d instances", n, err, len(res.NfInstances))
		}
	})
}
