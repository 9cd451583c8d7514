package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/test/bench"
)

// runCmd runs `l25gc args...` with the ransim and bench commands.
func runCmd(args ...string) (string, error) {
	root := &cobra.Command{Use: "l25gc", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().String("config", "", "")
	root.AddCommand(newRansimCmd(), newBenchCmd())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// The PDU flags are checked before any connection is tried (the AMF
// address here would refuse it).
func TestRansimRefusesPDUFlagsThatCannotWork(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tun"}, "--tun and --hold need --pdu"},
		{[]string{"--hold", "1m"}, "--tun and --hold need --pdu"},
		{[]string{"--pdu", "--n3", "gnb"}, `--n3 "gnb": want an IPv4 address`},
		{[]string{"--pdu", "--n3", "2001:db8::1"}, "want an IPv4 address"},
		{[]string{"--pdu", "--hold", "-1s"}, "--hold: want a duration of 0 or more"},
		{[]string{"--pdu", "--deregister"}, "--deregister and --pdu do not go together"},
	} {
		_, err := runCmd(append([]string{"ransim", "--amf", "127.0.0.1:1"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ransim %v: err %v, want %q", c.args, err, c.want)
		}
	}
}

func TestRansimHelpNamesThePDUFlagsAndDefaults(t *testing.T) {
	out, err := runCmd("ransim", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--pdu", "--tun", "--hold", `--dnn string`, `(default "internet")`, `(default "10.100.0.2")`, "l25gc-ue1"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchPDURefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ues", "1,0"}, "want positive numbers"},
		{[]string{"--n3", "nowhere"}, `--n3 "nowhere": want an IPv4 address`},
	} {
		_, err := runCmd(append([]string{"bench", "pdu"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bench pdu %v: err %v, want %q", c.args, err, c.want)
		}
	}
	out, err := runCmd("bench", "pdu", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--sbi", "--concurrency", "pdu_session_release", `(default "10.100.0.2")`, "SVG"} {
		if !strings.Contains(out, want) {
			t.Errorf("bench pdu help lacks %q", want)
		}
	}
}

// Both latency benchmarks write the JSON and, next to it, a chart per procedure.
func TestLatencyReportWritesJSONAndCharts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "reg.json")
	results := []bench.Result{{Procedure: "registration", SBI: "xio", UEs: 1, Succeeded: 1, LatencyMS: bench.Latency{P50: 1, P99: 2}}}
	var out bytes.Buffer
	if err := reportWithCharts(&out, results, nil, path); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, filepath.Join(dir, "reg-registration.svg")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s not written: %v\n%s", f, err, out.String())
		}
	}
}
