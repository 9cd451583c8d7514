package u_test

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// One lab for the replies UPF-U makes itself: ICMP echo on both ports,
// GTP-U Echo, Error Indication, and the drop counters of what it refuses.
func TestUPFAnswersAndCountsDrops(t *testing.T) {
	l := newLab(t)
	n3, n6 := l.ready()
	t.Run("icmp echo on N3", func(t *testing.T) { l.pingUPF(t, l.gnb, n3, gnbIP.AsSlice(), upfN3.Addr().AsSlice()) })
	t.Run("icmp echo on N6", func(t *testing.T) { l.pingUPF(t, l.dn, n6, dnIP.AsSlice(), upfN6.Addr().AsSlice()) })
	t.Run("gtp-u echo", func(t *testing.T) {
		// TS 29.281 7.2.1 Echo Request with S flag and sequence 0x1234.
		req := []byte{0x32, 1, 0, 4, 0, 0, 0, 0, 0x12, 0x34, 0, 0}
		l.gnb.send(t, l.n3Frame(n3, req))
		f, err := l.gnb.recv(wait, isGTPU)
		if err != nil {
			t.Fatal(err)
		}
		g := f[42:]
		// Echo Response, same sequence number, Recovery IE (TS 29.281 7.2.2).
		want := []byte{0x32, 2, 0, 6, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 14, 0}
		if !bytes.Equal(g, want) {
			t.Errorf("echo response % x, want % x", g, want)
		}
	})
	t.Run("error indication for an unknown TEID", func(t *testing.T) {
		l.gnb.send(t, l.n3Frame(n3, gtpu(0xff, 0xdead, qfi, ueUDP("x"))))
		f, err := l.gnb.recv(wait, isGTPU)
		if err != nil {
			t.Fatal(err)
		}
		g := f[42:]
		// TS 29.281 7.3.1: type 26, TEID 0, TEID Data I = the unknown
		// TEID, GTP-U Peer Address = our N3 address.
		want := append([]byte{0x32, 26, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0xde, 0xad, 133, 0, 4}, upfN3.Addr().AsSlice()...)
		if !bytes.Equal(g, want) {
			t.Errorf("error indication % x, want % x", g, want)
		}
		if s := l.table.Stats(); s.N3.ErrorIndications != 1 || s.Drops["unknown_teid"] != 1 {
			t.Errorf("error indications %d, unknown_teid drops %d: want 1 and 1", s.N3.ErrorIndications, s.Drops["unknown_teid"])
		}
	})
	t.Run("drops by reason", func(t *testing.T) {
		before := l.table.Stats().Drops
		l.gnb.send(t, eth(n3, gnbMAC, 0x0800, ipv4(gnbIP, upfN3.Addr(), 17, 64, udp(1000, 2000, []byte("not gtp")))))
		l.gnb.send(t, eth(n3, gnbMAC, 0x86dd, make([]byte, 40)))                                                      // IPv6
		l.gnb.send(t, eth(n3, gnbMAC, 0x0800, ipv4(gnbIP, upfN3.Addr(), 17, 64, udp(2152, 2152, []byte{0x30}))[:30])) // truncated
		l.dn.send(t, eth(n6, dnMAC, 0x0800, ipv4(dnIP, ueIP, 17, 64, udp(1, 2, nil))))                                // no session for the UE
		want := map[string]uint64{"not_gtpu": 1, "not_ipv4": 1, "malformed": 1, "not_ours": 1}
		deadline := time.Now().Add(wait)
		for {
			now := l.table.Stats().Drops
			ok := true
			for reason, n := range want {
				if now[reason]-before[reason] != n {
					ok = false
				}
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("drops now %v, before %v: want one more of each of %v", now, before, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// pingUPF sends an echo request to UPF-U's address on a link and checks
// the reply.
func (l *lab) pingUPF(t *testing.T, r *rawLink, upfMAC net.HardwareAddr, from, to []byte) {
	t.Helper()
	var src, dst [4]byte
	copy(src[:], from)
	copy(dst[:], to)
	req := icmpEcho(7, 1, []byte("ping"))
	frame := eth(upfMAC, r.mac, 0x0800, ipv4(addr(src), addr(dst), 1, 64, req))
	r.send(t, frame)
	f, err := r.recv(wait, func(f []byte) bool { return isIPv4(f) && f[23] == 1 })
	if err != nil {
		t.Fatal(err)
	}
	ip := f[14:34]
	if !bytes.Equal(ip[12:16], to) || !bytes.Equal(ip[16:20], from) || cksum(ip) != 0 {
		t.Errorf("reply IPv4 header % x", ip)
	}
	icmp := f[34:]
	if icmp[0] != 0 || binary.BigEndian.Uint16(icmp[4:]) != 7 || !bytes.Equal(icmp[8:], []byte("ping")) || cksum(icmp) != 0 {
		t.Errorf("echo reply % x", icmp)
	}
}
