package n2

import "time"

// Congestion control of the own data path (RFC 4960 7.2): a congestion
// window (cwnd) over the bytes in flight, slow start and congestion
// avoidance (7.2.1, 7.2.2), fast retransmit and fast recovery after three
// miss indications (7.2.4), and back to one MTU after a T3-rtx expiry
// (7.2.3). Messages beyond cwnd or the peer's window wait in the sender's
// queue of unsent chunks, which every SACK drains in the goroutine that
// read it: the association still has no goroutine of its own.

const (
	ownMTU = ownMaxPacket // the path MTU the windows count in: every packet we send fits it
	// sendQueueLimit bounds the user data waiting for cwnd or the peer's
	// window; a writer beyond it waits (see writeMessage).
	sendQueueLimit = 1 << 20
	// fastRetransmitMisses: 7.2.4, a chunk reported missing by three SACKs
	// is retransmitted without waiting for T3-rtx.
	fastRetransmitMisses = 3
)

// congestion is the sender's window state (RFC 4960 7.2), in bytes as
// chunkCost counts them.
type congestion struct {
	cwnd, ssthresh int
	partialAcked   int    // partial_bytes_acked (7.2.2)
	fastRecovery   bool   // 7.2.4: in fast recovery until recoverTSN is acknowledged
	recoverTSN     uint32 // the highest TSN outstanding when fast recovery began

	fastRetransmits int // loss events answered by fast retransmit
	t3Expiries      int // T3-rtx expiries
}

// chunkCost is what a DATA chunk of n bytes of user data counts in the
// flight size and against cwnd: its data plus its share of the packet's
// headers, so that a full chunk costs one MTU and a window of k MTUs lets
// k full packets go (counting user data alone let one more packet slip
// under a one-MTU window after T3-rtx).
func chunkCost(n int) int { return n + ownMTU - ownMaxChunkData }

// initialCwnd is 7.2.1's initial window: min(4*MTU, max(2*MTU, 4380)).
func initialCwnd() int { return min(4*ownMTU, max(2*ownMTU, 4380)) }

// startWindow sets the window at the association's start (7.2.1): ssthresh
// from the peer's advertised receive window.
func (c *congestion) startWindow(peerRwnd uint32) {
	c.cwnd = initialCwnd()
	c.ssthresh = int(peerRwnd)
}

// onAck grows cwnd for a SACK that advanced the Cumulative TSN Ack Point
// (7.2.1 slow start, 7.2.2 congestion avoidance). acked is what it
// newly acknowledged (chunkCost), flightBefore the bytes in flight before it and
// flightAfter those left. Not in fast recovery, and only while the window
// was fully used, which we read as: less than one MTU of room left.
func (c *congestion) onAck(acked, flightBefore, flightAfter int) {
	utilized := flightBefore+ownMTU > c.cwnd
	switch {
	case c.fastRecovery:
	case c.cwnd <= c.ssthresh:
		if utilized {
			c.cwnd += min(acked, ownMTU)
		}
	default:
		c.partialAcked += acked
		if c.partialAcked >= c.cwnd && utilized {
			c.partialAcked -= c.cwnd
			c.cwnd += ownMTU
		}
	}
	if flightAfter == 0 { // 7.2.2: all data acknowledged
		c.partialAcked = 0
	}
}

// onFastRetransmit is 7.2.4 step 2 at a loss event: halve once per fast
// recovery, however many chunks the loss spans.
func (c *congestion) onFastRetransmit(highestOutstanding uint32) {
	c.fastRetransmits++
	if c.fastRecovery {
		return
	}
	c.ssthresh = max(c.cwnd/2, 4*ownMTU)
	c.cwnd = c.ssthresh
	c.partialAcked = 0
	c.fastRecovery, c.recoverTSN = true, highestOutstanding
}

// onCumAck leaves fast recovery once its exit point is acknowledged.
func (c *congestion) onCumAck(cumTSN uint32) {
	if c.fastRecovery && !tsnBefore(cumTSN, c.recoverTSN) {
		c.fastRecovery = false
	}
}

// onT3Expiry is 7.2.3: one MTU of window, ssthresh half of what it was.
func (c *congestion) onT3Expiry() {
	c.t3Expiries++
	c.ssthresh = max(c.cwnd/2, 4*ownMTU)
	c.cwnd = ownMTU
	c.partialAcked = 0
	c.fastRecovery = false
}

// mayRetransmit says whether cwnd lets another chunk go (6.1 B: the
// sender may exceed cwnd by less than one MTU, so one more chunk goes as
// long as the flight is below it).
func (c *congestion) mayRetransmit(flight int) bool { return flight < c.cwnd }

// maySendNew also respects the peer's window (6.1 A): nothing new beyond
// it, except one chunk when nothing is in flight (a zero window probe,
// repeated by T3-rtx once per RTO).
func (c *congestion) maySendNew(flight, size int, peerRwnd uint32) bool {
	return flight < c.cwnd && (flight == 0 || flight+size <= int(peerRwnd))
}

// markMissing applies 7.2.4's miss indications from one SACK: every
// outstanding chunk not yet acknowledged with a TSN below limit (the
// highest TSN newly acknowledged, HTNA) counts one more miss; at three
// it is marked for retransmission, once per chunk by this path. It
// returns how many it marked.
func (a *ownAssoc) markMissing(limit uint32) int {
	marked := 0
	for _, c := range a.snd.outstanding {
		if !tsnBefore(c.d.tsn, limit) {
			break
		}
		if c.gapAcked || c.marked || c.fastRetransmitted {
			continue
		}
		c.misses++
		if c.misses >= fastRetransmitMisses {
			a.markForRetransmit(c)
			c.fastRetransmitted = true
			marked++
		}
	}
	return marked
}

// hasUnsent says whether chunks wait to be sent: queued, or marked for
// retransmission.
func (s *sender) hasUnsent() bool {
	if len(s.queue) > 0 {
		return true
	}
	for _, c := range s.outstanding {
		if c.marked {
			return true
		}
	}
	return false
}

// markForRetransmit takes a chunk out of the flight until it is sent again.
func (a *ownAssoc) markForRetransmit(c *outChunk) {
	if c.inFlight {
		c.inFlight = false
		a.snd.outBytes -= chunkCost(len(c.d.data))
	}
	c.marked = true
}

// transmitLocked sends what the windows allow: chunks marked for
// retransmission first, then new ones from the queue, bundled up to a
// packet each (6.1 C, 6.10), and starts T3-rtx for them. It returns the
// first error the socket gave.
func (a *ownAssoc) transmitLocked(now time.Time) error {
	var first error
	queued := len(a.snd.queue)
	for {
		pkt, n := a.nextPacketLocked(now, false)
		if n == 0 {
			break
		}
		if err := a.send(pkt); err != nil && first == nil {
			first = err
		}
	}
	if len(a.snd.outstanding) > 0 && !a.snd.t3.running() { // 6.3.2 R1
		a.startT3(now)
	}
	if len(a.snd.queue) < queued {
		a.space.Broadcast() // writers waiting for room in the queue
	}
	return first
}

// nextPacketLocked builds one packet of DATA (with the SACK we owe in
// front) and counts its chunks in flight. With fast set it carries only
// chunks marked for retransmission, whatever cwnd says (7.2.4 step 3).
// A packet always takes its first chunk, so that nothing waits forever for
// a SACK with many gap blocks to leave room.
func (a *ownAssoc) nextPacketLocked(now time.Time, fast bool) ([]byte, int) {
	s := &a.snd
	var chunks []sctpData
	used := 0
	fits := func(size int) bool {
		return len(chunks) == 0 || used+dataHeaderLen+size+3 <= ownMaxPacket-commonHeaderLen-sackFixedLen
	}
	take := func(d sctpData) {
		chunks = append(chunks, d)
		used += dataHeaderLen + (len(d.data)+3)&^3
		s.outBytes += chunkCost(len(d.data))
	}
	anyMarked := false
	for _, c := range s.outstanding {
		if !c.marked {
			continue
		}
		anyMarked = true
		if !fits(len(c.d.data)) || (!fast && !s.cc.mayRetransmit(s.outBytes)) {
			break
		}
		c.marked, c.inFlight, c.retransmitted, c.misses, c.sent = false, true, true, 0, now
		take(c.d)
	}
	for !fast && !anyMarked && len(s.queue) > 0 { // 6.1 C: retransmissions before new data
		d := s.queue[0]
		if !fits(len(d.data)) || !s.cc.maySendNew(s.outBytes, chunkCost(len(d.data)), s.peerRwnd) {
			break
		}
		s.queue = s.queue[1:]
		s.queuedBytes -= len(d.data)
		d.tsn = s.nextTSN
		s.nextTSN++
		s.outstanding = append(s.outstanding, &outChunk{d: d, sent: now, inFlight: true})
		take(d)
	}
	if len(chunks) == 0 {
		return nil, 0
	}
	if a.waitsForSack() {
		chunks[len(chunks)-1].flags |= flagDataImmediate
	}
	pkt := a.header(a.peerTag())
	if a.rcv.sackOwed() {
		pkt = a.appendSackLocked(pkt)
	}
	for _, d := range chunks {
		pkt = appendData(pkt, d)
	}
	fillChecksum(pkt)
	return pkt, len(chunks)
}

// fastRetransmitLocked sends at once the lowest-TSN chunks marked for
// retransmission that fit one packet (7.2.4 step 3), and restarts T3-rtx
// for them (step 4: they are the earliest outstanding).
func (a *ownAssoc) fastRetransmitLocked(now time.Time) {
	if pkt, n := a.nextPacketLocked(now, true); n > 0 {
		_ = a.send(pkt)
		a.startT3(now)
	}
}

// waitsForSack says whether, after the packet being built, chunks still
// wait for the peer's SACK to open cwnd or its window, or Close waits for
// it to drain (9.2 SHUTDOWN-PENDING). The packet's last DATA chunk then
// carries the I bit (RFC 7053 4.1, RFC 9260 3.3.1) so the peer SACKs at
// once instead of up to sackDelay later: without it a message of more
// fragments than cwnd holds (one MTU after T3-rtx) stalled on the peer's
// delayed SACK, since the peer received one packet and had no message to
// answer, the classic Nagle and delayed-ACK deadlock.
func (a *ownAssoc) waitsForSack() bool {
	return a.snd.hasUnsent() || a.closing
}
