package vm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	} {
		if !strings.Contains(res.Output, "--- PASS: "+name) {
			t.Errorf("%s did not pass over kernel SCTP in the VM:\n%s", name, res.Output)
		}
	}
	for _, line := range strings.Split(res.Output, "\n") {
		if strings.Contains(line, "all PPID 60") {
			t.Logf("kernel SCTP (%s): %s", img.Release, strings.TrimSpace(line))
		}
	}
}
