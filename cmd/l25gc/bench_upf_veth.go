package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
	"github.com/l25gc/l25gc/upf/shm"
	"github.com/l25gc/l25gc/upf/u"
)

// The veth path of `l25gc bench upf`: UPF-U in this process with
// net_af_packet ports on two veth pairs of its own, a gNB and a DN host on
// raw sockets at the other ends. The sender offers --rate packets a second
// for --duration; what arrived is what UPF-U sent out of the far port (the
// veth delivers all of it). One packet in probeEvery is a probe (UDP port
// probePort, the send time in its payload), which the far end reflects
// back through UPF-U for the RTT; the far ends' sockets take probes only (a
// socket filter), so reading them costs the measurement nothing.

const probeEvery, dataPort, probePort = 256, 5201, 5202

var (
	vGNB = netip.MustParseAddr("10.100.0.2")
	vDN  = netip.MustParseAddr("10.200.0.2")
	vUE  = netip.MustParseAddr("10.60.0.1")
	vN3  = netip.MustParsePrefix("10.100.0.1/24")
	vN6  = netip.MustParsePrefix("10.200.0.1/24")
)

const vTEID, vGNBTEID, vQFI = 0x100000, 0x200000, 9

type vethLink struct {
	fd       int // sends; its receive side is used for ARP only
	ifindex  int
	mac, upf net.HardwareAddr
}

func benchUPFVeth(sessions, sizes []int, rate int, duration time.Duration) ([]upfResult, error) {
	names := [4]string{"l25gcb3u", "l25gcb3g", "l25gcb6u", "l25gcb6d"}
	for _, pair := range [][2]string{{names[0], names[1]}, {names[2], names[3]}} {
		if err := vethUp(pair[0], pair[1]); err != nil {
			return nil, err
		}
		defer exec.Command("ip", "link", "del", pair[0]).Run()
	}
	tables := shm.Config{MaxSessions: slices.Max(sessions), Prefix: fmt.Sprintf("l25gc-bench%d", os.Getpid())}
	defer shm.RemoveFile(tables)
	p, err := u.Start(u.Config{Tables: tables, MaxSessions: tables.MaxSessions,
		N3: u.Port{Dev: "net_af_packet_b3,iface=" + names[0] + ",framecnt=4096", IP: vN3},
		N6: u.Port{Dev: "net_af_packet_b6,iface=" + names[2] + ",framecnt=4096", IP: vN6}})
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { stop(); <-done }()
	gnb, err := openLink(names[1], net.HardwareAddr{2, 0, 0, 0, 0, 2}, vGNB, vN3.Addr())
	if err != nil {
		return nil, err
	}
	dn, err := openLink(names[3], net.HardwareAddr{2, 0, 0, 0, 0, 6}, vDN, vN6.Addr())
	if err != nil {
		return nil, err
	}
	t, err := p.Table()
	if err != nil {
		return nil, err
	}
	var out []upfResult
	for _, n := range sessions {
		for i := 0; i < n; i++ {
			if err := t.Install(vethSession(uint32(i))); err != nil {
				return nil, err
			}
		}
		for _, dir := range []string{"uplink", "downlink"} {
			for _, size := range sizes {
				r := vethRun(t, gnb, dn, dir == "downlink", n, size, rate, duration)
				r.Sessions, r.PacketBytes, r.Direction = n, size, dir
				out = append(out, r)
			}
		}
		for i := 0; i < n; i++ {
			t.Remove(uint64(i) + 1)
		}
	}
	return out, nil
}

func vethUp(a, b string) error {
	exec.Command("ip", "link", "del", a).Run()
	if out, err := exec.Command("ip", "link", "add", a, "type", "veth", "peer", "name", b).CombinedOutput(); err != nil {
		return fmt.Errorf("veth %s: %v: %s (root?)", a, err, out)
	}
	for _, n := range []string{a, b} {
		os.WriteFile("/proc/sys/net/ipv6/conf/"+n+"/disable_ipv6", []byte("1"), 0o644)
		exec.Command("ethtool", "-K", n, "tx", "off", "tso", "off", "gso", "off", "gro", "off").Run()
		if err := exec.Command("ip", "link", "set", n, "up").Run(); err != nil {
			return err
		}
	}
	return nil
}

func htons16(v uint16) uint16 { return v<<8 | v>>8 }

// openLink opens a raw socket on name and learns UPF-U's MAC by ARP (which
// teaches UPF-U ours).
func openLink(name string, mac net.HardwareAddr, mine, upf netip.Addr) (*vethLink, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, int(htons16(syscall.ETH_P_ALL)))
	if err != nil {
		return nil, err
	}
	syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons16(syscall.ETH_P_ALL), Ifindex: ifi.Index})
	tv := syscall.NsecToTimeval(int64(20 * time.Millisecond))
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	l := &vethLink{fd: fd, ifindex: ifi.Index, mac: mac}
	req := append(append(append([]byte{255, 255, 255, 255, 255, 255}, mac...), 8, 6, 0, 1, 8, 0, 6, 4, 0, 1), mac...)
	req = append(append(append(req, mine.AsSlice()...), 0, 0, 0, 0, 0, 0), upf.AsSlice()...)
	buf := make([]byte, 2048)
	for try := 0; try < 100; try++ {
		syscall.Write(fd, req)
		for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
			n, _, err := syscall.Recvfrom(fd, buf, 0)
			if err == nil && n >= 42 && buf[12] == 8 && buf[13] == 6 && buf[21] == 2 {
				l.upf = append(net.HardwareAddr(nil), buf[22:28]...)
				return l, nil
			}
		}
	}
	return nil, fmt.Errorf("UPF-U does not answer ARP on %s", name)
}

// filtered opens a second raw socket on l's interface that takes probes
// only (its UDP port at off is probePort).
func filtered(l *vethLink, off int) (int, error) {
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, int(htons16(syscall.ETH_P_ALL)))
	if err != nil {
		return -1, err
	}
	if err := probeFilter(fd, off, probePort); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons16(syscall.ETH_P_ALL), Ifindex: l.ifindex}); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	tv := syscall.NsecToTimeval(int64(20 * time.Millisecond))
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	return fd, nil
}

func vethSession(i uint32) *rules.Session {
	ue := addAddr(vUE, i)
	return &rules.Session{UPSEID: uint64(i) + 1, Rules: rules.Rules{
		PDRs: []rules.PDR{
			{ID: 1, Precedence: 255, Source: rules.Access, LocalFTEID: &rules.FTEID{TEID: vTEID + i},
				UEIPv4: ue, OuterHeaderRemoval: true, FARID: 1, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
			{ID: 2, Precedence: 255, Source: rules.Core, UEIPv4: ue, FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1}},
		},
		FARs: []rules.FAR{
			{ID: 1, Action: rules.ActionForward, Destination: rules.Core},
			{ID: 2, Action: rules.ActionForward, Destination: rules.Access,
				OuterHeader: &rules.OuterHeader{TEID: vGNBTEID + i, PeerIPv4: vGNB}},
		},
		QERs: []rules.QER{{ID: 1, QFI: vQFI, GateULOpen: true, GateDLOpen: true, MBRUL: 1e12, MBRDL: 1e12}},
		URRs: []rules.URR{{ID: 1}},
	}}
}

func addAddr(a netip.Addr, i uint32) netip.Addr {
	b := a.As4()
	v := binary.BigEndian.Uint32(b[:]) + i
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

func vCksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// userPacket is a UE's UDP packet of size bytes as an Ethernet frame (its
// IP packet is size-14 bytes), from src to dst.
func userPacket(src, dst netip.Addr, size int) []byte {
	ipLen := max(size-14, 28+16)
	p := make([]byte, ipLen)
	p[0] = 0x45
	binary.BigEndian.PutUint16(p[2:], uint16(ipLen))
	p[8], p[9] = 64, 17
	copy(p[12:], src.AsSlice())
	copy(p[16:], dst.AsSlice())
	binary.BigEndian.PutUint16(p[10:], vCksum(p[:20]))
	binary.BigEndian.PutUint16(p[20:], 40000)
	binary.BigEndian.PutUint16(p[22:], 5201)
	binary.BigEndian.PutUint16(p[24:], uint16(ipLen-20))
	return p
}

// onN3 wraps an IP packet as the gNB sends it: GTP-U with a UL PDU
// Session Container (TS 38.415) in UDP 2152.
func onN3(l *vethLink, teid uint32, ip []byte) []byte {
	g := []byte{0x34, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x85, 1, 0x10, vQFI, 0}
	binary.BigEndian.PutUint16(g[2:], uint16(8+len(ip)))
	binary.BigEndian.PutUint32(g[4:], teid)
	udpLen := 8 + len(g) + len(ip)
	h := make([]byte, 28)
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], uint16(20+udpLen))
	h[8], h[9] = 64, 17
	copy(h[12:], vGNB.AsSlice())
	copy(h[16:], vN3.Addr().AsSlice())
	binary.BigEndian.PutUint16(h[10:], vCksum(h[:20]))
	binary.BigEndian.PutUint16(h[20:], 2152)
	binary.BigEndian.PutUint16(h[22:], 2152)
	binary.BigEndian.PutUint16(h[24:], uint16(udpLen))
	f := append(append(append([]byte{}, l.upf...), l.mac...), 8, 0)
	return append(append(append(f, h...), g...), ip...)
}

func onN6(l *vethLink, ip []byte) []byte {
	f := append(append(append([]byte{}, l.upf...), l.mac...), 8, 0)
	return append(f, ip...)
}

// userIP finds the UE's IP packet in a frame UPF-U sent: inside GTP-U on
// N3, right after Ethernet on N6.
func userIP(f []byte, n3 bool) []byte {
	if len(f) < 14+20 || f[12] != 8 || f[13] != 0 {
		return nil
	}
	if !n3 {
		return f[14:]
	}
	if len(f) < 14+20+8+16+20 || f[23] != 17 || binary.BigEndian.Uint16(f[36:]) != 2152 {
		return nil
	}
	return f[14+20+8+16:]
}

// vethRun offers rate packets a second for d, from the gNB (uplink) or the
// DN host (downlink); the far end counts what arrives and reflects the
// probes, whose round trips give the RTT.
func vethRun(t *shm.Table, gnb, dn *vethLink, downlink bool, sessions, size, rate int, d time.Duration) upfResult {
	from, to := gnb, dn
	if downlink {
		from, to = dn, gnb
	}
	frames := make([][]byte, sessions)
	for i := range frames {
		ue := addAddr(vUE, uint32(i))
		if downlink {
			frames[i] = onN6(dn, userPacket(vDN, ue, size))
		} else {
			frames[i] = onN3(gnb, vTEID+uint32(i), userPacket(ue, vDN, size))
		}
	}
	var rtts []time.Duration
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); reflect(to, downlink, stop) }()
	go func() { defer wg.Done(); collectProbes(from, downlink, &rtts, &mu, stop) }()
	outPort := func(s shm.Stats) uint64 {
		if downlink {
			return s.N3.TxPackets
		}
		return s.N6.TxPackets
	}
	before := outPort(t.Stats())
	sent := offer(from, frames, size, rate, d)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	r := upfResult{Procedure: "upf", Path: "veth", Cores: 1}
	// what UPF-U put out of the far port (reflected probes leave by the
	// other one)
	got := min(int64(outPort(t.Stats())-before), sent)
	r.PPS = float64(got) / d.Seconds()
	r.Gbps = r.PPS * float64(size) * 8 / 1e9
	if sent > 0 {
		r.Loss = 1 - float64(got)/float64(sent)
	}
	r.RTTus = percentiles(rtts)
	return r
}

// offer sends frames round robin at rate a second for d; every
// probeEvery-th carries the send time in its payload.
func offer(l *vethLink, frames [][]byte, size, rate int, d time.Duration) int64 {
	var sent int64
	start := time.Now()
	for time.Since(start) < d {
		due := int64(time.Since(start).Seconds() * float64(rate))
		for ; sent < due; sent++ {
			f := frames[sent%int64(len(frames))]
			if sent%probeEvery == 0 {
				probe := append([]byte(nil), f...)
				setDstPort(probe, probePort)
				binary.BigEndian.PutUint64(probe[len(probe)-8:], uint64(time.Now().UnixNano()))
				syscall.Write(l.fd, probe)
			} else {
				syscall.Write(l.fd, f)
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	return sent
}

// setDstPort sets the UDP destination port of the UE's packet in a frame
// the sender built (GTP-U on N3, plain on N6).
func setDstPort(f []byte, port uint16) {
	binary.BigEndian.PutUint16(f[innerOff(f)+22:], port)
}

// innerOff is where the UE's IPv4 packet starts in a frame.
func innerOff(f []byte) int {
	if f[23] == 17 && binary.BigEndian.Uint16(f[36:]) == 2152 {
		return 14 + 20 + 8 + 16
	}
	return 14
}

// probeFilter is a socket filter (classic BPF) taking only frames whose
// 16-bit field at off equals port: the probes, not the load.
func probeFilter(fd, off int, port uint16) error {
	return syscall.AttachLsf(fd, []syscall.SockFilter{
		{Code: 0x28, K: uint32(off)},                // ldh [off]
		{Code: 0x15, Jt: 0, Jf: 1, K: uint32(port)}, // jeq #port
		{Code: 0x06, K: 0xffff},                     // ret: take it
		{Code: 0x06, K: 0},                          // ret: not a probe
	})
}

// reflect counts user packets arriving at l (on N3 when n3) and sends the
// probes back into UPF-U from l toward the sender's side.
func reflect(l *vethLink, arrivesOnN3 bool, stop chan struct{}) {
	off := 14 + 20 + 2 // the UE packet's UDP destination port
	if arrivesOnN3 {
		off += 20 + 8 + 16
	}
	fd, err := filtered(l, off)
	if err != nil {
		return
	}
	receiveEach(fd, stop, func(pkt []byte) {
		ip := userIP(pkt, arrivesOnN3)
		if ip == nil || len(ip) < 28 || ip[9] != 17 {
			return
		}
		// swap the UE's packet's ends and send it back the other way
		rev := append([]byte(nil), ip...)
		copy(rev[12:16], ip[16:20])
		copy(rev[16:20], ip[12:16])
		copy(rev[20:22], ip[22:24]) // from the probe port, so the sender's filter takes it
		copy(rev[22:24], ip[20:22])
		if arrivesOnN3 { // downlink arrived at the gNB: back as uplink
			ue := netip.AddrFrom4([4]byte(rev[12:16]))
			b := ue.As4()
			idx := binary.BigEndian.Uint32(b[:]) - binary.BigEndian.Uint32(vUE.AsSlice())
			syscall.Write(l.fd, onN3(l, vTEID+idx, rev))
		} else {
			syscall.Write(l.fd, onN6(l, rev))
		}
	})
}

// collectProbes reads the reflected probes back at the sender's side.
func collectProbes(l *vethLink, downlink bool, rtts *[]time.Duration, mu *sync.Mutex, stop chan struct{}) {
	// a downlink sender (DN host) gets its probes back as N6 packets, an
	// uplink sender (gNB) as GTP-U on N3
	onN3 := !downlink
	off := 14 + 20 // the reflected packet's UDP source port
	if onN3 {
		off += 20 + 8 + 16
	}
	fd, err := filtered(l, off)
	if err != nil {
		return
	}
	receiveEach(fd, stop, func(pkt []byte) {
		ip := userIP(pkt, onN3)
		if ip == nil || len(ip) < 28 {
			return
		}
		if ts := binary.BigEndian.Uint64(ip[len(ip)-8:]); ts != 0 {
			mu.Lock()
			*rtts = append(*rtts, time.Since(time.Unix(0, int64(ts))))
			mu.Unlock()
		}
	})
}

// receiveEach hands each packet the link receives (not those it sends) to
// each until stop closes, then closes fd.
func receiveEach(fd int, stop chan struct{}, each func(pkt []byte)) {
	defer syscall.Close(fd)
	buf := make([]byte, 4096)
	for {
		select {
		case <-stop:
			return
		default:
		}
		n, from, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			continue
		}
		if ll, ok := from.(*syscall.SockaddrLinklayer); ok && ll.Pkttype == syscall.PACKET_OUTGOING {
			continue
		}
		each(buf[:n])
	}
}

func percentiles(ds []time.Duration) rtt {
	if len(ds) == 0 {
		return rtt{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) float64 { return float64(ds[int(q*float64(len(ds)-1))].Nanoseconds()) / 1e3 }
	return rtt{P50: at(0.5), P99: at(0.99)}
}
