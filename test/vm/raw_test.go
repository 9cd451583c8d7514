package vm

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/n2"
	"github.com/l25gc/l25gc/node"
)

// The AMF on this host, whose kernel has no SCTP, speaks SCTP on raw IP
// (amf.ngap.transport raw); a gNB with real kernel SCTP (the simulator over
// kernel SCTP in the VM) reaches it through a TAP device, sets up N2 and
// registers UEs. tshark, on the TAP, checks that every packet dissects as
// SCTP with a good CRC32c and NGAP inside.
func TestKernelGNBRegistersWithARawIPAMFOnTheHost(t *testing.T) {
	img := Prepare(t)
	if n2.KernelSCTPAvailable() {
		t.Fatal("this host's kernel has SCTP: the raw transport refuses to run here (TestRaw* in package n2 checks that)")
	}
	net3 := 200 + os.Getpid()%50 // a /24 of its own, so parallel runs do not meet
	hostIP, vmIP := fmt.Sprintf("10.201.%d.1", net3), fmt.Sprintf("10.201.%d.2", net3)
	img.Tap = tapDevice(t, fmt.Sprintf("l25gc%d", os.Getpid()%100000), hostIP+"/24")

	bin := l25gcBinary(t)
	dir := t.TempDir()
	cfg := config.Default()
	cfg.SBI.Transport = "tcp"
	cfg.NFs = slices.DeleteFunc(cfg.NFs, func(n string) bool { return n == "upf-u" }) // no user traffic here
	cfg.DataDir, cfg.LogDir = filepath.Join(dir, "data"), filepath.Join(dir, "log")
	cfg.AMF.NGAP.Transport = n2.Raw
	cfg.AMF.NGAP.Addr = net.JoinHostPort(hostIP, "38412")
	freeSBIPorts(t, cfg)
	cfgPath := filepath.Join(dir, "l25gc.yaml")
	if err := cfg.Save(cfgPath); err != nil {
		t.Fatal(err)
	}
	capture := startTshark(t, img.Tap, filepath.Join(dir, "n2.pcap"))

	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	core, err := node.Start(ctx, cfg, node.Options{Binary: bin, ConfigPath: cfgPath})
	if err != nil {
		t.Fatalf("core on the host did not start: %v\n%s", err, amfLog(cfg))
	}
	defer core.Stop()

	files, err := WithLibs("/usr/local/bin/l25gc", bin)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, File{Path: "/root/l25gc.yaml", Src: cfgPath})
	script := fmt.Sprintf(`export HOME=/root PATH=/usr/local/bin:$PATH
ip link set eth0 up && ip addr add %s/24 dev eth0 || exit 90
l25gc ransim --config l25gc.yaml --n2 kernel --amf %s --ues 5 --concurrency 5
`, vmIP, cfg.AMF.NGAP.Addr)
	res, err := img.Run(ctx, files, script)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Output, "over kernel, NG Setup done") {
		t.Fatalf("the VM's kernel gNB against the host's raw-IP AMF exited %d:\n%s\nAMF log:\n%s", res.ExitCode, res.Output, amfLog(cfg))
	}
	if ok, failed := registrations(res.Output); ok != 5 || failed != 0 {
		t.Fatalf("%d UEs registered, %d failed; want 5 and 0:\n%s", ok, failed, res.Output)
	}
	t.Logf("kernel SCTP gNB (%s, in the VM) -> AMF on SCTP over raw IP (this host):\n%s", img.Release, res.Output)
	capture.check(t)
}

// tapDevice creates a TAP device with addr on the host, removed at the end.
func tapDevice(t *testing.T, name, addr string) string {
	t.Helper()
	for _, args := range [][]string{
		{"tuntap", "add", "dev", name, "mode", "tap"},
		{"addr", "add", addr, "dev", name},
		{"link", "set", name, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			exec.Command("ip", "link", "del", name).Run()
			t.Fatalf("ip %s: %v\n%s (the raw-IP VM test needs root for a TAP device)", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() { exec.Command("ip", "link", "del", name).Run() })
	return name
}

// freeSBIPorts gives every NF SBI and metrics ports nobody uses.
func freeSBIPorts(t *testing.T, cfg *config.Config) {
	t.Helper()
	for _, spec := range config.Builtin {
		nf := spec.PortsIn(cfg)
		ports := []*int{&nf.MetricsPort}
		if spec.HasSBI() {
			ports = append(ports, &nf.SBIPort)
		} else { // UPF-C: a free N4 port instead
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cfg.UPF.C.PFCPAddr = pc.LocalAddr().String()
			defer pc.Close()
		}
		for _, port := range ports {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			*port = ln.Addr().(*net.TCPAddr).Port
			defer ln.Close()
		}
	}
}

func amfLog(cfg *config.Config) string {
	b, _ := os.ReadFile(filepath.Join(cfg.LogDir, "amf.log"))
	return tail(string(b), 3000)
}

// tsharkCapture is tshark writing the TAP's SCTP to a file.
type tsharkCapture struct {
	cmd  *exec.Cmd
	file string
}

// startTshark captures SCTP on dev; tshark is installed by
// scripts/install-deps.sh, and without it the wire is not checked (said).
func startTshark(t *testing.T, dev, file string) *tsharkCapture {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Logf("tshark not installed: the wire is not dissected")
		return nil
	}
	cmd := exec.Command("tshark", "-q", "-i", dev, "-f", "ip proto 132", "-w", file)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 100; i++ { // until tshark has the device open
		if _, err := os.Stat(file); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return &tsharkCapture{cmd: cmd, file: file}
}

// check stops the capture and requires every packet to dissect as SCTP
// with a correct CRC32c, DATA chunks to carry PPID 60 and NGAP, and nothing
// malformed.
func (c *tsharkCapture) check(t *testing.T) {
	t.Helper()
	if c == nil {
		return
	}
	time.Sleep(500 * time.Millisecond) // the last packets reach the file
	c.cmd.Process.Signal(os.Interrupt)
	c.cmd.Wait()
	count := func(filter string) int {
		out, err := exec.Command("tshark", "-r", c.file, "-o", "sctp.checksum:CRC 32c", "-Y", filter).Output()
		if err != nil {
			t.Fatalf("tshark -r %s -Y %q: %v", c.file, filter, err)
		}
		return len(strings.Split(strings.TrimSpace(string(out)), "\n")) - map[bool]int{true: 1, false: 0}[strings.TrimSpace(string(out)) == ""]
	}
	all, ngap, good := count("sctp"), count("ngap"), count(`sctp.checksum.status == "Good"`)
	bad := count(`_ws.malformed || _ws.expert.severity >= "error" || sctp.checksum.status == "Bad" || (sctp.data_payload_proto_id && sctp.data_payload_proto_id != 60)`)
	if all == 0 || ngap == 0 || bad != 0 || good != all {
		t.Fatalf("tshark on the TAP: %d SCTP packets, %d with a verified CRC32c, %d with NGAP, %d malformed, with a bad checksum or a PPID other than 60", all, good, ngap, bad)
	}
	t.Logf("tshark on the TAP: %d SCTP packets on raw IP, %d with NGAP, none malformed, every CRC32c good, PPID 60 throughout", all, ngap)
}
