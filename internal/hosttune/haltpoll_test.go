package hosttune

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSysfs is a file standing in for the haltpoll parameter, holding v.
func fakeSysfs(t *testing.T, v string) HaltPoll {
	t.Helper()
	p := filepath.Join(t.TempDir(), "guest_halt_poll_ns")
	if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
	return HaltPoll{Path: p}
}

func content(t *testing.T, h HaltPoll) string {
	t.Helper()
	data, err := os.ReadFile(h.Path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Apply sets the window and remembers what was there; Restore puts it back.
func TestApplyThenRestorePutsTheHostBack(t *testing.T) {
	h := fakeSysfs(t, "0\n") // sysfs ends its values with a newline
	a, err := h.Apply(200000)
	if err != nil {
		t.Fatal(err)
	}
	if got := content(t, h); got != "200000" {
		t.Fatalf("after Apply the knob holds %q, want 200000", got)
	}
	if a.HaltPollNs != 200000 || a.Previous != 0 {
		t.Fatalf("Applied %+v, want 200000 over 0", *a)
	}
	restored, err := h.Restore(a)
	if err != nil || !restored {
		t.Fatalf("Restore: %v %v", restored, err)
	}
	if got := content(t, h); got != "0" {
		t.Fatalf("after Restore the knob holds %q, want 0", got)
	}
}

// A value someone changed after us is theirs: Restore leaves it.
func TestRestoreLeavesAValueChangedSince(t *testing.T) {
	h := fakeSysfs(t, "0")
	a, err := h.Apply(100000)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Set(50000); err != nil {
		t.Fatal(err)
	}
	restored, err := h.Restore(a)
	if err != nil || restored {
		t.Fatalf("Restore over another's value: restored=%v err=%v, want left alone", restored, err)
	}
	if got := content(t, h); got != "50000" {
		t.Fatalf("knob %q, want the other's 50000 kept", got)
	}
}

// No driver (bare metal, other hypervisors): every call says so and
// nothing is created.
func TestNoDriverIsSaidAndNothingIsWritten(t *testing.T) {
	h := HaltPoll{Path: filepath.Join(t.TempDir(), "absent")}
	if _, err := h.Read(); !errors.Is(err, ErrNoHaltPoll) {
		t.Fatalf("Read: %v, want ErrNoHaltPoll", err)
	}
	if _, err := h.Apply(200000); !errors.Is(err, ErrNoHaltPoll) {
		t.Fatalf("Apply: %v, want ErrNoHaltPoll", err)
	}
	if _, err := os.Stat(h.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Apply created %s: %v", h.Path, err)
	}
	if r := h.Snapshot(); r.HaltPollNs != nil || !strings.Contains(r.Note, "bare metal") {
		t.Fatalf("Snapshot %+v, want no value and a note", r)
	}
	if d := h.Describe(); !strings.Contains(d, "no haltpoll driver") {
		t.Fatalf("Describe %q", d)
	}
}

func TestSetRefusesOutOfRangeAndReadRefusesGarbage(t *testing.T) {
	h := fakeSysfs(t, "0")
	for _, ns := range []int64{-1, MaxHaltPollNs + 1} {
		if err := h.Set(ns); err == nil {
			t.Errorf("Set(%d) accepted", ns)
		}
	}
	if got := content(t, h); got != "0" {
		t.Fatalf("a refused Set wrote %q", got)
	}
	bad := fakeSysfs(t, "lots")
	if _, err := bad.Read(); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Fatalf("Read of garbage: %v", err)
	}
}

func TestSnapshotAndDescribeSayTheValue(t *testing.T) {
	h := fakeSysfs(t, "200000\n")
	if r := h.Snapshot(); r.HaltPollNs == nil || *r.HaltPollNs != 200000 {
		t.Fatalf("Snapshot %+v", r)
	}
	if d := h.Describe(); !strings.Contains(d, "200000") {
		t.Fatalf("Describe %q", d)
	}
	if d := fakeSysfs(t, "0").Describe(); !strings.Contains(d, "off") {
		t.Fatalf("Describe of 0: %q", d)
	}
}
