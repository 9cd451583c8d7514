// Package testio holds what tests of several packages share to watch the
// output of processes they start.
package testio

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that a child process (or a supervisor's
// watchers) writes while the test reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
