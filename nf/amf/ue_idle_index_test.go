package amf

import (
	"testing"

	"github.com/l25gc/l25gc/protocol/nasx"
)

// A parked UE is found by SUPI through every way a context is parked
// (release to CM-IDLE, restored from the UE store, a TMSI parked again)
// and forgotten through every way it leaves (a Service Request or
// registration with its 5G-GUTI takes it, a fresh registration takes all
// of its SUPI), so the lookups paging and the notifications make never
// find a context that has left nor miss one that is parked.
func TestParkedUEsAreFoundBySUPI(t *testing.T) {
	const a, b = "imsi-208930000000001", "imsi-208930000000002"
	parked := func(amfID int64, supi string, tmsi uint32) *ueContext {
		return &ueContext{amfID: amfID, supi: supi, guti: &nasx.GUTI{TMSI: tmsi}}
	}
	tab := newUETable()
	count := func(supi string) (n int) {
		tab.editIdleSUPI(supi, func(*ueContext) { n++ })
		return n
	}
	ua := parked(1, a, 100)
	tab.put(ua)
	tab.park(ua) // AN release
	if count(a) != 1 || !tab.known(a) {
		t.Fatalf("a released UE: found %d times, known %v; want once", count(a), tab.known(a))
	}
	tab.restoreIdle(parked(2, a, 101)) // an older context from the UE store
	if count(a) != 2 {
		t.Fatalf("with a restored context beside it: found %d, want 2", count(a))
	}
	if !tab.superseded(ua) || tab.superseded(parked(3, a, 0)) {
		t.Fatal("superseded: want a newer parked context of the SUPI seen (2 over 1), none over 3")
	}
	if ue, ok := tab.takeIdleIf(101, func(*ueContext) bool { return true }); !ok || ue.amfID != 2 {
		t.Fatalf("takeIdleIf(101) = %v, %v", ue, ok)
	}
	if count(a) != 1 {
		t.Fatalf("after a Service Request took one: found %d, want 1", count(a))
	}
	if _, ok := tab.takeIdleIf(100, func(*ueContext) bool { return false }); !ok || count(a) != 1 {
		t.Fatal("a refused take must leave the context parked and found")
	}
	tab.restoreIdle(parked(4, b, 100)) // TMSI 100 parked again, now for b
	if count(a) != 0 || count(b) != 1 {
		t.Fatalf("TMSI 100 re-parked for b: a found %d, b %d; want 0, 1", count(a), count(b))
	}
	tab.restoreIdle(parked(5, b, 102))
	if got := tab.takeIdleSUPI(b); len(got) != 2 || count(b) != 0 || tab.known(b) {
		t.Fatalf("takeIdleSUPI(b) took %d, then found %d; want 2, 0", len(got), count(b))
	}
	if len(tab.idle) != 0 || len(tab.idleBySUPI) != 0 {
		t.Fatalf("left parked %v, index %v; want both empty", tab.idle, tab.idleBySUPI)
	}
}
