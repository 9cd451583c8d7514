package n2

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ishidawataru/sctp"
	"github.com/prometheus/client_golang/prometheus"
)

// These tests need a kernel with SCTP. This build host has none; test/vm
// runs them in a VM whose kernel has it, as root (for the capture).

func needKernelSCTP(t *testing.T) {
	t.Helper()
	if !KernelSCTPAvailable() {
		t.Skip("no kernel SCTP on this host: test/vm runs these tests in a VM that has it")
	}
}

// dataChunk is what the wire says of one DATA chunk (RFC 4960 3.3.1).
type dataChunk struct {
	stream uint16
	ppid   uint32
}

// capture records the DATA chunks of every SCTP packet on the host, through
// a raw IP socket for protocol 132, which gets a copy of each packet.
type capture struct {
	conn *net.IPConn
	wg   sync.WaitGroup
	mu   sync.Mutex
	data []dataChunk
}

func startCapture(t *testing.T) *capture {
	t.Helper()
	c, err := net.ListenIP("ip4:132", &net.IPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("raw SCTP capture (needs root): %v", err)
	}
	cp := &capture{conn: c}
	cp.wg.Add(1)
	go cp.run()
	return cp
}

func (cp *capture) run() {
	defer cp.wg.Done()
	buf := make([]byte, 1<<16)
	for {
		n, _, err := cp.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		pkt := buf[:n]
		for off := commonHeaderLen; off+4 <= len(pkt); {
			l := int(binary.BigEndian.Uint16(pkt[off+2:]))
			if l < 4 || off+l > len(pkt) {
				break
			}
			if pkt[off] == 0 && l >= 16 {
				v := pkt[off+4:]
				cp.mu.Lock()
				cp.data = append(cp.data, dataChunk{stream: binary.BigEndian.Uint16(v[4:]), ppid: binary.BigEndian.Uint32(v[8:])})
				cp.mu.Unlock()
			}
			off += (l + 3) &^ 3
		}
	}
}

// waitFor returns once n DATA chunks were captured.
func (cp *capture) waitFor(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cp.mu.Lock()
		got := len(cp.data)
		cp.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("captured %d DATA chunks, want %d", got, n)
		}
	}
}

func (cp *capture) stop() []dataChunk {
	cp.conn.Close()
	cp.wg.Wait()
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.data
}

func kernelPair(t *testing.T, clientStreams uint16) (client, server Conn) {
	t.Helper()
	return kernelPairWith(t, clientStreams, Options{})
}

func kernelPairWith(t *testing.T, clientStreams uint16, o Options) (client, server Conn) {
	t.Helper()
	ln, _, err := o.Listen(Kernel, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted := make(chan Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	raddr, err := sctp.ResolveSCTPAddr("sctp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := sctp.DialSCTPExt("sctp", nil, raddr, sctp.InitMsg{NumOstreams: clientStreams, MaxInstreams: clientStreams})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := newKernelConn(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case server = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("no association accepted")
	}
	t.Cleanup(func() { kc.Close(); server.Close() })
	return kc, server
}

// TS 38.412 7: every DATA chunk of NGAP carries PPID 60 and a stream the
// association granted, in both directions.
func TestKernelSCTPCarriesPPID60OnGrantedStreams(t *testing.T) {
	needKernelSCTP(t)
	cp := startCapture(t)
	client, server := kernelPair(t, 2)
	if got := server.Streams(); got != 2 {
		t.Fatalf("AMF side Streams() = %d with a gNB granting 2", got)
	}
	for i := 0; i < 4; i++ {
		stream := uint16(i) % server.Streams()
		if err := client.WriteMsg([]byte("uplink"), stream); err != nil {
			t.Fatal(err)
		}
		if pdu, got, err := server.ReadMsg(); err != nil || string(pdu) != "uplink" || got != stream {
			t.Fatalf("uplink: %q on %d, %v", pdu, got, err)
		}
		if err := server.WriteMsg([]byte("downlink"), stream); err != nil {
			t.Fatal(err)
		}
		if pdu, got, err := client.ReadMsg(); err != nil || string(pdu) != "downlink" || got != stream {
			t.Fatalf("downlink: %q on %d, %v", pdu, got, err)
		}
	}
	cp.waitFor(t, 8)
	data := cp.stop()
	for _, d := range data {
		if d.ppid != PPIDNGAP || d.stream >= 2 {
			t.Fatalf("DATA chunk with PPID %d (0x%08x) on stream %d; want PPID 60 on stream 0 or 1", d.ppid, d.ppid, d.stream)
		}
	}
	t.Logf("%d DATA chunks on the wire, all PPID 60 on granted streams", len(data))
}

// A DATA chunk with another PPID is counted and not handed up as NGAP.
func TestKernelSCTPDropsDataWithAnotherPPID(t *testing.T) {
	needKernelSCTP(t)
	client, server := kernelPair(t, 4)
	raw := client.(*kernelConn).c
	if _, err := raw.SCTPWrite([]byte("m3ua"), &sctp.SndRcvInfo{Stream: 1, PPID: 3}); err != nil {
		t.Fatal(err)
	}
	if err := client.WriteMsg([]byte("ngap"), 1); err != nil {
		t.Fatal(err)
	}
	if pdu, _, err := server.ReadMsg(); err != nil || string(pdu) != "ngap" {
		t.Fatalf("got %q, %v; want the NGAP message only", pdu, err)
	}
}

// The kernel ends the association of a gNB that closes; the AMF's reader sees it.
func TestKernelSCTPPeerCloseEndsTheAssociation(t *testing.T) {
	needKernelSCTP(t)
	client, server := kernelPair(t, 4)
	client.Close()
	done := make(chan error, 1)
	go func() { _, _, err := server.ReadMsg(); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ReadMsg returned no error after the peer closed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the association never ended")
	}
	server.Close()
	if a := server.RemoteAddr(); a == nil || !strings.Contains(a.String(), "127.0.0.1:") {
		t.Fatalf("remote address after the end: %v; the AMF logs it", a)
	}
}

// HB.interval and Path.Max.Retrans given in Options reach the associations
// the kernel accepts.
func TestKernelSCTPAppliesHeartbeatOptions(t *testing.T) {
	needKernelSCTP(t)
	_, server := kernelPairWith(t, 4, Options{HeartbeatInterval: 1500 * time.Millisecond, PathMaxRetrans: 2})
	rc, err := server.(*kernelConn).c.(kernelSocket).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	interval, maxRetrans, err := kernelHeartbeatParams(rc)
	if err != nil || interval != 1500*time.Millisecond || maxRetrans != 2 {
		t.Fatalf("accepted association: HB.interval %v, Path.Max.Retrans %d, %v; want 1.5s and 2", interval, maxRetrans, err)
	}
}

// A peer that falls silent (here: loopback down, so no HEARTBEAT arrives)
// ends the association through the kernel's heartbeats.
func TestKernelSCTPSilentPeerEndsTheAssociation(t *testing.T) {
	needKernelSCTP(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command to take loopback down")
	}
	_, server := kernelPairWith(t, 4, Options{HeartbeatInterval: 200 * time.Millisecond, PathMaxRetrans: 1})
	if out, err := exec.Command("ip", "link", "set", "lo", "down").CombinedOutput(); err != nil {
		t.Skipf("cannot take loopback down (not in the VM?): %v %s", err, out)
	}
	defer exec.Command("ip", "link", "set", "lo", "up").Run()
	done := make(chan error, 1)
	go func() { _, _, err := server.ReadMsg(); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("ReadMsg returned no error for a failed association")
		}
		t.Logf("silent peer: association ended with %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the association of a silent peer never ended")
	}
}

// encapsulateInUDP makes this kernel's SCTP speak RFC 6951 to UDP port
// remote (Linux net.sctp.udp_port and encap_port) until the test ends.
func encapsulateInUDP(t *testing.T, remote int) {
	t.Helper()
	set := func(name string, v int) error {
		return os.WriteFile("/proc/sys/net/sctp/"+name, []byte(strconv.Itoa(v)), 0o644)
	}
	if err := set("udp_port", 9899); err != nil {
		t.Skipf("cannot turn on SCTP over UDP (not root in the VM?): %v", err)
	}
	if err := set("encap_port", remote); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set("encap_port", 0); _ = set("udp_port", 0) })
}

// A strict peer, kernel SCTP over UDP granting 2 streams each way, gets
// everything the AMF's udp transport sends: it discards DATA on streams it
// did not grant (RFC 4960 6.5), so the AMF must keep to 0 and 1.
func TestKernelPeerOverUDPGetsDownlinkOnEveryUsableStream(t *testing.T) {
	needKernelSCTP(t)
	ln := listenTest(t)
	port := ln.Addr().(*net.UDPAddr).Port
	encapsulateInUDP(t, port)
	raddr, err := sctp.ResolveSCTPAddr("sctp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := sctp.DialSCTPExt("sctp", nil, raddr, sctp.InitMsg{NumOstreams: 2, MaxInstreams: 2})
	if err != nil {
		t.Fatal(err)
	}
	gnb, err := newKernelConn(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer gnb.Close()
	if err := gnb.WriteMsg([]byte("ng setup"), 0); err != nil {
		t.Fatal(err)
	}
	amf := acceptOne(t, ln)
	if pdu, _, err := amf.ReadMsg(); err != nil || string(pdu) != "ng setup" {
		t.Fatalf("uplink over UDP: %q, %v", pdu, err)
	}
	for stream := uint16(0); stream < amf.Streams(); stream++ {
		if err := amf.WriteMsg([]byte("downlink"), stream); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			pdu, s, err := gnb.ReadMsg()
			if err == nil && (string(pdu) != "downlink" || s != stream) {
				err = fmt.Errorf("%q on stream %d", pdu, s)
			}
			got <- err
		}()
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("downlink on stream %d of %d never reached the kernel peer (it discards ungranted streams)", stream, amf.Streams())
		}
	}
	t.Logf("kernel peer over UDP: downlink on all %d usable streams arrived", amf.Streams())
}

// Over real kernel SCTP: a 100 KiB NGAP PDU (a large UE Radio Capability)
// arrives whole through the 64 KiB read buffer; one over MaxMessageSize is
// dropped and counted, and the association keeps serving.
func TestKernelSCTPReceivesLargeMessagesUpToTheBound(t *testing.T) {
	needKernelSCTP(t)
	m := NewMetrics(prometheus.NewRegistry())
	client, server := kernelPairWith(t, 4, Options{Metrics: m, MaxMessageSize: 150 << 10})
	big := bytes.Repeat([]byte("radio capability "), 100<<10/17)
	huge := make([]byte, 180<<10)
	sent := make(chan error, 1)
	go func() { // the socket buffers hold less than all three: send while the AMF reads
		for _, pdu := range [][]byte{big, huge, []byte("after")} {
			if err := client.WriteMsg(pdu, 1); err != nil {
				sent <- fmt.Errorf("send %d bytes: %w", len(pdu), err)
				return
			}
		}
		sent <- nil
	}()
	for _, want := range [][]byte{big, []byte("after")} {
		pdu, _, err := server.ReadMsg()
		if err != nil || !bytes.Equal(pdu, want) {
			t.Fatalf("got %d bytes (%v), want %d", len(pdu), err, len(want))
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if got := discarded(t, m, DiscardTooBig); got != 1 {
		t.Fatalf("%v messages counted too big, want 1", got)
	}
}
