// Package hosttune reads and sets the host's latency knobs that decide
// what waking an idle CPU costs, and puts them back afterwards.
//
// Today that is one knob: the guest haltpoll cpuidle driver's
// guest_halt_poll_ns. Inside a KVM guest (this project's Firecracker VM) an
// idle vCPU that halts exits to the hypervisor, and waking it again (an
// X-IO doorbell, a futex wake of a poller) costs a VM entry/exit pair on
// top of the wake-up itself. With halt polling on, an idle vCPU first polls
// for up to that many nanoseconds before it halts, so a wake-up arriving
// within it costs no VM exit: lower latency per SBI call, paid for with
// up to that much spinning per idle period on each vCPU.
package hosttune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// HaltPollPath is the guest haltpoll driver's poll window in sysfs
// (Documentation/virt/guest-halt-polling.rst).
const HaltPollPath = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"

// MaxHaltPollNs bounds what a config may ask for: a longer window is a
// vCPU that spins most of its idle time, not a latency setting.
const MaxHaltPollNs = 10_000_000

// DefaultHaltPollNs is the window a core sets on a KVM guest whose window
// is 0 when its config names none (config tuning.halt_poll_ns; README
// "Latency tuning" has the measurements behind it). Not longer: UPF-U's
// idle naps (up to 250 µs when this was measured; 1 ms since) end within a 200 µs window often enough that
// the driver keeps polling through them, about a fifth of both vCPUs with
// the core at rest; at 100 µs it shrinks the window back and polls almost
// nothing, while the SBI wake-ups inside a procedure still land within it.
const DefaultHaltPollNs = 100_000

// Leave is the setting that never touches the host: config
// tuning.halt_poll_ns -1, bench --halt-poll-ns -1.
const Leave = -1

// Wanted resolves a configured window (config tuning.halt_poll_ns) against
// this host: set says whether to write ns, byDefault that the config named
// none and this is DefaultHaltPollNs on a guest whose window was 0. A
// window someone else set (non-zero) is theirs: the default leaves it, as
// it leaves a host without the driver or whose knob cannot be read.
func (h HaltPoll) Wanted(configured *int64) (ns int64, set, byDefault bool) {
	switch {
	case configured == nil:
		if cur, err := h.Read(); err != nil || cur != 0 {
			return 0, false, true
		}
		return DefaultHaltPollNs, true, true
	case *configured == Leave:
		return 0, false, false
	}
	return *configured, true, false
}

// ErrNoHaltPoll says this host has no guest haltpoll driver (bare metal,
// another hypervisor, a kernel without it): there is nothing to tune.
var ErrNoHaltPoll = errors.New("no guest haltpoll idle driver on this host (bare metal or another hypervisor): nothing to tune")

// HaltPoll is the haltpoll knob at Path (HaltPollPath; tests point it at a
// temporary file standing in for sysfs).
type HaltPoll struct {
	Path string
}

// Host is the knob of this host.
func Host() HaltPoll { return HaltPoll{Path: HaltPollPath} }

// Read returns the poll window in ns, or ErrNoHaltPoll.
func (h HaltPoll) Read() (int64, error) {
	data, err := os.ReadFile(h.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNoHaltPoll
	}
	if err != nil {
		return 0, fmt.Errorf("hosttune: %w", err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("hosttune: %s: not a number of ns: %q", h.Path, strings.TrimSpace(string(data)))
	}
	return ns, nil
}

// Set writes the poll window (root only on a real host).
func (h HaltPoll) Set(ns int64) error {
	if ns < 0 || ns > MaxHaltPollNs {
		return fmt.Errorf("hosttune: halt poll %d ns: want 0..%d", ns, MaxHaltPollNs)
	}
	if _, err := os.Stat(h.Path); errors.Is(err, fs.ErrNotExist) {
		return ErrNoHaltPoll
	}
	// O_WRONLY without O_CREATE: sysfs attributes exist or the driver is absent.
	f, err := os.OpenFile(h.Path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("hosttune: %w (setting halt polling needs root)", err)
	}
	_, err = f.WriteString(strconv.FormatInt(ns, 10))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("hosttune: %s: %w", h.Path, err)
	}
	return nil
}

// Applied records a change made to the host, so it can be put back even by
// another process (`l25gc down` after its supervisor died).
type Applied struct {
	HaltPollNs int64 `json:"halt_poll_ns"` // what was set
	Previous   int64 `json:"previous"`     // what was there before
}

// Apply sets the poll window to ns and returns what to put back.
func (h HaltPoll) Apply(ns int64) (*Applied, error) {
	prev, err := h.Read()
	if err != nil {
		return nil, err
	}
	if err := h.Set(ns); err != nil {
		return nil, err
	}
	return &Applied{HaltPollNs: ns, Previous: prev}, nil
}

// Restore puts back the value a.Previous, unless someone else changed the
// knob since a was applied (then theirs is the host's setting now and is
// left alone; restored is false).
func (h HaltPoll) Restore(a *Applied) (restored bool, err error) {
	if a == nil {
		return false, nil
	}
	cur, err := h.Read()
	if err != nil {
		return false, err
	}
	if cur != a.HaltPollNs {
		return false, nil
	}
	return true, h.Set(a.Previous)
}

// Describe is one line on the host's setting, for status and benchmarks.
func (h HaltPoll) Describe() string {
	ns, err := h.Read()
	switch {
	case errors.Is(err, ErrNoHaltPoll):
		return "halt polling: no haltpoll driver (not a KVM guest, or not built in)"
	case err != nil:
		return "halt polling: " + err.Error()
	case ns == 0:
		return "halt polling: off (guest_halt_poll_ns 0: each wake of an idle vCPU is a VM exit)"
	}
	return fmt.Sprintf("halt polling: guest_halt_poll_ns %d", ns)
}

// Record is how a benchmark result says the host was tuned: HaltPollNs is
// nil when the host has no haltpoll driver.
type Record struct {
	HaltPollNs *int64 `json:"halt_poll_ns"`
	Note       string `json:"note,omitempty"`
}

// Snapshot reads the host's setting for a result's record.
func (h HaltPoll) Snapshot() Record {
	ns, err := h.Read()
	if err != nil {
		return Record{Note: err.Error()}
	}
	return Record{HaltPollNs: &ns}
}

// cpuidleRoot holds each CPU's cpuidle states (Documentation/admin-guide/pm/cpuidle.rst).
const cpuidleRoot = "/sys/devices/system/cpu"

// PollTime is how long all CPUs have spent in the cpuidle POLL state since
// boot: the haltpoll window's spinning (and any other idle polling). The
// guest counts it as idle, so no process's CPU time and no /proc/stat busy
// time shows it, but the host does not get the vCPU back meanwhile. ok is
// false on a host whose CPUs name no POLL state.
func PollTime() (d time.Duration, ok bool) {
	return pollTime(cpuidleRoot)
}

func pollTime(root string) (d time.Duration, ok bool) {
	names, _ := filepath.Glob(filepath.Join(root, "cpu[0-9]*", "cpuidle", "state[0-9]*", "name"))
	for _, name := range names {
		n, err := os.ReadFile(name)
		if err != nil || strings.TrimSpace(string(n)) != "POLL" {
			continue
		}
		t, err := os.ReadFile(filepath.Join(filepath.Dir(name), "time"))
		if err != nil {
			continue
		}
		us, err := strconv.ParseInt(strings.TrimSpace(string(t)), 10, 64)
		if err != nil {
			continue
		}
		d += time.Duration(us) * time.Microsecond
		ok = true
	}
	return d, ok
}
