package config

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// XIOSpin is sbi.xio_spin: how long an NF's X-IO poller may keep polling
// its ring after the last message before it sleeps on its doorbell. The
// poller spends the budget only while recent idle gaps show that a
// message (typically a peer's answer) comes within it; otherwise it sleeps
// at once (xio/spin.go). Spinning saves the ~30 µs wake-up of a sleeping
// thread per message; each budget spent for nothing costs that much CPU.
type XIOSpin struct {
	// Budget applies to every NF; 0 never spins.
	Budget time.Duration `yaml:"budget"`
	// NF overrides the budget per NF name (e.g. amf: 100us).
	NF map[string]time.Duration `yaml:"nf,omitempty"`
	// Reply is how long a handler that called a peer may poll for the
	// peer's answer itself while its NF's poller sleeps, instead of
	// waiting for the poller to be woken (xio/reply.go); spent per conn
	// only while its recent answers came within it. 0 (the default)
	// never polls: on a quiet 2-core VM it did not pay (xio/attach.go,
	// defaultReplySpin).
	Reply time.Duration `yaml:"reply"`
	// Doorbell is how an idle poller sleeps: "futex" (blocked in C) or
	// "eventfd" (parked in Go's netpoller, woken through pidfd_getfd
	// copies); "" takes $L25GC_XIO_DOORBELL, else the futex, which
	// measured better (xio/doorbell.go).
	Doorbell string `yaml:"doorbell,omitempty"`
}

// maxXIOSpin bounds a budget: longer spins are a busy core, not a policy.
const maxXIOSpin = 10 * time.Millisecond

// XIOSpinFor is the spin budget of NF name.
func (c *Config) XIOSpinFor(name string) time.Duration {
	if d, ok := c.SBI.XIOSpin.NF[name]; ok {
		return d
	}
	return c.SBI.XIOSpin.Budget
}

// xioSpin checks sbi.xio_spin: budgets within 0..10ms, overrides only for
// NFs of the catalog.
func (v *validator) xioSpin(cat Catalog, s XIOSpin) {
	bad := func(d time.Duration) bool { return d < 0 || d > maxXIOSpin }
	if bad(s.Budget) {
		v.fail("sbi.xio_spin.budget", "must be a duration from 0s to %v, got %v", maxXIOSpin, s.Budget)
	}
	if bad(s.Reply) {
		v.fail("sbi.xio_spin.reply", "must be a duration from 0s to %v, got %v", maxXIOSpin, s.Reply)
	}
	switch s.Doorbell {
	case "", "futex", "eventfd":
	default:
		v.fail("sbi.xio_spin.doorbell", "must be \"futex\" or \"eventfd\", got %q", s.Doorbell)
	}
	names := cat.Names()
	for _, nf := range slices.Sorted(maps.Keys(s.NF)) {
		field := fmt.Sprintf("sbi.xio_spin.nf.%s", nf)
		switch d := s.NF[nf]; {
		case !slices.Contains(names, nf):
			v.fail(field, "no NF named %q (want one of %v)", nf, names)
		case bad(d):
			v.fail(field, "must be a duration from 0s to %v, got %v", maxXIOSpin, d)
		}
	}
}
