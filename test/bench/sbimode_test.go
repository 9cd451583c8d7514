package bench

import (
	"testing"

	"github.com/l25gc/l25gc/config"
)

// One registration run compares security settings as SBI modes.
func TestSBIModeOptions(t *testing.T) {
	cfg := config.Default()
	tr, err := applySBIMode(cfg, "tcp+mtls+nooauth")
	if err != nil || tr != "tcp" || cfg.SBI.Transport != "tcp" || cfg.SBI.TLS != "mutual" || cfg.OAuth2On() {
		t.Errorf("tcp+mtls+nooauth: %q %v, sbi %+v", tr, err, cfg.SBI)
	}
	cfg = config.Default()
	if tr, err := applySBIMode(cfg, "xio"); err != nil || tr != "xio" || !cfg.OAuth2On() || cfg.TLSOn() {
		t.Errorf("xio: %q %v, sbi %+v", tr, err, cfg.SBI)
	}
	if _, err := applySBIMode(config.Default(), "tcp+ssl"); err == nil {
		t.Error("an unknown option was accepted")
	}
}
