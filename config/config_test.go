package config

import (
	"strings"
	"testing"
)

func TestDefaultsAreValid(t *testing.T) {
	if err := Default().validate("defaults", nil); err != nil {
		t.Fatalf("built-in defaults do not validate: %v", err)
	}
}

func TestFileOverridesOnlyWhatItNames(t *testing.T) {
	cfg, err := Parse("node.yaml", []byte("plmn: {mcc: \"001\", mnc: \"01\"}\namf:\n  ngap:\n    transport: udp\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PLMN.String() != "00101" || cfg.AMF.NGAP.Transport != "udp" {
		t.Errorf("override lost: plmn %s transport %s", cfg.PLMN, cfg.AMF.NGAP.Transport)
	}
	if cfg.AMF.NGAP.Addr != "127.0.0.1:38412" || cfg.AMF.NAS.T3550.Seconds() != 6 {
		t.Errorf("defaults lost: %+v", cfg.AMF)
	}
}

func TestErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"bad enum", "sbi:\n  transport: sctp\n", "node.yaml:2: sbi.transport: must be one of"},
		{"bad list item", "tacs:\n  - \"000001\"\n  - \"zz\"\n", "node.yaml:3: tacs[1]: want 6 hex digits"},
		{"unknown field", "amf:\n  ngapp: {}\n", "node.yaml:2: amf.ngapp: unknown field; known here:"},
		{"unknown field lists the keys", "amf:\n  ngapp: {}\n", "ngap, nas, network_name"},
		{"unknown nested field", "udm:\n  suci_keys:\n    - id: 1\n      schem: profile_a\n", "node.yaml:4: udm.suci_keys[0].schem: unknown field; known here: id, scheme, private_key"},
		{"wrong type", "amf:\n  sbi_port: eighty\n", `node.yaml:2: amf.sbi_port: want an integer, got "eighty"`},
		{"wrong type in a flow mapping", "nrf: {sbi_port: 29510, metrics_port: ninety}\n", `node.yaml:1: nrf.metrics_port: want an integer, got "ninety"`},
		{"same wrong value twice on a line", "nrf: {sbi_port: x, metrics_port: x}\n", "node.yaml:1: nrf.sbi_port: want an integer, got \"x\"\nnode.yaml:1: nrf.metrics_port: want an integer"},
		{"long wrong value", "amf:\n  nas:\n    t3550: six seconds please\n", `node.yaml:3: amf.nas.t3550: want a duration such as 6s, got "six seconds please"`},
		{"list for a string", "tacs:\n  - [1]\n", "node.yaml:2: tacs[0]: want a string, got a list"},
		{"scalar for a mapping", "amf:\n  guami: 5\n", `node.yaml:2: amf.guami: want a mapping, got "5"`},
		{"duplicate key", "amf:\n  name: a\n  name: b\n", "node.yaml:3: amf.name: given twice (first at line 2)"},
		{"nested key", "udm:\n  suci_keys:\n    - id: 1\n      scheme: profile_c\n      private_key: \"00\"\n", "node.yaml:4: udm.suci_keys[0].scheme"},
		{"port clash", "ausf:\n  sbi_port: 29510\n", "node.yaml:2: ausf.sbi_port: port 29510 is already used by nrf.sbi_port"},
		{"syntax", "plmn: [\n", "node.yaml: "},
		{"no N2 associations", "amf:\n  ngap:\n    max_associations: 0\n", "node.yaml:3: amf.ngap.max_associations: must be in 1..1048576, got 0"},
		{"N2 transport", "amf:\n  ngap:\n    transport: sctp\n", "amf.ngap.transport: must be one of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("node.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want it to contain %q", err, c.want)
			}
		})
	}
}
