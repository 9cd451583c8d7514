package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/internal/hosttune"
	"github.com/l25gc/l25gc/node"
)

// Every result object in a benchmark's JSON says how the host was tuned,
// and its own fields stay as they were.
func TestBenchJSONRecordsTheHostTuning(t *testing.T) {
	type result struct {
		SBI string  `json:"sbi"`
		P50 float64 `json:"p50"`
	}
	ns := int64(200000)
	got, err := withHost([]result{{"xio", 2.5}, {"tcp", 5}}, hosttune.Record{HaltPollNs: &ns})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"xio", "tcp"} {
		var back struct {
			SBI  string          `json:"sbi"`
			P50  float64         `json:"p50"`
			Host hosttune.Record `json:"host"`
		}
		if err := json.Unmarshal(got[i], &back); err != nil {
			t.Fatalf("%s: %v", got[i], err)
		}
		if back.SBI != want || back.Host.HaltPollNs == nil || *back.Host.HaltPollNs != 200000 {
			t.Fatalf("result %d: %s", i, got[i])
		}
	}
	if s := string(spliceField([]byte("{}"), "host", []byte(`{"x":1}`))); s != `{"host":{"x":1}}` {
		t.Fatalf("empty object: %s", s)
	}
	if s := string(spliceField([]byte("[1]"), "host", []byte(`{}`))); s != "[1]" {
		t.Fatalf("a non-object changed: %s", s)
	}
}

// --halt-poll-ns sets the knob for the run only: the host's value is back
// afterwards, also when the run fails.
func TestBenchHaltPollFlagIsPutBackAfterTheRun(t *testing.T) {
	knob := hosttune.HaltPoll{Path: filepath.Join(t.TempDir(), "guest_halt_poll_ns")}
	if err := os.WriteFile(knob.Path, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var during string
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error {
		data, _ := os.ReadFile(knob.Path)
		during = string(data)
		return os.ErrDeadlineExceeded // a run that failed part-way
	}}
	cmd.Flags().Int64("halt-poll-ns", noHaltPoll, "")
	withHaltPoll(cmd, knob)
	cmd.SetArgs([]string{"--halt-poll-ns", "200000"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err != os.ErrDeadlineExceeded {
		t.Fatalf("run error %v, want the run's own", err)
	}
	if during != "200000" {
		t.Fatalf("during the run the knob held %q, want 200000", during)
	}
	data, _ := os.ReadFile(knob.Path)
	if strings.TrimSpace(string(data)) != "0" {
		t.Fatalf("after the run the knob holds %q, want 0 back", data)
	}
}

// Without --halt-poll-ns a run sets what `up` would (README "Latency
// tuning"): on a guest whose window is 0 the default for the run, put back
// after; a window someone set stays as it is.
func TestBenchWithoutTheFlagSetsTheDefaultOnAGuestAtZero(t *testing.T) {
	for _, c := range []struct{ host, during, after string }{
		{"0", fmt.Sprint(hosttune.DefaultHaltPollNs), "0"},
		{"12345", "12345", "12345"},
	} {
		knob := hosttune.HaltPoll{Path: filepath.Join(t.TempDir(), "guest_halt_poll_ns")}
		if err := os.WriteFile(knob.Path, []byte(c.host+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var during string
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error {
			data, _ := os.ReadFile(knob.Path)
			during = strings.TrimSpace(string(data))
			return nil
		}}
		cmd.Flags().Int64("halt-poll-ns", noHaltPoll, "")
		cmd.Flags().String("config", "", "")
		withHaltPoll(cmd, knob)
		cmd.SetArgs(nil)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(knob.Path)
		if after := strings.TrimSpace(string(data)); during != c.during || after != c.after {
			t.Fatalf("host at %s: the knob held %s during the run and %s after, want %s and %s", c.host, during, after, c.during, c.after)
		}
	}
}

// status names the host's halt polling and, when the core set it, what
// `down` puts back.
func TestStatusSaysHowTheHostIsTuned(t *testing.T) {
	knob := hosttune.HaltPoll{Path: filepath.Join(t.TempDir(), "guest_halt_poll_ns")}
	if err := os.WriteFile(knob.Path, []byte("200000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printTuning(&b, &node.State{Tuning: &hosttune.Applied{HaltPollNs: 200000, Previous: 0}}, knob)
	if s := b.String(); !strings.Contains(s, "guest_halt_poll_ns 200000") || !strings.Contains(s, "0 is put back on down") {
		t.Fatalf("status line %q", s)
	}
	b.Reset()
	printTuning(&b, &node.State{}, hosttune.HaltPoll{Path: filepath.Join(t.TempDir(), "absent")})
	if s := b.String(); !strings.Contains(s, "no haltpoll driver") {
		t.Fatalf("status line without the driver %q", s)
	}
}
