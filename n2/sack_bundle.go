package n2

import (
	"encoding/binary"
	"sync"
	"time"
)

// Standalone SACKs off the critical path (RFC 9260 6.2, 6.10).
//
// pion sends every SACK as a packet of its own, from its writer goroutine,
// which it wakes after the stream reader that the same DATA woke; the Go
// scheduler runs the newest wake-up first, so every second NGAP message
// received waited for a SACK's sendto (and the peer for one more wake-up)
// before it reached the AMF or the gNB. A SACK-only packet is held instead,
// for at most sackHold, and rides in front of the next DATA packet the
// association sends (control chunks first, 6.10), which in a procedure is
// usually the answer; if none leaves within sackHold it goes alone. That
// delay stays far inside 6.2's 200 ms (SHOULD) and 500 ms (MUST). A SACK
// coming while one is held replaces it (the newer acknowledges all the
// older did) and goes at once, so a bulk transfer still gets a SACK for at
// least every fourth packet without delay.

// sackHold is the longest a SACK waits for a DATA packet to ride on.
const sackHold = 2 * time.Millisecond

// maxBundled keeps a SACK-carrying packet within one IPv6 datagram on an
// Ethernet path (1500 - 40 - 8); pion's packets stay under 1228 bytes.
const maxBundled = 1452

// Chunk types, RFC 9260 3.2 and RFC 8260 (I-DATA); DATA is in packet.go.
const (
	chunkSACK  = 3
	chunkIData = 64
)

// sackHolder sits between pion's writer and the wire of one association.
type sackHolder struct {
	send func(pkt []byte) error // puts one finished packet on the wire

	mu    sync.Mutex
	held  []byte // a SACK-only packet waiting, or nil
	timer *time.Timer
}

func newSACKHolder(send func([]byte) error) *sackHolder {
	return &sackHolder{send: send}
}

// write sends pkt, a finished packet (ports and checksum final), holding
// it if it is a lone SACK, or carrying a held SACK in front of its DATA.
func (h *sackHolder) write(pkt []byte) error {
	if isSACKOnly(pkt) {
		return h.hold(pkt)
	}
	held := h.take()
	if held == nil {
		return h.send(pkt)
	}
	if merged, ok := bundleSACK(held, pkt); ok {
		return h.send(merged)
	}
	if err := h.send(held); err != nil { // first, as the peer would have had it
		return err
	}
	return h.send(pkt)
}

// hold keeps sack until DATA leaves or sackHold passes; a SACK while one is
// held goes at once in its place.
func (h *sackHolder) hold(sack []byte) error {
	h.mu.Lock()
	if h.held != nil {
		h.held = nil
		h.timer.Stop()
		h.mu.Unlock()
		return h.send(sack)
	}
	h.held = append([]byte(nil), sack...)
	if h.timer == nil {
		h.timer = time.AfterFunc(sackHold, h.flush)
	} else {
		h.timer.Reset(sackHold)
	}
	h.mu.Unlock()
	return nil
}

// take removes and returns the held SACK, if any.
func (h *sackHolder) take() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.held
	if s != nil {
		h.held = nil
		h.timer.Stop()
	}
	return s
}

// flush sends a SACK that found no DATA to ride on.
func (h *sackHolder) flush() {
	if s := h.take(); s != nil {
		_ = h.send(s) // a lost SACK is repaired by the next one (6.2)
	}
}

// isSACKOnly says whether pkt holds exactly one chunk, a SACK.
func isSACKOnly(pkt []byte) bool {
	if len(pkt) < commonHeaderLen+4 || pkt[commonHeaderLen] != chunkSACK {
		return false
	}
	length := int(binary.BigEndian.Uint16(pkt[commonHeaderLen+2:]))
	return commonHeaderLen+(length+3)&^3 == len(pkt)
}

// bundleSACK puts the SACK chunk of sack in front of pkt's chunks when pkt
// carries DATA of the same association (same ports and tag) and the result
// fits one datagram; 6.10 puts control chunks before DATA.
func bundleSACK(sack, pkt []byte) ([]byte, bool) {
	if len(pkt) <= commonHeaderLen || (pkt[commonHeaderLen] != chunkData && pkt[commonHeaderLen] != chunkIData) {
		return nil, false
	}
	if string(sack[:8]) != string(pkt[:8]) || len(pkt)+len(sack)-commonHeaderLen > maxBundled {
		return nil, false // another association (ports, tag), or too big
	}
	out := make([]byte, 0, len(pkt)+len(sack)-commonHeaderLen)
	out = append(out, pkt[:commonHeaderLen]...)
	out = append(out, sack[commonHeaderLen:]...)
	out = append(out, pkt[commonHeaderLen:]...)
	fillChecksum(out)
	return out, true
}
