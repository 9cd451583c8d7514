package smf

// UE IPv4 address pools, one per DNN (TS 23.501 5.8.2.2.1: the SMF
// allocates the UE's address from a local pool).
//
// Leases survive an SMF restart so that an address a UE still uses is
// never handed to another: each lease is a record in the pool's log,
// <data_dir>/smf/leases/<dnn>/leases.log (ippool_leases.go), naming its
// owner (SUPI and PDU session ID), appended when the address is handed out
// and again when it is freed. At start the SMF replays the log. A UE that
// establishes the same PDU session again (same owner, e.g. after the SMF
// restarted and lost its contexts) gets its address back; addresses of
// owners that never come back stay reserved until an operator removes the
// log. One append per lease keeps each allocation O(1) on disk, whatever
// the pool's size.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/internal/keylog"
)

// errPoolExhausted: no address is free (5GSM #26, TS 24.501 6.4.1.4.2).
var errPoolExhausted = errors.New("UE address pool exhausted")

// ipPool hands out the host addresses of one IPv4 prefix.
type ipPool struct {
	dnn     string
	prefix  netip.Prefix
	dir     string // "" = leases kept in memory only
	dns     []netip.Addr
	mu      sync.Mutex
	first   uint32 // first host address
	size    uint32 // host addresses
	next    uint32 // offset tried first: allocation goes round the pool
	byAddr  map[uint32]string
	byOwner map[string]uint32
	log     *keylog.Log           // nil when dir is ""
	foreign map[netip.Addr]string // leases outside prefix, kept for compaction
}

// newIPPool builds the pool of d and reads back its leases from dir.
func newIPPool(d config.SMFDNN, dir string) (*ipPool, error) {
	prefix, err := netip.ParsePrefix(d.Pool)
	if err != nil || !prefix.Addr().Is4() || prefix.Bits() > 30 {
		return nil, fmt.Errorf("DNN %s: pool %q is not an IPv4 prefix of /30 or wider", d.DNN, d.Pool)
	}
	hostBits := 32 - prefix.Bits()
	p := &ipPool{dnn: d.DNN, prefix: prefix.Masked(), dir: dir,
		first: u32(prefix.Masked().Addr()) + 1, size: uint32(uint64(1)<<hostBits - 2), // no network, no broadcast address
		byAddr: map[uint32]string{}, byOwner: map[string]uint32{}, foreign: map[netip.Addr]string{}}
	for _, s := range d.DNS {
		if a, err := netip.ParseAddr(s); err == nil {
			p.dns = append(p.dns, a)
		}
	}
	return p, p.load()
}

func u32(a netip.Addr) uint32 { b := a.As4(); return binary.BigEndian.Uint32(b[:]) }

func addrOf(v uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

// load reads the leases a previous run left.
func (p *ipPool) load() error {
	if p.dir == "" {
		return nil
	}
	return p.openLeases()
}

// allocate hands owner an address: the one it already holds, or a free one.
func (p *ipPool) allocate(owner string) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.byOwner[owner]; ok {
		return addrOf(v), nil
	}
	for i := uint32(0); i < p.size; i++ {
		v := p.first + (p.next+i)%p.size
		if _, used := p.byAddr[v]; used {
			continue
		}
		if err := p.persist(v, owner); err != nil {
			return netip.Addr{}, err
		}
		p.byAddr[v], p.byOwner[owner] = owner, v
		p.next = (p.next + i + 1) % p.size
		return addrOf(v), nil
	}
	return netip.Addr{}, fmt.Errorf("DNN %s: %w (%d addresses of %s in use)", p.dnn, errPoolExhausted, p.size, p.prefix)
}

func (p *ipPool) persist(v uint32, owner string) error {
	if p.log == nil {
		return nil
	}
	return p.writeLease(leaseRecord{Op: "put", Addr: addrOf(v).String(), Owner: owner})
}

// release frees a, when held by owner.
func (p *ipPool) release(a netip.Addr, owner string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := u32(a)
	if p.byAddr[v] != owner {
		return
	}
	delete(p.byAddr, v)
	delete(p.byOwner, owner)
	if p.log != nil {
		// A lost record leaves the address reserved after a restart for
		// its owner, never handed to two: freed either way.
		_ = p.writeLease(leaseRecord{Op: "del", Addr: a.String()})
		p.compactLeases()
	}
}

// inUse counts the leased addresses.
func (p *ipPool) inUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byAddr)
}

// ipPools are the SMF's pools by DNN (case-insensitive, TS 23.003 9.1).
type ipPools map[string]*ipPool

func newIPPools(dnns []config.SMFDNN, dir string) (ipPools, error) {
	out := ipPools{}
	for _, d := range dnns {
		sub := ""
		if dir != "" {
			sub = filepath.Join(dir, strings.ToLower(d.DNN))
		}
		p, err := newIPPool(d, sub)
		if err != nil {
			out.close()
			return nil, err
		}
		out[strings.ToLower(d.DNN)] = p
	}
	return out, nil
}

// close closes every pool's lease log.
func (ps ipPools) close() {
	for _, p := range ps {
		_ = p.close()
	}
}

func (ps ipPools) of(dnn string) (*ipPool, bool) {
	p, ok := ps[strings.ToLower(dnn)]
	return p, ok
}
