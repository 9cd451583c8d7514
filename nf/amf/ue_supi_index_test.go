package amf

import "testing"

// The connected UE of a SUPI is found by the index however it got its
// SUPI (authentication, a parked context adopted, a context put back), and
// while an old connection is being released the newest one is the UE's.
func TestConnectedUEsAreFoundBySUPI(t *testing.T) {
	const supi = "imsi-208930000000001"
	tab := newUETable()
	old := &ueContext{amfID: 1, gnbID: 1}
	tab.put(old)
	if _, ok := tab.findSUPI(supi); ok {
		t.Fatal("a UE found before it has a SUPI")
	}
	tab.setSUPI(old, supi) // authenticated
	if id, ok := tab.findSUPI(supi); !ok || id != 1 {
		t.Fatalf("after authentication: %d, %v; want 1", id, ok)
	}
	fresh := &ueContext{amfID: 2, gnbID: 2}
	tab.put(fresh)
	tab.setSUPI(fresh, supi) // registered again on another connection
	if id, ok := tab.findSUPI(supi); !ok || id != 2 {
		t.Fatalf("with two connections: %d, %v; want the newest, 2", id, ok)
	}
	if !tab.superseded(old) || tab.superseded(fresh) {
		t.Fatalf("superseded: old %v, fresh %v; want true, false", tab.superseded(old), tab.superseded(fresh))
	}
	tab.remove(2)
	if id, ok := tab.findSUPI(supi); !ok || id != 1 {
		t.Fatalf("after the newest left: %d, %v; want 1", id, ok)
	}
	tab.setSUPI(old, "imsi-208930000000002") // the connection now serves another UE
	if _, ok := tab.findSUPI(supi); ok {
		t.Fatal("found by the SUPI its context no longer has")
	}
	tab.remove(1)
	if _, ok := tab.findSUPI("imsi-208930000000002"); ok || len(tab.bySUPI) != 0 {
		t.Fatalf("a removed UE still found; index %v", tab.bySUPI)
	}
	parked := &ueContext{amfID: 3, supi: supi}
	tab.put(parked) // a context put back with its SUPI
	if id, ok := tab.findSUPI(supi); !ok || id != 3 {
		t.Fatalf("a context put with its SUPI: %d, %v; want 3", id, ok)
	}
}
