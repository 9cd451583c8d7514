package node

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	defaultMaxRestarts = 5
	defaultBackoff     = 500 * time.Millisecond
	maxBackoff         = 30 * time.Second
	// stableAfter: an NF that ran this long before it died was not failing
	// at start; its restart counts as the first of a new streak.
	stableAfter = time.Minute
	// tailLines is how much of an NF's logs the console shows when the
	// supervisor gives up on it.
	tailLines = 5
)

// nextRestart counts p's exit into its streak of early exits and says how
// long to wait before restarting it, or false when the streak says the next
// start would fail the same way.
func (c *Core) nextRestart(p *Process) (time.Duration, bool) {
	limit, backoff := c.opts.MaxRestarts, c.opts.RestartBackoff
	if limit <= 0 {
		limit = defaultMaxRestarts
	}
	if backoff <= 0 {
		backoff = defaultBackoff
	}
	c.mu.Lock()
	if time.Since(p.spawned) >= stableAfter || p.killed {
		p.failures = 0
	}
	p.failures++
	streak := p.failures
	c.mu.Unlock()
	if streak > limit {
		return 0, false
	}
	for i := 1; i < streak && backoff < maxBackoff; i++ {
		backoff *= 2
	}
	return min(backoff, maxBackoff), true
}

// giveUp leaves p down and says why on the console: how it exited and the
// last lines it wrote.
func (c *Core) giveUp(p *Process, exitErr error) {
	c.mu.Lock()
	p.GaveUp = true
	streak := p.failures - 1
	c.mu.Unlock()
	fmt.Fprintf(c.opts.Out, "  %-5s gave up: restarted %d times in a row, each exited within %v (last: %v); not restarting it%s\n",
		p.Name, streak, stableAfter, exitErr, c.logTail(p.Name))
	_ = c.writeState()
}

// logTail is the last lines of NF name's stderr and log files, indented
// for the console ("" when both are empty).
func (c *Core) logTail(name string) string {
	var b strings.Builder
	for _, path := range []string{filepath.Join(c.cfg.LogDir, name+".stderr"), filepath.Join(c.cfg.LogDir, name+".log")} {
		lines := lastLines(path, tailLines)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n    last lines of %s:", path)
		for _, l := range lines {
			fmt.Fprintf(&b, "\n      %s", l)
		}
	}
	return b.String()
}

// lastLines returns the last n non-empty lines of the file at path (read
// from its last 64 KiB: a busy NF's log is large).
func lastLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const window = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		_, _ = f.Seek(st.Size()-window, io.SeekStart)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, string(l))
		}
	}
	return lines[max(0, len(lines)-n):]
}
