//go:build l25gc_testhooks

package xio_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/l25gc/l25gc/xio/xioproc"
)

func init() {
	roles["no-hugepages"] = noHugepagesRole
	roles["bad-config"] = badConfigRole
}

// noHugepagesRole fails as a DPDK primary does when the hugepages it
// counted on were taken meanwhile, and counts its starts in $XIO_STARTS.
func noHugepagesRole(context.Context) error {
	countStart()
	fmt.Fprintln(os.Stderr, "EAL: FATAL: Cannot init memory")
	return errors.New("onvm: EAL init (primary): Cannot allocate memory")
}

// badConfigRole fails for a reason a retry cannot cure.
func badConfigRole(context.Context) error {
	countStart()
	return errors.New("config.yaml:3: sbi.transport: unknown value \"carrier-pigeon\"")
}

func countStart() {
	f, err := os.OpenFile(os.Getenv("XIO_STARTS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		f.WriteString("x")
		f.Close()
	}
}

// A child that exits before it is ready says why in the error (CI saw
// only "exited before it was ready", with the cause lost), and one that
// found too few hugepages, which another process may have held for a
// moment, is started again before the caller hears of it.
func TestChildExitingBeforeReadySaysWhy(t *testing.T) {
	for _, tc := range []struct {
		role   string
		starts int
		words  string
	}{
		{"no-hugepages", 3, "Cannot init memory"},
		{"bad-config", 1, `sbi.transport: unknown value "carrier-pigeon"`},
	} {
		t.Run(tc.role, func(t *testing.T) {
			starts := filepath.Join(t.TempDir(), "starts")
			p, err := xioproc.Start(tc.role, "XIO_STARTS="+starts)
			if err == nil {
				p.Kill()
				t.Fatalf("%s started", tc.role)
			}
			var early *xioproc.EarlyExitError
			if !errors.As(err, &early) || !strings.Contains(err.Error(), tc.words) || !strings.Contains(err.Error(), "exit status 1") {
				t.Fatalf("error %q: want an EarlyExitError with the exit status and %q", err, tc.words)
			}
			b, _ := os.ReadFile(starts)
			if len(b) != tc.starts {
				t.Fatalf("%s started %d times, want %d", tc.role, len(b), tc.starts)
			}
		})
	}
}

// CI's failure: a hugetlbfs file mapped shared (UPF tables of a test in
// another package) reserves its pages without touching them, so they
// still count as free; a manager started on that count found too few and
// died. With all but 40 of the free pages reserved, a manager still starts.
func TestManagerStartsBesideReservedHugepages(t *testing.T) {
	free, reserved := meminfo(t, "HugePages_Free:"), meminfo(t, "HugePages_Rsvd:")
	hold := free - reserved - 40
	if hold <= 0 {
		t.Skipf("only %d unreserved hugepages: nothing to hold", free-reserved)
	}
	path := filepath.Join("/dev/hugepages", fmt.Sprintf("xiotest-hold-%d", os.Getpid()))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	defer f.Close()
	size := hold << 21
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatalf("reserve %d hugepages: %v", hold, err)
	}
	defer syscall.Munmap(mem)
	if got := meminfo(t, "HugePages_Rsvd:"); got < reserved+hold {
		t.Fatalf("mapping %d hugepages reserved %d", hold, got-reserved)
	}
	// EnsureHugepages raises nr_hugepages for the manager; put it back
	// after, or every run would leave the machine more pages reserved.
	pages, err := os.ReadFile("/proc/sys/vm/nr_hugepages")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile("/proc/sys/vm/nr_hugepages", pages, 0o644) })
	m := startPrivateManager(t)
	if m.exited() {
		t.Fatalf("manager exited: %v", m.Err())
	}
}

func meminfo(t *testing.T, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			var n int
			fmt.Sscan(f[1], &n)
			return n
		}
	}
	t.Fatalf("no %s in /proc/meminfo", field)
	return 0
}
