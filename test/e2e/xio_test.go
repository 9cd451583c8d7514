package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// The core over X-IO as `l25gc up` runs it (supervised, restarts on): the
// onvm manager and its shared memory's holder are part of the node's
// state; a holder that dies takes the shared memory with it (a manager
// alone is adopted again, onvmkill_test.go), so the node brings up X-IO
// anew and the NFs on it and UEs register again; once the core stops, none
// of its hugepage files is left (they would keep the memory taken).
func TestXIOCoreSurvivesItsManagerAndLeavesNoHugepages(t *testing.T) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI("xio", func(c *config.Config) { c.Subscribers[0].Count = 20 }))
	requirePortsFree(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	core, err := node.Start(ctx, cfg, node.Options{Binary: binary, ConfigPath: path, SBI: "xio", Restart: true})
	if err != nil {
		dumpLogs(t, cfg)
		t.Fatalf("core did not start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			core.Stop()
		}
		if t.Failed() {
			dumpLogs(t, cfg)
		}
	})
	if core.SBI() != "xio" {
		t.Fatalf("core runs SBI %q, want xio", core.SBI())
	}
	registerUEs(t, cfg, 0, 10)

	st, err := node.ReadState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st.SBI != "xio" || st.Manager == nil || !node.Alive(st.Manager.PID) || st.ShmHolder == nil || !node.Alive(st.ShmHolder.PID) {
		t.Fatalf("node state: SBI %q, manager %+v, holder %+v; want xio with both running", st.SBI, st.Manager, st.ShmHolder)
	}
	if len(ownHugepageFiles(t)) == 0 {
		t.Fatal("no hugepage files of this core's manager in /dev/hugepages")
	}

	if err := syscall.Kill(st.ShmHolder.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitForRecovery(t, cfg, st.Manager.PID)
	registerUEs(t, cfg, 10, 10)

	core.Stop()
	stopped = true
	if files := ownHugepageFiles(t); len(files) != 0 {
		t.Fatalf("hugepage files left after the core stopped: %v", files)
	}
}

// registerUEs registers n UEs from the i-th subscriber on through a new gNB.
func registerUEs(t *testing.T, cfg *config.Config, from, n int) {
	t.Helper()
	g := connectGNB(t, cfg)
	f, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
	if err != nil {
		t.Fatal(err)
	}
	if f.FirstIMSI, err = ransim.IMSI(f.FirstIMSI, from); err != nil {
		t.Fatal(err)
	}
	f.UEs, f.Concurrency = n, n
	out, err := ransim.RegisterFleet(context.Background(), g, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Latencies) != n || out.Failed != 0 {
		t.Fatalf("%d registered, %d failed: %v", len(out.Latencies), out.Failed, out.Errors)
	}
}

// waitForRecovery waits until the node runs a manager other than oldPID
// and every NF answers its health check again.
func waitForRecovery(t *testing.T, cfg *config.Config, oldPID int) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	recovered := func() bool {
		st, err := node.ReadState(cfg)
		if err != nil || st.Manager == nil || st.Manager.PID == oldPID || !node.Alive(st.Manager.PID) {
			return false
		}
		for _, p := range st.NFs {
			if !node.Alive(p.PID) || !node.Healthy(client, p.MetricsAddr) {
				return false
			}
		}
		return discoverable(client, cfg)
	}
	for deadline := time.Now().Add(60 * time.Second); !recovered(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the core did not recover within 60 s of its shared memory's holder being killed")
		}
	}
}

// ownHugepageFiles lists the hugepage files of managers this test process
// started (their EAL file prefix is "xio<pid>_<n>").
func ownHugepageFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("/dev/hugepages", fmt.Sprintf("xio%d_*map_*", os.Getpid())))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// discoverable reports whether the NRF finds every NF the AMF needs again
// (TS 29.510 NFDiscovery), i.e. they registered after their restart.
func discoverable(client *http.Client, cfg *config.Config) bool {
	for _, nfType := range []string{"UDR", "UDM", "AUSF", "PCF"} {
		url := fmt.Sprintf("http://%s/nnrf-disc/v1/nf-instances?target-nf-type=%s&requester-nf-type=AMF",
			cfg.Addr(cfg.NRF.SBIPort), nfType)
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil || withNRFCredential(cfg, req) != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		var found struct {
			NfInstances []json.RawMessage `json:"nfInstances"`
		}
		err = json.NewDecoder(resp.Body).Decode(&found)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(found.NfInstances) == 0 {
			return false
		}
	}
	return true
}

// assertNFToNFOverXIOOnly checks, from every NF's /metrics, that the SBI
// requests NFs sent each other went over X-IO, none over TCP: on one node
// the NRF profiles place every peer here (l25gc_sbi_client_requests_total
// by path).
func assertNFToNFOverXIOOnly(t *testing.T, cfg *config.Config) {
	t.Helper()
	xio := 0.0
	for _, spec := range config.Builtin {
		if !spec.HasSBI() {
			continue // UPF-C calls no SBI
		}
		paths := sbiPaths(t, cfg, spec.PortsIn(cfg).MetricsPort)
		if tcp, ok := paths["tcp"]; !ok || tcp != 0 {
			t.Errorf("%s: SBI requests by path %v, want none over tcp", spec.Name, paths)
		}
		xio += paths["xio"]
	}
	if xio == 0 {
		t.Error("no SBI request over xio in the whole core")
	}
}

// sbiPaths reads how many SBI requests the NF with metrics port sent over
// each path (l25gc_sbi_client_requests_total{path}).
func sbiPaths(t *testing.T, cfg *config.Config, metricsPort int) map[string]float64 {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + cfg.Addr(metricsPort) + "/metrics")
	if err != nil {
		t.Fatalf("metrics at port %d: %v", metricsPort, err)
	}
	defer resp.Body.Close()
	paths := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var path string
		var n float64
		if _, err := fmt.Sscanf(sc.Text(), "l25gc_sbi_client_requests_total{path=%q} %g", &path, &n); err == nil {
			paths[path] = n
		}
	}
	return paths
}
