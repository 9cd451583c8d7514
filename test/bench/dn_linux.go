package bench

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// The data network's side of the idle-mode benchmarks: a UDP socket in
// the lab's data-network namespace (netns l25gc-dn), whose datagrams to a
// UE's address reach UPF-U on N6 as a real server's downlink would, and
// the probe each carries, so the UE side tells its own packet apart.

// openDNSocket opens a UDP socket bound to addr inside network namespace
// netns. The socket stays in that namespace whatever thread uses it later;
// only the thread that made it enters the namespace, and it is thrown away
// when it cannot come back (the goroutine ends locked).
func openDNSocket(netns string, addr netip.Addr) (*net.UDPConn, error) {
	type opened struct {
		c   *net.UDPConn
		err error
	}
	done := make(chan opened, 1)
	go func() {
		runtime.LockOSThread()
		c, err, back := listenInNetns(netns, addr)
		if back {
			runtime.UnlockOSThread()
		}
		done <- opened{c, err}
	}()
	o := <-done
	return o.c, o.err
}

func listenInNetns(netns string, addr netip.Addr) (c *net.UDPConn, err error, back bool) {
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, fmt.Errorf("own network namespace: %w", err), true
	}
	defer self.Close()
	target, err := os.Open(filepath.Join("/run/netns", netns))
	if err != nil {
		return nil, fmt.Errorf("data network namespace %s: %w (is a core with UPF-U and the lab network up?)", netns, err), true
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("enter netns %s: %w (needs root)", netns, err), true
	}
	c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: addr.AsSlice()})
	if err != nil {
		err = fmt.Errorf("UDP socket on %v in netns %s: %w", addr, netns, err)
	}
	if serr := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); serr != nil {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("leave netns %s: %w", netns, serr), false
	}
	return c, err, true
}

// probePort is the UDP port the probes go to (discard, RFC 863): the UE
// side reads them off its tunnel, no UE stack needs to answer.
const probePort = 9

// probeMagic starts every probe's payload, then the probe's sequence.
var probeMagic = []byte("l25gc-probe")

// probePayload is the payload of probe seq.
func probePayload(seq uint32) []byte {
	b := append([]byte(nil), probeMagic...)
	return binary.BigEndian.AppendUint32(b, seq)
}

// probeSeq reads the sequence of a probe out of an IPv4 packet as the UE
// receives it; ok is false for any other packet.
func probeSeq(pkt []byte) (seq uint32, ok bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 || pkt[9] != unix.IPPROTO_UDP {
		return 0, false
	}
	ihl := int(pkt[0]&0x0F) * 4
	if len(pkt) < ihl+8 || binary.BigEndian.Uint16(pkt[ihl+2:]) != probePort {
		return 0, false
	}
	payload := pkt[ihl+8:]
	if len(payload) != len(probeMagic)+4 || string(payload[:len(probeMagic)]) != string(probeMagic) {
		return 0, false
	}
	return binary.BigEndian.Uint32(payload[len(probeMagic):]), true
}
