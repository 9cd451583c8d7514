// Package keylog is the durable half of an in-memory keyed store: an
// append-only file of JSON lines (a header naming the format, then records
// the owner defines), replayed at open, compacted by rewriting the owner's
// live data to a temporary file renamed over the old one, and fsynced
// periodically. The UDR's embedded store and the AMF's UE-context store use
// it; each keeps its own map and record types, this package only the file.
//
// Crash safety: a record reaches the kernel in one write(2) before Append
// returns, so it survives a crash of the process. A torn last line (a crash
// mid-write, or the page cache lost with the machine) is cut off at open; a
// bad line elsewhere is an error naming the file and line. A compaction
// leaves either the old or the new file complete (rename is atomic). The
// file is fsynced every SyncInterval and on Close, which bounds what a power
// loss takes.
package keylog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultCompactMin keeps small logs from being rewritten over and over.
	DefaultCompactMin = 8 << 20
	// DefaultSyncInterval bounds what a power loss can take.
	DefaultSyncInterval = time.Second
)

// Options configure a Log.
type Options struct {
	Format       string        // names the layout in the header line
	CompactMin   int64         // no compaction below this size; 0: DefaultCompactMin
	SyncInterval time.Duration // 0: DefaultSyncInterval
}

// header is the first line of every log.
type header struct {
	Op     string `json:"op"` // always "hdr"
	Format string `json:"format,omitempty"`
}

// Log is one append-only log file; it is safe for concurrent use, though
// owners normally serialise their changes under their own lock so that
// memory and file agree.
type Log struct {
	path string
	opts Options

	mu     sync.Mutex
	f      *os.File
	size   int64 // bytes in the file
	dirty  bool  // written since the last fsync
	closed bool

	stop chan struct{}
	done chan struct{}
}

// Open replays the log at path (creating it and its directory when absent)
// through apply, one complete record line at a time, and opens it for
// appending. A new log gets its header at once.
func Open(path string, o Options, apply func(line []byte) error) (*Log, error) {
	if o.CompactMin <= 0 {
		o.CompactMin = DefaultCompactMin
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	l := &Log{path: path, opts: o, stop: make(chan struct{}), done: make(chan struct{})}
	if err := l.load(apply); err != nil {
		return nil, err
	}
	var err error
	if l.size == 0 {
		err = l.Compact(func(func([]byte) error) error { return nil })
	} else {
		err = l.openAppend()
	}
	if err != nil {
		return nil, err
	}
	go l.syncLoop()
	return l, nil
}

// Path is the file's name.
func (l *Log) Path() string { return l.path }

// Size is the file's length in bytes.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// SetCompactMin changes the size below which Oversized is always false
// (tests use small logs).
func (l *Log) SetCompactMin(n int64) {
	l.mu.Lock()
	l.opts.CompactMin = n
	l.mu.Unlock()
}

// Oversized says whether the file is worth compacting: beyond CompactMin
// and more than twice the live bytes the owner counts.
func (l *Log) Oversized(live int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size > l.opts.CompactMin && l.size > 2*live
}

func (l *Log) load(apply func([]byte) error) error {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("log %s: %w", l.path, err)
	}
	defer f.Close()
	good, err := l.replay(bufio.NewReaderSize(f, 1<<20), apply)
	if err != nil {
		return fmt.Errorf("log %s: %w", l.path, err)
	}
	l.size = good
	if st, err := f.Stat(); err == nil && st.Size() > good {
		// A torn last record from a crash mid-write: drop it.
		if err := os.Truncate(l.path, good); err != nil {
			return fmt.Errorf("log %s: cut torn record: %w", l.path, err)
		}
	}
	return nil
}

// replay applies every complete record and returns the offset after the
// last one. Only the final line may be incomplete or unreadable.
func (l *Log) replay(r *bufio.Reader, apply func([]byte) error) (int64, error) {
	var off int64
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if err == io.EOF {
			return off, nil // an unterminated tail is a torn write
		}
		if err != nil {
			return off, err
		}
		if !json.Valid(b) {
			if _, perr := r.Peek(1); perr == io.EOF {
				return off, nil // torn last line that happened to end in '\n'
			}
			return off, fmt.Errorf("line %d: not a JSON record", line)
		}
		if line == 1 {
			err = l.checkHeader(b)
		} else {
			err = apply(b)
		}
		if err != nil {
			return off, fmt.Errorf("line %d: %w", line, err)
		}
		off += int64(len(b))
	}
}

func (l *Log) checkHeader(b []byte) error {
	var h header
	if err := json.Unmarshal(b, &h); err != nil || h.Op != "hdr" {
		return fmt.Errorf("not a %s log (no header)", l.opts.Format)
	}
	if h.Format != l.opts.Format {
		return fmt.Errorf("unknown log format %q (want %q)", h.Format, l.opts.Format)
	}
	return nil
}

func (l *Log) openAppend() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("log %s: %w", l.path, err)
	}
	l.f = f
	return nil
}

// Append writes whole records (each ending in '\n') in one write.
func (l *Log) Append(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("log %s: closed", l.path)
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("log %s: write: %w", l.path, err)
	}
	l.size += int64(len(b))
	l.dirty = true
	return nil
}

// Compact writes a new log, the header and then what snapshot emits (the
// owner's live records), and renames it over the old one. The owner holds
// its own lock, so no change slips between snapshot and rename. On error
// the old log stays in place and in use.
func (l *Log) Compact(snapshot func(emit func([]byte) error) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	tmp := l.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("log %s: compact: %w", l.path, err)
	}
	n, err := l.writeSnapshot(f, snapshot)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("log %s: compact: %w", l.path, err)
	}
	syncDir(filepath.Dir(l.path))
	if l.f != nil {
		_ = l.f.Close()
	}
	l.size, l.dirty = n, false
	return l.openAppend()
}

func (l *Log) writeSnapshot(f *os.File, snapshot func(emit func([]byte) error) error) (int64, error) {
	w := bufio.NewWriterSize(f, 1<<20)
	hdr, _ := json.Marshal(header{Op: "hdr", Format: l.opts.Format})
	total := int64(len(hdr) + 1)
	if _, err := w.Write(append(hdr, '\n')); err != nil {
		return 0, err
	}
	err := snapshot(func(rec []byte) error {
		total += int64(len(rec))
		_, err := w.Write(rec)
		return err
	})
	if err != nil {
		return 0, err
	}
	return total, w.Flush()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

func (l *Log) syncLoop() {
	defer close(l.done)
	t := time.NewTicker(l.opts.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.syncNow()
		}
	}
}

func (l *Log) syncNow() {
	l.mu.Lock()
	f, dirty := l.f, l.dirty
	l.dirty = false
	l.mu.Unlock()
	if dirty && f != nil {
		_ = f.Sync() // a file closed by a compaction meanwhile was synced by it
	}
}

// Close stops the periodic fsync, syncs and closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
