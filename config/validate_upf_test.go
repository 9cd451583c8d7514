package config

import (
	"strings"
	"testing"
)

// UPF-C's settings are refused at load when they cannot work, naming the
// file, line and field: an SBI port on an NF without SBI, an N4 address
// that is no IPv4:port, PFCP timers out of range, no room for sessions.
func TestValidateRefusesBadUPFC(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"SBI port on UPF-C", "upf:\n  c:\n    sbi_port: 29805\n", "node.yaml:3: upf.c.sbi_port: upf-c serves no SBI"},
		{"metrics port zero", "upf:\n  c:\n    metrics_port: 0\n", "node.yaml:3: upf.c.metrics_port: must be in 1..65535, got 0"},
		{"metrics port on the AMF's", "upf:\n  c:\n    metrics_port: 9518\n", "node.yaml:3: upf.c.metrics_port: port 9518 is already used by amf.metrics_port"},
		{"N4 address a name", "upf:\n  c:\n    pfcp_addr: upf.local:8805\n", `node.yaml:3: upf.c.pfcp_addr: want IPv4:port`},
		{"N4 port zero", "upf:\n  c:\n    pfcp_addr: 127.0.0.1:0\n", `node.yaml:3: upf.c.pfcp_addr: want IPv4:port`},
		{"T1 zero", "upf:\n  c:\n    t1: 0s\n", "node.yaml:3: upf.c.t1: must be a positive duration up to 1m"},
		{"N1 zero", "upf:\n  c:\n    n1: 0\n", "node.yaml:3: upf.c.n1: must be in 1..10, got 0"},
		{"no session", "upf:\n  max_sessions: 0\n", "node.yaml:2: upf.max_sessions: must be in 1..16777216, got 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("node.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want it to contain %q", err, c.want)
			}
		})
	}
	cfg, err := Parse("node.yaml", []byte("nfs: [upf-c]\nsbi: {nrf_uri: \"http://10.0.0.1:29510\"}\nupf:\n  c: {pfcp_addr: 0.0.0.0:8805, t1: 500ms, n1: 1}\n"))
	if err != nil {
		t.Fatalf("a node running UPF-C alone: %v", err)
	}
	if spec, _ := Builtin.Lookup("upf-c"); spec.PortsIn(cfg) != &cfg.UPF.C.NF || spec.HasSBI() {
		t.Fatal("upf-c's section is not upf.c, or it has an SBI")
	}
}
