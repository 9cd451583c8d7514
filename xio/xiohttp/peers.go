package xiohttp

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"
)

// path is how requests reach a peer.
type path uint8

const (
	pathProbe path = iota // unknown: X-IO first, TCP if nobody serves it here
	pathXIO               // on this node
	pathTCP               // elsewhere: TCP, X-IO untouched
)

// peer is what the hybrid knows of one authority (host:port).
type peer struct {
	path  path
	byNRF bool      // from an NRF profile: holds until a discovery says otherwise
	until time.Time // a probed pathTCP: probe again after it (the peer may move here)
}

const (
	// reprobeAfter is how long a peer found elsewhere by a probe is
	// reached over TCP without trying X-IO.
	reprobeAfter = 30 * time.Second
	// maxProbed bounds the peers learned by probing (authorities can come
	// from request bodies, e.g. callback URIs); past it they are forgotten.
	maxProbed = 4096
)

// peerTable decides the path per peer authority. Requests only read it: a
// map behind an atomic pointer, replaced whole by the rare writers (a
// discovery, a probe's outcome), so deciding costs a map lookup and no lock.
type peerTable struct {
	mu  sync.Mutex // serialises writers
	m   atomic.Pointer[map[string]peer]
	now func() time.Time
}

func newPeerTable() *peerTable {
	t := &peerTable{now: time.Now}
	t.m.Store(&map[string]peer{})
	return t
}

// lookup returns what is known of authority; a probe's pathTCP expires.
func (t *peerTable) lookup(authority string) peer {
	p := (*t.m.Load())[authority]
	if p.path == pathTCP && !p.byNRF && t.now().After(p.until) {
		return peer{}
	}
	return p
}

// fromNRF records where NRF profiles place peers: authority -> on this node.
func (t *peerTable) fromNRF(peers map[string]bool) {
	t.update(func(m map[string]peer) bool {
		changed := false
		for a, local := range peers {
			p := peer{path: pathTCP, byNRF: true}
			if local {
				p.path = pathXIO
			}
			if m[a] != p {
				m[a], changed = p, true
			}
		}
		return changed
	})
}

// learn records where a probe found authority; the NRF's word stands.
func (t *peerTable) learn(authority string, path path) {
	t.update(func(m map[string]peer) bool {
		if m[authority].byNRF {
			return false
		}
		if len(m) >= maxProbed {
			maps.DeleteFunc(m, func(_ string, p peer) bool { return !p.byNRF })
		}
		p := peer{path: path}
		if path == pathTCP {
			p.until = t.now().Add(reprobeAfter)
		}
		m[authority] = p
		return true
	})
}

// update applies change to a copy of the table and publishes the copy if
// change reports a change.
func (t *peerTable) update(change func(map[string]peer) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := maps.Clone(*t.m.Load())
	if change(m) {
		t.m.Store(&m)
	}
}
