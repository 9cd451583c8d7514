package n2

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// A filtered raw socket is handed only the SCTP packets addressed to its
// port: one sent to another port first never reaches its reader.
func TestRawSocketFilterKeepsOnlyOurPort(t *testing.T) {
	if !RawSCTPPermitted() || kernelHasSCTP() {
		t.Skip("raw SCTP not usable here")
	}
	lo := netip.MustParseAddr("127.0.0.1")
	ours := uint16(rawTestPort() + 1)
	rx, err := net.ListenIP(rawNetwork(lo), &net.IPAddr{IP: lo.AsSlice()})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if err := filterSCTPPort(rx, lo, ours); err != nil {
		t.Fatal(err)
	}
	tx, err := net.ListenIP(rawNetwork(lo), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	to := &net.IPAddr{IP: lo.AsSlice()}
	for _, dst := range []uint16{ours + 1, ours} {
		pkt := buildPacket(9, dst, 7, encodeChunk(chunkAbort, 0, nil))
		if _, err := tx.WriteToIP(pkt, to); err != nil {
			t.Fatal(err)
		}
	}
	_ = rx.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1500)
	n, err := rx.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	pkt, err := parseSCTP(stripIPv4Header(buf[:n]))
	if err != nil || pkt.dstPort != ours {
		t.Fatalf("first packet read: %+v, %v; want the one to port %d", pkt, err, ours)
	}
}

// stripIPv4Header returns an IPv4 packet's payload, as a raw socket's
// Read includes the header.
func stripIPv4Header(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	return b[int(b[0]&0xf)*4:]
}
