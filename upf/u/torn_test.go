//go:build l25gc_testhooks

package u_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Installing a session while its packets flow never shows a packet half
// of each version: version A sends to TEID 0xA with QFI 5, version B to
// TEID 0xB with QFI 6 (the TEID is in the FAR, the QFI in the QER), and
// every packet carries one pair or the other. Installs run back to back,
// each pausing 10 µs between the FARs and the QERs, so readers meet
// half-written sessions all the time (without the seqlock check most
// packets here carry mixed pairs); the pause is within UPF-U's read
// budget, so packets wait instead of being lost.
func TestInstallUnderTrafficNeverMixesVersions(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	a, b := session(1, ueIP, upTEID, 0xA, 5), session(1, ueIP, upTEID, 0xB, 6)
	if err := l.table.Install(a); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var installs atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			s := a
			if i%2 == 1 {
				s = b
			}
			if err := l.table.InstallPausedForTest(s, 10*time.Microsecond); err != nil {
				t.Error(err)
				return
			}
			installs.Add(1)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	seen := map[[2]uint32]int{}
	busy := 0
	for round := 0; round < 100; round++ {
		busy0 := l.table.Stats().Drops["rule_busy"]
		for i := 0; i < 16; i++ {
			l.dn.send(t, downlinkFrame(n6, "x"))
		}
		// Every packet arrives, or was dropped as rule_busy: a writer
		// descheduled inside its pause on this loaded machine.
		got, dropped := 0, 0
		for end := time.Now().Add(wait); got+dropped < 16; {
			if f, err := l.gnb.recv(20*time.Millisecond, isGTPU); err == nil {
				teid, q := downlinkMarks(f)
				seen[[2]uint32{teid, uint32(q)}]++
				got++
			}
			dropped = int(l.table.Stats().Drops["rule_busy"] - busy0)
			if time.Now().After(end) {
				t.Fatalf("round %d: %d of 16 arrived, %d rule_busy (stats %+v)", round, got, dropped, l.table.Stats())
			}
		}
		busy += dropped
	}
	stop.Store(true)
	wg.Wait()
	for pair, n := range seen {
		if pair != [2]uint32{0xA, 5} && pair != [2]uint32{0xB, 6} {
			t.Errorf("%d packets to TEID %#x with QFI %d: a half-written session", n, pair[0], pair[1])
		}
	}
	t.Logf("%d installs while 1600 packets passed: %v, %d rule_busy", installs.Load(), seen, busy)
}
