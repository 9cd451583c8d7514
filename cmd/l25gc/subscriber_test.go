package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/udr"
	"github.com/l25gc/l25gc/sbi"
)

// runSubscriber runs `l25gc subscriber args...` against the UDR at url
// (with the admin token file of the config, unless args name one).
func runSubscriber(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "l25gc", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().String("config", "", "")
	root.AddCommand(newSubscriberCmd())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"subscriber", "--udr", url, "--token-file", tokenFile}, args...))
	err := root.Execute()
	return out.String(), err
}

// tokenFile is the admin token file runSubscriber passes.
var tokenFile string

// serveUDR serves a UDR over a fresh data dir and points tokenFile at its
// admin token; it returns the UDR's URL.
func serveUDR(t *testing.T) string {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	tokenFile = cfg.AdminTokenPath()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := udr.OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := udr.NewWithStore(&nf.Env{Config: cfg, Log: log}, st)
	t.Cleanup(func() { u.Stop(context.Background()) })
	// The real SBI server (h2c, as the CLI's client speaks), not httptest's.
	srv, err := sbi.NewTCP().Serve("127.0.0.1:0", sbi.Handler(u.Handler(), nil, log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return "http://" + srv.Addr()
}

func TestSubscriberCommands(t *testing.T) {
	url := serveUDR(t)

	keys := []string{"--k", config.DefaultK, "--opc", config.DefaultOPc}
	out, err := runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000001", "--snssai", "1/010203", "--dnn", "internet", "--sqn", "000000000020"}, keys...)...)
	if err != nil || !strings.Contains(out, "208930000000001") || !strings.Contains(out, "1/010203") {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err = runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000100", "--count", "50"}, keys...)...)
	if err != nil || !strings.Contains(out, "added 50 subscribers") {
		t.Fatalf("add --count 50: %v\n%s", err, out)
	}
	if _, err := runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000001"}, keys...)...); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("add of an existing IMSI: %v, want a 409", err)
	}
	if _, err := runSubscriber(t, url, "add", "--imsi", "208930000000002", "--k", config.DefaultK); err == nil {
		t.Fatal("add without OPc or OP succeeded")
	}

	out, err = runSubscriber(t, url, "list", "--limit", "3")
	if err != nil || strings.Count(out, "20893000000") != 3 || !strings.Contains(out, "3 of 51 subscribers") {
		t.Fatalf("list --limit 3: %v\n%s", err, out)
	}
	out, err = runSubscriber(t, url, "list", "--all")
	if err != nil || !strings.Contains(out, "51 of 51 subscribers") {
		t.Fatalf("list --all: %v\n%s", err, out)
	}
	out, err = runSubscriber(t, url, "show", "208930000000001", "--show-keys")
	if err != nil || !strings.Contains(out, "000000000020") || !strings.Contains(out, "opc:"+config.DefaultOPc) || !strings.Contains(out, config.DefaultK) {
		t.Fatalf("show --show-keys: %v\n%s", err, out)
	}

	out, err = runSubscriber(t, url, "delete", "208930000000100", "--count", "50")
	if err != nil || !strings.Contains(out, "deleted 50") {
		t.Fatalf("delete --count 50: %v\n%s", err, out)
	}
	if _, err := runSubscriber(t, url, "show", "208930000000100"); err == nil || !strings.Contains(err.Error(), "USER_NOT_FOUND") {
		t.Fatalf("show of a deleted subscriber: %v, want USER_NOT_FOUND", err)
	}
}

// With the admin token, list, show and add print K and OPc only when asked
// (--show-keys); without the token nothing is shown at all.
func TestSubscriberKeysAreRedactedAndNeedTheToken(t *testing.T) {
	url := serveUDR(t)
	keys := []string{"--k", config.DefaultK, "--opc", config.DefaultOPc}
	for _, args := range [][]string{
		append([]string{"add", "--imsi", "208930000000001"}, keys...),
		{"list"},
		{"show", "208930000000001"},
	} {
		out, err := runSubscriber(t, url, args...)
		if err != nil || !strings.Contains(out, "208930000000001") || !strings.Contains(out, redacted) ||
			strings.Contains(out, config.DefaultK) || strings.Contains(out, config.DefaultOPc) {
			t.Errorf("%s: %v\n%s\nwant the subscriber with its keys %s", args[0], err, out, redacted)
		}
	}
	out, err := runSubscriber(t, url, "list", "--show-keys")
	if err != nil || !strings.Contains(out, config.DefaultK) || !strings.Contains(out, config.DefaultOPc) {
		t.Errorf("list --show-keys: %v\n%s", err, out)
	}

	wrong := filepath.Join(t.TempDir(), "wrong.token")
	if err := os.WriteFile(wrong, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list", "--show-keys"}, {"show", "208930000000001", "--show-keys"}} {
		out, err := runSubscriber(t, url, append(args, "--token-file", wrong)...)
		if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(out, config.DefaultK) {
			t.Errorf("%s with a wrong token: %v\n%s\nwant a 401 and no keys", args[0], err, out)
		}
	}
	if _, err := runSubscriber(t, url, "list", "--token-file", filepath.Join(t.TempDir(), "absent")); err == nil || !strings.Contains(err.Error(), "admin token") {
		t.Errorf("list without a token file: %v, want an error naming the admin token", err)
	}
}

// --count below 1 is an error (it used to add one subscriber); a range goes
// in batches with progress; a batch over the UDR's cap fails saying how
// many were added.
func TestSubscriberAddCountIsBounded(t *testing.T) {
	url := serveUDR(t)
	keys := []string{"--k", config.DefaultK, "--opc", config.DefaultOPc}
	for _, n := range []string{"0", "-5"} {
		_, err := runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000001", "--count", n}, keys...)...)
		if err == nil || !strings.Contains(err.Error(), "--count "+n+": must be 1 or more") {
			t.Errorf("--count %s: %v, want a refusal", n, err)
		}
	}
	if out, _ := runSubscriber(t, url, "list"); !strings.Contains(out, "0 of 0 subscribers") {
		t.Fatalf("refused adds stored something:\n%s", out)
	}
	out, err := runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000001", "--count", "2500", "--batch", "1000"}, keys...)...)
	if err != nil || !strings.Contains(out, "1000 of 2500 done") || !strings.Contains(out, "2000 of 2500 done") || !strings.Contains(out, "added 2500 subscribers") {
		t.Fatalf("add --count 2500 --batch 1000: %v\n%s", err, out)
	}
	_, err = runSubscriber(t, url, append([]string{"add", "--imsi", "208930000010001", "--count", "10002", "--batch", "10001"}, keys...)...)
	if err == nil || !strings.Contains(err.Error(), "after adding 0 of 10002") || !strings.Contains(err.Error(), "BULK_TOO_LARGE") {
		t.Fatalf("a batch over udr.max_bulk: %v, want BULK_TOO_LARGE after adding 0", err)
	}
}

// The session QoS flags go to the UDR and come back in `show`; a bad value
// is refused naming its flag, before any request.
func TestSubscriberSessionQoSFlags(t *testing.T) {
	url := serveUDR(t)
	keys := []string{"--k", config.DefaultK, "--opc", config.DefaultOPc}
	args := append([]string{"add", "--imsi", "208930000000001", "--dnn", "internet", "--dnn", "ims",
		"--session-ambr-ul", "100 Mbps", "--session-ambr-dl", "300 Mbps", "--5qi", "8", "--arp", "2"}, keys...)
	if out, err := runSubscriber(t, url, args...); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err := runSubscriber(t, url, "show", "208930000000001")
	if err != nil || !strings.Contains(out, "up 100 Mbps, down 300 Mbps") || !strings.Contains(out, "5QI 8, ARP 2") || !strings.Contains(out, "ims,internet") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	if _, err := runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000002", "--5qi", "9"}, keys...)...); err != nil {
		t.Fatal(err)
	}
	out, err = runSubscriber(t, url, "show", "208930000000002")
	if err != nil || !strings.Contains(out, "up 1 Gbps, down 2 Gbps") || !strings.Contains(out, "5QI 9, ARP 8") {
		t.Fatalf("show of a subscriber with only --5qi: %v\n%s\nwant the defaults for the rest", err, out)
	}
	for flag, v := range map[string]string{"--session-ambr-ul": "100", "--session-ambr-dl": "1 gbps", "--5qi": "1", "--arp": "16"} {
		_, err := runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000003", flag, v}, keys...)...)
		if err == nil || !strings.HasPrefix(err.Error(), flag+":") {
			t.Errorf("%s %q: %v, want an error naming the flag", flag, v, err)
		}
	}
	if _, err := runSubscriber(t, url, "show", "208930000000003"); err == nil {
		t.Error("a refused add stored the subscriber")
	}
}

func TestSubscriberQosFlowFlag(t *testing.T) {
	url := serveUDR(t)
	keys := []string{"--k", config.DefaultK, "--opc", config.DefaultOPc}
	args := append([]string{"add", "--imsi", "208930000000001",
		"--qos-flow", "filter=10.200.0.2;5qi=2;mbr=5 Mbps/5 Mbps;gbr=2 Mbps/2 Mbps",
		"--qos-flow", "filter=permit out udp from 10.200.0.0/24 5000,5001 to assigned; 5qi=7; precedence=20; dnn=internet"}, keys...)
	if out, err := runSubscriber(t, url, args...); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err := runSubscriber(t, url, "show", "208930000000001")
	if err != nil || !strings.Contains(out, "filter=10.200.0.2;5qi=2;mbr=5 Mbps/5 Mbps;gbr=2 Mbps/2 Mbps;precedence=128") ||
		!strings.Contains(out, "filter=permit out udp from 10.200.0.0/24 5000,5001 to assigned;5qi=7;precedence=20;dnn=internet") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	for v, want := range map[string]string{
		"filter=10.200.0.2":                 "filter and 5qi are needed",
		"filter=10.200.0.2;5qi=1":           "gbr: 5QI 1 is a GBR 5QI",
		"filter=10.200.0.2;5qi=9;color=red": `unknown key "color"`,
		"filter=10.200.0.2;5qi=9;mbr=5":     "mbr:",
		"filter=10.200.0.2;5qi=nine":        "5qi:",
	} {
		_, err := runSubscriber(t, url, append([]string{"add", "--imsi", "208930000000002", "--qos-flow", v}, keys...)...)
		if err == nil || !strings.HasPrefix(err.Error(), "--qos-flow") || !strings.Contains(err.Error(), want) {
			t.Errorf("--qos-flow %q: %v, want %q", v, err, want)
		}
	}
}
