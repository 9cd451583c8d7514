package prov

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The token file is made once, readable by its owner only, with 256 random
// bits in hex; later calls read the same token; a file others can read is
// refused, naming the fix.
func TestEnsureTokenMakesAPrivateFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "admin.token")
	tok, err := EnsureToken(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 || len(tok) != 64 {
		t.Fatalf("token file %v (%v), token %q; want mode 0600 and 64 hex digits", info.Mode(), err, tok)
	}
	if again, err := EnsureToken(path); err != nil || again != tok {
		t.Fatalf("second EnsureToken = %q, %v; want the same token", again, err)
	}
	if other, _ := EnsureToken(filepath.Join(t.TempDir(), "admin.token")); other == tok {
		t.Fatal("two token files hold the same token")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable token file: %v, want a refusal saying chmod 600", err)
	}
}

func TestRangeSplit(t *testing.T) {
	parts, err := Range{Subscriber: Subscriber{IMSI: "208930000000998"}, Count: 5}.Split(2)
	if err != nil || len(parts) != 3 || parts[1].IMSI != "208930000001000" || parts[2].Count != 1 {
		t.Fatalf("Split = %+v, %v", parts, err)
	}
	for _, n := range []int{0, -5} {
		if _, err := (Range{Subscriber: Subscriber{IMSI: "208930000000001"}, Count: n}).Split(10); err == nil {
			t.Errorf("count %d split without an error", n)
		}
	}
}
