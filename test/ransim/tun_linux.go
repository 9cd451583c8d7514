package ransim

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// UETUN is a UE's IP stack for ordinary tools: a network namespace (e.g.
// l25gc-ue1) holding a TUN device of the same name with the UE's address
// and a default route, so `ip netns exec l25gc-ue1 ping <DN address>` and
// iperf3 run over the PDU session. What the namespace sends leaves through
// the session's tunnel; what the tunnel brings comes out of the device.
type UETUN struct {
	Name string // namespace and device
	file *os.File
	t    *Tunnel
	done chan struct{}
}

// tunMTU leaves room for the GTP-U, UDP and IPv4 headers on a 1500-octet
// N3 link (8 + 4 octets of optional fields and PDU Session Container, 8, 20).
const tunMTU = 1400

// OpenUETUN makes the namespace and device name for a UE with addr on
// tunnel t. It needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for namespaces).
func OpenUETUN(name string, addr netip.Addr, t *Tunnel) (*UETUN, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("--tun needs root: it creates a network namespace and a TUN device per UE")
	}
	if len(name) > unix.IFNAMSIZ-1 {
		return nil, fmt.Errorf("TUN name %q longer than %d characters", name, unix.IFNAMSIZ-1)
	}
	if !addr.Is4() {
		return nil, fmt.Errorf("UE %s: address %v is not IPv4", name, addr)
	}
	if err := ipCmd("netns", "add", name); err != nil {
		return nil, fmt.Errorf("%w (left behind by an earlier run? `ip netns del %s`)", err, name)
	}
	f, err := openTUN(name)
	if err != nil {
		_ = ipCmd("netns", "del", name)
		return nil, err
	}
	u := &UETUN{Name: name, file: f, t: t, done: make(chan struct{})}
	if err := u.configure(addr); err != nil {
		u.Close()
		return nil, err
	}
	t.SetSink(u.write)
	go u.readLoop()
	return u, nil
}

// openTUN creates the TUN device (IFF_TUN, no packet information header)
// in this namespace; it lives as long as the descriptor.
func openTUN(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, err)
	}
	// A non-blocking descriptor joins Go's poller: readers park as goroutines.
	return os.NewFile(uintptr(fd), "/dev/net/tun:"+name), nil
}

// configure moves the device into the namespace and gives it the UE's
// address and the default route.
func (u *UETUN) configure(addr netip.Addr) error {
	n := u.Name
	steps := [][]string{
		{"link", "set", "dev", n, "netns", n},
		{"-n", n, "link", "set", "lo", "up"},
		// No IPv6 link-local address: the session is IPv4, and the
		// kernel's IPv6 chatter would only be dropped at the tunnel.
		{"-n", n, "link", "set", "dev", n, "addrgenmode", "none"},
		{"-n", n, "addr", "add", addr.String() + "/32", "dev", n},
		{"-n", n, "link", "set", "dev", n, "mtu", fmt.Sprint(tunMTU), "up"},
		{"-n", n, "route", "add", "default", "dev", n},
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			return err
		}
	}
	return nil
}

func (u *UETUN) readLoop() {
	defer close(u.done)
	buf := make([]byte, 65535)
	for {
		n, err := u.file.Read(buf)
		if err != nil {
			return // closed
		}
		// IPv4 only: the session is IPv4; the kernel's own IPv6 chatter
		// on a fresh link has nowhere to go.
		if n < 20 || buf[0]>>4 != 4 {
			continue
		}
		// After a handover the session's tunnel is the target's.
		if t := u.t.current(); t.SendUplink(buf[:n]) != nil {
			t.p.Dropped.Add(1)
		}
	}
}

func (u *UETUN) write(pkt []byte) {
	if _, err := u.file.Write(pkt); err != nil {
		u.t.p.Dropped.Add(1)
	}
}

// Close detaches the device from the tunnel, destroys it and removes the
// namespace.
func (u *UETUN) Close() error {
	u.t.current().SetSink(nil)
	u.file.Close()
	<-u.done
	return ipCmd("netns", "del", u.Name)
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
