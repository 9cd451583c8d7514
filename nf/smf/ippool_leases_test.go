package smf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/l25gc/l25gc/config"
)

// An SMF upgraded from one file per lease keeps those leases: their
// owners get their addresses back, nobody else does, and the files are
// gone into the log.
func TestLeaseFilesOfAnOlderSMFAreAdopted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "10.60.0.2"), []byte("imsi-7/1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := config.SMFDNN{DNN: "internet", Pool: "10.60.0.0/29"}
	p, err := newIPPool(d, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "10.60.0.2")); !os.IsNotExist(err) {
		t.Fatalf("lease file still there after adoption: %v", err)
	}
	for i := 0; i < 4; i++ {
		if a, _ := p.allocate("other-" + string(rune('a'+i))); a.String() == "10.60.0.2" {
			t.Fatal("the adopted lease of 10.60.0.2 handed to another UE")
		}
	}
	_ = p.close()
	restarted, err := newIPPool(d, dir)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := restarted.allocate("imsi-7/1"); a.String() != "10.60.0.2" {
		t.Fatalf("imsi-7/1 got %v after adoption and a restart, want 10.60.0.2", a)
	}
}

// Compaction keeps exactly the live leases and bounds the log however many
// sessions come and go.
func TestLeaseLogCompactsToTheLiveLeases(t *testing.T) {
	dir := t.TempDir()
	d := config.SMFDNN{DNN: "internet", Pool: "10.60.0.0/24"}
	p, err := newIPPool(d, dir)
	if err != nil {
		t.Fatal(err)
	}
	p.log.SetCompactMin(2048)
	kept, err := p.allocate("imsi-kept/1")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		owner := "imsi-" + string(rune('a'+i%26)) + "/1"
		a, err := p.allocate(owner)
		if err != nil {
			t.Fatal(err)
		}
		p.release(a, owner)
	}
	if size := p.log.Size(); size > 8192 {
		t.Fatalf("lease log is %d bytes after 2000 sessions with one lease live", size)
	}
	_ = p.close()
	restarted, err := newIPPool(d, dir)
	if err != nil {
		t.Fatal(err)
	}
	if restarted.inUse() != 1 || restarted.byAddr[u32(kept)] != "imsi-kept/1" {
		t.Fatalf("after compactions and a restart: %d leases, %v held by %q; want only imsi-kept/1's",
			restarted.inUse(), kept, restarted.byAddr[u32(kept)])
	}
}

// A lease the pool's prefix no longer covers (configured smaller since)
// stays in the log through a compaction.
func TestLeaseOutsideThePrefixSurvivesCompaction(t *testing.T) {
	dir := t.TempDir()
	wide := config.SMFDNN{DNN: "internet", Pool: "10.60.0.0/24"}
	p, err := newIPPool(wide, dir)
	if err != nil {
		t.Fatal(err)
	}
	p.next = 100
	far, _ := p.allocate("imsi-far/1")
	_ = p.close()

	narrow := config.SMFDNN{DNN: "internet", Pool: "10.60.0.0/28"}
	q, err := newIPPool(narrow, dir)
	if err != nil {
		t.Fatal(err)
	}
	q.log.SetCompactMin(256)
	for i := 0; i < 50; i++ {
		a, _ := q.allocate("imsi-x/1")
		q.release(a, "imsi-x/1")
	}
	_ = q.close()
	back, err := newIPPool(wide, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := back.allocate("imsi-far/1"); got != far {
		t.Fatalf("imsi-far/1 got %v after a narrow pool compacted the log, want %v", got, far)
	}
}
