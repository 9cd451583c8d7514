// Package registry is the NF table: the one place that lists the network
// functions of L25GC+. Adding an NF is one entry here (plus its typed config
// section in package config when it has settings beyond its ports):
// `l25gc nf NAME` builds it from the entry, and the config defaults and
// validation, the supervisor's start and stop order (package node), `l25gc
// status` and the README port table come from the entry's spec.
//
// Package config cannot import this one (every NF imports config), so it
// holds a generated copy of the specs, config.Builtin; a test here fails
// when the copy or the README drift, and `go generate ./nf/registry`
// rewrites both.
package registry

//go:generate go test -run TestGeneratedCopiesMatchTheTable -update

import (
	"context"
	"log/slog"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/n2"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/amf"
	"github.com/l25gc/l25gc/nf/ausf"
	"github.com/l25gc/l25gc/nf/nrf"
	"github.com/l25gc/l25gc/nf/nssf"
	"github.com/l25gc/l25gc/nf/pcf"
	"github.com/l25gc/l25gc/nf/smf"
	"github.com/l25gc/l25gc/nf/udm"
	"github.com/l25gc/l25gc/nf/udr"
	"github.com/l25gc/l25gc/protocol/pfcpx"
	upfc "github.com/l25gc/l25gc/upf/c"
	"github.com/l25gc/l25gc/upf/shm"
	"github.com/l25gc/l25gc/upf/u"
)

// Entry is one network function: its spec and how to build it in an `l25gc
// nf NAME` process. (An NF that is not a Go process, like the DPDK UPF-U
// to come, will carry how to run it instead of New.)
type Entry struct {
	config.NFSpec
	New func(*nf.Env) (nf.Function, error)
	// Run, set instead of New, runs an NF that is not an nf.Function.
	Run Process
}

// Process runs an NF that is no nf.Function (UPF-U, a DPDK forwarder with
// no SBI) until ctx ends.
type Process func(ctx context.Context, cfg *config.Config, log *slog.Logger) error

// Table lists the NFs in start order; After says what each needs serving
// first (TS 23.501 6.2: every NF registers with the NRF; the AMF serves
// gNBs only once AUSF, UDM, PCF and NSSF answer).
var Table = []Entry{
	{config.NFSpec{Name: "nrf", Type: models.NrfNfManagementNfType_NRF,
		Ports: config.NF{SBIPort: 29510, MetricsPort: 9510}},
		func(e *nf.Env) (nf.Function, error) { return nrf.New(e) }, nil},
	{config.NFSpec{Name: "udr", Type: models.NrfNfManagementNfType_UDR,
		Ports: config.NF{SBIPort: 29504, MetricsPort: 9504},
		After: []string{"nrf"}},
		func(e *nf.Env) (nf.Function, error) { return udr.New(e) }, nil},
	{config.NFSpec{Name: "udm", Type: models.NrfNfManagementNfType_UDM,
		Ports: config.NF{SBIPort: 29503, MetricsPort: 9503},
		After: []string{"nrf", "udr"}},
		func(e *nf.Env) (nf.Function, error) { return udm.New(e) }, nil},
	{config.NFSpec{Name: "ausf", Type: models.NrfNfManagementNfType_AUSF,
		Ports: config.NF{SBIPort: 29509, MetricsPort: 9509},
		After: []string{"nrf", "udm"}},
		func(e *nf.Env) (nf.Function, error) { return ausf.New(e) }, nil},
	{config.NFSpec{Name: "pcf", Type: models.NrfNfManagementNfType_PCF,
		Ports: config.NF{SBIPort: 29507, MetricsPort: 9507},
		After: []string{"nrf", "udr"}},
		func(e *nf.Env) (nf.Function, error) { return pcf.New(e) }, nil},
	{config.NFSpec{Name: "nssf", Type: models.NrfNfManagementNfType_NSSF,
		Ports: config.NF{SBIPort: 29531, MetricsPort: 9531},
		After: []string{"nrf"}},
		func(e *nf.Env) (nf.Function, error) { return nssf.New(e) }, nil},
	// UPF-C: N4 (PFCP over UDP 8805, TS 29.244 4.2.2; over X-IO too on
	// an X-IO node) and metrics, no SBI. Its rules go to an in-memory
	// table until upf/shm is merged: then Options{Table: <upf/shm's
	// rules.Table>} here.
	{config.NFSpec{Name: "upf-c", Type: models.NrfNfManagementNfType_UPF,
		Ports: config.NF{MetricsPort: 9805},
		Extra: []config.PortField{{Name: "N4", Addr: "upf.c.pfcp_addr", Network: "udp"}}},
		func(e *nf.Env) (nf.Function, error) {
			// The rules go to the shared tables UPF-U forwards with
			// (upf/shm; whichever of the two starts first creates them).
			t, err := shm.Open(shm.ConfigFor(e.Config))
			if err != nil {
				return nil, err
			}
			return upfc.NewWithOptions(e, upfc.Options{Table: t})
		}, nil},
	// UPF-U: GTP-U on N3, IP on N6 (DPDK; the lab veths `l25gc up` builds
	// when upf.n3.port/upf.n6.port are empty), metrics, no SBI.
	{NFSpec: config.NFSpec{Name: "upf-u", Type: models.NrfNfManagementNfType_UPF,
		Ports: config.NF{MetricsPort: 9806}},
		Run: u.RunNF},
	{config.NFSpec{Name: "smf", Type: models.NrfNfManagementNfType_SMF,
		Ports: config.NF{SBIPort: 29502, MetricsPort: 9502},
		// TS 23.502 4.3.2.2.1: sm-data and UECM from the UDM, SM policy from
		// the PCF, N4 to UPF-C (PFCP, protocol/pfcpx).
		After: []string{"nrf", "udm", "pcf", "upf-c"}},
		func(e *nf.Env) (nf.Function, error) {
			return smf.NewWithOptions(e, smf.Options{N4: pfcpx.NewClient(pfcpx.ClientConfigFor(e.Config, e.Log))})
		}, nil},
	{config.NFSpec{Name: "amf", Type: models.NrfNfManagementNfType_AMF,
		Ports: config.NF{SBIPort: 29518, MetricsPort: 9518},
		// N2: NGAP over SCTP, TS 38.412 7.
		Extra: []config.PortField{{Name: "N2", Addr: "amf.ngap.addr", Network: "n2", Transport: "amf.ngap.transport"}},
		After: []string{"nrf", "ausf", "udm", "pcf", "nssf", "smf"}},
		func(e *nf.Env) (nf.Function, error) {
			ngap := e.Config.AMF.NGAP
			o := n2.Options{Metrics: n2.NewMetrics(e.Registry), MaxAssociations: ngap.MaxAssociations, MaxMessageSize: ngap.MaxMessageSize, SCTPImpl: ngap.SCTPImpl}
			return amf.NewWithOptions(e, amf.Options{Listen: amf.AdaptListen(o.Listen)})
		}, nil},
}

// Specs are the table's specs, what package config and node work from.
func Specs() config.Catalog {
	cat := make(config.Catalog, len(Table))
	for i, e := range Table {
		cat[i] = e.NFSpec
	}
	return cat
}

// Lookup finds the NF name.
func Lookup(name string) (Entry, bool) {
	for _, e := range Table {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Names are the NFs of the table in its order.
func Names() []string {
	names := make([]string, len(Table))
	for i, e := range Table {
		names[i] = e.Name
	}
	return names
}
