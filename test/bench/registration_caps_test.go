package bench

import (
	"testing"

	"github.com/l25gc/l25gc/config"
)

// A 20,000-UE burst through the simulator's one gNB must not meet the
// default per-gNB cap; a user's larger caps are kept.
func TestBenchCoreAdmitsTheWholeFleetOnOneGNB(t *testing.T) {
	cfg := config.Default()
	admitOneGNBFleet(cfg, 20000)
	if cfg.AMF.NGAP.MaxUEsPerGNB < 20000 || cfg.AMF.NGAP.MaxUEs < 20000 {
		t.Fatalf("caps %d per gNB, %d in all: a 20000-UE fleet on one gNB is refused",
			cfg.AMF.NGAP.MaxUEsPerGNB, cfg.AMF.NGAP.MaxUEs)
	}
	cfg.AMF.NGAP.MaxUEsPerGNB, cfg.AMF.NGAP.MaxUEs = 50000, 200000
	admitOneGNBFleet(cfg, 100)
	if cfg.AMF.NGAP.MaxUEsPerGNB != 50000 || cfg.AMF.NGAP.MaxUEs != 200000 {
		t.Fatalf("the user's caps were lowered to %d/%d", cfg.AMF.NGAP.MaxUEsPerGNB, cfg.AMF.NGAP.MaxUEs)
	}
}
