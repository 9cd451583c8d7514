package onvm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/l25gc/l25gc/onvm"
	"github.com/l25gc/l25gc/xio/xioproc"
)

// TestRun runs the manager in this process (root, hugepages): it creates
// the pool and tables, reports them in Stats, and cleans up on cancel. The
// NF side (attach, conns, reclaim after SIGKILL) is tested in package xio.
func TestRun(t *testing.T) {
	if err := onvm.Run(context.Background(), onvm.Config{HugeDir: "/nonexistent"}); err == nil ||
		!strings.Contains(err.Error(), "hugepage dir /nonexistent missing") {
		t.Fatalf("Run without a hugepage dir: %v", err)
	}
	if err := xioproc.EnsureHugepages(128); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("onvmtest%d", os.Getpid())
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan onvm.Snapshot, 1)
	done := make(chan error, 1)
	go func() {
		done <- onvm.Run(ctx, onvm.Config{FilePrefix: prefix, Ready: func() { ready <- onvm.Stats() }})
	}()
	var st onvm.Snapshot
	select {
	case st = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	if st.PoolSize != 8192 || st.PoolInUse != 0 || st.CtlInUse != 0 || st.NFs != 0 || st.Conns != 0 {
		t.Fatalf("fresh manager: %+v", st)
	}
	if st.NFQuota != 1024 {
		t.Fatalf("an NF may queue %d of 8192 buffers, want an eighth", st.NFQuota)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob("/dev/hugepages/" + prefix + "map_*"); len(left) > 0 {
		t.Fatalf("hugepage files left behind: %v", left)
	}
	os.RemoveAll("/var/run/dpdk/" + prefix)
	if err := onvm.Run(context.Background(), onvm.Config{}); !errors.Is(err, onvm.ErrAlreadyRan) {
		t.Fatalf("second Run: %v, want onvm.ErrAlreadyRan", err)
	}
	if (onvm.Stats() != onvm.Snapshot{}) {
		t.Fatal("Stats after stop should be zero")
	}
}
