package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// TS 38.413 8.7.1.3: a gNB whose tracking area the AMF does not serve gets
// NG Setup Failure; TS 38.413 10.3: malformed NGAP gets Error Indication
// and the association keeps serving its UEs; NG Reset (8.7.4) is
// acknowledged and the UEs can register again.
func TestNGAPFaultsKeepTheAssociationServing(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), nil)
	startCore(t, cfg, path)

	stranger := bench.GNBConfig(cfg, cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport)
	stranger.TAC, stranger.ID = 0x999999, 7
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if g, err := ransim.Connect(ctx, stranger); !errors.Is(err, ransim.ErrNGSetupFailure) {
		if g != nil {
			g.Close()
		}
		t.Fatalf("gNB in an unserved TA: %v, want NG Setup Failure", err)
	}

	g := connectGNB(t, cfg)
	if _, err := newUE(t, cfg, g, 0, "null").Register(procCtx(t)); err != nil {
		t.Fatal(err)
	}
	for _, junk := range [][]byte{{0x00}, {0x00, 0x0f, 0x40, 0xff, 0xff, 0xff}, []byte("definitely not APER")} {
		if err := g.SendRaw(junk, 0); err != nil {
			t.Fatal(err)
		}
	}
	ue := newUE(t, cfg, g, 1, "null")
	if _, err := ue.Register(procCtx(t)); err != nil {
		t.Fatalf("registration after malformed NGAP: %v", err)
	}
	if n := g.ErrorIndications.Load(); n == 0 {
		t.Fatal("malformed NGAP got no Error Indication")
	}
	if err := g.Reset(procCtx(t)); err != nil {
		t.Fatalf("NG Reset: %v", err)
	}
	if _, err := ue.Register(procCtx(t)); err != nil {
		t.Fatalf("registration after NG Reset: %v", err)
	}
}
