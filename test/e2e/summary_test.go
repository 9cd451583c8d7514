package e2e

// A CI log keeps only part of a run's output, and a failing e2e test
// prints the NF logs' tails after its assertion. So the run ends with what
// failed and why, once more, where a log's tail shows it: one line per
// failed test with its messages, then one line naming them all. And a run
// about to hit go test's -timeout ends itself, its last lines naming the
// tests still running, the goroutine stacks written to a file rather than
// dumped over them.

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"
)

// failureLog reads go test's output (plain or -v) and keeps, per test,
// the first line of each message it logged and whether it failed.
type failureLog struct {
	mu       sync.Mutex
	current  string              // the test the next message lines belong to
	indent   string              // the indentation of current's messages
	messages map[string][]string // test → first line of each message
	failed   []string            // in the order go test reported them
}

var (
	// "=== RUN   TestX/sub", "=== NAME  TestX", "=== CONT  TestX"
	testHeader = regexp.MustCompile(`^=== (?:RUN|NAME|CONT|PAUSE)\s+(\S+)`)
	// "--- FAIL: TestX/sub (1.23s)", indented under its parent
	testResult = regexp.MustCompile(`^\s*--- (FAIL|PASS|SKIP): (\S+)`)
	// "    file_test.go:12: text": a message's first line
	testMessage = regexp.MustCompile(`^\s+(\S+\.go:\d+: .*)$`)
)

func newFailureLog() *failureLog { return &failureLog{messages: map[string][]string{}} }

// line takes one line of output.
func (l *failureLog) line(s string) {
	s = strings.TrimPrefix(s, "\x16") // go test -json's framing mark
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := testHeader.FindStringSubmatch(s); m != nil {
		l.current, l.indent = m[1], messageIndent
		return
	}
	if m := testResult.FindStringSubmatch(s); m != nil {
		// Plain output prints a failed test's messages after this line,
		// -v before it; either way they are the named test's, one level
		// deeper than the line.
		l.current, l.indent = m[2], indentOf(s)+messageIndent
		if m[1] == "FAIL" && !slices.Contains(l.failed, m[2]) {
			l.failed = append(l.failed, m[2])
		}
		return
	}
	// A message's own further lines are indented deeper: not messages,
	// whatever they hold.
	if m := testMessage.FindStringSubmatch(s); m != nil && l.current != "" && indentOf(s) == l.indent && !isLogDump(m[1]) {
		l.messages[l.current] = append(l.messages[l.current], m[1])
	}
}

// messageIndent is how much deeper than its test's line go test indents
// a message.
const messageIndent = "    "

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// isLogDump: a tail of an NF log (dumpLogs), not the test's own words.
func isLogDump(msg string) bool {
	_, text, _ := strings.Cut(msg, ": ")
	return strings.HasPrefix(text, "==== ")
}

// summary is what the end of a run prints: a line per failed test that
// says why (its last messages), then one line naming every failed test.
// Empty when nothing failed.
func (l *failureLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var leaves []string
	for _, name := range l.failed {
		if !l.hasFailedChild(name) || len(l.messages[name]) > 0 {
			leaves = append(leaves, name)
		}
	}
	if len(leaves) == 0 {
		return ""
	}
	var b strings.Builder
	for _, name := range leaves {
		fmt.Fprintf(&b, "e2e FAIL %s: %s\n", name, lastMessages(l.messages[name]))
	}
	fmt.Fprintf(&b, "e2e summary: %d failed: %s\n", len(leaves), strings.Join(leaves, ", "))
	return b.String()
}

func (l *failureLog) hasFailedChild(name string) bool {
	for _, f := range l.failed {
		if strings.HasPrefix(f, name+"/") {
			return true
		}
	}
	return false
}

// maxSummaryMessages and maxSummaryChars keep a failure's line readable.
const (
	maxSummaryMessages = 4
	maxSummaryChars    = 400
)

// lastMessages joins a test's last messages, each shortened: the
// assertions come last, after what the test logged on its way.
func lastMessages(msgs []string) string {
	if len(msgs) == 0 {
		return "(no message; see the output above)"
	}
	msgs = msgs[max(0, len(msgs)-maxSummaryMessages):]
	out := make([]string, len(msgs))
	for i, m := range msgs {
		if len(m) > maxSummaryChars {
			m = m[:maxSummaryChars] + "…"
		}
		out[i] = m
	}
	return strings.Join(out, " | ")
}

// teeStdout sends what the tests write to os.Stdout through log on its
// way to the real stdout; the returned func restores os.Stdout and waits
// until every line has been read.
func teeStdout(log *failureLog) (restore func(), real *os.File, err error) {
	real = os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(io.TeeReader(r, real))
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		for sc.Scan() {
			log.line(sc.Text())
		}
		_, _ = io.Copy(real, r) // a line too long for the scanner: pass the rest on
	}()
	os.Stdout = w
	var once sync.Once
	return func() {
		once.Do(func() {
			os.Stdout = real
			w.Close()
			<-done
			r.Close()
		})
	}, real, nil
}

// runningTests are the tests that started a core and have not ended, by
// name, with their start: what a run near its -timeout is waiting for.
type runningTests struct {
	mu      sync.Mutex
	started map[string]time.Time
}

func (r *runningTests) add(name string) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started == nil {
		r.started = map[string]time.Time{}
	}
	r.started[name] = time.Now()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.started, name)
	}
}

func (r *runningTests) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.started))
	for name, at := range r.started {
		names = append(names, fmt.Sprintf("%s (for %v)", name, time.Since(at).Round(time.Second)))
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "none with a core"
	}
	return strings.Join(names, ", ")
}

// running is every test of this run that started a core (coreConfig).
var running runningTests

// exitBeforeTimeout fires a little before go test's -timeout would panic
// the run and ends it itself: it writes every goroutine's stack to a file
// and prints, last, the tests still running and the failures so far. The
// panic would print the stacks last, hundreds of lines that push the
// names out of a log's tail. flush passes on what the tests wrote before.
// The returned func disarms it.
func exitBeforeTimeout(out io.Writer, flush func(), log *failureLog) (disarm func()) {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return func() {}
	}
	timeout, err := time.ParseDuration(f.Value.String())
	if err != nil || timeout <= 0 {
		return func() {}
	}
	margin := min(10*time.Second, timeout/10)
	t := time.AfterFunc(timeout-margin, func() {
		flush()
		if path, err := writeGoroutines(); err == nil {
			fmt.Fprintf(out, "\ne2e: goroutine stacks in %s\n", path)
		}
		fmt.Fprint(out, log.summary())
		fmt.Fprintf(out, "e2e: ended %v before its -timeout %v; still running: %s\n", margin, timeout, running.String())
		os.Exit(1)
	})
	return func() { t.Stop() }
}

// writeGoroutines writes every goroutine's stack to a file that outlives
// the run.
func writeGoroutines() (string, error) {
	f, err := os.CreateTemp("", "l25gc-e2e-goroutines-*.txt")
	if err != nil {
		return "", err
	}
	defer f.Close()
	return filepath.Clean(f.Name()), pprof.Lookup("goroutine").WriteTo(f, 2)
}
