package u_test

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
)

// The PDR with the lowest precedence value that matches wins (TS 29.244
// 5.2.1): a filtered QoS flow (QFI 5) for UDP from the DN's port 5201 and
// the default flow (QFI 9) for the rest; a FAR that buffers holds the
// packet (buffer_test.go), one that drops discards it; a closed gate drops.
func TestDownlinkPrecedenceSDFGateAndBuffer(t *testing.T) {
	l := newLab(t)
	_, n6 := l.ready()
	s := session(1, ueIP, upTEID, gnbTEID, qfi)
	s.QERs = append(s.QERs, rules.QER{ID: 2, QFI: 5, GateULOpen: true, GateDLOpen: true})
	s.PDRs = append(s.PDRs, rules.PDR{ID: 3, Precedence: 10, Source: rules.Core, UEIPv4: ueIP,
		SDFFilters: []string{"permit out 17 from 10.200.0.2 5201 to assigned"}, FARID: 2, QERIDs: []uint32{2}, URRIDs: []uint32{1}})
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	expectQFI := func(frame []byte, want byte) {
		t.Helper()
		l.dn.send(t, frame)
		f, err := l.gnb.recv(wait, isGTPU)
		if err != nil {
			t.Fatal(err)
		}
		if _, q := downlinkMarks(f); q != want {
			t.Errorf("QFI %d, want %d", q, want)
		}
	}
	expectQFI(downlinkFrame(n6, "matches the filter"), 5)
	expectQFI(eth(n6, dnMAC, 0x0800, ipv4(dnIP, ueIP, 17, 64, udp(5202, 40000, []byte("other port")))), qfi)
	expectQFI(eth(n6, dnMAC, 0x0800, ipv4(dnIP, ueIP, 1, 64, icmpEcho(1, 1, nil))), qfi)

	s.FARs[1].Action = rules.ActionBuffer | rules.ActionNotify
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	l.dn.send(t, downlinkFrame(n6, "idle UE"))
	l.waitBuffer(t, "one packet held", func(b shm.BufferStats) bool { return b.Now == 1 })
	s.FARs[1].Action = rules.ActionDrop
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	l.waitBuffer(t, "the held packet discarded", func(b shm.BufferStats) bool { return b.Now == 0 && b.Discarded == 1 })
	s.FARs[1].Action = rules.ActionForward
	s.QERs[1].GateDLOpen = false
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	l.expectDrop(t, "gate_closed", func() { l.dn.send(t, downlinkFrame(n6, "gate")) })
	expectQFI(eth(n6, dnMAC, 0x0800, ipv4(dnIP, ueIP, 17, 64, udp(5202, 40000, []byte("default flow still open")))), qfi)
}

// Uplink PDRs match the QFI of the PDU Session Container when they name
// one, and the UE's address as the source.
func TestUplinkQFIAndSourceMustMatch(t *testing.T) {
	l := newLab(t)
	n3, _ := l.ready()
	s := session(1, ueIP, upTEID, gnbTEID, qfi)
	s.PDRs[0].QFI = qfi
	if err := l.table.Install(s); err != nil {
		t.Fatal(err)
	}
	l.expectDrop(t, "no_pdr", func() { l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi+1, ueUDP("wrong qfi")))) })
	spoofed := ipv4(netip.MustParseAddr("10.60.0.66"), dnIP, 17, 64, udp(40000, 5201, []byte("not the UE")))
	l.expectDrop(t, "no_pdr", func() { l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, spoofed))) })
	l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, upTEID, qfi, ueUDP("right qfi"))))
	if _, err := l.dn.recv(wait, isIPv4); err != nil {
		t.Fatal(err)
	}
}

// downlinkMarks reads the TEID and QFI UPF-U put on a downlink packet.
func downlinkMarks(f []byte) (teid uint32, qfi byte) {
	g := f[42:]
	return binary.BigEndian.Uint32(g[4:]), g[14] & 0x3f
}
