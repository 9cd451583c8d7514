package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/free5gc/openapi/models"
)

// NFSpec is what the node config knows of one network function: one row of
// the NF table in package nf/registry, the only place NFs are listed. Its
// defaults, the validation of its ports, the supervisor's start order and
// the README port table all come from it.
type NFSpec struct {
	// Name is the NF in `nfs`, in `l25gc nf NAME`, in logs and in status,
	// and the YAML key of its config section.
	Name string
	// Type is what it registers as with the NRF (TS 29.510 6.1.6.3.3).
	Type models.NrfNfManagementNfType
	// Ports are its default SBI and metrics ports; an SBI port of 0 means
	// the NF serves no SBI (UPF-C: N4 and metrics only).
	Ports NF
	// Extra are the other sockets it binds (the AMF's N2).
	Extra []PortField
	// After are the NFs that serve before it starts (and stop after it).
	After []string
	// Section finds its ports block in a config; nil means the NF block of
	// the section whose YAML key is Name (an NF with no typed section of
	// its own, e.g. a test's, sets it).
	Section func(*Config) *NF
}

// PortField is a socket an NF binds at an IP:port its config holds.
type PortField struct {
	Name string // as users know it, e.g. N2
	Addr string // dotted path of the IP:port field, e.g. amf.ngap.addr
	// Network is tcp, udp, or n2: NGAP's SCTP, kernel or over UDP (RFC
	// 6951), chosen by the field Transport names (n2.Listen).
	Network   string
	Transport string
}

// PortsIn is the ports block of s in c.
func (s NFSpec) PortsIn(c *Config) *NF {
	if s.Section != nil {
		return s.Section(c)
	}
	return sectionPorts(c, s.Key())
}

// Key is the dotted YAML path of the NF's config section: its name, where
// a dash names a nested section (upf-c is upf.c).
func (s NFSpec) Key() string { return strings.ReplaceAll(s.Name, "-", ".") }

// HasSBI reports whether the NF serves an SBI.
func (s NFSpec) HasSBI() bool { return s.Ports.SBIPort != 0 }

// Catalog is the network functions a node can run: Builtin, or Builtin
// with more (tests).
type Catalog []NFSpec

// Lookup finds the NF name.
func (cat Catalog) Lookup(name string) (NFSpec, bool) {
	for _, s := range cat {
		if s.Name == name {
			return s, true
		}
	}
	return NFSpec{}, false
}

// StartOrder lists the NFs so that each comes after those it needs (After),
// otherwise in table order. A node stops them in reverse.
func (cat Catalog) StartOrder() []NFSpec {
	var out []NFSpec
	placed := map[string]bool{}
	for len(out) < len(cat) {
		progress := false
		for _, s := range cat {
			if placed[s.Name] || !allPlaced(s.After, placed, cat) {
				continue
			}
			out, placed[s.Name], progress = append(out, s), true, true
			break // restart from the top: table order among the ready ones
		}
		if !progress {
			break // a cycle; Check reports it
		}
	}
	return out
}

func allPlaced(names []string, placed map[string]bool, cat Catalog) bool {
	for _, n := range names {
		if _, known := cat.Lookup(n); known && !placed[n] {
			return false
		}
	}
	return true
}

// Names are the NFs in start order.
func (cat Catalog) Names() []string {
	var names []string
	for _, s := range cat.StartOrder() {
		names = append(names, s.Name)
	}
	return names
}

// Check reports a table that cannot work: a name twice, a dependency on
// no NF, a dependency cycle, an NF whose config section is not found.
func (cat Catalog) Check() error {
	var errs []error
	seen := map[string]bool{}
	probe := &Config{}
	for _, s := range cat {
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("NF %s is listed twice", s.Name))
		}
		seen[s.Name] = true
		for _, dep := range s.After {
			if _, ok := cat.Lookup(dep); !ok {
				errs = append(errs, fmt.Errorf("NF %s starts after %q, which is no NF", s.Name, dep))
			}
		}
		if s.PortsIn(probe) == nil {
			errs = append(errs, fmt.Errorf("NF %s: the config has no section %q with sbi_port and metrics_port", s.Name, s.Key()))
		}
		for _, x := range s.Extra {
			if _, err := probe.stringAt(x.Addr); err != nil {
				errs = append(errs, fmt.Errorf("NF %s: %s: %w", s.Name, x.Name, err))
			}
		}
	}
	if len(cat.StartOrder()) < len(cat) {
		errs = append(errs, errors.New("the NFs' After lists form a cycle"))
	}
	return errors.Join(errs...)
}

// AllNFs are the network functions of a core, in the order a node starts
// them: the NRF first (everyone registers with it), the AMF last (it
// accepts gNBs once its peers are up).
var AllNFs = Builtin.Names()

// sectionPorts is the NF block of c's section at the dotted YAML path
// key: the section itself when it is an NF, else the NF it embeds; nil if
// none.
func sectionPorts(c *Config, key string) *NF {
	v := reflect.ValueOf(c).Elem()
	for _, k := range strings.Split(key, ".") {
		next, ok := fieldByKey(v, k)
		if !ok {
			return nil
		}
		v = next
	}
	nfType := reflect.TypeOf(NF{})
	if v.Type() == nfType {
		return v.Addr().Interface().(*NF)
	}
	if v.Kind() == reflect.Struct {
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.Anonymous && f.Type == nfType {
				return v.Field(i).Addr().Interface().(*NF)
			}
		}
	}
	return nil
}

// stringAt reads the string field at a dotted YAML path ("amf.ngap.addr").
func (c *Config) stringAt(path string) (string, error) {
	v := reflect.ValueOf(c).Elem()
	for _, key := range strings.Split(path, ".") {
		next, ok := fieldByKey(v, key)
		if !ok {
			return "", fmt.Errorf("no config field %s", path)
		}
		v = next
	}
	if v.Kind() != reflect.String {
		return "", fmt.Errorf("config field %s is not a string", path)
	}
	return v.String(), nil
}

// fieldByKey finds the field of struct v with YAML key key, looking into
// inline fields too.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == key {
			return v.Field(i), true
		}
		if slices.Contains(strings.Split(opts, ","), "inline") {
			if f, ok := fieldByKey(v.Field(i), key); ok {
				return f, true
			}
		}
	}
	return reflect.Value{}, false
}

// AddrOf is the IP:port of the extra socket x in c.
func (c *Config) AddrOf(x PortField) string {
	s, _ := c.stringAt(x.Addr) // Catalog.Check proves the path
	return s
}

// TransportOf is the N2 transport (kernel, udp, auto) of the extra socket x.
func (c *Config) TransportOf(x PortField) string {
	if x.Transport == "" {
		return ""
	}
	s, _ := c.stringAt(x.Transport)
	return s
}
