package n2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"
)

// SCTP on raw IP: standard SCTP packets, IP protocol 132 with no UDP around
// them (RFC 4960 as a gNB's kernel sends it), built and read in user space
// over a raw socket, for hosts whose kernel has no SCTP. The association
// machinery is the udp transport's; only the packet layer differs: peers are
// told apart by source IP and SCTP port, and the CRC32c is checked on every
// packet and filled on every packet we send.

// ipProtoSCTP is SCTP's IP protocol number (RFC 4960 1).
const ipProtoSCTP = 132

// pionPort is the SCTP port pion gives both ends of every association.
const pionPort = 5000

// errKernelHasSCTP refuses raw where the kernel would answer protocol 132 too.
var errKernelHasSCTP = errors.New("n2: transport raw refused: this host's kernel has SCTP (/proc/net/sctp exists or an SCTP socket opens) " +
	"and would answer every SCTP packet itself, aborting our associations; use transport kernel (or auto)")

// kernelHasSCTP reports whether the kernel's SCTP is loaded.
func kernelHasSCTP() bool {
	if _, err := os.Stat("/proc/net/sctp"); err == nil {
		return true
	}
	return KernelSCTPAvailable()
}

// RawSCTPPermitted reports whether this process may open a raw socket for
// IP protocol 132 (CAP_NET_RAW).
func RawSCTPPermitted() bool {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, ipProtoSCTP)
	if err != nil {
		return false
	}
	syscall.Close(fd)
	return true
}

// rawNetwork is the net package's name of the raw socket for ip.
func rawNetwork(ip netip.Addr) string {
	if ip.IsValid() && ip.Is6() && !ip.Is4In6() {
		return "ip6:" + strconv.Itoa(ipProtoSCTP)
	}
	return "ip4:" + strconv.Itoa(ipProtoSCTP)
}

// splitSCTPAddr reads host:port into an IP (invalid for an empty host) and
// an SCTP port.
func splitSCTPAddr(addr string) (netip.Addr, uint16, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("n2: %w", err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("n2: SCTP port %q: %w", portText, err)
	}
	if host == "" {
		return netip.Addr{}, uint16(port), nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		ips, lerr := net.LookupIP(host)
		if lerr != nil || len(ips) == 0 {
			return netip.Addr{}, 0, fmt.Errorf("n2: address %q: %w", host, err)
		}
		ip, _ = netip.AddrFromSlice(ips[0])
	}
	return ip.Unmap(), uint16(port), nil
}

// rawLayer carries SCTP packets as IP protocol 132 over a raw socket.
type rawLayer struct {
	c    *net.IPConn
	port uint16            // our SCTP port, for the listener's address
	lock *net.UnixListener // claims the port, see claimRawPort
}

func (r rawLayer) readPacket(buf []byte) (int, netip.AddrPort, error) {
	n, from, err := r.c.ReadFromIP(buf) // IPv4: the kernel's header is stripped
	if err != nil {
		return 0, netip.AddrPort{}, err
	}
	ip, _ := netip.AddrFromSlice(from.IP)
	return n, netip.AddrPortFrom(ip.Unmap(), 0), nil
}

func (r rawLayer) writePacket(pkt []byte, to netip.AddrPort) error {
	_, err := r.c.WriteToIP(pkt, &net.IPAddr{IP: to.Addr().AsSlice()})
	return err
}

func (r rawLayer) netAddr(a netip.AddrPort) net.Addr { return &net.IPAddr{IP: a.Addr().AsSlice()} }

// localAddr is the listening IP and SCTP port, as an SCTP address reads.
func (r rawLayer) localAddr() net.Addr {
	ip := r.c.LocalAddr().(*net.IPAddr)
	return &net.TCPAddr{IP: ip.IP, Port: int(r.port)}
}

func (r rawLayer) close() error {
	r.lock.Close()
	return r.c.Close()
}

// claimRawPort makes a second raw listener on the same SCTP port fail as a
// second bind would: raw sockets do not bind ports, and two listeners would
// both answer every packet. The claim is an abstract Unix socket, which the
// kernel releases when the process ends, however it ends.
func claimRawPort(port uint16) (*net.UnixListener, error) {
	name := "@l25gc-n2-raw-sctp-port-" + strconv.Itoa(int(port))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("n2: transport raw: SCTP port %d is already served over raw IP by another listener on this host: %w", port, err)
	}
	return ln, nil
}

func listenRaw(addr string, o Options) (*sctpListener, error) {
	if kernelHasSCTP() {
		return nil, errKernelHasSCTP
	}
	ip, port, err := splitSCTPAddr(addr)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		return nil, fmt.Errorf("n2: transport raw needs an SCTP port in %q (38412 for NGAP)", addr)
	}
	var laddr *net.IPAddr
	if ip.IsValid() {
		laddr = &net.IPAddr{IP: ip.AsSlice()}
	}
	lock, err := claimRawPort(port)
	if err != nil {
		return nil, err
	}
	c, err := net.ListenIP(rawNetwork(ip), laddr)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("n2: transport raw: a raw socket for IP protocol 132 on %s needs CAP_NET_RAW: %w", addr, err)
	}
	_ = c.SetReadBuffer(8 << 20)
	_ = c.SetWriteBuffer(8 << 20)
	_ = filterSCTPPort(c, ip, port) // best effort: without it, readPacket's checks still sort the packets
	return newSCTPListener(rawLayer{c: c, port: port, lock: lock}, port, o), nil
}

// rawClientConn is the client side's net.Conn under pion over raw IP: it
// sees every SCTP packet from the AMF's IP and keeps those for our port, and
// gives pion's packets (which pion numbers port 5000) our ports.
type rawClientConn struct {
	c                    *net.IPConn
	remote               netip.Addr
	localPort, peerPort  uint16
	remoteAddr, selfAddr net.Addr
	keepPorts            bool // the own data path reads the real ports; pion wants 5000
}

func (r *rawClientConn) Read(b []byte) (int, error) {
	for {
		n, from, err := r.c.ReadFromIP(b)
		if err != nil {
			return 0, err
		}
		ip, _ := netip.AddrFromSlice(from.IP)
		if ip.Unmap() != r.remote || n < commonHeaderLen || !checksumOK(b[:n]) ||
			binary.BigEndian.Uint16(b[0:]) != r.peerPort || binary.BigEndian.Uint16(b[2:]) != r.localPort {
			continue // another association's, or damaged (RFC 4960 6.8)
		}
		if !r.keepPorts {
			setPorts(b[:n], pionPort, pionPort) // what pion's handshake checks (it numbers both ends 5000)
		}
		return n, nil
	}
}

func (r *rawClientConn) Write(b []byte) (int, error) {
	if len(b) < commonHeaderLen {
		return len(b), nil
	}
	out := b
	if !r.keepPorts {
		out = append([]byte(nil), b...)
		setPorts(out, r.localPort, r.peerPort)
	}
	if _, err := r.c.WriteToIP(out, &net.IPAddr{IP: r.remote.AsSlice()}); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (r *rawClientConn) Close() error         { return r.c.Close() }
func (r *rawClientConn) LocalAddr() net.Addr  { return r.selfAddr }
func (r *rawClientConn) RemoteAddr() net.Addr { return r.remoteAddr }

// Deadlines are not needed by pion, which reads until Close.
func (r *rawClientConn) SetDeadline(time.Time) error      { return nil }
func (r *rawClientConn) SetReadDeadline(time.Time) error  { return nil }
func (r *rawClientConn) SetWriteDeadline(time.Time) error { return nil }

func dialRawIP(ctx context.Context, addr string, o Options) (Conn, error) {
	if kernelHasSCTP() {
		return nil, errKernelHasSCTP
	}
	ip, port, err := splitSCTPAddr(addr)
	if err != nil {
		return nil, err
	}
	if !ip.IsValid() || port == 0 {
		return nil, fmt.Errorf("n2: transport raw needs an AMF address and SCTP port, got %q", addr)
	}
	c, err := net.ListenIP(rawNetwork(ip), nil)
	if err != nil {
		return nil, fmt.Errorf("n2: transport raw: a raw socket for IP protocol 132 needs CAP_NET_RAW: %w", err)
	}
	local := uint16(49152 + rand.N(16384)) // an ephemeral SCTP port (RFC 6335 6)
	_ = filterSCTPPort(c, ip, local)       // best effort, as for the listener
	rc := &rawClientConn{c: c, remote: ip, localPort: local, peerPort: port,
		remoteAddr: &net.TCPAddr{IP: ip.AsSlice(), Port: int(port)}, selfAddr: &net.TCPAddr{Port: int(local)},
		keepPorts: o.ownDataPath()}
	if rc.keepPorts {
		return associateOwn(ctx, addr, packetConn{rc, local, port}, nil, o)
	}
	return associate(ctx, addr, rc, c, nil, o) // ICMP over raw IP is not read: T1/T3 and heartbeats find a dead peer
}
