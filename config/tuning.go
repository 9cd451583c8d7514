package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/l25gc/l25gc/internal/hosttune"
)

// Tuning is the latency tuning of the node: the host's, which `l25gc up`
// applies while the core runs and puts back when it stops (README "Latency
// tuning"; its zero value leaves the host as it is), and its processes' own
// (Procs).
type Tuning struct {
	// HaltPollNs sets the guest haltpoll idle driver's guest_halt_poll_ns
	// (a KVM guest's idle vCPU polls up to that long before it halts, so a
	// wake-up within it costs no VM exit; each idle period then spins up to
	// that long). nil is the default: on a KVM guest whose window is 0
	// (nobody tuned it) hosttune.DefaultHaltPollNs, any other value of the
	// host's left as it is. HaltPollLeave (-1) never touches the host. On
	// a host without the driver (bare metal, other hypervisors) nothing
	// happens; `up` says so when the config asked for a value.
	HaltPollNs *int64 `yaml:"halt_poll_ns,omitempty"`
	// Procs is how many Go Ps (GOMAXPROCS) each NF process runs with.
	Procs Procs `yaml:"procs"`
}

// HaltPollLeave is tuning.halt_poll_ns's value that leaves the host's
// haltpoll window alone, the default's too.
const HaltPollLeave = hosttune.Leave

// Procs is tuning.procs: GOMAXPROCS per NF process. Go gives each process
// one P per CPU; an NF with a second P idle wakes a thread for it at every
// goroutine hand-off (the runtime's wakep, so that P may steal the
// goroutine just made ready), and on a VM each such wake of an idle vCPU
// is a VM exit (~30 µs here). A lone procedure crosses ~40 such
// hand-offs. With one P the goroutine made ready runs on the same thread
// as soon as the current one parks; the node's processes, not one NF's
// Ps, keep the cores busy under load. 0 is Go's default (one per CPU); a
// GOMAXPROCS in an NF's environment stands (the operator's choice).
type Procs struct {
	All int            `yaml:"all"`
	NF  map[string]int `yaml:"nf,omitempty"` // per NF name (e.g. amf: 2)
}

// maxProcs bounds tuning.procs: a typo, not a policy, beyond it.
const maxProcs = 1024

// ProcsFor is NF name's GOMAXPROCS from tuning.procs; 0: Go's default.
func (c *Config) ProcsFor(name string) int {
	if n, ok := c.Tuning.Procs.NF[name]; ok {
		return n
	}
	return c.Tuning.Procs.All
}

// tuning checks the window is one the kernel takes and that is a latency
// setting rather than a vCPU spinning all its idle time.
func (v *validator) tuning(cat Catalog, t Tuning) {
	if t.HaltPollNs != nil && (*t.HaltPollNs < HaltPollLeave || *t.HaltPollNs > hosttune.MaxHaltPollNs) {
		v.fail("tuning.halt_poll_ns", "must be from 0 to %d ns (10 ms), or -1 to leave the host alone, got %d", hosttune.MaxHaltPollNs, *t.HaltPollNs)
	}
	if t.Procs.All < 0 || t.Procs.All > maxProcs {
		v.fail("tuning.procs.all", "must be from 0 (Go's default) to %d, got %d", maxProcs, t.Procs.All)
	}
	names := cat.Names()
	for _, nf := range slices.Sorted(maps.Keys(t.Procs.NF)) {
		field := fmt.Sprintf("tuning.procs.nf.%s", nf)
		switch n := t.Procs.NF[nf]; {
		case !slices.Contains(names, nf):
			v.fail(field, "no NF named %q (want one of %v)", nf, names)
		case n < 0 || n > maxProcs:
			v.fail(field, "must be from 0 (Go's default) to %d, got %d", maxProcs, n)
		}
	}
}
