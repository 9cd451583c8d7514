package e2e

import (
	"context"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/domain"
	"github.com/l25gc/l25gc/nf/udr/prov"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// connectGNB runs NG Setup against the test core's AMF.
func connectGNB(t *testing.T, cfg *config.Config) *ransim.GNB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := ransim.Connect(ctx, bench.GNBConfig(cfg, cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport))
	if err != nil {
		t.Fatalf("NG Setup: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// newUE is the i-th subscriber of the default range, its SUPI concealed with scheme.
func newUE(t *testing.T, cfg *config.Config, g *ransim.GNB, i int, scheme string) *ransim.UE {
	t.Helper()
	f, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, scheme)
	if err != nil {
		t.Fatal(err)
	}
	imsi, err := ransim.IMSI(f.FirstIMSI, i)
	if err != nil {
		t.Fatal(err)
	}
	return g.NewUE(ransim.Subscriber{IMSI: imsi, K: f.K, OPc: f.OPc}, f.Conceal)
}

func procCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TS 23.502 4.2.2.2.2 and 4.2.2.3.2: register with SUCI, get a GUTI and the
// network name, deregister, come back with the GUTI, update, switch off.
func TestUERegistersDeregistersAndReturnsWithItsGUTI(t *testing.T) {
	forEachSBI(t, func(t *testing.T, mode string) {
		cfg, path := coreConfig(t, t.TempDir(), withSBI(mode))
		startCore(t, cfg, path)
		g := connectGNB(t, cfg)
		ue := newUE(t, cfg, g, 0, "null")
		ctx := procCtx(t)

		if _, err := ue.Register(ctx); err != nil {
			t.Fatalf("initial registration: %v", err)
		}
		first := ue.GUTI()
		if first == nil || first.GUAMI.PLMN != (domain.PLMN{MCC: "208", MNC: "93"}) {
			t.Fatalf("Registration Accept 5G-GUTI %+v, want one in PLMN 208/93", first)
		}
		if len(ue.Allowed) == 0 {
			t.Fatal("Registration Accept without allowed NSSAI")
		}
		if err := ue.AwaitConfigurationUpdate(ctx); err != nil {
			t.Fatalf("Configuration Update Command: %v", err)
		}
		if ue.NetworkName != cfg.AMF.Network.Full {
			t.Fatalf("network name %q, want %q", ue.NetworkName, cfg.AMF.Network.Full)
		}
		if _, err := ue.Deregister(ctx, false); err != nil {
			t.Fatalf("deregistration: %v", err)
		}
		if _, err := ue.Register(ctx); err != nil {
			t.Fatalf("registration with the 5G-GUTI: %v", err)
		}
		if ue.GUTI() == nil {
			t.Fatal("no 5G-GUTI after re-registration")
		}
		if _, err := ue.UpdateRegistration(ctx, true); err != nil {
			t.Fatalf("periodic registration update: %v", err)
		}
		if _, err := ue.Deregister(ctx, true); err != nil {
			t.Fatalf("switch-off deregistration: %v", err)
		}
		if n := g.ErrorIndications.Load(); n != 0 {
			t.Fatalf("the AMF sent %d Error Indications", n)
		}
		if mode == "xio" {
			assertNFToNFOverXIOOnly(t, cfg)
		}
	})
}

func TestTwoHundredUEsRegisterConcurrently(t *testing.T) {
	forEachSBI(t, func(t *testing.T, mode string) {
		cfg, path := coreConfig(t, t.TempDir(), withSBI(mode, func(c *config.Config) { c.Subscribers[0].Count = 200 }))
		startCore(t, cfg, path)
		g := connectGNB(t, cfg)
		f, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
		if err != nil {
			t.Fatal(err)
		}
		f.UEs, f.Concurrency = 200, 200
		out, err := ransim.RegisterFleet(context.Background(), g, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Latencies) != 200 || out.Failed != 0 {
			t.Fatalf("%d registered, %d failed: %v", len(out.Latencies), out.Failed, out.Errors)
		}
	})
}

// SUCI Profile A and B (TS 33.501 C.3.4) deconcealed by the UDM with the
// configured home network keys.
func TestConcealedSUCIsRegister(t *testing.T) {
	forEachSBI(t, func(t *testing.T, mode string) {
		cfg, path := coreConfig(t, t.TempDir(), withSBI(mode))
		startCore(t, cfg, path)
		g := connectGNB(t, cfg)
		for i, scheme := range []string{"profile_a", "profile_b"} {
			ue := newUE(t, cfg, g, 10+i, scheme)
			if _, err := ue.Register(procCtx(t)); err != nil {
				t.Fatalf("%s: %v", scheme, err)
			}
		}
	})
}

// A UE whose USIM has the wrong K fails the AUTN check, answers MAC failure
// and gets Authentication Reject (TS 24.501 5.4.1.3.7 c); an IMSI nobody
// provisioned gets Registration Reject with the configured cause; the
// others registering at the same time are not disturbed.
func TestBadSubscribersAreRejectedWhileOthersRegister(t *testing.T) {
	forEachSBI(t, func(t *testing.T, mode string) {
		cfg, path := coreConfig(t, t.TempDir(), withSBI(mode))
		startCore(t, cfg, path)
		g := connectGNB(t, cfg)
		wrongKey := newUE(t, cfg, g, 50, "null")
		bad, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
		wrongKey = g.NewUE(ransim.Subscriber{IMSI: wrongKey.SUPI()[5:], K: bad, OPc: bad}, ransim.Concealment{})
		unknown := g.NewUE(ransim.Subscriber{IMSI: "208930999999999", K: bad, OPc: bad}, ransim.Concealment{})

		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = newUE(t, cfg, g, i, "null").Register(procCtx(t))
			}()
		}
		_, wrongErr := wrongKey.Register(procCtx(t))
		_, unknownErr := unknown.Register(procCtx(t))
		wg.Wait()

		var rej *ransim.RejectError
		if !errors.As(wrongErr, &rej) || rej.Message != "Authentication Reject" {
			t.Errorf("UE with a wrong key: %v, want Authentication Reject", wrongErr)
		}
		if !errors.As(unknownErr, &rej) || rej.Message != "Registration Reject" || int(rej.Cause) != cfg.AMF.NAS.UnknownSubscriberCause {
			t.Errorf("unknown IMSI: %v, want Registration Reject cause %d", unknownErr, cfg.AMF.NAS.UnknownSubscriberCause)
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("UE %d: %v", i, err)
			}
		}
	})
}

// Subscribers provisioned through the API are in the embedded store's file
// and survive a restart of the core, with their SQN.
func TestRestartKeepsSubscribers(t *testing.T) {
	forEachSBI(t, func(t *testing.T, mode string) {
		dir := t.TempDir()
		cfg, path := coreConfig(t, dir, withSBI(mode))
		core := startCore(t, cfg, path)
		k := cfg.Subscribers[0].K
		extra := prov.Subscriber{IMSI: "208930000077777", K: k, OPc: cfg.Subscribers[0].OPc}
		client := adminClient(t, cfg)
		if _, err := client.Add(procCtx(t), extra); err != nil {
			t.Fatalf("provisioning: %v", err)
		}
		g := connectGNB(t, cfg)
		f, _ := bench.FleetFor(cfg, extra.IMSI, "null")
		ue := g.NewUE(ransim.Subscriber{IMSI: extra.IMSI, K: f.K, OPc: f.OPc}, f.Conceal)
		if _, err := ue.Register(procCtx(t)); err != nil {
			t.Fatalf("before restart: %v", err)
		}
		g.Close()
		core.core.Stop()

		startCore(t, cfg, path)
		g2 := connectGNB(t, cfg)
		again := g2.NewUE(ransim.Subscriber{IMSI: extra.IMSI, K: f.K, OPc: f.OPc}, f.Conceal)
		if _, err := again.Register(procCtx(t)); err != nil {
			t.Fatalf("after restart: %v", err)
		}
		if s, err := client.Get(procCtx(t), extra.IMSI); err != nil || s.SQN == "" || s.SQN == prov.DefaultSQN {
			t.Fatalf("after restart the subscriber's SQN is %q (%v), want it advanced by two registrations", s.SQN, err)
		}
	})
}

// A USIM whose SQN is ahead of the network's rejects the first challenge
// with synch failure; the AUTS resynchronises the UDM's SQN and the second
// challenge succeeds (TS 33.102 6.3.5, TS 24.501 5.4.1.3.7 f).
func TestSynchFailureResynchronises(t *testing.T) {
	forEachSBI(t, func(t *testing.T, mode string) {
		cfg, path := coreConfig(t, t.TempDir(), withSBI(mode))
		startCore(t, cfg, path)
		g := connectGNB(t, cfg)
		f, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
		if err != nil {
			t.Fatal(err)
		}
		imsi, _ := ransim.IMSI(f.FirstIMSI, 30)
		ahead := []byte{0, 0, 0, 0x10, 0, 0} // far beyond the provisioned 000000000020
		ue := g.NewUE(ransim.Subscriber{IMSI: imsi, K: f.K, OPc: f.OPc, SQN: ahead}, f.Conceal)
		if _, err := ue.Register(procCtx(t)); err != nil {
			t.Fatalf("registration after synch failure: %v", err)
		}
		client := adminClient(t, cfg)
		s, err := client.Get(procCtx(t), imsi)
		if err != nil {
			t.Fatal(err)
		}
		if s.SQN <= hex.EncodeToString(ahead) {
			t.Fatalf("SQN at the UDR %s after resynchronisation, want beyond the USIM's %x", s.SQN, ahead)
		}
	})
}

// adminClient is a provisioning client of cfg's UDR with the admin token
// `l25gc up` made in cfg's data dir.
func adminClient(t *testing.T, cfg *config.Config) *prov.Client {
	t.Helper()
	token, err := prov.ReadToken(cfg.AdminTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	return prov.NewClient("http://"+cfg.Addr(cfg.UDR.SBIPort), sbi.NewTCP().RoundTripper(), token)
}
