package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/nf"
	"github.com/l25gc/l25gc/nf/udr"
	"github.com/l25gc/l25gc/sbi"
)

// runSubscriber runs `l25gc subscriber args...` against the UDR at url.
func runSubscriber(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "l25gc", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().String("config", "", "")
	root.AddCommand(newSubscriberCmd())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"subscriber", "--udr", url}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestSubscriberCommands(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := udr.OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := udr.NewWithStore(&nf.Env{Config: cfg, Log: log}, st)
	defer u.Stop(context.Background())
	// The real SBI server (h2c, as the CLI's client speaks), not httptest's.
	srv, err := sbi.NewTCP().Serve("127.0.0.1:0", sbi.Handler(u.Handler(), nil, log))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	url := "http://" + srv.Addr()

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
	out, err = runSubscriber(t, url, "show", "208930000000001")
	if err != nil || !strings.Contains(out, "000000000020") || !strings.Contains(out, "opc:"+config.DefaultOPc) {
		t.Fatalf("show: %v\n%s", err, out)
	}

	out, err = runSubscriber(t, url, "delete", "208930000000100", "--count", "50")
	if err != nil || !strings.Contains(out, "deleted 50") {
		t.Fatalf("delete --count 50: %v\n%s", err, out)
	}
	if _, err := runSubscriber(t, url, "show", "208930000000100"); err == nil || !strings.Contains(err.Error(), "USER_NOT_FOUND") {
		t.Fatalf("show of a deleted subscriber: %v, want USER_NOT_FOUND", err)
	}
}
