package n2

import (
	"math/rand/v2"
	"net/netip"
)

// The listening side of the own data path: the listener's handshake (ours
// already, RFC 4960 5.1.3) hands a valid COOKIE ECHO's association to an
// ownAssoc, and its reader passes each later packet straight to it.

// ownLocalInit is our side of a new association: a fresh Initiate Tag and
// initial TSN, and the peer's own stream counts mirrored, as with pion
// (5.1.1 then takes the minimum).
func (l *sctpListener) ownLocalInit(peer initInfo) []byte {
	return encodeInit(chunkInit, initChunk{tag: nonzeroTag(), rwnd: l.opts.receiveBuffer(),
		outbound: peer.outbound, inbound: peer.inbound, initialTSN: rand.Uint32()}, nil)
}

// startOwn runs our own data path on an established association.
func (l *sctpListener) startOwn(from netip.AddrPort, key endpoint, ck cookie) (*peerConn, Conn, error) {
	ours, err := readInitChunk(ck.local)
	if err != nil {
		return nil, nil, err
	}
	peers, err := readInitChunk(ck.remote)
	if err != nil {
		return nil, nil, err
	}
	p := newPeerConn(l.pl, from, ck.localPort, ck.peerPort)
	p.onClose = func() { l.forget(key, p) }
	a := newOwnAssoc(ownConfig{send: func(b []byte) error { return l.pl.writePacket(b, from) },
		release: func() { p.Close() }, neg: &p.neg, localPort: ck.localPort, peerPort: ck.peerPort,
		local: l.pl.localAddr(), remote: l.pl.netAddr(from)}, l.opts)
	a.state = stateEstablished
	a.begin(ours, peers, l.opts)
	l.mu.Lock()
	p.own, p.assoc = a, a
	l.assocs[key] = p
	l.mu.Unlock()
	return p, a, nil
}
