package ransim

import (
	"net/netip"
	"sync"
	"time"

	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// Data forwarding during handover (TS 38.300 9.2.3.2.1 and 9.2.3.3.1;
// TS 23.502 4.9.1.2.2 and 4.9.1.3.3): once the UE has left the source gNB,
// the downlink packets the source still receives on the old path go to
// the target — over Xn (here inside the simulator), or over N3 GTP-U to
// the target's DL forwarding tunnel (direct) or the UPF's (indirect). The
// UPF sends an End Marker on the old path after switching it (TS 29.281
// 7.3.2); the source passes it on, and the target delivers every
// forwarded packet before any packet of the new path.

// OldPathGrace is how long a target holds packets of the new path after
// the UE arrived when no End Marker comes (a UPF that sends none, or a
// handover without forwarding), and how long a source keeps forwarding
// after its context was released while the End Marker is still on its
// way. A second is many round trips on N3 yet short enough that a missing
// End Marker costs a delay, not a stalled stream.
const OldPathGrace = time.Second

// holdLimit bounds the packets a target holds per stream and tunnel; past
// it new ones are dropped (counted), as a gNB's forwarding buffer is finite.
const holdLimit = 4096

// forwarder carries a source tunnel's downlink packets to the target.
type forwarder struct {
	send func(pkt []byte) // pkt is valid only during the call
	end  func()           // the End Marker arrived on the old path
}

// xnForwarder hands packets to the target's tunnel over the simulator's
// Xn (TS 38.300 9.2.3.2.1: Xn-U data forwarding).
func xnForwarder(target *Tunnel) *forwarder {
	return &forwarder{send: target.forwarded, end: target.oldPathEnded}
}

// gtpForwarder sends packets as G-PDUs to a DL forwarding tunnel on N3 and
// the End Marker after them (TS 29.281 7.3.2: the forwarding node sends
// the End Marker on after the last forwarded packet).
func gtpForwarder(p *UserPlane, to ngapx.Tunnel, qfi uint8) *forwarder {
	dst := func() netip.AddrPort { return netip.AddrPortFrom(to.IPv4, uint16(p.PeerPort)) }
	write := func(m *gtpu.Message) {
		c := p.conn.Load()
		if c == nil {
			p.Dropped.Add(1)
			return
		}
		b, err := m.Marshal()
		if err == nil {
			_, err = c.WriteToUDPAddrPort(b, dst())
		}
		if err != nil {
			p.Dropped.Add(1)
		}
	}
	return &forwarder{
		send: func(pkt []byte) { write(gtpu.GPDU(to.TEID, gtpu.DLPDUSessionInformation, qfi, pkt)) },
		end:  func() { write(&gtpu.Message{Type: gtpu.TypeEndMarker, TEID: to.TEID}) },
	}
}

// startForwarding makes the source tunnel pass what it receives to f
// instead of the UE, which has left.
func (t *Tunnel) startForwarding(f *forwarder) { t.fwd.Store(f) }

// stopForwarding is a cancelled handover: the UE stays, packets go to it again.
func (t *Tunnel) stopForwarding() { t.fwd.Store(nil) }

// forwarding says the tunnel passes its packets on to a target.
func (t *Tunnel) forwarding() bool { return t.fwd.Load() != nil }

// deliverDownlink routes one downlink packet of the tunnel: on to the
// target while the UE moves, into the hold while the target waits for
// the old path to end, else to the UE.
func (t *Tunnel) deliverDownlink(pkt []byte) {
	if f := t.fwd.Load(); f != nil {
		t.p.Forwarded.Add(1)
		f.send(pkt)
		return
	}
	if of := t.fwdFor.Load(); of != nil { // a DL forwarding tunnel: the source's stream
		of.forwarded(pkt)
		return
	}
	if h := t.hold.Load(); h != nil {
		h.push(false, pkt)
		return
	}
	t.toSink(pkt)
}

// endMarker is the End Marker on the tunnel: the old path is done. A source
// passes it on to the target; a forwarding tunnel's target learns the
// forwarded stream ended.
func (t *Tunnel) endMarker() {
	t.p.EndMarkers.Add(1)
	t.sawEndMarker.Store(true)
	if f := t.fwd.Load(); f != nil {
		f.end()
		return
	}
	if of := t.fwdFor.Load(); of != nil {
		of.oldPathEnded()
	}
}

// toSink hands a packet to the UE, counted.
func (t *Tunnel) toSink(pkt []byte) {
	sink := t.sink.Load()
	if sink == nil {
		t.p.Dropped.Add(1)
		return
	}
	t.p.DownlinkPackets.Add(1)
	(*sink)(pkt)
}

// forwarded is a packet the source forwarded to this (target) tunnel.
func (t *Tunnel) forwarded(pkt []byte) {
	if h := t.hold.Load(); h != nil {
		h.push(true, pkt)
		return
	}
	t.toSink(pkt)
}

// oldPathEnded is the End Marker reaching the target.
func (t *Tunnel) oldPathEnded() {
	if h := t.hold.Load(); h != nil {
		h.endOldPath()
	}
}

// awaitArrival makes a new target tunnel hold what it gets until the UE
// arrives; withForwarding false: no packet will be forwarded, so the new
// path's packets need not wait for an End Marker.
func (t *Tunnel) awaitArrival(withForwarding bool) {
	h := &hold{t: t, oldDone: !withForwarding}
	t.hold.Store(h)
}

// arrive is the UE reaching the target cell: it now gets what the tunnel
// holds and carries, through sink (the UE's, taken over from the source).
func (t *Tunnel) arrive(sink *func([]byte)) {
	t.sink.Store(sink)
	if h := t.hold.Load(); h != nil {
		h.arrive()
	}
}

// hold orders what a handover target delivers (TS 38.300 9.2.3.2.1): the
// forwarded packets first, then the new path's once the End Marker says
// the old path is done. Delivery happens under mu, so packets of the two
// streams, read by different goroutines, reach the UE in that order.
type hold struct {
	t         *Tunnel
	mu        sync.Mutex
	arrived   bool
	oldDone   bool
	forwarded [][]byte
	fresh     [][]byte
	grace     *time.Timer
}

func (h *hold) push(fromSource bool, pkt []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := &h.fresh
	if fromSource {
		q = &h.forwarded
	}
	deliverNow := h.arrived && len(h.forwarded) == 0 && (fromSource || (h.oldDone && len(h.fresh) == 0))
	switch {
	case deliverNow:
		h.t.toSink(pkt)
	case len(*q) >= holdLimit:
		h.t.p.Dropped.Add(1)
	default:
		*q = append(*q, append([]byte(nil), pkt...))
	}
}

func (h *hold) arrive() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.arrived = true
	if !h.oldDone {
		h.grace = time.AfterFunc(OldPathGrace, h.endOldPath)
	}
	h.flush()
}

func (h *hold) endOldPath() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.oldDone = true
	if h.grace != nil {
		h.grace.Stop()
	}
	h.flush()
}

// flush delivers what may go now; once both streams are through, the
// tunnel stops holding. Called with mu held.
func (h *hold) flush() {
	if !h.arrived {
		return
	}
	for _, p := range h.forwarded {
		h.t.toSink(p)
	}
	h.forwarded = nil
	if !h.oldDone {
		return
	}
	for _, p := range h.fresh {
		h.t.toSink(p)
	}
	h.fresh = nil
	h.t.hold.CompareAndSwap(h, nil)
}

// current is the tunnel that now carries the session: after handovers, the
// last target's.
func (t *Tunnel) current() *Tunnel {
	for {
		n := t.next.Load()
		if n == nil {
			return t
		}
		t = n
	}
}

// newForwardingTunnel allocates a DL forwarding tunnel for target tunnel t
// (TS 38.413 9.3.4.2 DL Forwarding UP TNL Information): what arrives on it
// is the source's stream.
func (p *UserPlane) newForwardingTunnel(t *Tunnel) *Tunnel {
	f := &Tunnel{p: p, SessionID: t.SessionID}
	ul, qfis := t.UL(), t.QFIs()
	f.ul.Store(&ul)
	f.qfis.Store(&qfis)
	f.fwdFor.Store(t)
	p.enter(f)
	return f
}
