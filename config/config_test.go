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
		{"unknown field", "amf:\n  ngapp: {}\n", "node.yaml:2: field ngapp not found"},
		{"wrong type", "amf:\n  sbi_port: eighty\n", "node.yaml:2: cannot unmarshal"},
		{"nested key", "udm:\n  suci_keys:\n    - id: 1\n      scheme: profile_c\n      private_key: \"00\"\n", "node.yaml:4: udm.suci_keys[0].scheme"},
		{"port clash", "ausf:\n  sbi_port: 29510\n", "node.yaml:2: ausf.sbi_port: port 29510 is already used by nrf.sbi_port"},
		{"syntax", "plmn: [\n", "node.yaml: "},
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
