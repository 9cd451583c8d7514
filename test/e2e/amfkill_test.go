package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/test/bench"
	"github.com/l25gc/l25gc/test/ransim"
)

// Issue 10 item 7: the AMF SIGKILLed under registration load and restarted
// by the supervisor keeps every UE registered before the kill (its UE
// store, nf/amf/persist.go): each comes back through a new gNB association
// with a mobility registration update identified by its 5G-GUTI, which is
// accepted without an Authentication Request. The registrations in flight
// on the killed AMF's N2 association die with it (the gNB's association
// ends; TS 38.413 gives the RAN nothing to resume them with); those started
// once the AMF is back all succeed. Printed as "nfkill victim=amf …", a row
// of the same table as TestKilledNFUnderLoadCostsNoRegistrations.
func TestKilledAMFKeepsItsUEsRegistered(t *testing.T) {
	forEachSBI(t, killedAMFUnderLoad)
}

// amfKillResidents are the UEs registered before the kill and kept.
const amfKillResidents = 64

func killedAMFUnderLoad(t *testing.T, mode string) {
	cfg, path := coreConfig(t, t.TempDir(), withSBI(mode, func(c *config.Config) {
		c.Subscribers[0].Count = nfKillUEs + amfKillResidents
	}))
	startSupervisedCore(t, cfg, path)
	g := connectGNB(t, cfg)
	fleet, err := bench.FleetFor(cfg, cfg.Subscribers[0].IMSI, "null")
	if err != nil {
		t.Fatal(err)
	}
	fleet.UEs, fleet.Concurrency, fleet.Deregister = nfKillUEs, nfKillConcurrency, true
	registerWave(t, g, fleet)
	residents := registerBeyond(t, g, fleet, amfKillResidents)

	old := nfProcess(t, cfg, "amf")
	var gnbBack atomic.Int64 // when the gNB's association was up again (unix ns)
	waves, stopLoad := reconnectingWaves(t, cfg, g, fleet, &gnbBack)
	killedAt := time.Now()
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		stopLoad()
		t.Fatal(err)
	}
	recovered := awaitRestarted(t, cfg, "amf", old.PID, killedAt)
	done := awaitWaveAfter(t, waves, killedAt.Add(recovered))
	stopLoad()
	for w := range waves {
		done = append(done, w)
	}
	inFlight, failed, after, failedAfter, reasons := tallyWaves(t, done, killedAt, killedAt.Add(recovered))

	noN2 := withoutN2(reasons)
	back, authenticated, errs := reRegisterWithGUTI(t, cfg, residents)
	n2Back := time.Unix(0, gnbBack.Load()).Sub(killedAt)
	t.Logf("nfkill victim=amf sbi=%s in_flight=%d failed=%d (on the killed AMF %d, no N2 yet %d) recovery=%v n2_back=%v after=%d failed_after=%d residents=%d back_with_guti=%d authenticated=%d",
		mode, inFlight, failed, failed-noN2, noN2, recovered.Round(time.Millisecond), n2Back.Round(time.Millisecond), after, failedAfter, len(residents), back, authenticated)
	t.Logf("failures of the waves cut by the kill: %v", reasons)
	if inFlight == 0 || after == 0 {
		t.Fatalf("no registration ran during (%d) or after (%d) the outage", inFlight, after)
	}
	// Only the registrations on the killed AMF's association may fail
	// there: at most the gNB's concurrency.
	if failed-noN2 > nfKillConcurrency {
		t.Errorf("%d registrations that reached the AMF failed around its kill, more than the %d in flight at once: %v",
			failed-noN2, nfKillConcurrency, reasons)
	}
	if failedAfter != 0 {
		t.Errorf("AMF back after %v: %d of %d later registrations failed: %v", recovered, failedAfter, after, reasons)
	}
	if back != len(residents) {
		t.Errorf("%d of %d UEs registered before the kill came back with their 5G-GUTI: %v", back, len(residents), errs)
	}
	if authenticated != 0 {
		t.Errorf("%d UEs registered before the kill were authenticated again after it", authenticated)
	}
}

// registerBeyond registers n UEs with the IMSIs after fleet's through g
// and keeps them registered (each with its 5G-GUTI).
func registerBeyond(t *testing.T, g *ransim.GNB, fleet ransim.Fleet, n int) []*ransim.UE {
	t.Helper()
	ues := make([]*ransim.UE, n)
	for i := range ues {
		imsi, err := ransim.IMSI(fleet.FirstIMSI, fleet.UEs+i)
		if err != nil {
			t.Fatal(err)
		}
		ues[i] = g.NewUE(ransim.Subscriber{IMSI: imsi, K: fleet.K, OPc: fleet.OPc}, fleet.Conceal)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err = ues[i].Register(ctx)
		cancel()
		if err != nil || ues[i].GUTI() == nil {
			t.Fatalf("register %s: %v (GUTI %v)", imsi, err, ues[i].GUTI())
		}
	}
	return ues
}

// reconnectingWaves is registerWaves with a gNB that, like a real one,
// sets its association up again when it ends (the AMF died), before the
// next wave; back records when it did (the gNB notices the end by its
// SCTP association failing: at once when it sends, by heartbeat when all
// its UEs wait for answers).
func reconnectingWaves(t *testing.T, cfg *config.Config, g *ransim.GNB, fleet ransim.Fleet, back *atomic.Int64) (<-chan waveResult, func()) {
	load, stopLoad := context.WithCancel(context.Background())
	out := make(chan waveResult, 1024)
	gnbCfg := bench.GNBConfig(cfg, cfg.AMF.NGAP.Addr, cfg.AMF.NGAP.Transport)
	fleet, flowing := signalUnderWay(fleet)
	go func() {
		defer close(out)
		for load.Err() == nil {
			select {
			case <-g.Done():
				if g = reconnect(load, gnbCfg); g == nil {
					return
				}
				back.Store(time.Now().UnixNano())
				defer g.Close()
			default:
			}
			start := time.Now()
			res, err := ransim.RegisterFleet(context.Background(), g, fleet)
			out <- waveResult{start: start, out: res, err: err}
		}
	}()
	underWay(flowing)
	return out, stopLoad
}

// reconnect dials the AMF until NG Setup succeeds or ctx ends.
func reconnect(ctx context.Context, c ransim.GNBConfig) *ransim.GNB {
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		g, err := ransim.Connect(dctx, c)
		cancel()
		if err == nil {
			return g
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// withoutN2 counts, in RegisterFleet's failure reasons ("N× reason"), the
// registrations that never reached an AMF: their Initial UE Message found
// the gNB's association already gone.
func withoutN2(reasons []string) int {
	total := 0
	for _, r := range reasons {
		var n int
		if _, err := fmt.Sscanf(r, "%d×", &n); err == nil && strings.Contains(r, "use of closed network connection") {
			total += n
		}
	}
	return total
}

// reRegisterWithGUTI moves every resident to a new association and runs a
// mobility registration update with its 5G-GUTI; it counts those accepted
// and those that were authenticated on the way.
func reRegisterWithGUTI(t *testing.T, cfg *config.Config, residents []*ransim.UE) (back, authenticated int, errs []string) {
	t.Helper()
	g := connectGNB(t, cfg)
	for _, ue := range residents {
		if ue.GUTI() == nil {
			t.Fatalf("resident %s has no 5G-GUTI", ue.SUPI())
		}
		ue.MoveTo(g)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := ue.UpdateRegistration(ctx, false)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", ue.SUPI(), err))
			continue
		}
		back++
		if ue.Authenticated() {
			authenticated++
		}
	}
	return back, authenticated, errs
}
