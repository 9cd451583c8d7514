package udm

import (
	"context"
	"net/url"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/nf/udr/udrtest"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
)

// udmOverRealUDR is a UDM whose UDR is package udr with the default
// subscribers (DNN internet on slice 1/010203, 1 Gbps / 2 Gbps, 5QI 9).
func udmOverRealUDR(t *testing.T, tr sbi.Transport) (string, *sbi.Client) {
	t.Helper()
	_, peer := udrtest.Serve(t, tr, nil)
	env := nrftest.Env(t, tr, nil, models.NrfNfManagementNfType_UDM, peer)
	n, err := New(env)
	if err != nil {
		t.Fatal(err)
	}
	return nrftest.Serve(t, tr, n.Handler()), env.Client
}

const sessionSUPI = "imsi-" + config.DefaultFirstIMSI

func TestSMData(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := udmOverRealUDR(t, tr)
		ctx := context.Background()
		uri := base + "/nudm-sdm/v2/" + sessionSUPI + "/sm-data"
		var sm []models.SessionManagementSubscriptionData
		q := "?single-nssai=" + url.QueryEscape(`{"sst":1,"sd":"010203"}`) + "&dnn=internet"
		if _, err := c.Do(ctx, "GET", uri+q, nil, &sm); err != nil || len(sm) != 1 {
			t.Fatalf("sm-data: %v %+v", err, sm)
		}
		conf := sm[0].DnnConfigurations["internet"]
		if conf.SessionAmbr == nil || conf.SessionAmbr.Uplink != "1 Gbps" || conf.SessionAmbr.Downlink != "2 Gbps" ||
			conf.Var5gQosProfile == nil || conf.Var5gQosProfile.Var5qi != 9 || conf.Var5gQosProfile.Arp.PriorityLevel != 8 {
			t.Fatalf("DNN configuration of internet: %+v %+v", conf.SessionAmbr, conf.Var5gQosProfile)
		}
		if _, err := c.Do(ctx, "GET", uri, nil, &sm); err != nil || len(sm) == 0 {
			t.Fatalf("sm-data without filters: %v %+v", err, sm)
		}
		cases := []struct {
			what, uri, cause string
			status           int
		}{
			{"an unsubscribed DNN", uri + "?dnn=ims", sbi.CauseDataNotFound, 404},
			{"an unsubscribed slice", uri + "?single-nssai=" + url.QueryEscape(`{"sst":2}`), sbi.CauseDataNotFound, 404},
			{"a malformed single-nssai", uri + "?single-nssai=1-010203", sbi.CauseInvalidQueryParam, 400},
			{"a malformed dnn", uri + "?dnn=a..b", sbi.CauseInvalidQueryParam, 400},
			{"an unknown UE", base + "/nudm-sdm/v2/imsi-208939999999999/sm-data", sbi.CauseUserNotFound, 404},
			{"a malformed SUPI", base + "/nudm-sdm/v2/imsi-12/sm-data", sbi.CauseMandatoryIEIncorrect, 400},
		}
		for _, tc := range cases {
			if _, err := c.Do(ctx, "GET", tc.uri, nil, nil); sbi.StatusOf(err) != tc.status || sbi.CauseOf(err) != tc.cause {
				t.Errorf("sm-data of %s: %v, want %d %s", tc.what, err, tc.status, tc.cause)
			}
		}
		var sel models.SmfSelectionSubscriptionData
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+sessionSUPI+"/smf-select-data", nil, &sel); err != nil ||
			len(sel.SubscribedSnssaiInfos["01010203"].DnnInfos) != 1 || !sel.SubscribedSnssaiInfos["01010203"].DnnInfos[0].DefaultDnnIndicator {
			t.Fatalf("smf-select-data: %v %+v, want internet as the default DNN of 01010203", err, sel)
		}
	})
}

func TestSMFRegistration(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		base, c := udmOverRealUDR(t, tr)
		ctx := context.Background()
		regs := base + "/nudm-uecm/v1/" + sessionSUPI + "/registrations/smf-registrations"
		reg := models.SmfRegistration{SmfInstanceId: "smf-1", PduSessionId: 1, SingleNssai: &models.Snssai{Sst: 1, Sd: "010203"},
			Dnn: "internet", PlmnId: &models.PlmnId{Mcc: "208", Mnc: "93"}}
		var got models.SmfRegistration
		h, err := c.Do(ctx, "PUT", regs+"/1", reg, &got)
		if err != nil || h.Get("Location") != regs+"/1" || got.SmfInstanceId != "smf-1" {
			t.Fatalf("register: %v, Location %q, %+v", err, h.Get("Location"), got)
		}
		reg.SmfInstanceId = "smf-2"
		if h, err := c.Do(ctx, "PUT", regs+"/1", reg, &got); err != nil || h.Get("Location") != "" || got.SmfInstanceId != "smf-2" {
			t.Fatalf("register again: %v, Location %q, %+v; want 200 without Location", err, h.Get("Location"), got)
		}
		var info models.SmfRegistrationInfo
		if _, err := c.Do(ctx, "GET", regs, nil, &info); err != nil || len(info.SmfRegistrationList) != 1 || info.SmfRegistrationList[0].SmfInstanceId != "smf-2" {
			t.Fatalf("UECM get: %v %+v", err, info)
		}
		var inSMF models.UeContextInSmfData
		if _, err := c.Do(ctx, "GET", base+"/nudm-sdm/v2/"+sessionSUPI+"/ue-context-in-smf-data", nil, &inSMF); err != nil ||
			inSMF.PduSessions["1"].SmfInstanceId != "smf-2" || inSMF.PduSessions["1"].Dnn != "internet" {
			t.Fatalf("ue-context-in-smf-data: %v %+v", err, inSMF)
		}
		if _, err := c.Do(ctx, "DELETE", regs+"/1", nil, nil); err != nil {
			t.Fatalf("deregister: %v", err)
		}
		bad := reg
		bad.SingleNssai = nil
		cases := []struct {
			what, method, uri string
			body              any
			status            int
			cause             string
		}{
			{"deregister again", "DELETE", regs + "/1", nil, 404, sbi.CauseContextNotFound},
			{"get with none", "GET", regs, nil, 404, sbi.CauseContextNotFound},
			{"register without singleNssai", "PUT", regs + "/1", bad, 400, sbi.CauseMandatoryIEMissing},
			{"register another session's body", "PUT", regs + "/2", reg, 400, sbi.CauseMandatoryIEIncorrect},
			{"register PDU session 0", "PUT", regs + "/0", reg, 400, sbi.CauseMandatoryIEIncorrect},
			{"register PDU session 256", "PUT", regs + "/256", reg, 400, sbi.CauseMandatoryIEIncorrect},
			{"register an unknown UE", "PUT", base + "/nudm-uecm/v1/imsi-208939999999999/registrations/smf-registrations/1", reg, 404, sbi.CauseUserNotFound},
		}
		for _, tc := range cases {
			if _, err := c.Do(ctx, tc.method, tc.uri, tc.body, nil); sbi.StatusOf(err) != tc.status || sbi.CauseOf(err) != tc.cause {
				t.Errorf("%s: %v, want %d %s", tc.what, err, tc.status, tc.cause)
			}
		}
		if h, err := c.Do(ctx, "PUT", regs+"/1", reg, nil); err != nil || h.Get("Location") == "" {
			t.Fatalf("register after deregistration: %v, Location %q; want a new registration (201)", err, h.Get("Location"))
		}
	})
}
