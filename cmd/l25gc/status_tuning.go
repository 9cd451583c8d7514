package main

import (
	"fmt"
	"io"

	"github.com/l25gc/l25gc/internal/hosttune"
	"github.com/l25gc/l25gc/node"
)

// printTuning is `l25gc status`'s line on host latency tuning: the knob's
// value now and whether this core set it (config tuning.*).
func printTuning(w io.Writer, st *node.State, knob hosttune.HaltPoll) {
	line := knob.Describe()
	if st.Tuning != nil {
		line += fmt.Sprintf(" (set by this core from tuning.halt_poll_ns; %d is put back on down)", st.Tuning.Previous)
	}
	fmt.Fprintf(w, "host %s\n", line)
}
