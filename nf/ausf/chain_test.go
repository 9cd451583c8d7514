package ausf_test

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf/amf"
	"github.com/l25gc/l25gc/nf/ausf"
	"github.com/l25gc/l25gc/nf/nrf/nrftest"
	"github.com/l25gc/l25gc/nf/pcf"
	"github.com/l25gc/l25gc/nf/udm"
	"github.com/l25gc/l25gc/nf/udr"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/sbi/sbitest"
	"github.com/l25gc/l25gc/security"
)

// TestAMFConsumerAgainstTheRealNFs runs the AMF's SBI consumer (package
// amf) against AUSF, UDM, PCF and UDR served in-process and found through
// the NRF: the registration's SBI calls of TS 23.502 4.2.2.2.2 steps 9-16.
func TestAMFConsumerAgainstTheRealNFs(t *testing.T) {
	sbitest.Run(t, func(t *testing.T, tr sbi.Transport) {
		cfg := config.Default()
		cfg.DataDir = t.TempDir()
		ctx := context.Background()
		env := nrftest.Env(t, tr, cfg, models.NrfNfManagementNfType_AMF)

		u, err := udr.New(env)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { u.Stop(ctx) })
		um, err := udm.New(env)
		if err != nil {
			t.Fatal(err)
		}
		au, err := ausf.New(env)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := pcf.New(env)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []models.NrfNfManagementNfProfile{
			nrftest.Peer(t, models.NrfNfManagementNfType_UDR, nrftest.Serve(t, tr, u.Handler()), models.ServiceName_NUDR_DR),
			nrftest.Peer(t, models.NrfNfManagementNfType_UDM, nrftest.Serve(t, tr, um.Handler()), models.ServiceName_NUDM_UEAU, models.ServiceName_NUDM_UECM, models.ServiceName_NUDM_SDM),
			nrftest.Peer(t, models.NrfNfManagementNfType_AUSF, nrftest.Serve(t, tr, au.Handler()), models.ServiceName_NAUSF_AUTH),
			nrftest.Peer(t, models.NrfNfManagementNfType_PCF, nrftest.Serve(t, tr, pc.Handler()), models.ServiceName_NPCF_AM_POLICY_CONTROL),
		} {
			if err := env.NRF.Register(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		c := amf.NewSBIConsumer(env.Client, env.NRF)
		snn := security.ServingNetworkName("208", "93")
		const supi = "imsi-" + config.DefaultFirstIMSI

		av, err := c.Authenticate(ctx, "suci-0-208-93-0000-0-0-0000000001", snn, nil)
		if err != nil {
			t.Fatalf("Authenticate: %v", err)
		}
		k, _ := hex.DecodeString(config.DefaultK)
		opc, _ := hex.DecodeString(config.DefaultOPc)
		rnd, _ := hex.DecodeString(av.RAND)
		autn, _ := hex.DecodeString(av.AUTN)
		resp, err := security.VerifyChallenge(k, opc, rnd, autn, []byte{0, 0, 0, 0, 0, 0x20})
		if err != nil {
			t.Fatalf("UE: %v", err)
		}
		resStar := security.ResStar(resp.CK, resp.IK, snn, rnd, resp.RES)
		conf, err := c.ConfirmAuth(ctx, av.ConfirmURI, hex.EncodeToString(resStar))
		kseaf := security.KSEAF(security.KAUSF(resp.CK, resp.IK, snn, resp.SQNXorAK), snn)
		if err != nil || !conf.Success || conf.SUPI != supi || conf.KSEAF != hex.EncodeToString(kseaf) {
			t.Fatalf("ConfirmAuth: %v %+v", err, conf)
		}

		guami := models.Guami{PlmnId: &models.PlmnIdNid{Mcc: "208", Mnc: "93"}, AmfId: "cafe00"}
		if err := c.RegisterUECM(ctx, supi, models.Amf3GppAccessRegistration{AmfInstanceId: "amf-1",
			DeregCallbackUri: "http://amf/cb", Guami: &guami, RatType: models.RatType_NR}); err != nil {
			t.Fatalf("RegisterUECM: %v", err)
		}
		am, err := c.AMData(ctx, supi, models.PlmnId{Mcc: "208", Mnc: "93"})
		if err != nil || am.Nssai == nil {
			t.Fatalf("AMData: %v %+v", err, am)
		}
		if err := c.SubscribeSDM(ctx, supi, models.SdmSubscription{NfInstanceId: "amf-1", CallbackReference: "http://amf/sdm",
			MonitoredResourceUris: []string{supi + "/am-data"}}); err != nil {
			t.Fatalf("SubscribeSDM: %v", err)
		}
		id, err := c.CreateAMPolicy(ctx, models.PcfAmPolicyControlPolicyAssociationRequest{NotificationUri: "http://amf/pol", Supi: supi})
		if err != nil || id == "" {
			t.Fatalf("CreateAMPolicy: %q %v", id, err)
		}
		if err := c.DeleteAMPolicy(ctx, id); err != nil {
			t.Fatalf("DeleteAMPolicy: %v", err)
		}
		if err := c.DeregisterUECM(ctx, supi, guami); err != nil {
			t.Fatalf("DeregisterUECM: %v", err)
		}
		au.Stop(ctx)
	})
}
