package config

import "github.com/l25gc/l25gc/internal/hosttune"

// Tuning is the host latency tuning `l25gc up` applies while the core runs
// and puts back when it stops (README "Latency tuning"). Every field's
// zero value leaves the host as it is.
type Tuning struct {
	// HaltPollNs sets the guest haltpoll idle driver's guest_halt_poll_ns
	// (a KVM guest's idle vCPU polls that long before it halts, so a
	// wake-up within it costs no VM exit; each idle period then spins up to
	// that long). nil leaves the host alone; on a host without the driver
	// (bare metal, other hypervisors) `up` says so and does nothing.
	HaltPollNs *int64 `yaml:"halt_poll_ns,omitempty"`
}

// tuning checks the window is one the kernel takes and that is a latency
// setting rather than a vCPU spinning all its idle time.
func (v *validator) tuning(t Tuning) {
	if t.HaltPollNs != nil && (*t.HaltPollNs < 0 || *t.HaltPollNs > hosttune.MaxHaltPollNs) {
		v.fail("tuning.halt_poll_ns", "must be from 0 to %d ns (10 ms), got %d", hosttune.MaxHaltPollNs, *t.HaltPollNs)
	}
}
