package u_test

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
)

const (
	upTEID  = 0x1001 // UPF-U's F-TEID for the session (uplink)
	gnbTEID = 0x2002 // the gNB's F-TEID (downlink)
	qfi     = 9
	wait    = 2 * time.Second
)

// session is a PDU session as the SMF sets it up (TS 23.502 4.3.2.2.1):
// uplink PDR by TEID with outer header removal to N6, downlink PDR by UE
// address to the gNB with the QFI of its QER, one URR on both.
func session(seid uint64, ue netip.Addr, teid, gnb uint32, q uint8) *rules.Session {
	return &rules.Session{UPSEID: seid, CPSEID: seid + 100, Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, LocalFTEID: &rules.FTEID{TEID: teid, IPv4: upfN3.Addr()},
				UEIPv4: ue, NetworkInstance: "internet", OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: ue, NetworkInstance: "internet",
				FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core, NetworkInstance: "internet"},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access,
				OuterHeader: &rules.OuterHeader{TEID: gnb, PeerIPv4: gnbIP}},
		},
		QERs: []rules.QER{{ID: 1, QFI: q, GateULOpen: true, GateDLOpen: true}},
		URRs: []rules.URR{{ID: 1}},
	}}
}

// ready resolves UPF-U on both links (it learns the gNB's and DN's MACs
// from the requests) and returns its N3 and N6 MACs.
func (l *lab) ready() (n3, n6 net.HardwareAddr) {
	return resolveUPF(l.t, l.gnb, gnbIP, upfN3.Addr()), resolveUPF(l.t, l.dn, dnIP, upfN6.Addr())
}

func ueUDP(payload string) []byte {
	return ipv4(ueIP, dnIP, 17, 64, udp(40000, 5201, []byte(payload)))
}

func TestUplinkIsDecapsulatedToN6(t *testing.T) {
	l := newLab(t)
	n3, n6 := l.ready()
	if err := l.table.Install(session(1, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		t.Fatal(err)
	}
	inner := ueUDP("uplink")
	l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, inner)))
	f, err := l.dn.recv(wait, isIPv4)
	if err != nil {
		t.Fatalf("no uplink packet on N6: %v (stats %+v)", err, l.table.Stats())
	}
	if !bytes.Equal(f[0:6], dnMAC) || !bytes.Equal(f[6:12], n6) {
		t.Errorf("N6 frame from %x to %x, want from UPF %x to DN %x", f[6:12], f[0:6], n6, dnMAC)
	}
	want := append([]byte{}, inner...)
	want[8]-- // TTL
	binary.BigEndian.PutUint16(want[10:], 0)
	binary.BigEndian.PutUint16(want[10:], cksum(want[:20]))
	if got := f[14:]; !bytes.Equal(got, want) {
		t.Errorf("N6 packet\n got % x\nwant % x", got, want)
	}
	usage, err := l.table.Usage(1)
	if err != nil || len(usage) != 1 || usage[0].UplinkPackets != 1 || usage[0].UplinkBytes != uint64(len(inner)) {
		t.Errorf("usage %+v, %v: want 1 uplink packet of %d bytes", usage, err, len(inner))
	}
}

// downlinkFrame is what the DN host sends toward a UE.
func downlinkFrame(n6 net.HardwareAddr, payload string) []byte {
	return eth(n6, dnMAC, 0x0800, ipv4(dnIP, ueIP, 17, 64, udp(5201, 40000, []byte(payload))))
}

func isGTPU(f []byte) bool {
	return isIPv4(f) && f[23] == 17 && binary.BigEndian.Uint16(f[36:]) == 2152
}

func TestDownlinkIsEncapsulatedWithQFI(t *testing.T) {
	l := newLab(t)
	n3, n6 := l.ready()
	if err := l.table.Install(session(1, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		t.Fatal(err)
	}
	l.dn.send(t, downlinkFrame(n6, "downlink"))
	f, err := l.gnb.recv(wait, isGTPU)
	if err != nil {
		t.Fatalf("no downlink GTP-U on N3: %v (stats %+v)", err, l.table.Stats())
	}
	if !bytes.Equal(f[0:6], gnbMAC) || !bytes.Equal(f[6:12], n3) {
		t.Errorf("N3 frame from %x to %x", f[6:12], f[0:6])
	}
	ip := f[14:34]
	if !bytes.Equal(ip[12:16], upfN3.Addr().AsSlice()) || !bytes.Equal(ip[16:20], gnbIP.AsSlice()) || cksum(ip) != 0 {
		t.Errorf("outer IPv4 % x: want %s -> %s with a valid checksum", ip, upfN3.Addr(), gnbIP)
	}
	g := f[42:]
	// TS 29.281 5.1: version 1, PT, E; G-PDU; TEID of the gNB; next: PDU Session Container.
	if g[0] != 0x34 || g[1] != 0xff || binary.BigEndian.Uint32(g[4:]) != gnbTEID || g[11] != 0x85 {
		t.Fatalf("GTP-U header % x", g[:12])
	}
	// TS 38.415 5.5.2.1: DL PDU SESSION INFORMATION (type 0) with the QFI.
	if g[12] != 1 || g[13]>>4 != 0 || g[14]&0x3f != qfi || g[15] != 0 {
		t.Errorf("PDU Session Container % x, want type 0 QFI %d", g[12:16], qfi)
	}
	want := ipv4(dnIP, ueIP, 17, 63, udp(5201, 40000, []byte("downlink")))
	if got := g[16:]; !bytes.Equal(got, want) {
		t.Errorf("inner packet\n got % x\nwant % x", got, want)
	}
	if int(binary.BigEndian.Uint16(g[2:])) != len(g)-8 {
		t.Errorf("GTP-U length %d, message has %d", binary.BigEndian.Uint16(g[2:]), len(g)-8)
	}
}

// UPF-U resolves a next hop it has not heard from by ARP (RFC 826) and
// holds the packet meanwhile (RFC 1122 2.3.2.2): the first packet toward a
// silent DN host arrives once the reply came, none is dropped.
func TestNextHopIsResolvedByARP(t *testing.T) {
	l := newLab(t)
	n3 := resolveUPF(t, l.gnb, gnbIP, upfN3.Addr()) // the DN host stays silent
	if err := l.table.Install(session(1, ueIP, upTEID, gnbTEID, qfi)); err != nil {
		t.Fatal(err)
	}
	before := l.table.Stats().Drops["no_arp"]
	l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, ueUDP("first"))))
	req, err := l.dn.recv(wait, isARPRequest)
	if err != nil {
		t.Fatal(err)
	}
	n6 := net.HardwareAddr(req[6:12])
	if !bytes.Equal(req[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) || !bytes.Equal(req[28:32], upfN6.Addr().AsSlice()) ||
		!bytes.Equal(req[38:42], dnIP.AsSlice()) {
		t.Fatalf("ARP request % x: want a broadcast who-has %s tell %s", req, dnIP, upfN6.Addr())
	}
	l.dn.send(t, arpFrame(2, dnMAC, dnIP, n6, upfN6.Addr()))
	f, err := l.dn.recv(wait, isIPv4)
	if err != nil {
		t.Fatalf("the first packet never arrived (stats %+v)", l.table.Stats())
	}
	if !bytes.Equal(f[0:6], dnMAC) || string(f[n6PayloadOff:]) != "first" {
		t.Errorf("got %q to %x, want \"first\" to the resolved %x", f[n6PayloadOff:], f[0:6], dnMAC)
	}
	if d := l.table.Stats().Drops["no_arp"] - before; d != 0 {
		t.Errorf("%d no_arp drops, want none", d)
	}
}
