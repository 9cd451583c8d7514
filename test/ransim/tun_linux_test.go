package ransim

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/l25gc/l25gc/protocol/gtpu"
	"github.com/l25gc/l25gc/protocol/nasx/nasxtest"
	"github.com/l25gc/l25gc/protocol/ngapx"
)

// The helper runs inside the UE's namespace (the test re-executes its own
// binary there): it sends one UDP datagram to the DN and waits for it to
// come back.
func init() {
	if os.Getenv("L25GC_TUN_HELPER") == "" {
		return
	}
	c, err := net.Dial("udp4", os.Getenv("L25GC_TUN_HELPER"))
	if err == nil {
		_, err = c.Write([]byte("over the PDU session"))
	}
	buf := make([]byte, 100)
	if err == nil {
		c.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds a failing test only
		var n int
		n, err = c.Read(buf)
		if err == nil && string(buf[:n]) != "over the PDU session" {
			err = fmt.Errorf("read back %q", buf[:n])
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// A packet written in the UE's namespace leaves the gNB's N3 socket as a
// G-PDU on the UPF's TEID with the PDU Session Container's UL PDU SESSION
// INFORMATION and the QFI the QoS rules pick (TS 29.281, TS 38.415); the
// downlink G-PDU on the gNB's TEID comes out of the TUN device.
func TestTUNCarriesTheUEsPacketsThroughGTPU(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespace and TUN device")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip")
	}
	loop := netip.MustParseAddr("127.0.0.1")
	upf, err := net.ListenUDP("udp4", &net.UDPAddr{IP: loop.AsSlice()})
	if err != nil {
		t.Fatal(err)
	}
	defer upf.Close()
	up := NewUserPlane(loop, nil)
	up.PeerPort = upf.LocalAddr().(*net.UDPAddr).Port
	if err := up.Listen(0); err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	tun := up.newTunnel(1, ngapx.Tunnel{IPv4: loop, TEID: 0x77}, []uint8{1, 5})
	dn := netip.MustParseAddr("10.200.0.2")
	tun.setRules(qosRules{nasxtest.DefaultRule(1), nasxtest.RuleToHost(2, 10, 5, dn)})

	name := fmt.Sprintf("l25gct%d", os.Getpid()%100000)
	ue, err := OpenUETUN(name, netip.MustParseAddr("10.60.0.9"), tun)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ue.Close(); err != nil {
			t.Error(err)
		}
		if exec.Command("ip", "netns", "pids", name).Run() == nil {
			t.Errorf("namespace %s still there after Close", name)
		}
	}()
	if out, err := exec.Command("ip", "-n", name, "-6", "addr", "show", "dev", name).Output(); err != nil || len(out) > 0 {
		t.Fatalf("the UE's TUN has IPv6 addresses (%v): %s", err, out)
	}
	helper := exec.Command("ip", "netns", "exec", name, os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "L25GC_TUN_HELPER="+netip.AddrPortFrom(dn, 7777).String())
	out := make(chan error, 1)
	go func() {
		b, err := helper.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, b)
		}
		out <- err
	}()
	reflectOneDatagram(t, upf, tun.DLTEID, up.LocalPort(), dn)
	if err := <-out; err != nil {
		t.Fatalf("the UE did not get its datagram back through the TUN: %v", err)
	}
	if up.UplinkPackets.Load() < 1 || up.DownlinkPackets.Load() != 1 {
		t.Fatalf("counters: %d up, %d down", up.UplinkPackets.Load(), up.DownlinkPackets.Load())
	}
}

// reflectOneDatagram is the UPF and the DN: it reads G-PDUs until the
// UE's UDP datagram to dn arrives, checks its encapsulation and sends it
// back to the UE (addresses and ports swapped, which keeps both checksums
// valid) in a downlink G-PDU on the gNB's TEID.
func reflectOneDatagram(t *testing.T, upf *net.UDPConn, dlTEID uint32, gnbPort int, dn netip.Addr) {
	t.Helper()
	buf := make([]byte, 2048)
	upf.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds a failing test only
	for {
		n, from, err := upf.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("no G-PDU from the gNB: %v", err)
		}
		m, err := gtpu.Parse(buf[:n])
		if err != nil {
			t.Fatalf("gNB sent malformed GTP-U: %v", err)
		}
		pkt := m.Payload
		if len(pkt) < 28 || pkt[9] != 17 || netip.AddrFrom4([4]byte(pkt[16:20])) != dn {
			continue // not the datagram (the kernel may send others)
		}
		if m.Type != gtpu.TypeGPDU || m.TEID != 0x77 || m.Session == nil || m.Session.PDUType != gtpu.ULPDUSessionInformation {
			t.Fatalf("uplink %+v: want a G-PDU on TEID 0x77 with UL PDU SESSION INFORMATION", m)
		}
		if m.Session.QFI != 5 {
			t.Fatalf("uplink to %v on QFI %d, want 5 (the rule for it)", dn, m.Session.QFI)
		}
		if from.Port() != uint16(gnbPort) {
			t.Fatalf("uplink from port %d, want the N3 socket's %d", from.Port(), gnbPort)
		}
		back := append([]byte(nil), pkt...)
		copy(back[12:16], pkt[16:20])
		copy(back[16:20], pkt[12:16])
		copy(back[20:22], pkt[22:24])
		copy(back[22:24], pkt[20:22])
		g, err := gtpu.GPDU(dlTEID, gtpu.DLPDUSessionInformation, 5, back).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := upf.WriteToUDPAddrPort(g, from); err != nil {
			t.Fatal(err)
		}
		return
	}
}

// An unknown TEID gets Error Indication (TS 29.281 7.3.1), an Echo
// Request its response (7.2.2).
func TestN3AnswersEchoAndUnknownTEIDs(t *testing.T) {
	loop := netip.MustParseAddr("127.0.0.1")
	up := NewUserPlane(loop, nil)
	if err := up.Listen(0); err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	peer, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: loop.AsSlice(), Port: up.LocalPort()})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds a failing test only
	ask := func(m *gtpu.Message) *gtpu.Message {
		t.Helper()
		b, _ := m.Marshal()
		if _, err := peer.Write(b); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 512)
		n, err := peer.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gtpu.Parse(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := ask(gtpu.EchoRequest(9)); r.Type != gtpu.TypeEchoResponse || r.Seq != 9 {
		t.Fatalf("echo answered with %+v", r)
	}
	if r := ask(gtpu.GPDU(0x4242, gtpu.DLPDUSessionInformation, 1, []byte{0x45})); r.Type != gtpu.TypeErrorIndication || r.TEIDDataI != 0x4242 || r.PeerAddress != loop {
		t.Fatalf("unknown TEID answered with %+v", r)
	}
	if up.Dropped.Load() != 1 {
		t.Fatalf("dropped %d, want the one for the unknown TEID", up.Dropped.Load())
	}
}
