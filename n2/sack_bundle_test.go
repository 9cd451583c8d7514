package n2

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// wire records the packets a sackHolder puts on it.
type wire struct {
	mu   sync.Mutex
	pkts [][]byte
	sent chan struct{}
}

func newWire() *wire { return &wire{sent: make(chan struct{}, 16)} }

func (w *wire) send(pkt []byte) error {
	w.mu.Lock()
	w.pkts = append(w.pkts, append([]byte(nil), pkt...))
	w.mu.Unlock()
	w.sent <- struct{}{}
	return nil
}

func (w *wire) packets() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]byte(nil), w.pkts...)
}

// chunkTypes lists the chunk types of a packet, in order.
func chunkTypes(t *testing.T, pkt []byte) []uint8 {
	t.Helper()
	if !checksumOK(pkt) {
		t.Fatalf("bad CRC32c on % x", pkt)
	}
	var types []uint8
	for off := commonHeaderLen; off+4 <= len(pkt); {
		types = append(types, pkt[off])
		off += (int(binary.BigEndian.Uint16(pkt[off+2:])) + 3) &^ 3
	}
	return types
}

const testTag = 0xfeed

func sackPacket(cumTSN uint32) []byte {
	v := make([]byte, 12) // cumulative TSN ack, a_rwnd, no gap blocks or duplicates
	binary.BigEndian.PutUint32(v, cumTSN)
	binary.BigEndian.PutUint32(v[4:], 1<<20)
	return buildPacket(5000, 5000, testTag, encodeChunk(chunkSACK, 0, v))
}

func dataPacket(tag uint32, payload int) []byte {
	v := make([]byte, 12+payload) // TSN, stream, SSN, PPID, user data
	binary.BigEndian.PutUint32(v[8:], PPIDNGAP)
	return buildPacket(5000, 5000, tag, encodeChunk(chunkData, 3, v))
}

// A SACK waiting when DATA leaves rides in front of it, in one packet
// (RFC 9260 6.10: control chunks first), so the peer gets one packet and
// one wake-up for both.
func TestHeldSACKRidesOnTheNextData(t *testing.T) {
	w := newWire()
	h := newSACKHolder(w.send)
	if err := h.write(sackPacket(7)); err != nil {
		t.Fatal(err)
	}
	if got := len(w.packets()); got != 0 {
		t.Fatalf("%d packets sent for a lone SACK at once, want it held", got)
	}
	if err := h.write(dataPacket(testTag, 100)); err != nil {
		t.Fatal(err)
	}
	pkts := w.packets()
	if len(pkts) != 1 {
		t.Fatalf("%d packets, want SACK and DATA in one", len(pkts))
	}
	if types := chunkTypes(t, pkts[0]); !bytes.Equal(types, []byte{chunkSACK, chunkData}) {
		t.Fatalf("chunks %v, want SACK then DATA", types)
	}
	if binary.BigEndian.Uint32(pkts[0][commonHeaderLen+4:]) != 7 {
		t.Fatal("the SACK's cumulative TSN ack was not kept")
	}
}

// A SACK with no DATA to ride on still goes, on its own, soon after (the
// 200 ms of RFC 9260 6.2 is far away).
func TestHeldSACKGoesAloneWhenNoDataFollows(t *testing.T) {
	w := newWire()
	h := newSACKHolder(w.send)
	sack := sackPacket(9)
	if err := h.write(sack); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.sent:
	case <-time.After(5 * time.Second):
		t.Fatal("the held SACK was never sent")
	}
	if pkts := w.packets(); len(pkts) != 1 || !bytes.Equal(pkts[0], sack) {
		t.Fatalf("sent %x, want the SACK unchanged", pkts)
	}
}

// A second SACK while one waits replaces it and goes at once: it
// acknowledges all the first did, and a bulk sender keeps its clock.
func TestSecondSACKGoesAtOnceInsteadOfTheFirst(t *testing.T) {
	w := newWire()
	h := newSACKHolder(w.send)
	_ = h.write(sackPacket(1))
	_ = h.write(sackPacket(2))
	_ = h.write(dataPacket(testTag, 10))
	pkts := w.packets()
	if len(pkts) != 2 {
		t.Fatalf("%d packets, want the second SACK and the DATA", len(pkts))
	}
	if got := binary.BigEndian.Uint32(pkts[0][commonHeaderLen+4:]); got != 2 {
		t.Fatalf("first packet acknowledges TSN %d, want the newer SACK (2)", got)
	}
	if types := chunkTypes(t, pkts[1]); !bytes.Equal(types, []byte{chunkData}) {
		t.Fatalf("then chunks %v, want the DATA alone", types)
	}
}

// A held SACK never rides on what must travel alone or on what is not this
// association's DATA; it goes first, as it would have.
func TestHeldSACKGoesFirstWhenItCannotRide(t *testing.T) {
	for name, next := range map[string][]byte{
		"HEARTBEAT ACK":      buildPacket(5000, 5000, testTag, encodeChunk(chunkHeartbeatAck, 0, make([]byte, 12))),
		"ABORT":              buildPacket(5000, 5000, testTag, encodeChunk(chunkAbort, 0, nil)),
		"another tag's DATA": dataPacket(testTag+1, 10),
		"a full DATA packet": dataPacket(testTag, maxBundled-commonHeaderLen-16),
	} {
		w := newWire()
		h := newSACKHolder(w.send)
		sack := sackPacket(3)
		_ = h.write(sack)
		_ = h.write(next)
		pkts := w.packets()
		if len(pkts) != 2 || !bytes.Equal(pkts[0], sack) || !bytes.Equal(pkts[1], next) {
			t.Errorf("%s: sent %d packets, want the SACK then it, unchanged", name, len(pkts))
		}
	}
}

// Over a real association, a procedure's exchange of messages carries its
// SACKs on the answers: far fewer packets hold a SACK alone than pion asks
// for (one for every second DATA received).
func TestPingPongSendsFewLoneSACKs(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	amfWire := &countingLayer{packetLayer: udpLayer{pc}}
	ln := newSCTPListener(amfWire, 0, Options{HeartbeatInterval: -1})
	t.Cleanup(func() { ln.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, _, err := Options{HeartbeatInterval: -1}.Dial(ctx, UDP, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if err := client.WriteMsg([]byte("ng setup"), 0); err != nil {
		t.Fatal(err)
	}
	server := acceptOne(t, ln)
	if _, _, err := server.ReadMsg(); err != nil {
		t.Fatal(err)
	}
	const rounds = 200
	for range rounds {
		if err := client.WriteMsg([]byte("uplink"), 1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := server.ReadMsg(); err != nil {
			t.Fatal(err)
		}
		if err := server.WriteMsg([]byte("downlink"), 1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := client.ReadMsg(); err != nil {
			t.Fatal(err)
		}
	}
	if n := amfWire.loneSACKs.Load(); n > rounds/10 {
		t.Fatalf("the AMF sent %d SACK-only packets in %d round trips, want at most %d (pion asks for about %d)", n, rounds, rounds/10, rounds/2)
	}
}

// countingLayer counts the SACK-only packets written through it.
type countingLayer struct {
	packetLayer
	loneSACKs atomic.Int64
}

func (c *countingLayer) writePacket(pkt []byte, to netip.AddrPort) error {
	if isSACKOnly(pkt) {
		c.loneSACKs.Add(1)
	}
	return c.packetLayer.writePacket(pkt, to)
}
