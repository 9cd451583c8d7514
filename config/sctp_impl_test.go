package config

import (
	"testing"

	"github.com/l25gc/l25gc/n2"
)

// The AMF's N2 data path over udp and raw is our own unless a file picks
// pion, and the config's default is the transport's own default.
func TestSCTPImplDefaultsToOwnAndPionStaysSelectable(t *testing.T) {
	if got := Default().AMF.NGAP.SCTPImpl; got != n2.ImplOwn {
		t.Fatalf("default sctp_impl %q, want own", got)
	}
	if n2.DefaultSCTPImpl != Default().AMF.NGAP.SCTPImpl {
		t.Fatalf("n2's default %q differs from the config's", n2.DefaultSCTPImpl)
	}
	cfg, err := Parse("node.yaml", []byte("amf:\n  ngap:\n    sctp_impl: pion\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AMF.NGAP.SCTPImpl != "pion" {
		t.Fatalf("sctp_impl %q after a file picked pion", cfg.AMF.NGAP.SCTPImpl)
	}
}
