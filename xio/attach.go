// Package xio is X-IO's NF side: a socket API (net.Listener, net.Conn,
// net.PacketConn) over DPDK shared memory created by the onvm manager
// (package onvm). The process attaches as a DPDK secondary once, takes an NF
// slot with its own rx ring, and runs one poller goroutine that drains the
// ring and hands each message to the Go connection it belongs to. Readers
// and writers block as goroutines, never as OS threads held in C.
package xio

/*
#cgo CFLAGS: -D_GNU_SOURCE -I${SRCDIR}/../onvm/include -I/usr/include/dpdk -I/usr/include/x86_64-linux-gnu/dpdk -include rte_config.h -mssse3 -O2
#cgo LDFLAGS: -lrte_eal -lrte_ring
#include <stdlib.h>
#include "stack.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// Config says which onvm manager to attach to; it must match onvm.Config.
type Config struct {
	FilePrefix string // EAL --file-prefix; default $L25GC_XIO_PREFIX or "l25gc"
	HugeDir    string // default "/dev/hugepages"
	// Spin is the poller's spin budget: how long it may keep polling
	// after the last message before it sleeps on its doorbell, spent only
	// while recent idle gaps show it pays (spin.go). 0 takes the default,
	// 50µs or $L25GC_XIO_SPIN_US; negative never spins.
	Spin time.Duration
	// ReplySpin is how long a goroutine waiting for a reply to its
	// request (Conn.ReadReply) may poll the rx ring itself while the
	// poller sleeps, spent only on conns whose recent replies came
	// within it (reply.go). 0 takes $L25GC_XIO_REPLY_SPIN_US, else
	// never (see defaultReplySpin); negative never polls.
	ReplySpin time.Duration
	// Doorbell is how the poller sleeps: DoorbellFutex (blocked in C)
	// or DoorbellEventfd (parked in Go's netpoller); doorbell.go says
	// which is better and why. "" takes $L25GC_XIO_DOORBELL, else
	// doorbellFor the process's GOMAXPROCS (the eventfd with one P, the
	// futex with more). Should the eventfd not work here (no
	// pidfd_getfd), the futex is used (DoorbellInUse says why).
	Doorbell string
}

func (c Config) withDefaults() Config {
	if c.FilePrefix == "" {
		c.FilePrefix = os.Getenv("L25GC_XIO_PREFIX")
	}
	if c.FilePrefix == "" {
		c.FilePrefix = "l25gc"
	}
	if c.HugeDir == "" {
		c.HugeDir = "/dev/hugepages"
	}
	if c.Spin == 0 {
		c.Spin = usFromEnv("L25GC_XIO_SPIN_US", 50*time.Microsecond)
	}
	if c.ReplySpin == 0 {
		c.ReplySpin = usFromEnv("L25GC_XIO_REPLY_SPIN_US", defaultReplySpin)
	}
	if c.Doorbell == "" {
		c.Doorbell = doorbellFromEnv()
	}
	return c
}

// defaultReplySpin is Config.ReplySpin's default: off. Measured on the
// 2-core VM, polling for replies lowered bench sbi --gap 2ms's p50 only
// while other load kept the cores awake (120-139 µs with 100 µs of
// polling against 142-184 without); on a quiet machine it did not (p50
// 198-239 against 193-203 µs, CPU 526-584 against 324-338 µs per
// request), nor a lone registration's (4.4-5.1 against 3.8-4.9 ms): there
// the answer comes late because waking the peer's idle vCPU is slow, which
// a caller's polling cannot hide.
const defaultReplySpin = -1

// usFromEnv reads a budget in µs from the environment variable name (a
// tuning knob): a positive number, or -1 to turn it off; else def.
func usFromEnv(name string, def time.Duration) time.Duration {
	us, err := strconv.Atoi(os.Getenv(name))
	switch {
	case err == nil && us > 0:
		return time.Duration(us) * time.Microsecond
	case err == nil && us < 0:
		return -1
	}
	return def
}

func (c Config) ealArgs() []string {
	return []string{"l25gc-xio", "--proc-type=secondary", "--file-prefix=" + c.FilePrefix,
		"--huge-dir=" + c.HugeDir, "--no-pci", "--no-telemetry", "-l", "0",
		"--log-level=lib.eal:error"}
}

// configPath is where EAL keeps the primary's config file (root's runtime dir).
func (c Config) configPath() string {
	dir := "/var/run"
	if os.Geteuid() != 0 {
		dir = os.Getenv("XDG_RUNTIME_DIR")
		if dir == "" {
			dir = "/tmp"
		}
	}
	return filepath.Join(dir, "dpdk", c.FilePrefix, "config")
}

var (
	attachMu  sync.Mutex
	attached  *stack
	attachErr error // a failed rte_eal_init is final for the process
)

// ErrNoManager is wrapped by Init's error when no onvm manager runs.
var ErrNoManager = errors.New("no onvm manager")

// Init attaches this process to the onvm manager. It is optional: the first
// Listen, Dial or ListenPacket attaches with the default Config. Attaching
// happens once per process; later calls return the first outcome, except
// that "no manager yet" is retried.
func Init(cfg Config) error {
	_, err := attach(cfg)
	return err
}

func defaultStack() (*stack, error) { return attach(Config{}) }

func attach(cfg Config) (*stack, error) {
	cfg = cfg.withDefaults()
	if err := checkDoorbell(cfg.Doorbell); err != nil {
		return nil, err
	}
	attachMu.Lock()
	defer attachMu.Unlock()
	if attached != nil || attachErr != nil {
		return attached, attachErr
	}
	path := C.CString(cfg.configPath())
	running := C.xio_primary_running(path) != 0
	C.free(unsafe.Pointer(path))
	if !running {
		return nil, fmt.Errorf("xio: cannot attach to shared memory: %w (is the onvm manager running? file-prefix %s, expected %s)",
			ErrNoManager, cfg.FilePrefix, cfg.configPath())
	}
	if err := ealAttach(cfg); err != nil {
		attachErr = err
		return nil, err
	}
	attached = newStack(cfg)
	if cfg.Doorbell == DoorbellEventfd {
		attached.bell, attached.bellErr = newEventfdBell(attached.shm)
	}
	go attached.poll()
	return attached, nil
}

func ealAttach(cfg Config) error {
	args := cfg.ealArgs()
	// EAL keeps pointers into argv: a C array, kept for the process's life.
	cargv := (**C.char)(C.malloc(C.size_t(len(args)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	for i, a := range args {
		unsafe.Slice(cargv, len(args))[i] = C.CString(a)
	}
	var errbuf [256]C.char
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if C.xio_attach(C.int(len(args)), cargv, &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return fmt.Errorf("xio: attach to onvm manager (file-prefix %s): %s (is the onvm manager running?)",
			cfg.FilePrefix, C.GoString(&errbuf[0]))
	}
	return nil
}

// DoorbellInUse says how this process's poller sleeps (DoorbellEventfd
// or DoorbellFutex) and, if the eventfd was asked for but is not in use,
// why; "" before the process attached.
func DoorbellInUse() (string, error) {
	attachMu.Lock()
	defer attachMu.Unlock()
	switch {
	case attached == nil:
		return "", nil
	case attached.bell != nil:
		return DoorbellEventfd, nil
	}
	return DoorbellFutex, attached.bellErr
}

// PoolInUse is the number of shared message buffers (data and control)
// taken by all processes; size is how many there are. Both need an attached
// process; counting scans every buffer, so it is for tests and statistics.
func PoolInUse() (inUse, size uint64, err error) {
	if _, err := defaultStack(); err != nil {
		return 0, 0, err
	}
	return uint64(C.xio_pool_in_use()), uint64(C.xio_pool_size()), nil
}
