package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/node"
	"github.com/l25gc/l25gc/test/bench"
)

// Issue 10 item 6 (TS 29.500 5.2; RFC 9110 9.2.2): an NF of a default core
// (one instance of each, supervised) SIGKILLed under registration load and
// restarted by the supervisor costs (almost) no registration: its consumers
// send again what it provably did not process and every idempotent request,
// to the restarted instance, within the procedure's deadline. Fewer than 1 %
// of the registrations in flight while it was away may fail. One line per
// victim, "nfkill victim=… sbi=… in_flight=… failed=… recovery=…", is the
// table the closing note asks for. The NRF is asked nothing per
// registration (discovery is cached; the NFs register again with the new
// process), and a failed AM policy association does not stop registration
// (TS 23.502 4.16.1.2), so only the UDM, UDR and AUSF must show retries.
func TestKilledNFUnderLoadCostsNoRegistrations(t *testing.T) {
	for _, victim := range []string{"udm", "udr", "ausf", "pcf", "nrf"} {
		for _, mode := range sbiModes {
			t.Run(victim+"/"+mode, func(t *testing.T) { killedNFUnderLoad(t, victim, mode, 0) })
		}
	}
	// A loaded machine brings an NF back seconds later than a quiet one:
	// the UDR (the end of the AMF → AUSF → UDM → UDR chain) back only
	// after 5 s still costs nothing, since the NFs wait for it as long as
	// the AMF's procedure does.
	t.Run("udr/xio/back-after-5s", func(t *testing.T) { killedNFUnderLoad(t, "udr", "xio", slowRestart) })
}

// slowRestart is the supervisor's wait before restarting a killed NF in
// the slow variant: more than the 5 s the consumers once gave a restarting
// producer, well within the AMF's 10 s.
const slowRestart = 5 * time.Second

// The load: waves of a few hundred registrations, 32 at a time.
const (
	nfKillUEs         = 256
	nfKillConcurrency = 32
)

// calledPerRegistration are the NFs every registration waits for.
var calledPerRegistration = map[string]bool{"udm": true, "udr": true, "ausf": true}

// killedNFUnderLoad kills victim under load; restartAfter, when not 0, is
// how long the supervisor waits before restarting it.
func killedNFUnderLoad(t *testing.T, victim, mode string, restartAfter time.Duration) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI(mode, func(c *config.Config) { c.Subscribers[0].Count = nfKillUEs }))
	startSupervisedCoreRestartingAfter(t, cfg, path, restartAfter)
	g := connectGNB(t, cfg)
	fleet, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
	if err != nil {
		t.Fatal(err)
	}
	fleet.UEs, fleet.Concurrency, fleet.Deregister = nfKillUEs, nfKillConcurrency, true
	registerWave(t, g, fleet) // every consumer has discovered its producers

	old := nfProcess(t, cfg, victim)
	waves, stopLoad := registerWaves(g, fleet)
	killedAt := time.Now()
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		stopLoad()
		t.Fatal(err)
	}
	recovered := awaitRestarted(t, cfg, victim, old.PID, killedAt)
	done := awaitWaveAfter(t, waves, killedAt.Add(recovered))
	stopLoad()
	for w := range waves {
		done = append(done, w)
	}

	inFlight, failed, after, failedAfter, reasons := tallyWaves(t, done, killedAt, killedAt.Add(recovered))
	retried := sbiRetries(t, cfg)
	t.Logf("nfkill victim=%s sbi=%s in_flight=%d failed=%d recovery=%v after=%d failed_after=%d retries=%v",
		victim, mode, inFlight, failed, recovered.Round(time.Millisecond), after, failedAfter, retried)
	if len(retried) == 0 && calledPerRegistration[victim] {
		t.Errorf("%s killed under load, yet no consumer counted a retry (l25gc_sbi_client_retries_total)", victim)
	}
	if inFlight == 0 || after == 0 {
		t.Fatalf("no registration ran during (%d) or after (%d) the outage", inFlight, after)
	}
	if failed*100 >= inFlight {
		t.Errorf("%s killed: %d of %d registrations in flight failed, want < 1 %%: %v", victim, failed, inFlight, reasons)
	}
	if failedAfter != 0 {
		t.Errorf("%s back after %v: %d of %d later registrations failed: %v", victim, recovered, failedAfter, after, reasons)
	}
	if victim == "nrf" {
		// The NFs register again with the restarted NRF (a heartbeat
		// answered 404 Not Found, TS 29.510 5.2.2.3.2), so a consumer
		// without a cache still discovers them.
		awaitUDMs(t, cfg, 1, 2*cfg.NRF.HeartbeatTimer+5*time.Second)
		t.Logf("nrf sbi=%s: the UDM is discoverable again %v after the kill", mode, time.Since(killedAt).Round(time.Millisecond))
	}
}

// startSupervisedCore starts the core as `l25gc up` does, restarting an NF
// that dies, and stops it when the test ends.
func startSupervisedCore(t *testing.T, cfg *config.Config, path string) {
	t.Helper()
	startSupervisedCoreRestartingAfter(t, cfg, path, 0)
}

// startSupervisedCoreRestartingAfter is startSupervisedCore whose
// supervisor waits backoff before restarting an NF (0: its default).
func startSupervisedCoreRestartingAfter(t *testing.T, cfg *config.Config, path string, backoff time.Duration) {
	t.Helper()
	requirePortsFree(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := node.Options{Binary: binary, ConfigPath: path, Restart: true, RestartBackoff: backoff}
	if cfg.SBI.Transport != "tcp" {
		opts.SBI = cfg.SBI.Transport
	}
	core, err := node.Start(ctx, cfg, opts)
	if err != nil {
		dumpLogs(t, cfg)
		t.Fatalf("core did not start: %v", err)
	}
	t.Cleanup(func() {
		core.Stop()
		if t.Failed() {
			dumpLogs(t, cfg)
		}
	})
}

// nfProcess is the running process of NF name, from the node's state.
func nfProcess(t *testing.T, cfg *config.Config, name string) node.Process {
	t.Helper()
	st, err := node.ReadState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.NFs {
		if p.Name == name {
			return *p
		}
	}
	t.Fatalf("node state names no %s", name)
	return node.Process{}
}

// awaitRestarted waits until NF name runs again (a new process, healthy)
// and returns how long after killedAt that was.
func awaitRestarted(t *testing.T, cfg *config.Config, name string, oldPID int, killedAt time.Time) time.Duration {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	for deadline := killedAt.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		st, err := node.ReadState(cfg)
		if err != nil {
			continue
		}
		for _, p := range st.NFs {
			if p.Name == name && p.PID != oldPID && node.Alive(p.PID) && node.Healthy(client, p.MetricsAddr) {
				return time.Since(killedAt)
			}
		}
	}
	t.Fatalf("%s not restarted within 30 s of its kill", name)
	return 0
}

// awaitWaveAfter collects the finished waves until one that started after
// up has finished.
func awaitWaveAfter(t *testing.T, waves <-chan waveResult, up time.Time) []waveResult {
	t.Helper()
	var done []waveResult
	timeout := time.After(60 * time.Second)
	for {
		select {
		case w, ok := <-waves:
			if !ok {
				t.Fatal("the load stopped")
			}
			done = append(done, w)
			if w.start.After(up) {
				return done
			}
		case <-timeout:
			t.Fatal("no registration wave started after the recovery finished within 60 s")
		}
	}
}

// tallyWaves counts the registrations of the waves that overlapped the
// outage [down, up] and of the waves that started after it, and their
// failures.
func tallyWaves(t *testing.T, waves []waveResult, down, up time.Time) (inFlight, failed, after, failedAfter int, reasons []string) {
	t.Helper()
	for _, w := range waves {
		if w.err != nil {
			t.Fatalf("registration wave: %v", w.err)
		}
		n := len(w.out.Latencies) + w.out.Failed
		switch {
		case w.start.After(up):
			after += n
			failedAfter += w.out.Failed
		case w.start.Add(w.out.Elapsed).After(down):
			inFlight += n
			failed += w.out.Failed
		default:
			continue // ended before the kill
		}
		reasons = append(reasons, w.out.Errors...)
	}
	return inFlight, failed, after, failedAfter, reasons
}

// sbiRetries sums l25gc_sbi_client_retries_total over every NF's /metrics,
// by "target/reason".
func sbiRetries(t *testing.T, cfg *config.Config) map[string]float64 {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	sum := map[string]float64{}
	for _, spec := range config.Builtin {
		if !cfg.Runs(spec.Name) {
			continue
		}
		resp, err := client.Get("http://" + cfg.Addr(spec.PortsIn(cfg).MetricsPort) + "/metrics")
		if err != nil {
			t.Fatalf("metrics of %s: %v", spec.Name, err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var reason, target string
			var n float64
			if _, err := fmt.Sscanf(sc.Text(), "l25gc_sbi_client_retries_total{reason=%q,target=%q} %g", &reason, &target, &n); err == nil {
				sum[target+"/"+reason] += n
			}
		}
		resp.Body.Close()
	}
	return sum
}
