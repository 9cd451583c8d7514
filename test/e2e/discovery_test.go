package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/free5gc/openapi/models"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/sbi"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// heartbeat is the NRF heartbeat period of the discovery test: short, so
// the test is quick, and two whole seconds, so a sweep delayed by a busy
// machine does not make the NRF's two-period bound look broken.
const heartbeat = 2 * time.Second

// TS 29.510 5.2.2.3.2 and 5.3.2.2: a core with two UDM instances, one of
// them an extra process (nfs: [udm], own ports, the core's NRF by
// sbi.nrf_uri). The extra one is killed (SIGKILL: no deregistration) under
// registration load: registrations keep succeeding, the consumers failing
// over to the other instance; the NRF stops listing it within two heartbeat
// periods; a replacement started later is discovered and used by the
// running consumers.
//
// The extra UDM's SBI is TCP: it runs outside the core's supervisor (so
// that it stays dead), and node keeps the core's X-IO prefix to itself, so
// it does not attach to the core's X-IO. The core's own NFs use TCP or, in
// the OverXIO variant, the X-IO message level among themselves (and TCP to
// the extra UDM), where the load must not cost a request between live NFs.
func TestKilledUDMIsDroppedAndItsReplacementUsed(t *testing.T) {
	killedUDMIsDroppedAndItsReplacementUsed(t, "tcp")
}

func TestKilledUDMIsDroppedAndItsReplacementUsedOverXIO(t *testing.T) {
	killedUDMIsDroppedAndItsReplacementUsed(t, "xio")
}

func killedUDMIsDroppedAndItsReplacementUsed(t *testing.T, mode string) {
	dir := t.TempDir()
	for _, sub := range []string{"core", "extra"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, path := coreConfig(t, filepath.Join(dir, "core"), withSBI(mode, func(c *config.Config) {
		c.NRF.HeartbeatTimer = heartbeat
	}))
	startCore(t, cfg, path)
	extra, extraPath := extraUDMConfig(t, filepath.Join(dir, "extra"), cfg)
	extraID := sbi.InstanceID(models.NrfNfManagementNfType_UDM, extra.AdvertisedAddr(extra.UDM.SBIPort))
	udm := startUDM(t, extra, extraPath)
	awaitUDMs(t, cfg, 2, 20*time.Second)

	g := connectGNB(t, cfg)
	fleet, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
	if err != nil {
		t.Fatal(err)
	}
	fleet.UEs, fleet.Concurrency, fleet.Deregister = 20, 20, true
	registerWave(t, g, fleet) // both UDMs serve, consumers have both cached
	if served := udmRequestsServed(t, extra); served == 0 {
		t.Fatal("the extra UDM served no request: the consumers use one instance only")
	}

	// Kill the extra UDM while waves of registrations run.
	waves, stopLoad := registerWaves(g, fleet)
	killedAt := time.Now()
	if err := udm.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = udm.Wait()
	dropped := awaitGone(t, cfg, extraID, killedAt)
	t.Logf("the NRF dropped the killed UDM %v after the kill", dropped.Round(time.Millisecond))
	time.Sleep(heartbeat) // waves run past the first period after the kill
	stopLoad()
	checkWaves(t, waves, killedAt)
	if dropped > 2*heartbeat {
		t.Errorf("the NRF still listed the killed UDM %v after the kill, want within two heartbeat periods (%v)", dropped, 2*heartbeat)
	}

	// A replacement (same address, same instance id) is found by the
	// running AMF and AUSF: no restart, no cache expiry (1 h).
	startUDM(t, extra, extraPath)
	awaitUDMs(t, cfg, 2, 20*time.Second)
	registerWave(t, g, fleet)
	if served := udmRequestsServed(t, extra); served == 0 {
		t.Fatal("the replacement UDM served no request: the consumers did not discover it")
	}
}

type waveResult struct {
	start time.Time
	out   ransim.Outcome
	err   error
}

// registerWaves registers fleet again and again, a wave at a time, until
// stop; each finished wave comes out of the channel, closed after stop.
// It returns once the load is under way (underWay).
func registerWaves(g *ransim.GNB, fleet ransim.Fleet) (waves <-chan waveResult, stop func()) {
	load, stopLoad := context.WithCancel(context.Background())
	out := make(chan waveResult, 1024)
	fleet, flowing := signalUnderWay(fleet)
	go func() {
		defer close(out)
		for load.Err() == nil {
			start := time.Now()
			res, err := ransim.RegisterFleet(context.Background(), g, fleet)
			out <- waveResult{start: start, out: res, err: err}
		}
	}()
	underWay(flowing)
	return out, stopLoad
}

// signalUnderWay is fleet with a Progress that closes flowing once as
// many registrations as it runs at once have ended: every NF a
// registration needs has served, and the next ones are in flight.
func signalUnderWay(fleet ransim.Fleet) (ransim.Fleet, <-chan struct{}) {
	flowing := make(chan struct{})
	var once sync.Once
	fleet.Progress = func(done, _, _ int) {
		if done >= fleet.Concurrency {
			once.Do(func() { close(flowing) })
		}
	}
	return fleet, flowing
}

// underWay waits for flowing, for at most a bound that only a hung core
// reaches: on a slow machine the first registrations take seconds, and
// a kill before any of them ended would test a core that never served. A
// load that never flows shows in the test's tally (nothing in flight).
func underWay(flowing <-chan struct{}) {
	select {
	case <-flowing:
	case <-time.After(60 * time.Second):
	}
}

// checkWaves: registrations may fail only in waves started within one
// heartbeat period of the kill.
func checkWaves(t *testing.T, waves <-chan waveResult, killedAt time.Time) {
	t.Helper()
	var during, after, failedDuring int
	var reasons []string
	for w := range waves {
		if w.err != nil {
			t.Fatalf("registration wave: %v", w.err)
		}
		if w.start.Before(killedAt.Add(heartbeat)) {
			during++
			failedDuring += w.out.Failed
			reasons = append(reasons, w.out.Errors...)
			continue
		}
		after++
		if w.out.Failed != 0 {
			t.Errorf("a wave started %v after the kill: %d of %d registrations failed: %v",
				w.start.Sub(killedAt).Round(time.Millisecond), w.out.Failed, len(w.out.Latencies)+w.out.Failed, w.out.Errors)
		}
	}
	t.Logf("waves within a heartbeat period of the kill: %d (%d registrations failed %v); after: %d", during, failedDuring, reasons, after)
	if after == 0 {
		t.Fatal("no registration wave ran after the first heartbeat period")
	}
}

func registerWave(t *testing.T, g *ransim.GNB, f ransim.Fleet) {
	t.Helper()
	out, err := ransim.RegisterFleet(context.Background(), g, f)
	if err != nil || out.Failed != 0 {
		t.Fatalf("registration wave: %v; %d failed: %v", err, out.Failed, out.Errors)
	}
}

// extraUDMConfig is a node running only a UDM, on ports of its own, that
// registers with the core's NRF.
func extraUDMConfig(t *testing.T, dir string, core *config.Config) (*config.Config, string) {
	t.Helper()
	return coreConfig(t, dir, withSBI("tcp", func(c *config.Config) {
		c.NFs = []string{"udm"}
		c.SBI.NRFURI = core.NRFURI()
		c.SBI.SecretFile = core.SecretPath() // the core's NRF knows its NFs by it
		c.NRF.HeartbeatTimer = heartbeat
	}))
}

// startUDM runs `l25gc nf udm` for cfg, killed at the end of the test.
func startUDM(t *testing.T, cfg *config.Config, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary, "nf", "udm", "--config", path)
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(filepath.Join(cfg.LogDir, "udm.stderr"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		out.Close()
		if t.Failed() {
			dumpLogs(t, cfg)
		}
	})
	return cmd
}

// discoveredUDMs asks the core's NRF which UDMs an AUSF would find.
func discoveredUDMs(cfg *config.Config) ([]string, error) {
	q := url.Values{"target-nf-type": {"UDM"}, "requester-nf-type": {"AUSF"}}
	var res models.SearchResult
	c := sbi.NewClient(sbi.NewTCP().RoundTripper(), nil)
	if cfg.OAuth2On() { // the NRF answers only holders of a credential of the core
		secret, err := sbi.LoadOrCreateSecret(cfg.SecretPath())
		if err != nil {
			return nil, err
		}
		sec := sbi.NewSecurity(secret, nil, cfg.NRFURI(), models.NrfNfManagementNfType_AUSF)
		sec.Identify("e2e-test")
		c.AuthorizeWith(sec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Do(ctx, http.MethodGet, cfg.NRFURI()+sbi.NFDiscoveryPath+"?"+q.Encode(), nil, &res); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(res.NfInstances))
	for _, p := range res.NfInstances {
		ids = append(ids, p.NfInstanceId)
	}
	return ids, nil
}

func awaitUDMs(t *testing.T, cfg *config.Config, n int, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		ids, err := discoveredUDMs(cfg)
		if err == nil && len(ids) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the NRF lists UDMs %v (%v), want %d", ids, err, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitGone returns how long after killedAt the NRF stopped listing id.
func awaitGone(t *testing.T, cfg *config.Config, id string, killedAt time.Time) time.Duration {
	t.Helper()
	for {
		ids, err := discoveredUDMs(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(ids, ","), id) {
			return time.Since(killedAt)
		}
		if time.Since(killedAt) > 5*heartbeat {
			t.Fatalf("the NRF still lists the killed UDM %v after the kill", time.Since(killedAt))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// udmRequestsServed counts the nudm requests a UDM served (its metrics).
func udmRequestsServed(t *testing.T, cfg *config.Config) float64 {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + cfg.Addr(cfg.UDM.MetricsPort) + "/metrics")
	if err != nil {
		t.Fatalf("UDM metrics: %v", err)
	}
	defer resp.Body.Close()
	var total float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "l25gc_sbi_server_request_duration_seconds_count{") || !strings.Contains(line, `service="nudm-`) {
			continue
		}
		var n float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &n); err == nil {
			total += n
		}
	}
	return total
}

// withNRFCredential lets req in at the core's NRF (sbi.oauth2 on): a
// credential from the core's secret, as its NFs show.
func withNRFCredential(cfg *config.Config, req *http.Request) error {
	if !cfg.OAuth2On() {
		return nil
	}
	secret, err := sbi.LoadOrCreateSecret(cfg.SecretPath())
	if err != nil {
		return err
	}
	req.SetBasicAuth("e2e-test", secret.Credential("e2e-test"))
	return nil
}
