package n2

import (
	"fmt"
	"net"
	"time"
)

// The sending half of the own data path: TSN and SSN assignment and
// fragmentation (RFC 4960 6.1, 6.5, 6.9), SACK processing (6.2.1), and
// T3-rtx retransmission with the RTO of 6.3.

type sender struct {
	nextTSN     uint32 // TSN of the next new DATA chunk sent
	cumAck      uint32 // the peer's Cumulative TSN Ack Point
	peerRwnd    uint32 // the window the peer last advertised
	ssn         map[uint16]uint16
	queue       []sctpData  // fragments not sent yet, in order; their TSN is given when sent
	queuedBytes int         // user data in queue
	outstanding []*outChunk // sent and not cumulatively acknowledged, by TSN
	outBytes    int         // the flight size (chunkCost): sent, not acknowledged, not marked to go again
	cc          congestion

	srtt, rttvar, rto time.Duration
	measured          bool
	t3                lazyTimer // T3-rtx
	errorCount        int       // consecutive T3-rtx expiries (8.1)
}

// outChunk is one DATA chunk sent; d.data is our own copy.
type outChunk struct {
	d                 sctpData
	sent              time.Time
	retransmitted     bool
	gapAcked          bool
	inFlight          bool // counted in outBytes
	marked            bool // to be retransmitted (T3-rtx or fast retransmit)
	misses            int  // miss indications (7.2.4)
	fastRetransmitted bool // 7.2.4: fast retransmit only once per chunk
}

// WriteMsg sends one NGAP PDU on stream with PPID 60, in the caller's
// goroutine: its fragments go at once as far as cwnd and the peer's window
// allow, the first packet carrying the SACK we owe the peer (6.2), and
// the rest wait in the queue that the peer's SACKs drain.
func (a *ownAssoc) WriteMsg(pdu []byte, stream uint16) error {
	return a.writeMessage(pdu, stream, PPIDNGAP)
}

// writeMessage queues one message and sends what the windows allow. When
// sendQueueLimit bytes already wait, the writer waits for SACKs to drain
// them rather than getting an error: an NGAP message refused would be a
// UE procedure lost on a burst the peer absorbs a few round trips later.
// The wait is bounded by the association itself: it ends when the peer
// acknowledges, or fails after Association.Max.Retrans T3-rtx expiries
// (or its heartbeats go unanswered), or Close. A message always goes into
// an empty queue, whatever its size (up to MaxMessageSize).
func (a *ownAssoc) writeMessage(pdu []byte, stream uint16, ppid uint32) error {
	if n := a.Streams(); stream >= n { // the peer would discard it (6.5)
		return fmt.Errorf("n2: stream %d not granted: the association has %d outbound streams", stream, n)
	}
	if len(pdu) == 0 {
		return fmt.Errorf("n2: empty message: SCTP carries no DATA without user data (RFC 4960 3.3.1)")
	}
	if len(pdu) > int(a.maxMessage) {
		return fmt.Errorf("n2: message of %d bytes is over the %d-byte limit", len(pdu), a.maxMessage)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.writable() && a.snd.queuedBytes > 0 && a.snd.queuedBytes+len(pdu) > sendQueueLimit {
		a.space.Wait()
	}
	if !a.writable() {
		return net.ErrClosed
	}
	a.enqueue(pdu, stream, ppid)
	err := a.transmitLocked(time.Now())
	a.drainQueueLocked()
	if err != nil {
		return fmt.Errorf("n2: send: %w", err) // T3-rtx would resend it; the socket itself failed
	}
	return nil
}

func (a *ownAssoc) writable() bool { return a.state == stateEstablished && !a.closing }

// enqueue cuts a message into DATA fragments (6.9) on the stream's next
// SSN (6.5), in our own copy of its bytes.
func (a *ownAssoc) enqueue(pdu []byte, stream uint16, ppid uint32) {
	ssn := a.snd.ssn[stream]
	a.snd.ssn[stream] = ssn + 1
	copied := append([]byte(nil), pdu...)
	for off := 0; off < len(copied); off += ownMaxChunkData {
		end := min(off+ownMaxChunkData, len(copied))
		d := sctpData{stream: stream, ssn: ssn, ppid: ppid, data: copied[off:end]}
		if off == 0 {
			d.flags |= flagDataBegin
		}
		if end == len(copied) {
			d.flags |= flagDataEnd
		}
		a.snd.queue = append(a.snd.queue, d)
		a.snd.queuedBytes += len(d.data)
	}
}

// onSack applies a SACK (6.2.1): what it acknowledges leaves the
// outstanding list, cwnd grows (7.2.1, 7.2.2), chunks reported missing
// three times go again at once (7.2.4), the peer's window is noted, and
// T3-rtx restarts for what remains. The queue is drained by the caller
// (transmitLocked), once per packet.
func (a *ownAssoc) onSack(s sack) {
	snd := &a.snd
	if tsnBefore(s.cumTSN, snd.cumAck) || !tsnBefore(s.cumTSN, snd.nextTSN) {
		return // 6.2.1 D i: an old SACK; or one acknowledging what we never sent
	}
	advanced := s.cumTSN != snd.cumAck
	now := time.Now()
	flightBefore := snd.outBytes
	acked, sample := a.ackCumulative(s.cumTSN, now)
	gapAcked, highestNew := a.markGaps(s)
	snd.peerRwnd = s.rwnd
	if sample > 0 {
		a.rttSample(sample)
	}
	if advanced {
		snd.cc.onAck(acked+gapAcked, flightBefore, snd.outBytes)
		snd.cc.onCumAck(s.cumTSN)
	}
	limit, missing := highestNew, highestNew != s.cumTSN
	if snd.cc.fastRecovery && advanced && len(s.gaps) > 0 { // 7.2.4: every TSN reported missing
		limit, missing = s.cumTSN+uint32(s.gaps[len(s.gaps)-1].end), true
	}
	if missing && a.markMissing(limit) > 0 {
		snd.cc.onFastRetransmit(snd.nextTSN - 1)
		a.metrics.retransmit(RetransmitFast)
		a.fastRetransmitLocked(now)
	}
	if advanced {
		snd.errorCount = 0
		if len(snd.outstanding) == 0 {
			a.stopT3()
		} else {
			a.startT3(now) // 6.3.2 R3
		}
	}
	a.space.Broadcast()
}

// ackCumulative removes what the Cumulative TSN Ack acknowledges; it
// returns what it newly acknowledged (chunkCost) and an RTT sample (0: none).
func (a *ownAssoc) ackCumulative(cum uint32, now time.Time) (acked int, sample time.Duration) {
	snd := &a.snd
	n := 0
	for _, c := range snd.outstanding {
		if tsnBefore(cum, c.d.tsn) {
			break
		}
		if !c.gapAcked {
			acked += chunkCost(len(c.d.data))
			if !c.retransmitted { // 6.3.1 C5: Karn's rule
				sample = now.Sub(c.sent)
			}
		}
		if c.inFlight {
			snd.outBytes -= chunkCost(len(c.d.data))
		}
		n++
	}
	snd.outstanding = snd.outstanding[n:]
	snd.cumAck = cum
	return acked, sample
}

// markGaps notes the chunks a SACK's Gap Ack Blocks report received, so
// that they are not sent again. It returns what they newly
// acknowledged (chunkCost) and the highest TSN newly acknowledged (the cumulative TSN
// when the blocks acknowledge nothing new), for 7.2.4's HTNA rule.
func (a *ownAssoc) markGaps(s sack) (acked int, highest uint32) {
	highest = s.cumTSN
	for _, g := range s.gaps {
		lo, hi := s.cumTSN+uint32(g.start), s.cumTSN+uint32(g.end)
		for _, c := range a.snd.outstanding {
			if tsnBefore(hi, c.d.tsn) {
				break
			}
			if c.gapAcked || tsnBefore(c.d.tsn, lo) {
				continue
			}
			c.gapAcked = true
			acked += chunkCost(len(c.d.data))
			if c.inFlight {
				c.inFlight = false
				a.snd.outBytes -= chunkCost(len(c.d.data))
			}
			c.marked = false
			if tsnBefore(highest, c.d.tsn) {
				highest = c.d.tsn
			}
		}
	}
	return acked, highest
}

// rttSample updates SRTT, RTTVAR and RTO (6.3.1 C2, C3).
func (a *ownAssoc) rttSample(r time.Duration) {
	s := &a.snd
	if !s.measured {
		s.srtt, s.rttvar, s.measured = r, r/2, true
	} else {
		diff := s.srtt - r
		if diff < 0 {
			diff = -diff
		}
		s.rttvar = s.rttvar*3/4 + diff/4
		s.srtt = s.srtt*7/8 + r/8
	}
	s.rto = min(max(s.srtt+4*s.rttvar, a.rtoMin), a.rtoMax)
}

func (a *ownAssoc) startT3(now time.Time) { a.snd.t3.set(now, a.snd.rto) }

func (a *ownAssoc) stopT3() { a.snd.t3.stop() }

// t3Expired is T3-rtx (6.3.3): the RTO doubles, cwnd falls to one MTU
// (7.2.3), every chunk not yet acknowledged is marked to go again, and
// the earliest go now in one packet; the rest follow as the SACKs open
// cwnd again, not one packet per expiry. Past Association.Max.Retrans
// expiries in a row the association has failed.
func (a *ownAssoc) t3Expired() {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if a.state == stateClosed || !a.snd.t3.due(now) {
		return // stopped, or restarted since it was armed
	}
	a.snd.errorCount++
	if a.snd.errorCount > assocMaxRetrans {
		a.failLocked(errRetransLimit)
		return
	}
	a.snd.rto = min(2*a.snd.rto, a.rtoMax) // E2
	a.snd.cc.onT3Expiry()
	a.metrics.retransmit(RetransmitT3)
	for _, c := range a.snd.outstanding { // E1, E3
		if !c.gapAcked {
			a.markForRetransmit(c)
		}
	}
	_ = a.transmitLocked(now) // with one MTU of cwnd and nothing in flight: one packet
	if len(a.snd.outstanding) > 0 {
		a.startT3(now)
	}
	a.drainQueueLocked() // ReadInline: the rest follow the SACKs someone must read
}
