package logging

import (
	"fmt"
	"os"
	"strconv"
	"sync"
)

// RotatingFile appends to a log file and, when a write would take it past
// its size limit, renames it to <path>.1 (the older ones moving to .2, .3,
// … up to keep, the oldest dropped) and starts a new one: a node's logs
// stay bounded however long it runs. Written here rather than taken from a
// library: it is forty lines, and slog hands it one whole record per Write,
// so files always break between lines.
type RotatingFile struct {
	mu       sync.Mutex
	path     string
	maxBytes int64 // 0: never rotate
	keep     int
	f        *os.File
	size     int64
}

// OpenRotating opens path for appending, rotating at maxBytes (0: never)
// and keeping keep rotated files (at least 1).
func OpenRotating(path string, maxBytes int64, keep int) (*RotatingFile, error) {
	r := &RotatingFile{path: path, maxBytes: maxBytes, keep: max(keep, 1)}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *RotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log file: %w", err)
	}
	r.f, r.size = f, info.Size()
	return nil
}

// Write appends p, rotating first if p would not fit; a record larger than
// the limit goes whole into a fresh file.
func (r *RotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.maxBytes > 0 && r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts path.(keep-1) → path.keep … path → path.1 and reopens path.
func (r *RotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("log rotation: %w", err)
	}
	for i := r.keep - 1; i >= 1; i-- {
		_ = os.Rename(r.path+"."+strconv.Itoa(i), r.path+"."+strconv.Itoa(i+1)) // absent ones: nothing to move
	}
	if err := os.Rename(r.path, r.path+".1"); err != nil {
		return fmt.Errorf("log rotation: %w", err)
	}
	return r.open()
}

// Close closes the current file.
func (r *RotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.f.Close()
}
