package u_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/upf/shm"
	"github.com/l25gc/l25gc/upf/u"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// The lab of these tests: a real UPF-U process whose N3 and N6 ports are
// net_af_packet on veth pairs, its rule tables (a hugepage file of this
// test process's own prefix), and raw sockets on the other ends acting as
// gNB and DN host.
var (
	upfN3  = netip.MustParsePrefix("10.100.0.1/24")
	upfN6  = netip.MustParsePrefix("10.200.0.1/24")
	gnbIP  = netip.MustParseAddr("10.100.0.2")
	dnIP   = netip.MustParseAddr("10.200.0.2")
	ueIP   = netip.MustParseAddr("10.60.0.1")
	gnbMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02}
	dnMAC  = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x06}
)

const roleUPF = "upfu"

const maxSessions = 1024

// The lab UPF-U's downlink buffer: small, so overflow is reached with a
// handful of packets.
const (
	labBufferPerSession = 4
	labBufferTotal      = 6
)

func TestMain(m *testing.M) {
	if ok, code := xioproc.RunRole(map[string]func(context.Context) error{roleUPF: runUPFU, roleBench: runBench, roleUPFC: runUPFC}); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// runUPFU is the UPF-U child: ports from the environment.
func runUPFU(ctx context.Context) error {
	cfg := u.Config{MaxSessions: maxSessions, Tables: tablesConfig(),
		N3:     u.Port{Dev: os.Getenv("UPFU_N3"), IP: upfN3},
		N6:     u.Port{Dev: os.Getenv("UPFU_N6"), IP: upfN6},
		Buffer: config.UPFBuffer{PerSession: labBufferPerSession, Total: labBufferTotal},
		QoS:    config.UPFQoS{MaxShapedSessions: labShapedSessions, Queue: 50 * time.Millisecond}}
	if d, err := time.ParseDuration(os.Getenv("UPFU_SLEEP")); err == nil {
		cfg.Sleep = d
	}
	p, err := u.Start(cfg)
	if err != nil {
		return err
	}
	xioproc.Ready()
	return p.Run(ctx)
}

// lab is one manager, one UPF-U, its tables and the two far ends.
type lab struct {
	t     *testing.T
	table *shm.Table
	upf   *xioproc.Proc
	gnb   *rawLink // far end of N3
	dn    *rawLink // far end of N6
}

// tablesConfig names this test process's own tables file (its children
// inherit the name through the parent's pid).
func tablesConfig() shm.Config {
	pid := os.Getpid()
	if os.Getenv(xioproc.EnvRole) != "" {
		pid = os.Getppid()
	}
	return shm.Config{MaxSessions: maxSessions, Prefix: fmt.Sprintf("upfutest%d", pid)}
}

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("UPF-U needs root (hugepages, veth, AF_PACKET)")
	}
}

func newLab(t *testing.T) *lab { return newLabWith(t) }

// newLabWith starts the lab's UPF-U with more environment (UPFU_SLEEP).
func newLabWith(t *testing.T, env ...string) *lab {
	needRoot(t)
	if err := xioproc.EnsureHugepages(64); err != nil {
		t.Fatal(err)
	}
	tc := tablesConfig()
	shm.RemoveFile(tc)
	t.Cleanup(func() { shm.RemoveFile(tc) })
	tag := fmt.Sprintf("u%d", os.Getpid()%100000)
	n3u, n3g := vethPair(t, tag+"3u", tag+"3g")
	n6u, n6d := vethPair(t, tag+"6u", tag+"6d")
	l := &lab{t: t}
	var err error
	l.upf, err = xioproc.Start(roleUPF, append([]string{"UPFU_N3=net_af_packet_t3,iface=" + n3u, "UPFU_N6=net_af_packet_t6,iface=" + n6u}, env...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.upf.Stop() })
	favourLab(t, l.upf.Cmd.Process.Pid)
	if l.table, err = shm.Open(tc); err != nil {
		t.Fatal(err)
	}
	l.gnb = openRaw(t, n3g, gnbMAC)
	l.dn = openRaw(t, n6d, dnMAC)
	return l
}

func run(t *testing.T, args ...string) {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", args, err, out)
	}
}

// vethPair makes a veth pair with no addresses and no IPv6, so the kernel
// adds no packets of its own, and offloads off, so af_packet sees whole,
// checksummed frames.
func vethPair(t *testing.T, a, b string) (string, string) {
	exec.Command("ip", "link", "del", a).Run()
	run(t, "ip", "link", "add", a, "type", "veth", "peer", "name", b)
	t.Cleanup(func() { exec.Command("ip", "link", "del", a).Run() })
	for _, n := range []string{a, b} {
		os.WriteFile("/proc/sys/net/ipv6/conf/"+n+"/disable_ipv6", []byte("1"), 0o644)
		exec.Command("ethtool", "-K", n, "tx", "off", "tso", "off", "gso", "off", "gro", "off").Run()
		run(t, "ip", "link", "set", n, "up")
	}
	return a, b
}

// rawLink sends and receives whole Ethernet frames on an interface.
type rawLink struct {
	fd  int
	ifi *net.Interface
	mac net.HardwareAddr // the MAC this end claims in what it sends
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openRaw(t *testing.T, name string, mac net.HardwareAddr) *rawLink {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, int(htons(syscall.ETH_P_ALL)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Protocol: htons(syscall.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		t.Fatal(err)
	}
	tv := syscall.NsecToTimeval(int64(50 * time.Millisecond))
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	return &rawLink{fd: fd, ifi: ifi, mac: mac}
}

func (r *rawLink) send(t *testing.T, frame []byte) {
	t.Helper()
	if _, err := syscall.Write(r.fd, frame); err != nil {
		t.Fatal(err)
	}
}

// recv returns the next frame UPF-U sent toward this end that match
// accepts, waiting at most wait.
func (r *rawLink) recv(wait time.Duration, match func([]byte) bool) ([]byte, error) {
	buf := make([]byte, 65536)
	end := time.Now().Add(wait)
	for time.Now().Before(end) {
		n, from, err := syscall.Recvfrom(r.fd, buf, 0)
		if err != nil {
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
				continue
			}
			return nil, err
		}
		if ll, ok := from.(*syscall.SockaddrLinklayer); ok && ll.Pkttype == syscall.PACKET_OUTGOING {
			continue // our own frame
		}
		if match(buf[:n]) {
			return append([]byte(nil), buf[:n]...), nil
		}
	}
	return nil, fmt.Errorf("nothing matching within %v", wait)
}

// --- frames -------------------------------------------------------------

func eth(dst, src net.HardwareAddr, typ uint16, payload []byte) []byte {
	f := append(append(append([]byte{}, dst...), src...), byte(typ>>8), byte(typ))
	return append(f, payload...)
}

func arpFrame(op uint16, sha net.HardwareAddr, spa netip.Addr, tha net.HardwareAddr, tpa netip.Addr) []byte {
	a := []byte{0, 1, 8, 0, 6, 4, byte(op >> 8), byte(op)}
	a = append(append(a, sha...), spa.AsSlice()...)
	a = append(append(a, tha...), tpa.AsSlice()...)
	dst := tha
	if op == 1 {
		dst = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	return eth(dst, sha, 0x0806, a)
}

func cksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

func ipv4(src, dst netip.Addr, proto byte, ttl byte, payload []byte) []byte {
	h := make([]byte, 20)
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(payload)))
	h[8], h[9] = ttl, proto
	copy(h[12:], src.AsSlice())
	copy(h[16:], dst.AsSlice())
	binary.BigEndian.PutUint16(h[10:], cksum(h))
	return append(h, payload...)
}

func udp(sport, dport uint16, payload []byte) []byte {
	h := make([]byte, 8)
	binary.BigEndian.PutUint16(h, sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	binary.BigEndian.PutUint16(h[4:], uint16(8+len(payload)))
	return append(h, payload...)
}

func icmpEcho(id, seq uint16, data []byte) []byte {
	h := []byte{8, 0, 0, 0, byte(id >> 8), byte(id), byte(seq >> 8), byte(seq)}
	h = append(h, data...)
	binary.BigEndian.PutUint16(h[2:], cksum(h))
	return h
}

// gtpu is a G-PDU (or another type) with a UL PDU Session Container of qfi
// (TS 38.415 5.5.2.2) when qfi > 0.
func gtpu(typ byte, teid uint32, qfi byte, payload []byte) []byte {
	if qfi == 0 {
		h := []byte{0x30, typ, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(len(payload)))
		binary.BigEndian.PutUint32(h[4:], teid)
		return append(h, payload...)
	}
	h := []byte{0x34, typ, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x85, 1, 0x10, qfi, 0}
	binary.BigEndian.PutUint16(h[2:], uint16(8+len(payload)))
	binary.BigEndian.PutUint32(h[4:], teid)
	return append(h, payload...)
}

// n3Frame is what the gNB sends UPF-U: GTP-U in UDP 2152 in IPv4.
func (l *lab) n3Frame(upfMAC net.HardwareAddr, gtp []byte) []byte {
	return eth(upfMAC, gnbMAC, 0x0800, ipv4(gnbIP, upfN3.Addr(), 17, 64, udp(2152, 2152, gtp)))
}

func isARPReply(f []byte) bool { return len(f) >= 42 && f[12] == 8 && f[13] == 6 && f[21] == 2 }
func isARPRequest(f []byte) bool {
	return len(f) >= 42 && f[12] == 8 && f[13] == 6 && f[21] == 1
}
func isIPv4(f []byte) bool { return len(f) >= 34 && f[12] == 8 && f[13] == 0 }

// resolveUPF asks UPF-U's address on a link by ARP and returns its MAC;
// UPF-U learns the asker's MAC from the request.
func resolveUPF(t *testing.T, r *rawLink, mine, upf netip.Addr) net.HardwareAddr {
	t.Helper()
	for try := 0; try < 100; try++ { // the port may still be coming up
		r.send(t, arpFrame(1, r.mac, mine, net.HardwareAddr{0, 0, 0, 0, 0, 0}, upf))
		f, err := r.recv(100*time.Millisecond, isARPReply)
		if err == nil {
			if !bytes.Equal(f[38:42], mine.AsSlice()) || !bytes.Equal(f[28:32], upf.AsSlice()) {
				t.Fatalf("ARP reply % x: wrong addresses", f)
			}
			return net.HardwareAddr(f[22:28])
		}
	}
	t.Fatalf("no ARP reply for %s", upf)
	return nil
}

func addr(b [4]byte) netip.Addr { return netip.AddrFrom4(b) }

// expectDrop runs send and waits until UPF-U counted one more drop for
// reason.
func (l *lab) expectDrop(t *testing.T, reason string, send func()) {
	t.Helper()
	before := l.table.Stats().Drops[reason]
	send()
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if l.table.Stats().Drops[reason] == before+1 {
			return
		}
	}
	t.Fatalf("no %s drop counted (stats %+v)", reason, l.table.Stats())
}
