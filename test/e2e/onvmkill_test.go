package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// Issue 10 item 7: the onvm manager of a core over X-IO SIGKILLed under
// registration load costs nothing. The NFs never wait for the manager, so
// they keep their processes (same PIDs), their connections and their
// in-memory state while the supervisor starts a new manager that adopts
// the shared memory (package onvm). Fewer than 1 % of the registrations in
// flight may fail (the goal; none is expected), none after; and UEs
// registered before the kill register again by their 5G-GUTI without a new
// authentication (TS 24.501 5.5.1.2.2: the AMF still holds their security
// contexts). One line, "nfkill victim=onvm …", joins the table of
// nfkill_test.go.
func TestKilledOnvmManagerUnderLoadKeepsNFsAndUEs(t *testing.T) {
	const keepers = 16 // registered before the kill, left registered
	cfg, path := coreConfig(t, t.TempDir(), withSBI("xio", func(c *config.Config) {
		c.Subscribers[0].Count = nfKillUEs + keepers
	}))
	startSupervisedCore(t, cfg, path)
	g := connectGNB(t, cfg)
	fleet, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
	if err != nil {
		t.Fatal(err)
	}
	fleet.UEs, fleet.Concurrency, fleet.Deregister = nfKillUEs, nfKillConcurrency, true
	registerWave(t, g, fleet)
	kg := connectGNB(t, cfg) // the keepers' own gNB, so its NG Reset touches only them
	kept := registerKeepers(t, cfg, kg, fleet, keepers)

	before := nodeState(t, cfg)
	if before.Manager == nil || before.ShmHolder == nil {
		t.Fatalf("node state names no onvm manager (%+v) or shared-memory holder (%+v)", before.Manager, before.ShmHolder)
	}
	waves, stopLoad := registerWaves(g, fleet)
	killedAt := time.Now()
	if err := syscall.Kill(before.Manager.PID, syscall.SIGKILL); err != nil {
		stopLoad()
		t.Fatal(err)
	}
	recovered := awaitNewManager(t, cfg, before.Manager.PID, killedAt)
	done := awaitWaveAfter(t, waves, killedAt.Add(recovered))
	stopLoad()
	for w := range waves {
		done = append(done, w)
	}
	inFlight, failed, after, failedAfter, reasons := tallyWaves(t, done, killedAt, killedAt.Add(recovered))
	changed := changedPIDs(before, nodeState(t, cfg))
	authsBefore := ausfAuthentications(t, cfg)
	reregistered := reregisterByGUTI(t, kept)
	newAuths := ausfAuthentications(t, cfg) - authsBefore
	t.Logf("nfkill victim=onvm sbi=xio in_flight=%d failed=%d recovery=%v after=%d failed_after=%d nf_pids_changed=%d guti_reregistered=%d/%d new_authentications=%v",
		inFlight, failed, recovered.Round(time.Millisecond), after, failedAfter, len(changed), reregistered, keepers, newAuths)

	if inFlight == 0 || after == 0 {
		t.Fatalf("no registration ran during (%d) or after (%d) the outage", inFlight, after)
	}
	if failed*100 >= inFlight {
		t.Errorf("onvm manager killed: %d of %d registrations in flight failed, want < 1 %%: %v", failed, inFlight, reasons)
	}
	if failedAfter != 0 {
		t.Errorf("manager back after %v: %d of %d later registrations failed: %v", recovered, failedAfter, after, reasons)
	}
	if len(changed) != 0 {
		t.Errorf("the manager's death restarted %v; the NFs and the shared memory's holder should keep their processes", changed)
	}
	// EAL's files of the killed secondary would pile up in /var/run over
	// many restarts.
	if left, _ := filepath.Glob(fmt.Sprintf("/var/run/dpdk/xio%d_*/*_%d*", os.Getpid(), before.Manager.PID)); len(left) != 0 {
		t.Errorf("EAL files of the killed manager left behind: %v", left)
	}
	if reregistered != keepers {
		t.Errorf("%d of %d UEs registered before the kill registered again by their 5G-GUTI", reregistered, keepers)
	}
	if newAuths != 0 {
		t.Errorf("GUTI re-registrations after the kill cost %v new authentications (Nausf_UEAuthentication), want 0", newAuths)
	}

	// The adopted manager does the manager's work: killed again it is
	// adopted again, and an NF that dies then is reaped (its peers' conns
	// reset, its slot freed) so that its restart attaches and serves.
	second := nodeState(t, cfg).Manager.PID
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitNewManager(t, cfg, second, time.Now())
	udm := nfProcess(t, cfg, "udm")
	if err := syscall.Kill(udm.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitRestarted(t, cfg, "udm", udm.PID, time.Now())
	registerWave(t, g, fleet)
}

// registerKeepers registers n UEs after fleet's through g and leaves them
// registered in CM-IDLE: g's NG Reset releases their N2 connections
// (TS 38.413 8.7.4), and the AMF keeps their 5GMM contexts under their
// 5G-TMSIs, as for UEs that went idle.
func registerKeepers(t *testing.T, cfg *config.Config, g *ransim.GNB, fleet ransim.Fleet, n int) []*ransim.UE {
	t.Helper()
	ues := registerBeyond(t, g, fleet, n)
	// The UE's Registration Complete travels on its own SCTP stream and the
	// NG Reset on stream 0, which may overtake it: reset once the AMF
	// counts them all registered.
	for deadline := time.Now().Add(eventBound); amfMetric(t, cfg, "l25gc_amf_registered_ues") < float64(n); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the AMF counts %v UEs registered, want %d", amfMetric(t, cfg, "l25gc_amf_registered_ues"), n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventBound)
	defer cancel()
	if err := g.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	return ues
}

// reregisterByGUTI registers each UE again, identified by its 5G-GUTI
// under its NAS security context; it returns how many succeeded.
func reregisterByGUTI(t *testing.T, ues []*ransim.UE) int {
	t.Helper()
	ok := 0
	for _, ue := range ues {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := ue.Register(ctx)
		cancel()
		if err != nil {
			t.Logf("GUTI re-registration of %s: %v", ue.SUPI(), err)
			continue
		}
		ok++
	}
	return ok
}

func nodeState(t *testing.T, cfg *config.Config) *node.State {
	t.Helper()
	st, err := node.ReadState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// changedPIDs names the NFs and the shared memory's holder whose process
// is not the one of before.
func changedPIDs(before, now *node.State) []string {
	pids := map[string]int{}
	for _, p := range now.NFs {
		pids[p.Name] = p.PID
	}
	if now.ShmHolder != nil {
		pids["onvm-shm"] = now.ShmHolder.PID
	}
	var changed []string
	for _, p := range append(before.NFs, before.ShmHolder) {
		if pids[p.Name] != p.PID || !node.Alive(p.PID) {
			changed = append(changed, fmt.Sprintf("%s (pid %d → %d)", p.Name, p.PID, pids[p.Name]))
		}
	}
	return changed
}

// awaitNewManager waits until the node runs an onvm manager other than
// oldPID and returns how long after killedAt that was.
func awaitNewManager(t *testing.T, cfg *config.Config, oldPID int, killedAt time.Time) time.Duration {
	t.Helper()
	for deadline := killedAt.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st, err := node.ReadState(cfg)
		if err == nil && st.Manager != nil && st.Manager.PID != oldPID && node.Alive(st.Manager.PID) {
			return time.Since(killedAt)
		}
	}
	t.Fatal("no new onvm manager within 30 s of the kill")
	return 0
}

// amfMetric is the value of the AMF's metric name (one without labels).
func amfMetric(t *testing.T, cfg *config.Config, name string) float64 {
	t.Helper()
	var v float64
	scrape(t, cfg, "amf", func(line string) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			v, _ = strconv.ParseFloat(f[1], 64)
		}
	})
	return v
}

// scrape calls each with every line of NF name's /metrics.
func scrape(t *testing.T, cfg *config.Config, name string, each func(line string)) {
	t.Helper()
	spec, ok := config.Builtin.Lookup(name)
	if !ok {
		t.Fatalf("no %s in the NF table", name)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + cfg.Addr(spec.PortsIn(cfg).MetricsPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		each(sc.Text())
	}
}

// ausfAuthentications is how many Nausf_UEAuthentication requests the
// AUSF has served (its SBI request counter for service nausf-auth).
func ausfAuthentications(t *testing.T, cfg *config.Config) float64 {
	t.Helper()
	var sum float64
	scrape(t, cfg, "ausf", func(line string) {
		if !strings.HasPrefix(line, "l25gc_sbi_server_request_duration_seconds_count{") ||
			!strings.Contains(line, `service="nausf-auth"`) {
			return
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	})
	return sum
}
