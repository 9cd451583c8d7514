package u_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/upf/rules"
)

// UPF-U caches a session's verdict per direction (verdict.h) and must
// drop it the moment UPF-C rewrites the session: after a path switch
// (TS 23.502 4.9.1.2.2: the SMF gives the FAR the target gNB's tunnel) the
// very next packet goes into the new tunnel, after FAR DROP it is dropped,
// and after the session is gone it is not forwarded at all.
func TestCachedVerdictFollowsEveryRewrite(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := session(1, ueIP, upTEID, gnbTEID, qfi)
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	tunnel := func(payload string) uint32 {
		t.Helper()
		l.dn.send(t, downlinkFrame(n6, payload))
		f, err := l.gnb.recv(wait, isGTPU)
		if err != nil {
			t.Fatalf("%s: no downlink GTP-U (stats %+v)", payload, l.table.Stats())
		}
		teid, _ := downlinkMarks(f)
		return teid
	}
	for i := 0; i < 3; i++ { // the first fills the cache, the others hit it
		if got := tunnel("before"); got != gnbTEID {
			t.Fatalf("TEID %#x, want %#x", got, gnbTEID)
		}
	}
	s.FARs[1].OuterHeader.TEID = gnbTEID + 1
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	if got := tunnel("after the path switch"); got != gnbTEID+1 {
		t.Fatalf("TEID %#x after the switch, want the new tunnel %#x", got, gnbTEID+1)
	}
	s.FARs[1].Action = rules.ActionDrop
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	l.expectDrop(t, "far_drop", func() { l.dn.send(t, downlinkFrame(n6, "dropped")) })
	if err := l.table.Remove(1); err != nil {
		t.Fatal(err)
	}
	l.expectDrop(t, "not_ours", func() { l.dn.send(t, downlinkFrame(n6, "no session")) })
}

// A cached uplink verdict still checks, per packet, what the PDR asks of
// it (TS 29.244 5.2.1): the QFI of the PDU Session Container and the UE's
// address as the source.
func TestCachedUplinkVerdictStillChecksQFIAndSource(t *testing.T) {
	l := newLab(t)
	n3, _ := l.ready()
	s := session(1, ueIP, upTEID, gnbTEID, qfi)
	s.PDRs[0].QFI = qfi
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	forwarded := func(payload string) {
		t.Helper()
		l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, ueUDP(payload))))
		if _, err := l.dn.recv(wait, isIPv4); err != nil {
			t.Fatalf("%s: not forwarded (stats %+v)", payload, l.table.Stats())
		}
	}
	forwarded("fills the cache")
	l.expectDrop(t, "no_pdr", func() { l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi+1, ueUDP("wrong qfi")))) })
	spoofed := ipv4(netip.MustParseAddr("10.60.0.66"), dnIP, 17, 64, udp(40000, 5201, []byte("not the UE")))
	l.expectDrop(t, "no_pdr", func() { l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, spoofed))) })
	forwarded("the UE again")
}

// A QER's MBR without a Session-AMBR to shape to is policed by a token
// bucket of 10 ms of the rate, at least two full frames (pipeline.c
// police): at 10 kbit/s three 1000-byte packets fit a fresh bucket and the
// next ones sent at once are dropped, counted as "mbr" (it refills 1.25
// bytes a millisecond).
func TestMBRBucketPassesTwoFramesThenDrops(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := session(1, ueIP, upTEID, gnbTEID, qfi)
	s.QERs[0].MBRDL = 10_000
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	before := l.table.Stats().Drops["mbr"]
	payload := strings.Repeat("x", 1000-28) // a 1000-byte IPv4 packet for the UE
	for i := 0; i < 6; i++ {
		l.dn.send(t, downlinkFrame(n6, payload))
	}
	got := 0
	for ; got < 6; got++ {
		if _, err := l.gnb.recv(wait/4, isGTPU); err != nil {
			break
		}
	}
	l.waitDrops(t, "mbr", before, 6-uint64(got), wait)
	if got != 3 {
		t.Errorf("%d of 6 packets passed a fresh 10 kbit/s bucket, want 3 (2 × 1518 bytes)", got)
	}
}
