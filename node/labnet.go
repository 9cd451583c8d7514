package node

// The lab topology (DESIGN.md "User plane"; issue 11 item 1): on a machine
// with no spare NIC, `l25gc up` gives UPF-U its N3 and N6 ports itself.
//
//	simulator's gNB                   UPF-U (DPDK, net_af_packet)          data network (netns l25gc-dn)
//	l25gc-n3-gnb 10.100.0.2/24  <==>  l25gc-n3  [10.100.0.1]
//	                                  l25gc-n6  [10.200.0.1]   <==>  l25gc-n6-dn 10.200.0.2/24
//	                                                                  route <UE pool> via 10.200.0.1
//
// UPF-U's own addresses (in brackets) live in UPF-U, not in the kernel:
// its ends carry no address, so the kernel never answers ARP for them.
// Every end has its checksum and segmentation offloads off: a veth hands
// af_packet frames whose checksum the kernel never filled in (CHECKSUM_
// PARTIAL) and 64 KiB GSO/GRO super-frames, neither of which is a packet
// on a wire. IPv6 is off on every end, so no router solicitation or DAD
// reaches UPF-U as noise.
//
// The links are made with iproute2's ip, present wherever iproute2 is;
// offloads go through the SIOCETHTOOL ioctl (the ethtool command is often
// missing), IPv6 through /proc/sys, both inside the namespace for its end.

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/l25gc/l25gc/config"
)

// Names and addresses of the default lab topology.
const (
	LabN3Iface    = "l25gc-n3"     // UPF-U's N3 end
	LabN3Peer     = "l25gc-n3-gnb" // the gNB's end, in the host
	LabN6Iface    = "l25gc-n6"     // UPF-U's N6 end
	LabN6Peer     = "l25gc-n6-dn"  // the data network's end, in LabNetns
	LabNetns      = "l25gc-dn"
	DefaultUEPool = "10.60.0.0/16" // the SMF's pool of DNN internet (config has no SMF section on this branch)
)

// LabNet is one lab topology. The zero value is unusable: start from
// LabNetFor, tests rename the links so they never meet a running core's.
type LabNet struct {
	N3, N3Peer string // "" = no N3 pair (upf.n3.port is set)
	N6, N6Peer string // "" = no N6 pair (upf.n6.port is set)
	Netns      string
	GNBAddr    string   // on N3Peer, with prefix
	DNAddr     string   // on N6Peer, with prefix
	UPFN6IP    string   // UPF-U's N6 address: the data network's next hop to the UE pools
	UEPools    []string // routed from the data network via UPFN6IP
}

// NeedsLabNet says whether this node must build a lab topology: it runs
// UPF-U and config names no DPDK device for N3 or N6.
func NeedsLabNet(cfg *config.Config) bool {
	return cfg.Runs("upf-u") && (cfg.UPF.N3.Port == "" || cfg.UPF.N6.Port == "")
}

// LabNetFor is the lab topology cfg asks for: the pairs of the ports
// config leaves empty, each peer end on UPF-U's subnet at the address
// after UPF-U's (10.100.0.2/24 and 10.200.0.2/24 with the default
// upf.n3.ip and upf.n6.ip), the data network routing the UE pools to
// upf.n6.ip.
func LabNetFor(cfg *config.Config) (LabNet, error) {
	l := LabNet{Netns: LabNetns, UEPools: []string{DefaultUEPool}}
	var err error
	if cfg.UPF.N3.Port == "" {
		l.N3, l.N3Peer = LabN3Iface, LabN3Peer
		if l.GNBAddr, _, err = peerOf("upf.n3.ip", cfg.UPF.N3.IP); err != nil {
			return l, err
		}
	}
	if cfg.UPF.N6.Port == "" {
		l.N6, l.N6Peer = LabN6Iface, LabN6Peer
		if l.DNAddr, l.UPFN6IP, err = peerOf("upf.n6.ip", cfg.UPF.N6.IP); err != nil {
			return l, err
		}
	}
	return l, nil
}

// peerOf is the address after UPF-U's on its subnet, with the prefix, and
// UPF-U's address alone; field names the config field in errors.
func peerOf(field, cidr string) (peer, upf string, err error) {
	ip, n, err := net.ParseCIDR(cidr)
	ip4 := ip.To4()
	if err != nil || ip4 == nil {
		return "", "", fmt.Errorf("lab topology: %s %q: want UPF-U's IPv4 address with its prefix, e.g. 10.200.0.1/24", field, cidr)
	}
	next := net.IPv4(ip4[0], ip4[1], ip4[2], ip4[3]+1).To4()
	ones, bits := n.Mask.Size()
	if ip4[3] == 255 || !n.Contains(next) || bits-ones < 2 || next.Equal(broadcast(n)) {
		return "", "", fmt.Errorf("lab topology: %s %s leaves no address after it on its subnet for the peer end", field, cidr)
	}
	return fmt.Sprintf("%s/%d", next, ones), ip4.String(), nil
}

func broadcast(n *net.IPNet) net.IP {
	b := make(net.IP, 4)
	for i := range b {
		b[i] = n.IP.To4()[i] | ^n.Mask[i]
	}
	return b
}

// euid is the effective user id (a variable so a test run as root can
// see the refusal a user gets).
var euid = os.Geteuid

// RemoveLabNet removes the lab topology cfg asks for, if any is there:
// for `l25gc down` when the supervisor that built it is gone.
func RemoveLabNet(cfg *config.Config) error {
	if !NeedsLabNet(cfg) {
		return nil
	}
	l, err := LabNetFor(cfg)
	if err != nil {
		return err
	}
	return l.Down()
}

// Up builds the topology from scratch: whatever an earlier run left (a
// core killed before `down`) is removed first, so a second `up` never
// meets half of an old topology.
func (l LabNet) Up() error {
	if euid() != 0 {
		return errors.New("lab topology: creating veth pairs and netns " + l.Netns + " needs root (CAP_NET_ADMIN); run `l25gc up` as root, or name UPF-U's devices in upf.n3.port and upf.n6.port")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("lab topology: iproute2's `ip` is not installed (apt-get install iproute2)")
	}
	if err := l.Down(); err != nil {
		return err
	}
	if l.N3 != "" {
		if err := l.upN3(); err != nil {
			return err
		}
	}
	if l.N6 != "" {
		if err := l.upN6(); err != nil {
			return err
		}
	}
	return nil
}

func (l LabNet) upN3() error {
	steps := [][]string{
		{"link", "add", l.N3, "type", "veth", "peer", "name", l.N3Peer},
		{"addr", "add", l.GNBAddr, "dev", l.N3Peer},
	}
	if err := runIPs(steps); err != nil {
		return err
	}
	for _, dev := range []string{l.N3, l.N3Peer} {
		if err := quietLink("", dev); err != nil {
			return err
		}
	}
	return runIPs([][]string{{"link", "set", l.N3, "up"}, {"link", "set", l.N3Peer, "up"}})
}

func (l LabNet) upN6() error {
	if err := runIPs([][]string{
		{"netns", "add", l.Netns},
		{"link", "add", l.N6, "type", "veth", "peer", "name", l.N6Peer, "netns", l.Netns},
		{"-n", l.Netns, "addr", "add", l.DNAddr, "dev", l.N6Peer},
	}); err != nil {
		return err
	}
	if err := quietLink("", l.N6); err != nil {
		return err
	}
	if err := quietLink(l.Netns, l.N6Peer); err != nil {
		return err
	}
	steps := [][]string{
		{"-n", l.Netns, "link", "set", "lo", "up"},
		{"-n", l.Netns, "link", "set", l.N6Peer, "up"},
		{"link", "set", l.N6, "up"},
	}
	for _, pool := range l.UEPools {
		steps = append(steps, []string{"-n", l.Netns, "route", "replace", pool, "via", l.UPFN6IP, "dev", l.N6Peer, "onlink"})
	}
	return runIPs(steps)
}

// Down removes the topology; parts already gone are no error. Deleting
// one end of a veth removes its peer; deleting the namespace removes the
// end inside it.
func (l LabNet) Down() error {
	for _, dev := range []string{l.N3, l.N6} {
		if dev == "" || !linkExists(dev) {
			continue
		}
		if err := runIP("link", "del", dev); err != nil {
			return err
		}
	}
	if l.N6 != "" && netnsExists(l.Netns) {
		return runIP("netns", "del", l.Netns)
	}
	return nil
}

func linkExists(dev string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", dev))
	return err == nil
}

func netnsExists(name string) bool {
	_, err := os.Stat(filepath.Join("/run/netns", name))
	return err == nil
}

func runIPs(steps [][]string) error {
	for _, s := range steps {
		if err := runIP(s...); err != nil {
			return err
		}
	}
	return nil
}

// runIP runs one ip command; its error names the command and what ip said.
func runIP(args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.Command("ip", args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("lab topology: `ip %s`: %s", strings.Join(args, " "), msg)
	}
	return nil
}

// quietLink turns off dev's offloads and IPv6, inside netns ("" = this
// one), before the link comes up.
func quietLink(netns, dev string) error {
	return inNetns(netns, func() error {
		if err := offloadsOff(dev); err != nil {
			return err
		}
		return ipv6Off(dev)
	})
}

// ipv6Off sets net.ipv6.conf.<dev>.disable_ipv6; a kernel without IPv6
// has nothing to turn off.
func ipv6Off(dev string) error {
	p := filepath.Join("/proc/sys/net/ipv6/conf", dev, "disable_ipv6")
	if _, err := os.Stat("/proc/sys/net/ipv6"); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.WriteFile(p, []byte("1"), 0); err != nil {
		return fmt.Errorf("lab topology: disable IPv6 on %s: %w", dev, err)
	}
	return nil
}

// The legacy ethtool feature commands (linux/ethtool.h), which every
// kernel still serves: the setters of `ethtool -K dev tx/tso/gso/gro off`
// and their getters.
var offloads = []struct {
	name     string
	set, get uint32
}{
	{"tso", unix.ETHTOOL_STSO, unix.ETHTOOL_GTSO},
	{"gso", unix.ETHTOOL_SGSO, unix.ETHTOOL_GGSO},
	{"gro", unix.ETHTOOL_SGRO, unix.ETHTOOL_GGRO},
	{"tx", unix.ETHTOOL_STXCSUM, unix.ETHTOOL_GTXCSUM},
}

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct{ cmd, data uint32 }

// ifreqPtr is struct ifreq with ifr_data: the name, then a pointer, padded
// to the 40 bytes of the union.
type ifreqPtr struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [40 - unix.IFNAMSIZ - unsafe.Sizeof(uintptr(0))]byte
}

// ethtool runs one SIOCETHTOOL command with an ethtool_value on dev.
func ethtool(dev string, v *ethtoolValue) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var ifr ifreqPtr
	copy(ifr.name[:unix.IFNAMSIZ-1], dev)
	ifr.data = unsafe.Pointer(v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(v)
	if errno != 0 {
		return errno
	}
	return nil
}

// offloadsOff is `ethtool -K dev tso off gso off gro off tx off`.
func offloadsOff(dev string) error {
	for _, o := range offloads {
		if err := ethtool(dev, &ethtoolValue{cmd: o.set}); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
			return fmt.Errorf("lab topology: turn %s offload off on %s (SIOCETHTOOL, as `ethtool -K %s %s off`): %w", o.name, dev, dev, o.name, err)
		}
	}
	return nil
}

// offloadsOn lists the offloads still on at dev (tests).
func offloadsOn(dev string) ([]string, error) {
	var on []string
	for _, o := range offloads {
		v := ethtoolValue{cmd: o.get}
		if err := ethtool(dev, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", o.name, err)
		}
		if v.data != 0 {
			on = append(on, o.name)
		}
	}
	return on, nil
}

// inNetns runs f on an OS thread moved into network namespace name ("" =
// run it here). It runs on a goroutine of its own, locked to its thread:
// if the thread cannot return to this namespace, the goroutine ends still
// locked and the runtime destroys the thread, so no other goroutine ever
// runs in the wrong namespace.
func inNetns(name string, f func() error) error {
	if name == "" {
		return f()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err, back := runInNetns(name, f)
		if back {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// runInNetns enters netns name, runs f and returns; back says whether the
// thread is in its own namespace again.
func runInNetns(name string, f func() error) (err error, back bool) {
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return fmt.Errorf("lab topology: own network namespace: %w", err), true
	}
	defer self.Close()
	target, err := os.Open(filepath.Join("/run/netns", name))
	if err != nil {
		return fmt.Errorf("lab topology: netns %s: %w", name, err), true
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("lab topology: enter netns %s: %w", name, err), true
	}
	ferr := f()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("lab topology: leave netns %s: %w", name, err), false
	}
	return ferr, true
}

// prepareLabNet builds the lab topology when this node needs one (before
// the onvm manager and the NFs start: UPF-U opens its ports at start).
func (c *Core) prepareLabNet() error {
	if !NeedsLabNet(c.cfg) {
		return nil
	}
	l, err := LabNetFor(c.cfg)
	if err != nil {
		return err
	}
	if err := l.Up(); err != nil {
		_ = l.Down()
		return err
	}
	c.lab = &l
	fmt.Fprintf(c.opts.Out, "  lab   up   N3 %s<->%s (%s), N6 %s<->%s in netns %s (%s)\n", l.N3, l.N3Peer, l.GNBAddr, l.N6, l.N6Peer, l.Netns, l.DNAddr)
	return nil
}

// removeLabNet tears the lab topology down (after the NFs stopped).
func (c *Core) removeLabNet() {
	if c.lab == nil {
		return
	}
	if err := c.lab.Down(); err != nil {
		fmt.Fprintf(c.opts.Out, "  lab   %v\n", err)
		return
	}
	fmt.Fprintln(c.opts.Out, "  lab   removed")
}
