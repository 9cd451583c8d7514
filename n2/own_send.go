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
	nextTSN     uint32 // TSN of the next new DATA chunk
	cumAck      uint32 // the peer's Cumulative TSN Ack Point
	peerRwnd    uint32 // the window the peer last advertised
	ssn         map[uint16]uint16
	outstanding []*outChunk // sent and not cumulatively acknowledged, by TSN
	outBytes    int         // user data in outstanding and not gap-acknowledged

	srtt, rttvar, rto time.Duration
	measured          bool
	t3                lazyTimer // T3-rtx
	errorCount        int       // consecutive T3-rtx expiries (8.1)
}

// outChunk is one DATA chunk in flight; d.data is our own copy.
type outChunk struct {
	d             sctpData
	sent          time.Time
	retransmitted bool
	gapAcked      bool
}

// WriteMsg sends one NGAP PDU on stream with PPID 60: one packet per
// fragment, written in the caller's goroutine, the first carrying the SACK
// we owe the peer (6.2: a SACK may be bundled with outgoing DATA).
func (a *ownAssoc) WriteMsg(pdu []byte, stream uint16) error {
	return a.writeMessage(pdu, stream, PPIDNGAP)
}

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
	// 6.1 A/B: no new data beyond the peer's window, except one message
	// when nothing is in flight.
	for a.state == stateEstablished && a.snd.outBytes > 0 && a.snd.outBytes+len(pdu) > int(a.snd.peerRwnd) {
		a.space.Wait()
	}
	if a.state != stateEstablished {
		return net.ErrClosed
	}
	ssn := a.snd.ssn[stream]
	a.snd.ssn[stream] = ssn + 1
	copied := append([]byte(nil), pdu...)
	for off := 0; off < len(copied); off += ownMaxChunkData {
		end := min(off+ownMaxChunkData, len(copied))
		d := sctpData{tsn: a.snd.nextTSN, stream: stream, ssn: ssn, ppid: ppid, data: copied[off:end]}
		if off == 0 {
			d.flags |= flagDataBegin
		}
		if end == len(copied) {
			d.flags |= flagDataEnd
		}
		a.snd.nextTSN++
		pkt := a.header(a.peerTag())
		if a.rcv.sackOwed() {
			pkt = a.appendSackLocked(pkt)
		}
		pkt = appendData(pkt, d)
		fillChecksum(pkt)
		now := time.Now()
		a.snd.outstanding = append(a.snd.outstanding, &outChunk{d: d, sent: now})
		a.snd.outBytes += len(d.data)
		if !a.snd.t3.running() { // 6.3.2 R1
			a.startT3(now)
		}
		if err := a.send(pkt); err != nil {
			return fmt.Errorf("n2: send: %w", err) // T3-rtx would resend it; the socket itself failed
		}
	}
	return nil
}

// onSack applies a SACK (6.2.1): what it acknowledges leaves the
// outstanding list, the peer's window is noted, and T3-rtx restarts for
// what remains.
func (a *ownAssoc) onSack(s sack) {
	if tsnBefore(s.cumTSN, a.snd.cumAck) || !tsnBefore(s.cumTSN, a.snd.nextTSN) {
		return // 6.2.1 D i: an old SACK; or one acknowledging what we never sent
	}
	advanced := s.cumTSN != a.snd.cumAck
	now := time.Now()
	var sample time.Duration
	n := 0
	for _, c := range a.snd.outstanding {
		if tsnBefore(s.cumTSN, c.d.tsn) {
			break
		}
		if !c.gapAcked {
			a.snd.outBytes -= len(c.d.data)
			if !c.retransmitted { // 6.3.1 C5: Karn's rule
				sample = now.Sub(c.sent)
			}
		}
		n++
	}
	a.snd.outstanding = a.snd.outstanding[n:]
	a.snd.cumAck = s.cumTSN
	a.markGaps(s)
	a.snd.peerRwnd = s.rwnd
	if sample > 0 {
		a.rttSample(sample)
	}
	if advanced {
		a.snd.errorCount = 0
		if len(a.snd.outstanding) == 0 {
			a.stopT3()
		} else {
			a.startT3(now) // 6.3.2 R3
		}
	}
	a.space.Broadcast()
}

// markGaps notes the chunks a SACK's Gap Ack Blocks report received, so
// that T3-rtx does not send them again.
func (a *ownAssoc) markGaps(s sack) {
	for _, g := range s.gaps {
		lo, hi := s.cumTSN+uint32(g.start), s.cumTSN+uint32(g.end)
		for _, c := range a.snd.outstanding {
			if !c.gapAcked && !tsnBefore(c.d.tsn, lo) && !tsnBefore(hi, c.d.tsn) {
				c.gapAcked = true
				a.snd.outBytes -= len(c.d.data)
			}
		}
	}
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

// t3Expired is T3-rtx (6.3.3): the RTO doubles, the earliest chunks not
// yet acknowledged go again in one packet, and past
// Association.Max.Retrans expiries in a row the association has failed.
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
	pkt := a.header(a.peerTag())
	if a.rcv.sackOwed() {
		pkt = a.appendSackLocked(pkt)
	}
	added := 0
	for _, c := range a.snd.outstanding { // E3: as many as fit one packet
		if c.gapAcked {
			continue
		}
		if added > 0 && len(pkt)+dataHeaderLen+len(c.d.data)+3 > ownMaxPacket {
			break
		}
		pkt = appendData(pkt, c.d)
		c.retransmitted = true
		added++
	}
	if added > 0 {
		fillChecksum(pkt)
		_ = a.send(pkt)
	}
	a.startT3(now)
}
