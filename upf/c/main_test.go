package upfc

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/l25gc/l25gc/xio"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// TestMain starts an onvm manager of this test process's own file prefix
// for the N4-over-X-IO tests (root and hugepages, like every X-IO test).
func TestMain(m *testing.M) {
	if ok, code := xioproc.RunRole(nil); ok {
		os.Exit(code)
	}
	flag.Parse()
	if fuzzing() {
		os.Exit(m.Run()) // FuzzN4 needs no X-IO: spare each fuzz worker a manager
	}
	mgr, err := xioproc.StartManager()
	if err != nil {
		fmt.Fprintln(os.Stderr, "upf-c tests: N4 over X-IO needs the onvm manager, which needs root and hugepages:", err)
		os.Exit(1)
	}
	if err := xio.Init(xio.Config{FilePrefix: mgr.Prefix}); err != nil {
		mgr.Close()
		fmt.Fprintln(os.Stderr, "upf-c tests: attach to the onvm manager:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := mgr.Close(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "upf-c tests: onvm manager:", err)
		code = 1
	}
	os.Exit(code)
}

// fuzzing reports whether this process runs a fuzz target (go test -fuzz,
// coordinator or worker).
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	w := flag.Lookup("test.fuzzworker")
	return (f != nil && f.Value.String() != "") || (w != nil && w.Value.String() == "true")
}
