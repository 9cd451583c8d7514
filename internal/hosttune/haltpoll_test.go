package hosttune

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// Wanted: a configured window is set as it is; none configured is the
// default only on a guest at 0 (a window someone set is theirs, a host
// without the driver has nothing to set); Leave sets nothing.
func TestWantedResolvesTheConfiguredWindow(t *testing.T) {
	at := func(v string) HaltPoll {
		h := HaltPoll{Path: filepath.Join(t.TempDir(), "guest_halt_poll_ns")}
		if v != "" {
			if err := os.WriteFile(h.Path, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return h
	}
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name           string
		host           string // "": no driver
		configured     *int64
		ns             int64
		set, byDefault bool
	}{
		{"default on a guest at 0", "0", nil, DefaultHaltPollNs, true, true},
		{"default leaves a window someone set", "12345", nil, 0, false, true},
		{"default on a host without the driver", "", nil, 0, false, true},
		{"configured", "12345", n(100000), 100000, true, false},
		{"configured 0", "12345", n(0), 0, true, false},
		{"leave", "0", n(Leave), 0, false, false},
	} {
		ns, set, byDefault := at(c.host).Wanted(c.configured)
		if ns != c.ns || set != c.set || byDefault != c.byDefault {
			t.Errorf("%s: got %d %v %v, want %d %v %v", c.name, ns, set, byDefault, c.ns, c.set, c.byDefault)
		}
	}
}

// PollTime adds up the POLL state's time (µs in sysfs) of every CPU and
// only that state's.
func TestPollTimeSumsThePollStateOfEveryCPU(t *testing.T) {
	root := t.TempDir()
	state := func(cpu, st, name, us string) {
		dir := filepath.Join(root, cpu, "cpuidle", st)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{"name": name + "\n", "time": us + "\n"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, ok := pollTime(root); ok {
		t.Fatal("no cpuidle states, want ok false")
	}
	state("cpu0", "state0", "POLL", "1500")
	state("cpu0", "state1", "haltpoll idle", "900000")
	state("cpu1", "state0", "POLL", "500")
	if d, ok := pollTime(root); !ok || d != 2*time.Millisecond {
		t.Fatalf("poll time %v %v, want 2ms", d, ok)
	}
}
