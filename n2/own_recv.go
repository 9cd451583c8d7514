package n2

import (
	"slices"
	"time"
)

// The receiving half of the own data path: DATA in TSN order with
// reassembly (RFC 4960 6.2, 6.9), duplicates and gaps reported, and the
// SACK delayed until outgoing DATA can carry it, a second packet arrives,
// or sackDelay passes (6.2).

type receiver struct {
	cumTSN       uint32              // the last TSN received in sequence
	pending      map[uint32]sctpData // received past a gap
	pendingBytes int
	dups         []uint32
	partial      []byte // the message being reassembled
	inMessage    bool   // a B fragment came and its E has not
	discarding   bool   // the message being reassembled is over MaxMessageSize
	sackDue      bool   // DATA arrived that no SACK has acknowledged yet
	packets      int    // packets with DATA since our last SACK
	sackTimer    lazyTimer
}

func (r *receiver) sackOwed() bool { return r.sackDue }

// maxPendingTSNs bounds how far past a gap a TSN may be kept.
const maxPendingTSNs = 1 << 14

// onData takes one DATA chunk; sackNow says the SACK must not wait (a
// duplicate or a gap, 6.7; or the sender set the I bit, RFC 9260 6.2:
// it waits for this SACK before it can send more), and msgs are the
// messages it completed.
func (a *ownAssoc) onData(raw []byte) (sackNow bool, msgs []message) {
	d, err := parseData(raw)
	if err != nil || a.state == stateClosed {
		return false, nil // 6.2: a DATA without user data would be ABORTed; we only drop it
	}
	r := &a.rcv
	r.sackDue = true
	if !tsnBefore(r.cumTSN, d.tsn) || r.has(d.tsn) {
		if len(r.dups) < maxDupTSNs {
			r.dups = append(r.dups, d.tsn)
		}
		return true, nil
	}
	if d.tsn-r.cumTSN > maxPendingTSNs || r.pendingBytes+len(d.data) > int(a.rwnd) {
		return true, nil // 6.2: past our window: dropped, the peer sends it again
	}
	if d.tsn == r.cumTSN+1 && len(r.pending) == 0 { // the usual case: in sequence, nothing waiting
		r.cumTSN = d.tsn
		d.data = append([]byte(nil), d.data...)
		return d.flags&flagDataImmediate != 0, a.reassemble(d, nil)
	}
	d.data = append([]byte(nil), d.data...)
	r.pending[d.tsn] = d
	r.pendingBytes += len(d.data)
	for {
		next, ok := r.pending[r.cumTSN+1]
		if !ok {
			break
		}
		delete(r.pending, next.tsn)
		r.pendingBytes -= len(next.data)
		r.cumTSN = next.tsn
		msgs = a.reassemble(next, msgs)
	}
	return true, msgs // a gap was or still is there: report at once
}

func (r *receiver) has(tsn uint32) bool {
	_, ok := r.pending[tsn]
	return ok
}

// reassemble takes the next chunk in TSN order (6.9: a message's fragments
// have consecutive TSNs) and appends to msgs the message it completes.
func (a *ownAssoc) reassemble(d sctpData, msgs []message) []message {
	r := &a.rcv
	begin, end := d.flags&flagDataBegin != 0, d.flags&flagDataEnd != 0
	switch {
	case begin && end:
		r.partial, r.inMessage, r.discarding = nil, false, false
		return a.complete(d, d.data, msgs)
	case begin:
		r.partial, r.inMessage, r.discarding = d.data, true, false
		return msgs
	case !r.inMessage:
		return msgs // a fragment without its beginning: nothing to join it to
	}
	if !r.discarding {
		r.partial = append(r.partial, d.data...)
		if len(r.partial) > int(a.maxMessage) {
			r.partial, r.discarding = nil, true
			a.metrics.discard(DiscardTooBig)
		}
	}
	if !end {
		return msgs
	}
	pdu, discarded := r.partial, r.discarding
	r.partial, r.inMessage, r.discarding = nil, false, false
	if discarded {
		return msgs
	}
	return a.complete(d, pdu, msgs)
}

// complete checks a whole message and queues it for ReadMsg.
func (a *ownAssoc) complete(d sctpData, pdu []byte, msgs []message) []message {
	switch {
	case d.ppid != PPIDNGAP: // TS 38.412 7: NGAP only
		a.metrics.discard(DiscardPPID)
		return msgs
	case len(pdu) > int(a.maxMessage):
		a.metrics.discard(DiscardTooBig)
		return msgs
	}
	return append(msgs, message{pdu: pdu, stream: d.stream})
}

// afterData decides when to SACK the DATA just received (6.2): at once for
// a gap or duplicate, or when this is the second packet unacknowledged;
// else within sackDelay, unless our next DATA carries it first. It returns
// the SACK packet to send now, if any.
func (a *ownAssoc) afterData(now bool) []byte {
	r := &a.rcv
	r.packets++
	if !now && r.packets < 2 {
		if !r.sackTimer.running() {
			r.sackTimer.set(time.Now(), sackDelay)
		}
		return nil
	}
	pkt := a.appendSackLocked(a.header(a.peerTag()))
	fillChecksum(pkt)
	return pkt
}

func (a *ownAssoc) sackTimerExpired() {
	a.mu.Lock()
	if a.state == stateClosed || !a.rcv.sackTimer.due(time.Now()) || !a.rcv.sackDue {
		a.mu.Unlock()
		return
	}
	pkt := a.appendSackLocked(a.header(a.peerTag()))
	a.mu.Unlock()
	fillChecksum(pkt)
	_ = a.send(pkt)
}

// appendSackLocked appends the SACK of what we have received (3.3.4) and
// notes that nothing is owed any more.
func (a *ownAssoc) appendSackLocked(pkt []byte) []byte {
	r := &a.rcv
	s := sack{cumTSN: r.cumTSN, rwnd: uint32(max(int(a.rwnd)-r.pendingBytes, 0)), dups: r.dups, gaps: r.gapBlocks()}
	pkt = appendSack(pkt, s)
	r.dups, r.sackDue, r.packets = nil, false, 0
	r.sackTimer.stop()
	return pkt
}

// gapBlocks are the runs of TSNs received past the cumulative TSN.
func (r *receiver) gapBlocks() []gapBlock {
	if len(r.pending) == 0 {
		return nil
	}
	offs := make([]uint32, 0, len(r.pending))
	for tsn := range r.pending {
		offs = append(offs, tsn-r.cumTSN)
	}
	slices.Sort(offs)
	var gaps []gapBlock
	for _, o := range offs {
		if n := len(gaps); n > 0 && uint32(gaps[n-1].end)+1 == o {
			gaps[n-1].end = uint16(o)
			continue
		}
		if len(gaps) == maxGapBlocks {
			break
		}
		gaps = append(gaps, gapBlock{uint16(o), uint16(o)})
	}
	return gaps
}
