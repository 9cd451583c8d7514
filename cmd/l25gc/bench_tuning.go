package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/internal/hosttune"
)

// noHaltPoll is --halt-poll-ns's default: leave the host as it is.
const noHaltPoll = -1

// withHaltPoll wraps a benchmark so that --halt-poll-ns N sets the guest
// haltpoll window for its run and puts the host's value back afterwards,
// also when the run fails or is interrupted (README "Latency tuning").
func withHaltPoll(cmd *cobra.Command, knob hosttune.HaltPoll) {
	run := cmd.RunE
	if run == nil {
		return
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		ns, err := c.Flags().GetInt64("halt-poll-ns")
		if err != nil || ns == noHaltPoll {
			return run(c, args)
		}
		applied, err := knob.Apply(ns)
		if err != nil {
			return fmt.Errorf("--halt-poll-ns: %w", err)
		}
		defer func() {
			if _, err := knob.Restore(applied); err != nil {
				fmt.Fprintf(c.ErrOrStderr(), "halt polling not put back to %d: %v\n", applied.Previous, err)
			}
		}()
		return run(c, args)
	}
}

// withHost adds, to each result's JSON object, "host": how the host's
// latency knobs were set during the run (read now, before withHaltPoll puts
// them back), so a result file says what it was measured under.
func withHost[R any](results []R, host hosttune.Record) ([]json.RawMessage, error) {
	rec, err := json.Marshal(host)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(results))
	for i, r := range results {
		obj, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		out[i] = spliceField(obj, "host", rec)
	}
	return out, nil
}

// spliceField adds "name": value as the last field of a JSON object; any
// other JSON value is returned as it is.
func spliceField(obj []byte, name string, value []byte) json.RawMessage {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return obj
	}
	var b bytes.Buffer
	b.Write(obj[:len(obj)-1])
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		b.WriteByte(',')
	}
	fmt.Fprintf(&b, "%q:", name)
	b.Write(value)
	b.WriteByte('}')
	return b.Bytes()
}

// printHost is the line under a benchmark's table that says how the host
// was tuned.
func printHost(w io.Writer, knob hosttune.HaltPoll) {
	fmt.Fprintf(w, "host: %s\n", knob.Describe())
}
