package config

import (
	"fmt"
	"strings"
	"testing"
)

// subscriberRange is a subscribers list of one range with the default keys.
func subscriberRange(imsi string, count int) string {
	return fmt.Sprintf("subscribers:\n  - imsi: %q\n    count: %d\n    k: %s\n    opc: %s\n    sqn: \"000000000020\"\n    amf: \"8000\"\n",
		imsi, count, DefaultK, DefaultOPc)
}

// Values that decode but make no sense for a running core are refused at
// load, naming the file, the line and the field, rather than failing later
// in an NF or silently misbehaving.
func TestValidateRefusesNonsense(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"validity period zero", "nrf: {validity_period: 0s}\n", "node.yaml:1: nrf.validity_period: must be at least 1s"},
		{"validity period under a second", "nrf:\n  validity_period: 500ms\n", "node.yaml:2: nrf.validity_period: must be at least 1s"},
		{"validity period not whole seconds", "nrf:\n  validity_period: 1500ms\n", "node.yaml:2: nrf.validity_period: must be whole seconds"},
		{"validity period beyond int32 seconds", "nrf:\n  validity_period: 1000000h\n", "node.yaml:2: nrf.validity_period: must be at most"},
		{"metrics port zero", "amf:\n  metrics_port: 0\n", "node.yaml:2: amf.metrics_port: must be in 1..65535, got 0"},
		{"sbi port zero", "udr:\n  sbi_port: 0\n", "node.yaml:2: udr.sbi_port: must be in 1..65535, got 0"},
		{"metrics port on another NF's sbi port", "amf:\n  sbi_port: 29518\npcf:\n  metrics_port: 29518\n",
			"node.yaml:4: pcf.metrics_port: port 29518 is already used by amf.sbi_port (line 2)"},
		{"port clash with a default", "pcf:\n  sbi_port: 9510\n", "node.yaml:2: pcf.sbi_port: port 9510 is already used by nrf.metrics_port"},
		{"subscriber range past 15 digits", subscriberRange("999999999999990", 11),
			"node.yaml:3: subscribers[0].count: 11 IMSIs from 999999999999990 go past 999999999999999"},
		{"subscriber range leaves its MCC-MNC", subscriberRange("208939999999999", 2),
			"node.yaml:3: subscribers[0].count: 2 IMSIs from 208939999999999 go past 208939999999999"},
		{"subscriber count zero", subscriberRange("208930000000001", 0), "node.yaml:3: subscribers[0].count: must be at least 1"},
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

// Edge values that are sensible load.
func TestValidateAcceptsEdges(t *testing.T) {
	for name, yaml := range map[string]string{
		"validity period of one second": "nrf: {validity_period: 1s}\n",
		"range up to the last MSIN":     subscriberRange("208939999999990", 10),
	} {
		if _, err := Parse("node.yaml", []byte(yaml)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
