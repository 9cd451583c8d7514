package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/internal/hosttune"
)

// noHaltPoll is --halt-poll-ns's default: what the node config sets.
const noHaltPoll = -1

// withHaltPoll wraps a benchmark so that the guest haltpoll window is set
// once for its whole run and the host's value put back afterwards, also
// when the run fails or is interrupted (README "Latency tuning"): --halt-poll-ns
// N when given, else what the node config makes `l25gc up` set (its
// tuning.halt_poll_ns, or the default on a KVM guest at 0). The cores the
// run starts leave the host to it (benchRun), so each core, the table's
// host line and the JSON's "host" all see the one setting.
func withHaltPoll(cmd *cobra.Command, knob hosttune.HaltPoll) {
	run := cmd.RunE
	if run == nil {
		return
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		ns, err := c.Flags().GetInt64("halt-poll-ns")
		if err != nil {
			return run(c, args)
		}
		flag := ns != noHaltPoll
		var set, byDefault bool
		if flag {
			set = true
		} else {
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			ns, set, byDefault = knob.Wanted(cfg.Tuning.HaltPollNs)
		}
		if !set {
			return run(c, args)
		}
		applied, err := knob.Apply(ns)
		switch {
		case err != nil && byDefault:
			fmt.Fprintf(c.ErrOrStderr(), "halt polling left off: %v\n", err)
			return run(c, args)
		case errors.Is(err, hosttune.ErrNoHaltPoll) && !flag:
			return run(c, args)
		case err != nil && flag:
			return fmt.Errorf("--halt-poll-ns: %w", err)
		case err != nil:
			return fmt.Errorf("tuning.halt_poll_ns: %w", err)
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
