package ransim

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// fakeUPF is the UPF's N3 end in forwarding tests: it sends downlink
// G-PDUs and End Markers to gNB tunnels.
type fakeUPF struct {
	t    *testing.T
	conn *net.UDPConn
}

func newFakeUPF(t *testing.T) *fakeUPF {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &fakeUPF{t: t, conn: c}
}

func (u *fakeUPF) send(to *UserPlane, m *gtpu.Message) {
	u.t.Helper()
	b, err := m.Marshal()
	if err != nil {
		u.t.Fatal(err)
	}
	if _, err := u.conn.WriteToUDPAddrPort(b, netip.AddrPortFrom(to.Addr(), uint16(to.LocalPort()))); err != nil {
		u.t.Fatal(err)
	}
}

// packet sends downlink packet number seq (one octet payload) on tunnel t.
func (u *fakeUPF) packet(t *Tunnel, seq byte) {
	u.send(t.p, gtpu.GPDU(t.DLTEID, gtpu.DLPDUSessionInformation, 1, []byte{0x45, seq}))
}

func (u *fakeUPF) endMarker(t *Tunnel) {
	u.send(t.p, &gtpu.Message{Type: gtpu.TypeEndMarker, TEID: t.DLTEID})
}

func listeningUserPlane(t *testing.T) *UserPlane {
	p := NewUserPlane(netip.MustParseAddr("127.0.0.1"), nil)
	if err := p.Listen(0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// collector is a UE's sink that records the sequence numbers it gets.
type collector chan byte

func (c collector) sink() *func([]byte) {
	f := func(pkt []byte) { c <- pkt[1] }
	return &f
}

func (c collector) want(t *testing.T, seqs ...byte) {
	t.Helper()
	var got []byte
	for range seqs {
		select {
		case s := <-c:
			got = append(got, s)
		case <-time.After(10 * time.Second): // bounds a failing test only
			t.Fatalf("UE got %v, want %v", got, seqs)
		}
	}
	if !slices.Equal(got, seqs) {
		t.Fatalf("UE got %v, want %v (forwarded packets first, in order)", got, seqs)
	}
}

// N2 handover with direct forwarding (TS 38.300 9.2.3.3.1): what the
// source gets after the UE left goes as GTP-U to the target's forwarding
// tunnel; the target delivers it before the packets of the new path, which
// wait for the End Marker the source passes on.
func TestTargetDeliversForwardedPacketsBeforeTheNewPath(t *testing.T) {
	src, dst, upf := listeningUserPlane(t), listeningUserPlane(t), newFakeUPF(t)
	ul := ngapx.Tunnel{IPv4: netip.MustParseAddr("127.0.0.1"), TEID: 9}
	old := src.newTunnel(1, ul, []uint8{1})
	target := dst.newTunnel(1, ul, []uint8{1})
	fwd := dst.newForwardingTunnel(target)
	ue := make(collector, 16)
	old.SetSink(*ue.sink())

	upf.packet(old, 1)
	ue.want(t, 1)
	target.awaitArrival(true)
	src.PeerPort = dst.LocalPort() // the target's N3 port (2152 in the lab)
	old.startForwarding(gtpForwarder(src, fwd.DL(), 1))
	target.arrive(ue.sink())
	upf.packet(old, 2)
	upf.packet(old, 3)
	upf.packet(target, 4) // the UPF switched the path
	upf.endMarker(old)
	upf.packet(target, 5)
	ue.want(t, 2, 3, 4, 5)
	if src.EndMarkers.Load() != 1 || dst.EndMarkers.Load() != 1 || src.Forwarded.Load() != 2 {
		t.Fatalf("end markers at source %d, target %d, forwarded %d; want 1, 1, 2",
			src.EndMarkers.Load(), dst.EndMarkers.Load(), src.Forwarded.Load())
	}
	// The hold is dropped just after its last packet reaches the UE (under
	// the hold's lock, before the tunnel forgets it), so give it a moment.
	for deadline := time.Now().Add(10 * time.Second); target.hold.Load() != nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // bounds a failing test only
			t.Fatal("the target still holds packets after the End Marker")
		}
	}
}

// Xn handover (TS 38.300 9.2.3.2.1): forwarded packets cross the
// simulator's Xn; those that reach the target before the UE are held for it.
func TestXnForwardedPacketsWaitForTheUE(t *testing.T) {
	src, dst, upf := listeningUserPlane(t), listeningUserPlane(t), newFakeUPF(t)
	ul := ngapx.Tunnel{IPv4: netip.MustParseAddr("127.0.0.1"), TEID: 9}
	old := src.newTunnel(1, ul, []uint8{1})
	target := dst.newTunnel(1, ul, []uint8{1})
	ue := make(collector, 16)
	old.SetSink(*ue.sink())
	target.awaitArrival(true)
	old.startForwarding(xnForwarder(target))
	upf.packet(old, 1)
	upf.packet(target, 2)
	upf.endMarker(old)
	for src.EndMarkers.Load() == 0 { // the End Marker is the last thing sent
		time.Sleep(time.Millisecond)
	}
	if len(ue) != 0 {
		t.Fatal("the UE got packets before it arrived at the target")
	}
	target.arrive(ue.sink())
	ue.want(t, 1, 2)
	upf.packet(target, 3)
	ue.want(t, 3)
}

// The tunnel a TUN follows is the last target's.
func TestCurrentTunnelFollowsHandovers(t *testing.T) {
	p := NewUserPlane(netip.MustParseAddr("127.0.0.1"), nil)
	a := p.newTunnel(1, ngapx.Tunnel{}, nil)
	b := p.newTunnel(1, ngapx.Tunnel{}, nil)
	c := p.newTunnel(1, ngapx.Tunnel{}, nil)
	a.next.Store(b)
	b.next.Store(c)
	if a.current() != c || c.current() != c {
		t.Fatal("current() does not follow the chain of handovers")
	}
}

// TS 29.281 7.2.1: Ping's Echo Request gets the peer's Echo Response.
func TestPingGetsTheEchoResponse(t *testing.T) {
	a, b := listeningUserPlane(t), listeningUserPlane(t)
	a.PeerPort = b.LocalPort()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds a failing test only
	defer cancel()
	if _, err := a.Ping(ctx, b.Addr()); err != nil {
		t.Fatal(err)
	}
	if a.Dropped.Load() != 0 {
		t.Fatal("the Echo Response was counted as dropped")
	}
}
