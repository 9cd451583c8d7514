package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/l25gc/l25gc/config"
)

// The run's last lines name each failed subtest and its assertion, with
// go test's plain output (a failed test's messages after its --- FAIL
// line) and with -v (before it), and leave out the NF logs' tails.
func TestFailureSummaryNamesEachFailedTestAndWhy(t *testing.T) {
	plain := `--- FAIL: TestKilledNF (94.09s)
    --- FAIL: TestKilledNF/udm/xio (11.86s)
        nfkill_test.go:72: nfkill victim=udm sbi=xio in_flight=256 failed=3
        nfkill_test.go:80: udm killed: 3 of 256 registrations in flight failed, want < 1 %: [3× 504]
        core_test.go:175: ==== /tmp/x/log/udm.log (tail)
            core_test.go:1: not a message of the test
    --- FAIL: TestKilledNF/nrf/tcp (11.76s)
        nfkill_test.go:56: no registration ran during (0) or after (12) the outage
--- FAIL: TestOther (1.00s)
    other_test.go:9: boom
FAIL
`
	verbose := `=== RUN   TestKilledNF
=== RUN   TestKilledNF/udm/tcp
    nfkill_test.go:72: nfkill victim=udm sbi=tcp in_flight=256 failed=0
=== RUN   TestKilledNF/udm/xio
    nfkill_test.go:72: nfkill victim=udm sbi=xio in_flight=256 failed=3
    nfkill_test.go:80: udm killed: 3 of 256 registrations in flight failed, want < 1 %: [3× 504]
    core_test.go:175: ==== /tmp/x/log/udm.log (tail)
        some log line
=== RUN   TestKilledNF/nrf/tcp
    nfkill_test.go:56: no registration ran during (0) or after (12) the outage
--- FAIL: TestKilledNF (94.09s)
    --- PASS: TestKilledNF/udm/tcp (14.38s)
    --- FAIL: TestKilledNF/udm/xio (11.86s)
    --- FAIL: TestKilledNF/nrf/tcp (11.76s)
=== RUN   TestOther
    other_test.go:9: boom
--- FAIL: TestOther (1.00s)
FAIL
`
	for name, out := range map[string]string{"plain": plain, "-v": verbose, "-json": frame(verbose)} {
		t.Run(name, func(t *testing.T) {
			l := newFailureLog()
			for _, line := range strings.Split(out, "\n") {
				l.line(line)
			}
			got := strings.Split(strings.TrimSpace(l.summary()), "\n")
			want := []string{
				"e2e FAIL TestKilledNF/udm/xio: nfkill_test.go:72: nfkill victim=udm sbi=xio in_flight=256 failed=3 | " +
					"nfkill_test.go:80: udm killed: 3 of 256 registrations in flight failed, want < 1 %: [3× 504]",
				"e2e FAIL TestKilledNF/nrf/tcp: nfkill_test.go:56: no registration ran during (0) or after (12) the outage",
				"e2e FAIL TestOther: other_test.go:9: boom",
				"e2e summary: 3 failed: TestKilledNF/udm/xio, TestKilledNF/nrf/tcp, TestOther",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// frame marks the lines test2json must read as go test -json does.
func frame(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "---") || strings.HasPrefix(l, "===") {
			lines[i] = "\x16" + l
		}
	}
	return strings.Join(lines, "\n")
}

// A passing run prints nothing more.
func TestFailureSummaryIsEmptyWhenAllPass(t *testing.T) {
	l := newFailureLog()
	for _, line := range []string{"=== RUN   TestA", "    a_test.go:1: fine", "--- PASS: TestA (0.01s)", "PASS"} {
		l.line(line)
	}
	if s := l.summary(); s != "" {
		t.Errorf("summary of a passing run: %q", s)
	}
}

// A single message longer than a line's budget is cut, and only the last
// few messages of a chatty test are kept.
func TestFailureSummaryKeepsLinesShort(t *testing.T) {
	var msgs []string
	for i := range 10 {
		msgs = append(msgs, strings.Repeat(string(rune('a'+i)), 1000))
	}
	got := lastMessages(msgs)
	if parts := strings.Split(got, " | "); len(parts) != maxSummaryMessages || !strings.HasPrefix(parts[0], "ggg") {
		t.Fatalf("kept %d messages starting %.3q, want the last %d", len(parts), parts[0], maxSummaryMessages)
	}
	if len(got) > maxSummaryMessages*(maxSummaryChars+8) {
		t.Errorf("summary line of %d bytes", len(got))
	}
}

// A run about to reach its -timeout ends itself, its last line naming the
// test still running and the stacks written to a file, not dumped over it.
// The run is this test binary again, with only the sleeper below.
func TestRunNearItsTimeoutEndsNamingTheRunningTest(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSleeperPastTheTimeout$", "-test.timeout=3s")
	cmd.Env = append(os.Environ(), sleeperEnv+"=1", "L25GC_BIN=/nonexistent") // the sleeper starts no core
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("run past its timeout: %v, want exit status 1\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "e2e: ended") || !strings.Contains(last, "still running: TestSleeperPastTheTimeout") {
		t.Fatalf("last line %q, want the end naming the sleeper\n%s", last, out)
	}
	if strings.Contains(string(out), "goroutine ") && !strings.Contains(string(out), "goroutine stacks in ") {
		t.Errorf("the stacks were dumped into the output:\n%s", out)
	}
	for _, l := range lines {
		if path, ok := strings.CutPrefix(l, "e2e: goroutine stacks in "); ok {
			if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "TestSleeperPastTheTimeout") {
				t.Errorf("stacks file %s: %v, without the sleeper", path, err)
			}
			os.Remove(path)
		}
	}
}

// sleeperEnv runs the sleeper; without it the sleeper is skipped.
const sleeperEnv = "L25GC_E2E_SLEEPER"

// TestSleeperPastTheTimeout stands for a test that outlasts the run's
// -timeout, as TestRunNearItsTimeoutEndsNamingTheRunningTest runs it.
func TestSleeperPastTheTimeout(t *testing.T) {
	if os.Getenv(sleeperEnv) == "" {
		t.Skip("only run by TestRunNearItsTimeoutEndsNamingTheRunningTest")
	}
	t.Cleanup(running.add(t.Name()))
	time.Sleep(time.Minute)
}

// A failed test's NF logs are kept whole under $L25GC_E2E_LOGS, while only
// their tails are printed.
func TestFailedTestKeepsItsWholeLogs(t *testing.T) {
	root := t.TempDir()
	t.Setenv("L25GC_E2E_LOGS", root)
	cfg := config.Default()
	cfg.LogDir = t.TempDir()
	whole := strings.Repeat("a log line of the AMF\n", 2*logTailBytes/20)
	if err := os.WriteFile(filepath.Join(cfg.LogDir, "amf.log"), []byte(whole), 0o644); err != nil {
		t.Fatal(err)
	}
	dumpLogs(t, cfg)
	kept, _ := filepath.Glob(filepath.Join(root, "*", "amf.log"))
	if len(kept) != 1 {
		t.Fatalf("kept %v under %s, want one amf.log", kept, root)
	}
	if b, err := os.ReadFile(kept[0]); err != nil || string(b) != whole {
		t.Errorf("kept %d of %d bytes (%v)", len(b), len(whole), err)
	}
}
