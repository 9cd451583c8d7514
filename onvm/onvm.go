// Package onvm is the X-IO NF manager: the DPDK primary process that owns the
// shared memory every NF attaches to (package xio). It creates the hugepage
// message buffers, one receive ring per NF slot and the tables (NF slots,
// service table: which NF serves which address, connections) in memzones,
// all named in include/onvm_shm.h. It then sleeps, waking a few times a
// second to check that every attached NF process still runs; when one died
// it resets that NF's connections (peers' reads fail at once), drops its
// bindings and takes back its buffers. A process killed inside a DPDK ring
// operation leaves that ring wedged for good; the manager's watchdog then
// makes Run fail with what is wedged, so the node restarts X-IO (node
// watchManager) instead of every NF hanging on the ring.
//
// Run it in its own process (l25gc onvm): EAL can be initialised once per
// process, so Run can be called once.
//
// Surviving a manager crash. DPDK secondaries keep working when their
// primary dies (the hugepages stay mapped), but a new primary cannot start
// while any of them lives (it cannot take the memzone list they map) and
// would build fresh memory anyway. So a node runs two processes: a primary
// in mode Hold that creates the memory and then only holds it (no scans, no
// logic that can fail), and the manager in mode Adopt, a secondary like the
// NFs. A manager killed at any instant is started again and adopts the
// tables, the reaps in progress and the buffers its predecessor held, while
// every NF keeps its process, its connections and its in-memory state: the
// NFs never wait for the manager, it only cleans up after deaths. A full
// X-IO restart (all NFs) is left for a ring wedged by a process killed
// inside an enqueue (ErrWedged) and for the death of the holding primary.
package onvm

/*
#cgo CFLAGS: -D_GNU_SOURCE -I${SRCDIR}/include -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -include rte_config.h -mssse3 -O2
#cgo LDFLAGS: -lrte_eal -lrte_ring
#include <stdlib.h>
#include "onvm_manager.h"
#include "onvm_ops.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Mode is the part a process plays in X-IO's shared memory.
type Mode int

const (
	// CreateAndManage creates the shared memory as the DPDK primary and
	// manages it: one process, for tests and single-process tools.
	CreateAndManage Mode = iota
	// Hold creates the shared memory as the DPDK primary and only holds
	// it for a manager in mode Adopt.
	Hold
	// Adopt attaches as a DPDK secondary to memory a Hold primary holds
	// and manages it, finishing what a manager that died left undone.
	Adopt
)

// Config says where the shared memory lives. NFs must use the same
// FilePrefix and HugeDir (xio.Config).
type Config struct {
	Mode       Mode
	FilePrefix string        // EAL --file-prefix; default "l25gc"
	HugeDir    string        // hugetlbfs mount; default "/dev/hugepages"
	MemMB      int           // hugepage memory to reserve; default 160
	Buffers    int           // data buffers in the pool; default 8192 (8 KiB each); each NF may have 1/8 queued
	ScanEvery  time.Duration // liveness check period; default 100ms
	// Ready, if set, is called once the shared memory exists.
	Ready func()
}

func (c Config) withDefaults() Config {
	if c.FilePrefix == "" {
		c.FilePrefix = "l25gc"
	}
	if c.HugeDir == "" {
		c.HugeDir = "/dev/hugepages"
	}
	if c.MemMB == 0 {
		c.MemMB = 160
	}
	if c.Buffers == 0 {
		c.Buffers = 8192
	}
	if c.ScanEvery == 0 {
		c.ScanEvery = 100 * time.Millisecond
	}
	return c
}

// EALArgs are the EAL arguments of the process. Multi-process needs real
// hugepage files: no --in-memory, no --no-huge.
func (c Config) EALArgs() []string {
	if c.Mode == Adopt {
		return []string{"l25gc-onvm", "--proc-type=secondary", "--file-prefix=" + c.FilePrefix,
			"--huge-dir=" + c.HugeDir, "--no-pci", "--no-telemetry", "-l", "0", "--log-level=lib.eal:error"}
	}
	return []string{"l25gc-onvm", "--proc-type=primary", "--file-prefix=" + c.FilePrefix,
		"--huge-dir=" + c.HugeDir, "-m", fmt.Sprint(c.MemMB), "--no-pci", "--no-telemetry",
		"-l", "0", "--log-level=lib.eal:error"}
}

// primaryConfigPath is where EAL keeps the primary's config file (root's
// runtime dir; xio.Config finds it the same way).
func (c Config) primaryConfigPath() string {
	dir := "/var/run"
	if os.Geteuid() != 0 {
		if dir = os.Getenv("XDG_RUNTIME_DIR"); dir == "" {
			dir = "/tmp"
		}
	}
	return filepath.Join(dir, "dpdk", c.FilePrefix, "config")
}

// Snapshot describes the shared memory as the manager sees it.
type Snapshot struct {
	PoolSize      uint64 // data buffers in the pool
	PoolInUse     uint64 // data buffers currently taken from it
	CtlInUse      uint64 // control buffers (FIN/RST) currently taken
	NFQuota       uint64 // data buffers one NF may have queued
	BadMessages   uint64 // malformed or forged ring entries NFs dropped
	ReclaimedBufs uint64 // buffers taken back from dead NFs since start
	ReapedNFs     uint64 // dead NF processes cleaned up since start
	NFs           uint64 // attached NF processes
	Conns         uint64 // open connections
	Services      uint64 // bound addresses
	ManagerEpoch  uint64 // managers that adopted the tables (Adopt) since they were created
}

var (
	mu      sync.Mutex // serialises Run's init/stop against Stats
	running bool
	ran     bool
)

// ErrAlreadyRan is returned by a second Run in the same process.
var ErrAlreadyRan = errors.New("onvm: the manager runs once per process (DPDK EAL cannot be re-initialised)")

// ErrWedged is wrapped by Run's error when a process killed inside a ring
// operation wedged a ring: X-IO must restart with its NFs; a new manager
// alone would find the same ring wedged.
var ErrWedged = errors.New("a shared ring is wedged")

// Run initialises EAL (as cfg.Mode says), creates or adopts the shared
// memory and, unless it only holds it, watches NF liveness until ctx is
// done; then it releases EAL and, as the primary, removes its hugepage
// files. It fails early with ErrWedged when a process killed mid-operation
// wedged a ring: X-IO cannot recover in place and must be restarted with
// its NFs.
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	if err := start(cfg); err != nil {
		return err
	}
	defer stop(cfg)
	if cfg.Ready != nil {
		cfg.Ready()
	}
	if cfg.Mode == Hold {
		<-ctx.Done() // the memory stays while this process lives
		return nil
	}
	t := time.NewTicker(cfg.ScanEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := scan(); err != nil {
				return err
			}
		}
	}
}

func scan() error {
	var errbuf [512]C.char
	mu.Lock()
	r := C.onvm_scan(&errbuf[0], C.size_t(len(errbuf)))
	mu.Unlock()
	if r < 0 {
		return fmt.Errorf("onvm: %s: %w", C.GoString(&errbuf[0]), ErrWedged)
	}
	return nil
}

func start(cfg Config) error {
	mu.Lock()
	defer mu.Unlock()
	if ran {
		return ErrAlreadyRan
	}
	if err := checkHugeDir(cfg.HugeDir); err != nil {
		return err
	}
	ran = true
	if err := ealInit(cfg); err != nil {
		C.onvm_stop()
		return err
	}
	running = true
	return nil
}

func ealInit(cfg Config) error {
	args := cfg.EALArgs()
	argv := make([]*C.char, len(args))
	for i, a := range args {
		argv[i] = C.CString(a)
	}
	// EAL keeps pointers into argv: a C array, never freed (once per process).
	cargv := (**C.char)(C.malloc(C.size_t(len(args)) * C.size_t(unsafe.Sizeof(argv[0]))))
	copy(unsafe.Slice(cargv, len(args)), argv)
	var errbuf [256]C.char
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cfg.Mode == Adopt {
		path := C.CString(cfg.primaryConfigPath())
		held := C.onvm_primary_running(path) != 0
		C.free(unsafe.Pointer(path))
		if !held {
			return fmt.Errorf("onvm: adopt the shared memory: no DPDK primary holds it (file-prefix %s, expected %s; does its holder run?)",
				cfg.FilePrefix, cfg.primaryConfigPath())
		}
		if C.onvm_adopt(C.int(len(args)), cargv, &errbuf[0], C.size_t(len(errbuf))) != 0 {
			return fmt.Errorf("onvm: adopt the shared memory: %s (file-prefix %s; does its holder run?)",
				C.GoString(&errbuf[0]), cfg.FilePrefix)
		}
		return nil
	}
	manage := C.int(1)
	if cfg.Mode == Hold {
		manage = 0
	}
	if C.onvm_init(C.int(len(args)), cargv, C.uint(cfg.Buffers), manage, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return fmt.Errorf("onvm: %s (file-prefix %s, huge-dir %s; are hugepages reserved? see deploy/hugepages.sh)",
			C.GoString(&errbuf[0]), cfg.FilePrefix, cfg.HugeDir)
	}
	return nil
}

func checkHugeDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("onvm: hugepage dir %s missing (run deploy/hugepages.sh as root)", dir)
	}
	return nil
}

// stop zeroes the tables' magic first (onvm_stop): NFs then fail their
// sends with ESHUTDOWN instead of waiting for a manager that is gone.
func stop(cfg Config) {
	mu.Lock()
	defer mu.Unlock()
	running = false
	C.onvm_stop()
	if cfg.Mode == Adopt {
		return // the memory is its holder's
	}
	// EAL leaves its hugepage files behind; they would keep the pages.
	files, _ := filepath.Glob(filepath.Join(cfg.HugeDir, cfg.FilePrefix+"map_*"))
	for _, f := range files {
		os.Remove(f)
	}
}

// Stats reads the manager's counters; zero when the manager is not running
// in this process.
func Stats() Snapshot {
	mu.Lock()
	defer mu.Unlock()
	if !running {
		return Snapshot{}
	}
	var st C.struct_onvm_stats
	C.onvm_stats(&st)
	return Snapshot{
		PoolSize: uint64(st.pool_size), PoolInUse: uint64(st.pool_in_use),
		CtlInUse: uint64(st.ctl_in_use), NFQuota: uint64(st.nf_quota), BadMessages: uint64(st.bad_msgs),
		ReclaimedBufs: uint64(st.reclaimed_bufs), ReapedNFs: uint64(st.reaped_nfs),
		NFs: uint64(st.nfs), Conns: uint64(st.conns), Services: uint64(st.services),
		ManagerEpoch: uint64(st.manager_epoch),
	}
}
