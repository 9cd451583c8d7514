package config

import (
	"strings"
	"testing"
)

// A table a node cannot run is refused with what is wrong in it.
func TestCatalogCheckNamesWhatIsWrong(t *testing.T) {
	cases := []struct {
		name string
		cat  Catalog
		want string
	}{
		{"dependency on no NF", Catalog{{Name: "nrf", After: []string{"nssf"}}}, `NF nrf starts after "nssf", which is no NF`},
		{"cycle", Catalog{{Name: "nrf", After: []string{"amf"}}, {Name: "amf", After: []string{"nrf"}}}, "form a cycle"},
		{"no config section", Catalog{{Name: "nwdaf"}}, `the config has no section "nwdaf"`},
		{"name twice", Catalog{{Name: "nrf"}, {Name: "nrf"}}, "NF nrf is listed twice"},
		{"extra socket on no field", Catalog{{Name: "amf", Extra: []PortField{{Name: "N2", Addr: "amf.n2.addr"}}}}, "NF amf: N2: no config field amf.n2.addr"},
	}
	for _, c := range cases {
		if err := c.cat.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	if err := Builtin.Check(); err != nil {
		t.Errorf("the built-in table: %v", err)
	}
}

// Each NF starts after what it needs, otherwise in table order.
func TestStartOrderPutsDependenciesFirst(t *testing.T) {
	cat := Catalog{{Name: "amf", After: []string{"ausf"}}, {Name: "ausf", After: []string{"nrf"}}, {Name: "nrf"}, {Name: "pcf"}}
	if got := strings.Join(cat.Names(), " "); got != "nrf ausf amf pcf" {
		t.Errorf("start order %q, want nrf ausf amf pcf", got)
	}
}

// An NF's ports and extra sockets are found in its section by YAML key.
func TestSpecsFindTheirSections(t *testing.T) {
	c := Default()
	amf, _ := Builtin.Lookup("amf")
	if p := amf.PortsIn(c); p != &c.AMF.NF {
		t.Errorf("amf ports at %p, want the AMF section's %p", p, &c.AMF.NF)
	}
	if ausf, _ := Builtin.Lookup("ausf"); ausf.PortsIn(c) != &c.AUSF {
		t.Error("ausf ports not the AUSF section")
	}
	if got := c.AddrOf(amf.Extra[0]); got != c.AMF.NGAP.Addr {
		t.Errorf("N2 address %q, want %q", got, c.AMF.NGAP.Addr)
	}
	if got := c.TransportOf(amf.Extra[0]); got != "auto" {
		t.Errorf("N2 transport %q", got)
	}
}
