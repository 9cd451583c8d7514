package smf

// The UE address leases on disk: one append-only log per pool
// (<dir>/leases.log, internal/keylog), a JSON line per lease handed out or
// freed, replayed at start and compacted when mostly dead.
//
// Why a log and not a file per lease (what the SMF wrote before): creating
// and unlinking a file per PDU session cost the SMF about a quarter of its
// CPU per session (openat with O_CREAT, write, close; then unlinkat), while
// one append is one write(2) to an open file. The guarantee is the same: a
// lease reaches the kernel before its address is handed out, so a
// restarted SMF never gives an address in use to another UE (TS 23.501
// 5.8.2.2.1 leaves the pool to the SMF; issue 11 asks for this). Leases a
// previous version left as one file each are read once, moved into the log
// and their files removed.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/l25gc/l25gc/internal/keylog"
)

const (
	leaseLogName   = "leases.log"
	leaseLogFormat = "l25gc-smf-leases/1"
	// leaseRecordBytes estimates one live lease's record, for deciding
	// when the log is mostly dead records (keylog.Oversized).
	leaseRecordBytes = 64
)

// leaseRecord is one line of the log: op "put" hands addr to owner, "del"
// frees it.
type leaseRecord struct {
	Op    string `json:"op"`
	Addr  string `json:"addr"`
	Owner string `json:"owner,omitempty"`
}

// openLeases replays the pool's log into its maps, then folds in the
// per-address files of an older SMF.
func (p *ipPool) openLeases() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return fmt.Errorf("UE address leases: %w", err)
	}
	l, err := keylog.Open(filepath.Join(p.dir, leaseLogName), keylog.Options{Format: leaseLogFormat}, p.replayLease)
	if err != nil {
		return fmt.Errorf("UE address leases: %w", err)
	}
	p.log = l
	if err := p.adoptLeaseFiles(); err != nil {
		_ = l.Close()
		return err
	}
	return nil
}

// replayLease applies one record of the log.
func (p *ipPool) replayLease(line []byte) error {
	var r leaseRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	a, err := netip.ParseAddr(r.Addr)
	if err != nil {
		return fmt.Errorf("lease address %q: %w", r.Addr, err)
	}
	switch r.Op {
	case "put":
		p.hold(a, r.Owner)
	case "del":
		p.drop(a)
	default:
		return fmt.Errorf("lease record op %q", r.Op)
	}
	return nil
}

// hold records owner's lease of a in memory. An address outside the
// prefix (the pool was configured smaller since) is kept aside, so that a
// compaction does not forget it should the prefix grow back.
func (p *ipPool) hold(a netip.Addr, owner string) {
	if !a.Is4() || !p.prefix.Contains(a) {
		p.foreign[a] = owner
		return
	}
	v := u32(a)
	if prev, ok := p.byAddr[v]; ok && p.byOwner[prev] == v {
		delete(p.byOwner, prev)
	}
	p.byAddr[v], p.byOwner[owner] = owner, v
}

func (p *ipPool) drop(a netip.Addr) {
	if !a.Is4() || !p.prefix.Contains(a) {
		delete(p.foreign, a)
		return
	}
	v := u32(a)
	if owner, ok := p.byAddr[v]; ok && p.byOwner[owner] == v {
		delete(p.byOwner, owner)
	}
	delete(p.byAddr, v)
}

// adoptLeaseFiles moves the one-file-per-lease leases of an older SMF into
// the log: each is appended before its file goes, so a crash in between
// leaves the lease in one place or both, never in none.
func (p *ipPool) adoptLeaseFiles() error {
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return fmt.Errorf("UE address leases: %w", err)
	}
	for _, e := range entries {
		a, err := netip.ParseAddr(e.Name())
		if err != nil || e.IsDir() {
			continue // the log, or not a lease
		}
		path := filepath.Join(p.dir, e.Name())
		owner, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("UE address lease %s: %w", e.Name(), err)
		}
		if err := p.writeLease(leaseRecord{Op: "put", Addr: a.String(), Owner: strings.TrimSpace(string(owner))}); err != nil {
			return err
		}
		p.hold(a, strings.TrimSpace(string(owner)))
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("UE address lease %s: %w", e.Name(), err)
		}
	}
	return nil
}

// writeLease appends r in one write (keylog.Append).
func (p *ipPool) writeLease(r leaseRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := p.log.Append(append(b, '\n')); err != nil {
		return fmt.Errorf("UE address lease: %w", err)
	}
	return nil
}

// compactLeases rewrites the log as the live leases once it is mostly
// freed ones; called with p.mu held, so nothing changes meanwhile. A
// failed compaction leaves the old log in use.
func (p *ipPool) compactLeases() {
	if !p.log.Oversized(int64(len(p.byAddr)+len(p.foreign)) * leaseRecordBytes) {
		return
	}
	_ = p.log.Compact(func(emit func([]byte) error) error {
		for v, owner := range p.byAddr {
			if err := emitLease(emit, addrOf(v), owner); err != nil {
				return err
			}
		}
		for a, owner := range p.foreign {
			if err := emitLease(emit, a, owner); err != nil {
				return err
			}
		}
		return nil
	})
}

func emitLease(emit func([]byte) error, a netip.Addr, owner string) error {
	b, err := json.Marshal(leaseRecord{Op: "put", Addr: a.String(), Owner: owner})
	if err != nil {
		return err
	}
	return emit(append(b, '\n'))
}

// close syncs and closes the log (SMF Stop).
func (p *ipPool) close() error {
	if p.log == nil {
		return nil
	}
	return p.log.Close()
}
