package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/upf/shm"
)

func TestLeftoversOfTheDefaultCore(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	l, err := leftoversOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l.lab == nil || l.lab.N3 != node.LabN3Iface || l.lab.N6 != node.LabN6Iface || l.lab.Netns != node.LabNetns {
		t.Errorf("lab %+v, want the default veths and netns", l.lab)
	}
	if l.tables == nil || l.tables.Path() != shm.ConfigFor(cfg).Path() {
		t.Errorf("tables %+v, want %s", l.tables, shm.ConfigFor(cfg).Path())
	}
}

func TestLeftoversOfANodeWithoutUPF(t *testing.T) {
	cfg := config.Default()
	cfg.NFs = []string{"nrf", "amf"}
	l, err := leftoversOf(cfg)
	if err != nil || l.lab != nil || l.tables != nil {
		t.Errorf("leftovers %+v, %v; want none", l, err)
	}
	cfg = config.Default()
	cfg.UPF.N3.Port, cfg.UPF.N6.Port = "0000:03:00.0", "0000:03:00.1"
	if l, _ := leftoversOf(cfg); l.lab != nil || l.tables == nil {
		t.Errorf("named devices: leftovers %+v, want tables and no lab", l)
	}
}

// TestRemoveLeftoversTables removes a tables file (in the test's own
// directory) and says so; a second run finds nothing and is no error.
func TestRemoveLeftoversTables(t *testing.T) {
	tables := shm.Config{Dir: t.TempDir(), Prefix: "stale"}
	if err := os.WriteFile(tables.Path(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := (leftovers{tables: &tables}).remove(&out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tables.Path()); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", tables.Path(), err)
	}
	if !strings.Contains(out.String(), "UPF rule tables removed ("+tables.Path()+")") {
		t.Errorf("output %q does not say what it removed", out.String())
	}
	out.Reset()
	if err := (leftovers{tables: &tables}).remove(&out); err != nil || out.Len() != 0 {
		t.Errorf("second remove: %v, %q", err, out.String())
	}
}

// TestRemoveLeftoversLab builds a lab topology of its own names (never a
// running core's) and removes it as `down` does after a dead supervisor.
func TestRemoveLeftoversLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the lab topology needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 is not installed")
	}
	tag := fmt.Sprintf("sd%d", os.Getpid()%100000)
	lab := node.LabNet{N3: tag + "-n3", N3Peer: tag + "-n3g", N6: tag + "-n6", N6Peer: tag + "-n6d", Netns: tag + "-dn",
		GNBAddr: "10.253.0.2/24", DNAddr: "10.254.0.2/24", UPFN6IP: "10.254.0.1", UEPools: []string{"10.62.0.0/16"}}
	if err := lab.Up(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lab.Down() })
	var out bytes.Buffer
	if err := (leftovers{lab: &lab}).remove(&out); err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{lab.N3, lab.N3Peer, lab.N6} {
		if _, err := os.Stat(filepath.Join("/sys/class/net", dev)); err == nil {
			t.Errorf("%s still there", dev)
		}
	}
	if _, err := os.Stat(filepath.Join("/run/netns", lab.Netns)); err == nil {
		t.Errorf("netns %s still there", lab.Netns)
	}
	if want := "lab topology removed (" + lab.N3 + ", " + lab.N6 + ", netns " + lab.Netns + ")"; !strings.Contains(out.String(), want) {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

// TestDownAfterDeadSupervisor runs `l25gc down` against a state file
// whose supervisor is gone, for a node that runs no UPF-U (so it touches
// no lab link) but UPF-C: the state and the tables file go.
func TestDownAfterDeadSupervisor(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "l25gc.yaml")
	if err := os.WriteFile(cfgPath, []byte("data_dir: "+dir+"\nnfs: [nrf, upf-c]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	tables := shm.ConfigFor(cfg)
	if _, err := os.Stat(filepath.Dir(tables.Path())); err != nil {
		t.Skip("no hugetlbfs at", filepath.Dir(tables.Path()))
	}
	f, err := os.OpenFile(tables.Path(), os.O_CREATE|os.O_RDWR|os.O_EXCL, 0o600)
	if err != nil {
		t.Skip("cannot create a tables file:", err)
	}
	f.Close()
	t.Cleanup(func() { _ = os.Remove(tables.Path()) })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	st, _ := json.Marshal(node.State{SupervisorPID: gone.Process.Pid, ConfigPath: cfgPath, DataDir: dir})
	if err := os.WriteFile(node.StatePath(cfg), st, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := newDownCmd()
	cmd.Flags().String("config", "", "")
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--config", cfgPath})
	err = runSilently(cmd)
	if err == nil || !strings.Contains(err.Error(), "is gone; removed stale state") {
		t.Errorf("down: %v, want it to say the supervisor is gone", err)
	}
	if _, err := os.Stat(node.StatePath(cfg)); !os.IsNotExist(err) {
		t.Errorf("state file still there: %v", err)
	}
	if _, err := os.Stat(tables.Path()); !os.IsNotExist(err) {
		t.Errorf("tables file %s still there: %v", tables.Path(), err)
	}
	if !strings.Contains(out.String(), "UPF rule tables removed") {
		t.Errorf("down printed %q", out.String())
	}
}

func runSilently(cmd *cobra.Command) error {
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.Execute()
}
