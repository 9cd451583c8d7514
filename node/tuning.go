package node

import (
	"errors"
	"fmt"

	"github.com/l25gc/l25gc/internal/hosttune"
)

// haltPoll is the knob this core tunes: sysfs, or Options.HaltPollPath.
func (c *Core) haltPoll() hosttune.HaltPoll {
	if c.opts.HaltPollPath != "" {
		return hosttune.HaltPoll{Path: c.opts.HaltPollPath}
	}
	return hosttune.Host()
}

// applyTuning sets the host latency tuning the config asks for (config
// tuning.*) and remembers what was there, for Stop (and a `down` after a
// dead supervisor, through State.Tuning) to put back. A host without the
// knob is told and left alone; a knob that cannot be written (no root) is
// an error, so a core never runs untuned under a tuned config.
//
// Without tuning.halt_poll_ns in the config, a KVM guest whose window is 0
// gets hosttune.DefaultHaltPollNs: on this project's 2-core VM it took a
// lone registration over X-IO from about 1.3 to 1.05 ms (README "Latency
// tuning"). A window someone set is theirs and stays; a host without the
// driver or a knob this user cannot write runs the core as it is.
func (c *Core) applyTuning() error {
	knob := c.haltPoll()
	ns, set, byDefault := knob.Wanted(c.cfg.Tuning.HaltPollNs)
	if !set {
		return nil
	}
	a, err := knob.Apply(ns)
	switch {
	case byDefault && err != nil:
		fmt.Fprintf(c.opts.Out, "  host  halt polling left off: %v\n", err)
		return nil
	case errors.Is(err, hosttune.ErrNoHaltPoll):
		fmt.Fprintf(c.opts.Out, "  tuning.halt_poll_ns: %v\n", err)
		return nil
	case err != nil:
		return fmt.Errorf("node: tuning.halt_poll_ns: %w", err)
	}
	c.tuned = a
	if byDefault {
		fmt.Fprintf(c.opts.Out, "  host  halt polling %d ns, the default on a KVM guest at 0 (put back when the core stops; tuning.halt_poll_ns: -1 leaves it)\n", a.HaltPollNs)
		return nil
	}
	fmt.Fprintf(c.opts.Out, "  host  halt polling %d ns (was %d; put back when the core stops)\n", a.HaltPollNs, a.Previous)
	return nil
}

// restoreTuning puts back what applyTuning changed.
func (c *Core) restoreTuning() {
	if c.tuned == nil {
		return
	}
	restored, err := c.haltPoll().Restore(c.tuned)
	switch {
	case err != nil:
		fmt.Fprintf(c.opts.Out, "  host  halt polling not put back: %v\n", err)
	case restored:
		fmt.Fprintf(c.opts.Out, "  host  halt polling back to %d ns\n", c.tuned.Previous)
	default:
		fmt.Fprintf(c.opts.Out, "  host  halt polling changed by someone else since; left as it is\n")
	}
}

// RestoreTuning is `l25gc down`'s clean-up of a core whose supervisor died
// before it put the host back: st.Tuning says what it changed.
func RestoreTuning(st *State) (string, error) {
	if st.Tuning == nil {
		return "", nil
	}
	restored, err := hosttune.Host().Restore(st.Tuning)
	if err != nil || !restored {
		return "", err
	}
	return fmt.Sprintf("halt polling back to %d ns", st.Tuning.Previous), nil
}
