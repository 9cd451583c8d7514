package node

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/config"
)

// testLabNet is a lab topology with names and addresses of its own, so the
// test never touches a core running on this host (l25gc-n3, 10.100.0.0/24).
func testLabNet() LabNet {
	tag := fmt.Sprintf("lt%d", os.Getpid()%100000)
	return LabNet{
		N3: tag + "-n3", N3Peer: tag + "-n3g", N6: tag + "-n6", N6Peer: tag + "-n6d", Netns: tag + "-dn",
		GNBAddr: "10.251.0.2/24", DNAddr: "10.252.0.2/24", UPFN6IP: "10.252.0.1", UEPools: []string{"10.61.0.0/16"},
	}
}

func needRootAndIP(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the lab topology needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2 is not installed")
	}
}

func ipOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkLabNet asserts what a user would check after `l25gc up`.
func checkLabNet(t *testing.T, l LabNet) {
	t.Helper()
	if out := ipOut(t, "-o", "addr", "show", "dev", l.N3Peer); !strings.Contains(out, "inet "+l.GNBAddr) {
		t.Errorf("%s: %s, want %s", l.N3Peer, out, l.GNBAddr)
	}
	if out := ipOut(t, "-o", "addr", "show", "dev", l.N3); strings.Contains(out, "inet") {
		t.Errorf("UPF-U's end %s has a kernel address: %s", l.N3, out)
	}
	if out := ipOut(t, "-n", l.Netns, "-o", "addr", "show", "dev", l.N6Peer); !strings.Contains(out, "inet "+l.DNAddr) {
		t.Errorf("%s in %s: %s, want %s", l.N6Peer, l.Netns, out, l.DNAddr)
	}
	if linkExists(l.N6Peer) {
		t.Errorf("%s is in the host's namespace, want it in %s", l.N6Peer, l.Netns)
	}
	if out := ipOut(t, "-n", l.Netns, "route", "show", l.UEPools[0]); !strings.Contains(out, "via "+l.UPFN6IP+" dev "+l.N6Peer) {
		t.Errorf("route to the UE pool in %s: %q, want via %s dev %s", l.Netns, out, l.UPFN6IP, l.N6Peer)
	}
	for _, e := range []struct{ netns, dev string }{{"", l.N3}, {"", l.N3Peer}, {"", l.N6}, {l.Netns, l.N6Peer}} {
		err := inNetns(e.netns, func() error {
			on, err := offloadsOn(e.dev)
			if err != nil {
				return err
			}
			if len(on) > 0 {
				t.Errorf("%s: offloads %v still on", e.dev, on)
			}
			v, err := os.ReadFile("/proc/sys/net/ipv6/conf/" + e.dev + "/disable_ipv6")
			if err != nil {
				return err
			}
			if strings.TrimSpace(string(v)) != "1" {
				t.Errorf("%s: IPv6 is on", e.dev)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", e.dev, err)
		}
		args := []string{"-o", "link", "show", e.dev}
		if e.netns != "" {
			args = append([]string{"-n", e.netns}, args...)
		}
		if out := ipOut(t, args...); !strings.Contains(out, "state UP") && !strings.Contains(out, ",UP") {
			t.Errorf("%s is not up: %s", e.dev, out)
		}
	}
}

func TestLabNetUpTwiceAndDown(t *testing.T) {
	needRootAndIP(t)
	l := testLabNet()
	t.Cleanup(func() { _ = l.Down() })
	if err := l.Up(); err != nil {
		t.Fatal(err)
	}
	checkLabNet(t, l)
	// A second up (a core killed before its down left this behind) rebuilds.
	if err := l.Up(); err != nil {
		t.Fatalf("second up: %v", err)
	}
	checkLabNet(t, l)
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{l.N3, l.N3Peer, l.N6} {
		if linkExists(dev) {
			t.Errorf("%s is still there after down", dev)
		}
	}
	if netnsExists(l.Netns) {
		t.Errorf("netns %s is still there after down", l.Netns)
	}
	if err := l.Down(); err != nil {
		t.Fatalf("down of nothing: %v", err)
	}
}

// A step that fails names the command and what ip said, and the caller's
// Down leaves nothing behind.
func TestLabNetErrorNamesTheCommand(t *testing.T) {
	needRootAndIP(t)
	l := testLabNet()
	l.DNAddr = "10.252.0.300/24"
	t.Cleanup(func() { _ = l.Down() })
	err := l.Up()
	if err == nil || !strings.Contains(err.Error(), "`ip -n "+l.Netns+" addr add 10.252.0.300/24 dev "+l.N6Peer+"`") {
		t.Fatalf("Up with a bad address: %v, want the failing ip command named", err)
	}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if linkExists(l.N3) || netnsExists(l.Netns) {
		t.Fatal("down after a failed up left links behind")
	}
}

// Only a node running UPF-U without configured devices builds the lab, and
// only the pairs of the ports config leaves empty.
func TestLabNetFor(t *testing.T) {
	cfg := config.Default()
	if NeedsLabNet(cfg) && !slices.Contains(cfg.NFs, "upf-u") {
		t.Fatal("a node without upf-u needs a lab topology")
	}
	cfg.NFs = append(cfg.NFs, "upf-u")
	if !NeedsLabNet(cfg) {
		t.Fatal("upf-u with empty ports needs no lab topology")
	}
	l, err := LabNetFor(cfg)
	if err != nil || l.N3 != LabN3Iface || l.N6Peer != LabN6Peer || l.Netns != LabNetns || l.UPFN6IP != "10.200.0.1" || l.UEPools[0] != DefaultUEPool ||
		l.GNBAddr != "10.100.0.2/24" || l.DNAddr != "10.200.0.2/24" {
		t.Fatalf("default lab = %+v, %v", l, err)
	}
	for cidr, want := range map[string]string{"192.168.7.10/16": "192.168.7.11/16", "10.0.0.254/24": "", "10.0.0.1/31": "", "10.0.0.255/8": "", "fd00::1/64": ""} {
		got, _, err := peerOf("upf.n3.ip", cidr)
		if got != want || (want == "" && (err == nil || !strings.Contains(err.Error(), "upf.n3.ip"))) {
			t.Errorf("peer of %s = %q, %v; want %q", cidr, got, err, want)
		}
	}
	cfg.UPF.N3.Port = "0000:3b:00.0"
	if l, _ := LabNetFor(cfg); l.N3 != "" || l.N6 == "" {
		t.Fatalf("with a N3 device: %+v, want only the N6 pair", l)
	}
	cfg.UPF.N6.Port = "net_af_packet1,iface=eth2"
	if NeedsLabNet(cfg) {
		t.Fatal("both ports configured still need a lab topology")
	}
	cfg.UPF.N6.Port, cfg.UPF.N6.IP = "", "10.200.0.1"
	if _, err := LabNetFor(cfg); err == nil || !strings.Contains(err.Error(), "upf.n6.ip") {
		t.Fatalf("N6 address without prefix: %v, want an error naming upf.n6.ip", err)
	}
	cfg.UPF.N6.IP = "10.200.0.1/24"
}

func TestLabNetNeedsRoot(t *testing.T) {
	defer func(f func() int) { euid = f }(euid)
	euid = func() int { return 1000 }
	l := testLabNet()
	if err := l.Up(); err == nil || !strings.Contains(err.Error(), "needs root") || !strings.Contains(err.Error(), "upf.n3.port") {
		t.Fatalf("Up as a user: %v, want an error saying root is needed or devices named", err)
	}
	if linkExists(l.N3) {
		t.Fatal("Up as a user created links")
	}
}
