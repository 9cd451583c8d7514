package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/l25gc/l25gc/config"
	"github.com/l25gc/l25gc/n2"
)

// The n2 package's tests, run in the VM, exercise the kernel SCTP transport
// for real (they skip it on this host): PPID 60 and granted streams on every
// DATA chunk on the wire, non-NGAP PPIDs dropped, peer close seen.
func TestN2UnitTestsPassOverKernelSCTP(t *testing.T) {
	img := Prepare(t)
	bin := filepath.Join(t.TempDir(), "n2.test")
	build := exec.Command("go", "test", "-c", "-o", bin, "./n2")
	build.Dir = RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static: nothing else to carry in
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c ./n2: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	res, err := img.Run(ctx, []File{{Path: "/root/n2.test", Src: bin}}, "./n2.test -test.v -test.count=1")
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("n2 tests in the VM (%s) exited %d:\n%s", img.Release, res.ExitCode, res.Output)
	}
	for _, name := range []string{
		"TestKernelSCTPCarriesPPID60OnGrantedStreams",
		"TestKernelSCTPDropsDataWithAnotherPPID",
		"TestKernelSCTPPeerCloseEndsTheAssociation",
		"TestKernelSCTPAppliesHeartbeatOptions",
		"TestKernelSCTPSilentPeerEndsTheAssociation",
		"TestKernelPeerOverUDPGetsDownlinkOnEveryUsableStream",
	} {
		if !strings.Contains(res.Output, "--- PASS: "+name) {
			t.Errorf("%s did not pass over kernel SCTP in the VM:\n%s", name, res.Output)
		}
	}
	for _, line := range strings.Split(res.Output, "\n") {
		if strings.Contains(line, "all PPID 60") || strings.Contains(line, "silent peer:") || strings.Contains(line, "usable streams") {
			t.Logf("kernel SCTP (%s): %s", img.Release, strings.TrimSpace(line))
		}
	}
}

// The whole core with amf.ngap.transport kernel, and the simulator over
// kernel SCTP, register UEs inside the VM; every DATA chunk is checked.
func TestCoreRegistersUEsOverKernelSCTP(t *testing.T) {
	img := Prepare(t)
	res := runCore(t, img, n2.Kernel, "", true)
	if !strings.Contains(res.Output, "0 with a PPID other than 60, 0 on a stream not granted") {
		t.Fatalf("the capture in the VM found bad DATA chunks:\n%s", res.Output)
	}
	t.Logf("kernel SCTP (%s), in the VM:\n%s", img.Release, res.Output)
}

// A kernel SCTP stack that encapsulates in UDP (RFC 6951, Linux's
// net.sctp.udp_port and encap_port), the strict peer of issue 9 that
// registered 0 of 20 UEs while the AMF sent on ungranted streams, registers
// against the AMF's udp transport.
func TestKernelGNBOverSCTPInUDPRegisters(t *testing.T) {
	img := Prepare(t)
	const encapsulate = `echo 9899 >/proc/sys/net/sctp/udp_port
echo 38412 >/proc/sys/net/sctp/encap_port
`
	res := runCore(t, img, n2.UDP, encapsulate, false)
	t.Logf("kernel SCTP over UDP (%s), in the VM:\n%s", img.Release, res.Output)
}

// runCore starts the core in the VM with amfTransport on N2, runs setup,
// registers 5 UEs with l25gc ransim over kernel SCTP (sctpcap checking the
// wire if capture), and requires all 5 to register.
func runCore(t *testing.T, img Image, amfTransport, setup string, capture bool) Result {
	t.Helper()
	bin := l25gcBinary(t)
	files, err := WithLibs("/usr/local/bin/l25gc", bin)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.SBI.Transport = "tcp" // no hugepages in the VM
	// Nor the user plane (its rule tables live in hugepages): N2 is what
	// the VM tests.
	cfg.NFs = slices.DeleteFunc(cfg.NFs, func(n string) bool { return n == "upf-c" || n == "upf-u" })
	cfg.AMF.NGAP.Transport = amfTransport
	cfg.DataDir, cfg.LogDir = "/root/data", "/root/log"
	cfgPath := filepath.Join(t.TempDir(), "l25gc.yaml")
	if err := cfg.Save(cfgPath); err != nil {
		t.Fatal(err)
	}
	files = append(files, File{Path: "/root/l25gc.yaml", Src: cfgPath})
	script := setup + coreScript
	if capture {
		files = append(files, File{Path: "/usr/local/bin/sctpcap", Src: buildStatic(t, "./test/vm/sctpcap")})
		script = setup + "export CAPTURE=1\n" + coreScript
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	res, err := img.Run(ctx, files, script)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("core (N2 %s) + simulator over kernel SCTP in the VM exited %d:\n%s", amfTransport, res.ExitCode, res.Output)
	}
	if !strings.Contains(res.Output, "over kernel, NG Setup done") {
		t.Fatalf("the simulator did not say it used kernel SCTP:\n%s", res.Output)
	}
	if ok, failed := registrations(res.Output); ok != 5 || failed != 0 {
		t.Fatalf("%d UEs registered, %d failed; want 5 and 0:\n%s", ok, failed, res.Output)
	}
	return res
}

// coreScript starts the core, waits for it, registers UEs, stops it.
const coreScript = `export HOME=/root PATH=/usr/local/bin:$PATH
l25gc up --config l25gc.yaml >up.log 2>&1 &
i=0
until grep -q "L25GC+ is up" up.log; do
	i=$((i+1)); [ $i -gt 240 ] && { echo "core not up"; cat up.log; exit 97; }
	sleep 1
done
if [ -n "$CAPTURE" ]; then
	sctpcap >cap.log 2>&1 &
	cap=$!
	until grep -q listening cap.log; do sleep 1; done
fi
l25gc ransim --config l25gc.yaml --n2 kernel --ues 5 --concurrency 5
rc=$?
l25gc down >/dev/null 2>&1
caprc=0
if [ -n "$CAPTURE" ]; then
	kill $cap; wait $cap; caprc=$?
	cat cap.log
fi
[ $rc = 0 ] || { cat up.log; tail -n 40 log/amf.log; }
[ $rc = 0 ] && rc=$caprc
exit $rc`

// registrations reads the OK and FAILED columns of ransim's registration row.
func registrations(out string) (ok, failed int) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] == "registration" {
			ok, _ = strconv.Atoi(f[4])
			failed, _ = strconv.Atoi(f[5])
		}
	}
	return ok, failed
}

// buildStatic builds a Go package of this repository into a static binary.
func buildStatic(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// l25gcBinary is $L25GC_BIN, or l25gc built once for this package's tests.
func l25gcBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("L25GC_BIN"); bin != "" {
		return bin
	}
	built.once.Do(func() {
		bin := filepath.Join(built.dir, "l25gc")
		build := exec.Command("go", "build", "-o", bin, "./cmd/l25gc")
		build.Dir = RepoRoot()
		out, err := build.CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build ./cmd/l25gc: %v\n%s", err, out)
		}
		built.path = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// built is the l25gc the tests share, in a directory TestMain removes.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "l25gc-vm-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	built.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
