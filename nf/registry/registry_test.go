package registry

import (
	"testing"

	"github.com/l25gc/l25gc/config"
)

// The table is one a node can run: names once, dependencies on NFs of the
// table without a cycle, a config section for each, a way to build each.
func TestTableIsConsistent(t *testing.T) {
	if err := Specs().Check(); err != nil {
		t.Fatal(err)
	}
	for _, e := range Table {
		if (e.New == nil) == (e.Run == nil) {
			t.Errorf("NF %s needs exactly one of a constructor (New) and a Run", e.Name)
		}
		if e.Type == "" {
			t.Errorf("NF %s has no NF type", e.Name)
		}
	}
}

// The default node runs every NF of the table, the NRF first and the AMF
// last, each on its own default ports.
func TestDefaultsComeFromTheTable(t *testing.T) {
	cfg := config.Default()
	if got, want := cfg.NFs, []string{"nrf", "udr", "udm", "ausf", "pcf", "nssf", "upf-c", "upf-u", "smf", "amf"}; !equal(got, want) {
		t.Errorf("default nfs %v, want %v", got, want)
	}
	for _, e := range Table {
		if got := *e.PortsIn(cfg); got != e.Ports {
			t.Errorf("%s: default ports %+v, want %+v", e.Name, got, e.Ports)
		}
	}
	if cfg.AMF.SBIPort != 29518 || cfg.UDM.MetricsPort != 9503 {
		t.Errorf("typed sections not filled: amf %+v udm %+v", cfg.AMF.NF, cfg.UDM.NF)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
