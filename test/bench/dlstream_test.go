package bench

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// streamPacket is the IPv4/UDP packet of stream datagram seq as a UE's
// tunnel delivers it (checksums are not read).
func streamPacket(seq uint64) []byte {
	p := make([]byte, 20+8+16)
	p[0], p[9] = 0x45, 17
	copy(p[28:], streamMagic[:])
	binary.BigEndian.PutUint64(p[36:], seq)
	return p
}

// Loss counts from the first packet that arrived (those before it died
// while the path came up); a packet below the highest seen is reordered;
// other traffic is not counted.
func TestStreamCountsLostAndReorderedFromTheFirstPacket(t *testing.T) {
	s, err := StartDownlinkStream("", []netip.Addr{netip.MustParseAddr("127.0.0.1")}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(0)
	s.ues[0].sent.Store(10)
	sink := s.Sink(0)
	sink([]byte{0x45, 0, 0})                               // not the stream's
	for _, seq := range []uint64{2, 3, 1, 5, 4, 7, 8, 9} { // 1: before the first, late
		sink(streamPacket(seq))
	}
	want := StreamCounts{Sent: 8, Received: 7, Lost: 1, Reordered: 1}
	if got := s.PerUE(0); got != want {
		t.Fatalf("counts %+v, want %+v (seq 6 lost, 4 late, 1 before the first not counted)", got, want)
	}
	// Windows of the stream: seq 6 is in the first, not in the second;
	// what preceded the first packet received is not counted.
	if n := s.LostBetween(0, 0, 10); n != 1 {
		t.Errorf("lost in 0..9: %d, want 1 (seq 6)", n)
	}
	if n := s.LostBetween(0, 7, 12); n != 0 {
		t.Errorf("lost in 7..11: %d, want 0 (8 and 9 arrived, 10 and 11 never sent)", n)
	}
}

// Whatever a tunnel delivers (it comes from the network), the stream's
// reader never panics and reads only its own datagrams.
func FuzzStreamSeq(f *testing.F) {
	f.Add(streamPacket(7))
	f.Add([]byte{0x4f, 0, 0, 0, 0, 0, 0, 0, 0, 17})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if _, ok := streamSeq(pkt); ok {
			ihl := int(pkt[0]&0x0F) * 4
			if len(pkt) < ihl+24 || [4]byte(pkt[ihl+8:ihl+12]) != streamMagic {
				t.Fatalf("read a sequence number from %x, which holds no stream datagram", pkt)
			}
		}
	})
}
