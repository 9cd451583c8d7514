package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// udp4 is an IPv4/UDP packet to port with payload, as the UE's tunnel
// hands it over.
func udp4(port uint16, payload []byte) []byte {
	p := make([]byte, 28, 28+len(payload))
	p[0], p[9] = 0x45, 17
	binary.BigEndian.PutUint16(p[22:], port)
	return append(p, payload...)
}

func TestProbeIsToldApartFromOtherTraffic(t *testing.T) {
	if seq, ok := probeSeq(udp4(probePort, probePayload(4711))); !ok || seq != 4711 {
		t.Fatalf("probe 4711 read as %d, %v", seq, ok)
	}
	for name, pkt := range map[string][]byte{
		"other port":     udp4(probePort+1, probePayload(1)),
		"other payload":  udp4(probePort, []byte("l25gc-probX\x00\x00\x00\x01")),
		"short":          udp4(probePort, probePayload(1)[:5]),
		"TCP":            func() []byte { p := udp4(probePort, probePayload(1)); p[9] = 6; return p }(),
		"IPv6":           func() []byte { p := udp4(probePort, probePayload(1)); p[0] = 0x60; return p }(),
		"truncated head": {0x45, 0, 0},
	} {
		if _, ok := probeSeq(pkt); ok {
			t.Errorf("%s read as a probe", name)
		}
	}
}

func TestLatenciesCountFailuresByReason(t *testing.T) {
	var l latencies
	l.add(3 * time.Millisecond)
	l.add(time.Millisecond)
	l.fail(errors.New("no paging"))
	l.fail(errors.New("no paging"))
	o := l.outcome(time.Second)
	if len(o.Latencies) != 2 || o.Latencies[0] != time.Millisecond || o.Failed != 2 || len(o.Errors) != 1 || o.Errors[0] != "2× no paging" {
		t.Fatalf("outcome %+v", o)
	}
	r := FromOutcome(ProcedurePaging, "xio", 4, 4, o)
	if r.Succeeded != 2 || r.Failed != 2 || r.Procedure != "paging" || r.ThroughputPerS != 2 {
		t.Fatalf("result %+v", r)
	}
}

// What comes out of a UE's tunnel is the network's: reading it as a probe
// never panics, and only a probe's own bytes read as one.
func FuzzProbeSeq(f *testing.F) {
	f.Add(udp4(probePort, probePayload(7)))
	f.Add([]byte{0x4f, 0, 0, 0, 0, 0, 0, 0, 0, 17})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if seq, ok := probeSeq(pkt); ok && !bytes.HasSuffix(pkt, probePayload(seq)) {
			t.Fatalf("%x read as probe %d", pkt, seq)
		}
	})
}
