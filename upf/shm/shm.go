// Package shm is UPF-C's side of the UPF's shared rule tables
// (onvm/include/upf_shm.h): a rules.Table whose sessions UPF-U forwards
// with, read in place from a shared hugepage file. Install writes a
// session whole under its slot's seqlock, so UPF-U sees the old rules or
// the new ones; the tables outlive UPF-C, so a restarted UPF-C reads its
// sessions back (Sessions) while UPF-U keeps forwarding.
package shm

/*
#cgo CFLAGS: -D_GNU_SOURCE -I${SRCDIR}/../../onvm/include -O2
#include <stdlib.h>
#include "tables.h"
*/
import "C"

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/upf/rules"
)

// PFCP causes (TS 29.244 8.2.1) of Install's and Remove's errors.
const (
	causeRuleCreationFailed = 69 // Rule creation/modification failure
	causeNoResources        = 75 // No resources available
	causeSessionNotFound    = 65 // Session context not found
)

// Config says which tables to open.
type Config struct {
	// MaxSessions is upf.max_sessions: the tables' size when this process
	// creates them, and what they must hold when they exist already; 0
	// opens existing tables of any size, never creating them (status,
	// exporters).
	MaxSessions int
	// Dir is where the tables file lives (default /dev/hugepages, or
	// /dev/shm for a user who cannot write there) and
	// Prefix names it (default $L25GC_XIO_PREFIX or "l25gc"), as the
	// onvm manager's EAL file prefix does: one core, one set of tables.
	Dir, Prefix string
}

// Path is the tables file (UPF_TABLES_FILE).
func (c Config) Path() string {
	dir, prefix := c.Dir, c.Prefix
	if dir == "" {
		dir = defaultDir()
	}
	if prefix == "" {
		prefix = os.Getenv("L25GC_XIO_PREFIX")
	}
	if prefix == "" {
		prefix = "l25gc"
	}
	return filepath.Join(dir, prefix+"-upf-tables")
}

// defaultDir is hugetlbfs where this process may write there (root, as
// UPF-U, which is a DPDK process, needs anyway), else /dev/shm: a core
// started by a user without root still runs UPF-C, whose sessions then
// live in ordinary shared memory. UPF-C and UPF-U of one core run as one
// user, so both pick the same directory.
func defaultDir() string {
	if unix.Access("/dev/hugepages", unix.W_OK) == nil {
		return "/dev/hugepages"
	}
	return "/dev/shm"
}

// ConfigFor is the tables of the core cfg describes, named after its data
// directory: two cores on one host (a lab next to a benchmark, tests)
// never share rules, while UPF-C and UPF-U of one core, reading one
// config, always do.
func ConfigFor(cfg *config.Config) Config {
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		dir = cfg.DataDir
	}
	h := fnv.New32a()
	h.Write([]byte(dir))
	return Config{MaxSessions: cfg.UPF.MaxSessions, Prefix: fmt.Sprintf("l25gc-%08x", h.Sum32())}
}

// RemoveFile deletes the tables file of cfg (`l25gc down`, tests): the
// sessions are gone for good once no process maps it.
func RemoveFile(cfg Config) error {
	_ = os.Remove(cfg.Path() + doorbellSuffix) // a killed UPF-C's doorbell
	_ = os.Remove(cfg.Path() + wakeSuffix)     // a killed UPF-U's
	err := os.Remove(cfg.Path())
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// Table is the shared rule tables, as UPF-C writes them. Its methods are
// safe for concurrent use (one writer at a time: the seqlock needs it).
type Table struct {
	mu     sync.Mutex
	h      *C.struct_upf_shm
	max    uint32
	bySEID map[uint64]uint32 // UP SEID -> slot
	free   []uint32          // unused slots, highest last
	path   string            // the tables file (its doorbell is next to it)
	// notesMu makes this process one consumer of UPF-U's notes.
	notesMu sync.Mutex
	// wakeFD is an unbound unix datagram socket that rings UPF-U's
	// doorbell after a command (ring.go wake); -1 until first used.
	wakeFD int
	// Broken counts sessions Open found half-written by a UPF-C killed
	// mid-write, and dropped: the SMF sets them up again.
	Broken int
}

var _ rules.Table = (*Table)(nil)

// Open maps the rule tables, creating them when neither UPF-C nor UPF-U did
// yet, and indexes the sessions already there.
func Open(cfg Config) (*Table, error) {
	if cfg.MaxSessions < 0 || cfg.MaxSessions > 1<<22 {
		return nil, fmt.Errorf("upf tables: upf.max_sessions %d: want 1..%d (0: open existing ones)", cfg.MaxSessions, 1<<22)
	}
	path := C.CString(cfg.Path())
	defer C.free(unsafe.Pointer(path))
	var errbuf [512]C.char
	h := C.upft_open(path, C.uint32_t(cfg.MaxSessions), &errbuf[0], C.size_t(len(errbuf)))
	if h == nil {
		return nil, fmt.Errorf("upf tables: %s", C.GoString(&errbuf[0]))
	}
	t := &Table{h: h, max: uint32(h.max_sessions), bySEID: map[uint64]uint32{}, path: cfg.Path(), wakeFD: -1}
	t.index()
	t.publishCount()
	h.upfc_pid = C.int32_t(os.Getpid())
	return t, nil
}

// index finds the sessions already in the tables (a restart of UPF-C),
// dropping any a killed UPF-C left half-written.
func (t *Table) index() {
	for slot := t.max; slot > 0; slot-- {
		t.Broken += int(C.upft_recover(t.h, C.uint32_t(slot-1)))
		var s C.struct_upf_sess
		C.upft_read(t.h, C.uint32_t(slot-1), &s)
		if s.state == C.UPF_SESS_USED {
			t.bySEID[uint64(s.up_seid)] = slot - 1
		} else {
			t.free = append(t.free, slot-1)
		}
	}
}

// Install writes s's rules whole, replacing the session with the same UP
// SEID. Errors are *rules.CauseError (73 when the tables are full, 69 when
// a rule cannot be written) naming the rule and field at fault.
func (t *Table) Install(s *rules.Session) error { return t.install(s, 0) }

func (t *Table) install(s *rules.Session, pauseNs uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	slot, exists := t.bySEID[s.UPSEID]
	if !exists {
		if len(t.free) == 0 {
			return &rules.CauseError{Cause: causeNoResources,
				Detail: fmt.Sprintf("UPF rule tables full (upf.max_sessions %d)", t.max)}
		}
		slot = t.free[len(t.free)-1]
	}
	var prev C.struct_upf_sess
	C.upft_read(t.h, C.uint32_t(slot), &prev)
	cs, err := encodeSession(s, &prev, exists)
	if err != nil {
		return &rules.CauseError{Cause: causeRuleCreationFailed, Detail: fmt.Sprintf("session %#x: %v", s.UPSEID, err)}
	}
	var errbuf [256]C.char
	if C.upft_write_paused(t.h, C.uint32_t(slot), cs, C.uint64_t(pauseNs), &errbuf[0], C.size_t(len(errbuf))) != 0 {
		return &rules.CauseError{Cause: causeRuleCreationFailed,
			Detail: fmt.Sprintf("session %#x: %s", s.UPSEID, C.GoString(&errbuf[0]))}
	}
	if !exists {
		t.free = t.free[:len(t.free)-1]
		t.bySEID[s.UPSEID] = slot
		t.publishCount()
		return nil
	}
	// UPF-U looks at what it buffered for the session again (a FAR that
	// forwards now flushes it, TS 23.502 4.2.3.3 step 17). A full ring
	// means no UPF-U runs: no buffer to look at.
	if C.upft_drops_buffer(&prev, cs) != 0 {
		// TS 23.502 4.2.3.3 step 4b: paging failed, the SMF drops what
		// waited (and may re-arm BUFF|NOCP at once).
		_ = t.command(C.struct_upf_cmd{up_seid: C.uint64_t(s.UPSEID), slot: C.uint32_t(slot), _type: C.UPF_CMD_DISCARD})
	}
	_ = t.changed(s.UPSEID, slot, C.upft_fars_differ(&prev, cs) != 0)
	return nil
}

// publishCount tells other processes (UPF-U's exporter) how many sessions
// there are.
func (t *Table) publishCount() { C.upft_set_sessions(t.h, C.uint32_t(len(t.bySEID))) }

// Remove deletes a session's rules; UPF-U stops matching them at once.
func (t *Table) Remove(upSEID uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	slot, ok := t.bySEID[upSEID]
	if !ok {
		return notFound(upSEID)
	}
	C.upft_free(t.h, C.uint32_t(slot))
	_ = t.command(C.struct_upf_cmd{up_seid: C.uint64_t(upSEID), slot: C.uint32_t(slot), _type: C.UPF_CMD_DISCARD})
	delete(t.bySEID, upSEID)
	t.free = append(t.free, slot)
	t.publishCount()
	return nil
}

func notFound(upSEID uint64) error {
	return &rules.CauseError{Cause: causeSessionNotFound, Detail: fmt.Sprintf("no session with UP SEID %#x", upSEID)}
}

// Usage reads what each URR of the session counted so far.
func (t *Table) Usage(upSEID uint64) ([]rules.Usage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	slot, ok := t.bySEID[upSEID]
	if !ok {
		return nil, notFound(upSEID)
	}
	var s C.struct_upf_sess
	C.upft_read(t.h, C.uint32_t(slot), &s)
	out := make([]rules.Usage, 0, int(s.nurr))
	for i := 0; i < int(s.nurr); i++ {
		var c C.struct_upf_count
		C.upft_count(t.h, C.uint32_t(slot), C.uint32_t(i), &c)
		u := rules.Usage{URRID: uint32(s.urr[i].id)}
		if c.epoch == s.urr[i].epoch { // otherwise UPF-U has not counted this URR yet
			u.UplinkBytes, u.DownlinkBytes = uint64(c.ul_bytes), uint64(c.dl_bytes)
			u.UplinkPackets, u.DownlinkPackets = uint64(c.ul_pkts), uint64(c.dl_pkts)
		}
		out = append(out, u)
	}
	return out, nil
}

// Sessions reads every session back, ordered by UP SEID.
func (t *Table) Sessions() ([]rules.Session, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]rules.Session, 0, len(t.bySEID))
	for _, slot := range t.bySEID {
		var s C.struct_upf_sess
		C.upft_read(t.h, C.uint32_t(slot), &s)
		out = append(out, decodeSession(&s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UPSEID < out[j].UPSEID })
	return out, nil
}

// Len is the number of sessions installed by this process's Table.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.bySEID)
}

// Installed is the number of sessions in the tables as UPF-C last
// published it: what another process (UPF-U's exporter) sees.
func (t *Table) Installed() int { return int(C.upft_sessions(t.h)) }

// Close tells UPF-U's readers nothing (the tables stay for the next UPF-C).
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if int(t.h.upfc_pid) == os.Getpid() {
		t.h.upfc_pid = 0
	}
	if t.wakeFD >= 0 {
		_ = syscall.Close(t.wakeFD)
		t.wakeFD = -1
	}
	return nil
}

// urrPlace is where a URR's counts live in its slot.
type urrPlace struct {
	index int
	epoch uint32
}

// slotRules maps the URR IDs of a session to their places (for tests).
func (t *Table) slotRules(upSEID uint64) map[uint32]urrPlace {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s C.struct_upf_sess
	C.upft_read(t.h, C.uint32_t(t.bySEID[upSEID]), &s)
	out := map[uint32]urrPlace{}
	for i := 0; i < int(s.nurr); i++ {
		if s.urr[i].epoch != 0 {
			out[uint32(s.urr[i].id)] = urrPlace{i, uint32(s.urr[i].epoch)}
		}
	}
	return out
}
