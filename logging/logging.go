// Package logging gives every process of L25GC+ the same structured log:
// log/slog lines with a level, the NF name, and one file per NF in the log
// directory that `l25gc up` reports.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// ParseLevel maps a config level name to slog.
func ParseLevel(name string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(name))); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", name)
	}
	return l, nil
}

// New returns a logger writing text lines to w, tagged with component. It is
// the one place that sets the nf attribute: an NF logs on the logger its
// process made (nf.Env.Log) as it is, or every line says nf= twice.
func New(w io.Writer, level slog.Level, component string) *slog.Logger {
	return newLogger(w, level, component, false)
}

func newLogger(w io.Writer, level slog.Level, component string, redact bool) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	if redact {
		h = RedactSUPI(h)
	}
	return slog.New(h).With("nf", component)
}

// FileOptions bound and clean an NF's log file (config log_max_size_mb,
// log_max_files, log_redact_supi).
type FileOptions struct {
	MaxBytes   int64 // rotate at this size; 0 never
	Keep       int   // rotated files kept
	RedactSUPI bool  // mask subscriber identities (RedactSUPI)
}

// OpenFile opens (appending) dir/<component>.log, rotating by size as o
// says, and returns a logger on it. The caller closes the file at exit.
func OpenFile(dir, component string, level slog.Level, o FileOptions) (*slog.Logger, io.Closer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("log dir: %w", err)
	}
	f, err := OpenRotating(filepath.Join(dir, component+".log"), o.MaxBytes, o.Keep)
	if err != nil {
		return nil, nil, err
	}
	return newLogger(f, level, component, o.RedactSUPI), f, nil
}

// Discard is a logger for tests and tools that do not want NF logs.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
