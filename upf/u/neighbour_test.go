package u_test

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// holdPerHop is HOLD_PER_HOP of priv.h: what one unresolved next hop holds.
const holdPerHop = 64

// giveUp is more than ARP_GIVE_UP_MS plus a loaded machine's slack: how
// long a test waits for held packets to be given up.
const giveUp = 5 * time.Second

// waitDrops waits until UPF-U counted n more drops for reason than before.
func (l *lab) waitDrops(t *testing.T, reason string, before, n uint64, within time.Duration) {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if l.table.Stats().Drops[reason] >= before+n {
			break
		}
	}
	if got := l.table.Stats().Drops[reason]; got != before+n {
		t.Fatalf("%s drops %d, want %d (stats %+v)", reason, got-before, n, l.table.Stats())
	}
}

// uplink sends the gNB's G-PDU carrying payload toward the DN host.
func (l *lab) uplink(t *testing.T, n3 net.HardwareAddr, payload string) {
	l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, ueUDP(payload))))
}

// awaitARPRequest returns the MAC UPF-U asked from for ip on link r.
func awaitARPRequest(t *testing.T, r *rawLink, ip netip.Addr) net.HardwareAddr {
	t.Helper()
	req, err := r.recv(wait, func(f []byte) bool { return isARPRequest(f) && bytes.Equal(f[38:42], ip.AsSlice()) })
	if err != nil {
		t.Fatalf("no ARP request for %s: %v", ip, err)
	}
	return net.HardwareAddr(req[6:12])
}

// payloads receives n frames matching match on r and returns the UDP
// payload of each (at off), in arrival order.
func payloads(t *testing.T, r *rawLink, n int, match func([]byte) bool, off int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		f, err := r.recv(wait, match)
		if err != nil {
			t.Fatalf("got %d of %d packets %q: %v", len(got), n, got, err)
		}
		got = append(got, string(f[off:]))
	}
	return got
}

// Offsets of the UE's UDP payload in what UPF-U sends: on N6 Eth, IPv4,
// UDP; on N3 Eth, IPv4, UDP, GTP-U with its PDU Session Container, then the
// UE's IPv4 and UDP.
const (
	n6PayloadOff = 14 + 20 + 8
	n3PayloadOff = 14 + 20 + 8 + 16 + 20 + 8
)

func numbered(from, to int) []string {
	var s []string
	for i := from; i <= to; i++ {
		s = append(s, fmt.Sprintf("pkt-%03d", i))
	}
	return s
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// After paging, the SMF points the downlink at a gNB UPF-U may never have
// talked to (TS 23.502 4.2.3.3 step 17): what waited for its address goes
// first, in order, then what came after it was learnt.
func TestHeldPacketsLeaveInOrderBeforeLaterOnes(t *testing.T) {
	heldPacketsLeaveInOrder(t, session(1, ueIP, upTEID, gnbTEID, qfi))
}

// heldPacketsLeaveInOrder installs s, sends five downlink packets while
// the gNB's address is unknown, answers UPF-U's ARP request, sends five
// more, and checks the gNB got all ten in order.
func heldPacketsLeaveInOrder(t *testing.T, s *rules.Session) {
	t.Helper()
	l := newLab(t)
	n6 := resolveUPF(t, l.dn, dnIP, upfN6.Addr()) // the gNB stays silent
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	want := numbered(1, 10)
	for _, p := range want[:5] {
		l.dn.send(t, downlinkFrame(n6, p))
	}
	n3 := awaitARPRequest(t, l.gnb, gnbIP)
	l.gnb.send(t, arpFrame(2, gnbMAC, gnbIP, n3, upfN3.Addr()))
	for _, p := range want[5:] {
		l.dn.send(t, downlinkFrame(n6, p))
	}
	if got := payloads(t, l.gnb, len(want), isGTPU, n3PayloadOff); !equal(got, want) {
		t.Errorf("gNB got %q, want %q", got, want)
	}
}

// Nobody answers: UPF-U asks again, then drops what it held, each counted
// as no_arp; a late reply sends none of them.
func TestUnansweredHopDropsHeldPackets(t *testing.T) {
	l := newLab(t)
	n3 := resolveUPF(t, l.gnb, gnbIP, upfN3.Addr())
	if err := l.table.Install(session(1, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		t.Fatal(err)
	}
	before := l.table.Stats().Drops["no_arp"]
	for _, p := range numbered(1, 3) {
		l.uplink(t, n3, p)
	}
	n6 := awaitARPRequest(t, l.dn, dnIP)
	awaitARPRequest(t, l.dn, dnIP) // asked again while waiting
	l.waitDrops(t, "no_arp", before, 3, giveUp)
	l.dn.send(t, arpFrame(2, dnMAC, dnIP, n6, upfN6.Addr()))
	if f, err := l.dn.recv(300*time.Millisecond, isIPv4); err == nil {
		t.Errorf("a given-up packet %q was sent after all", f[n6PayloadOff:])
	}
}

// RFC 1122 2.3.2.2 "keep the newest": past HOLD_PER_HOP packets the oldest
// is dropped, counted, and the rest leave in order.
func TestFullHopDropsItsOldest(t *testing.T) {
	l := newLab(t)
	n3 := resolveUPF(t, l.gnb, gnbIP, upfN3.Addr())
	if err := l.table.Install(session(1, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		t.Fatal(err)
	}
	before := l.table.Stats().Drops["no_arp"]
	all := numbered(1, holdPerHop+3)
	for _, p := range all {
		l.uplink(t, n3, p)
	}
	n6 := awaitARPRequest(t, l.dn, dnIP)
	l.waitDrops(t, "no_arp", before, 3, wait)
	l.dn.send(t, arpFrame(2, dnMAC, dnIP, n6, upfN6.Addr()))
	if got := payloads(t, l.dn, holdPerHop, isIPv4, n6PayloadOff); !equal(got, all[3:]) {
		t.Errorf("DN got %q, want %q", got, all[3:])
	}
}

// RFC 826 merge and RFC 5227 3: a peer's gratuitous ARP (a request for its
// own address) refreshes UPF-U's entry, so traffic follows its new MAC.
func TestGratuitousARPRefreshesNeighbour(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	if err := l.table.Install(session(1, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		t.Fatal(err)
	}
	moved := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x22}
	l.gnb.send(t, arpFrame(1, moved, gnbIP, net.HardwareAddr{0, 0, 0, 0, 0, 0}, gnbIP))
	for try := 0; ; try++ { // the announcement and the packet race on two ports
		l.dn.send(t, downlinkFrame(n6, "after"))
		f, err := l.gnb.recv(wait, isGTPU) // 200 ms failed a UPF-U stalled that long on a loaded CI machine
		if err != nil {
			t.Fatalf("no downlink after the announcement: %v", err)
		}
		if bytes.Equal(f[0:6], moved) {
			break
		}
		if try == 20 {
			t.Fatalf("downlink still to %s, want the announced %s", net.HardwareAddr(f[0:6]), moved)
		}
	}
}

// The paging case (TS 23.502 4.2.3.3 step 17, issue 12): the Service
// Request turns the FAR to FORW toward a gNB UPF-U never heard from; the
// buffered packets wait for its address with the ones after them, and all
// arrive in order, none lost.
func TestFlushToUnresolvedGNBLosesNothing(t *testing.T) {
	l := newLab(t)
	n6 := resolveUPF(t, l.dn, dnIP, upfN6.Addr()) // the gNB stays silent
	s := idle(1, ue1)
	l.install(t, s)
	before := l.table.Stats().Drops["no_arp"]
	l.sendNumbered(t, n6, ue1, "p", 3)
	l.waitBuffer(t, "3 packets held", func(b shm.BufferStats) bool { return b.Now == 3 })
	l.install(t, forwarding(s, gnbTEID))
	l.dn.send(t, toUE(n6, ue1, "p4"))
	n3 := awaitARPRequest(t, l.gnb, gnbIP)
	l.gnb.send(t, arpFrame(2, gnbMAC, gnbIP, n3, upfN3.Addr()))
	l.dn.send(t, toUE(n6, ue1, "p5"))
	if got := l.received(t, 5); strings.Join(got, " ") != "p1 p2 p3 p4 p5" {
		t.Fatalf("gNB received %v, want p1 p2 p3 p4 p5", got)
	}
	if d := l.table.Stats().Drops["no_arp"] - before; d != 0 {
		t.Errorf("%d no_arp drops, want none", d)
	}
}
