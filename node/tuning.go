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
func (c *Core) applyTuning() error {
	want := c.cfg.Tuning.HaltPollNs
	if want == nil {
		return nil
	}
	a, err := c.haltPoll().Apply(*want)
	switch {
	case errors.Is(err, hosttune.ErrNoHaltPoll):
		fmt.Fprintf(c.opts.Out, "  tuning.halt_poll_ns: %v\n", err)
		return nil
	case err != nil:
		return fmt.Errorf("node: tuning.halt_poll_ns: %w", err)
	}
	c.tuned = a
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
