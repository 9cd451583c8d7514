// Package fuzzseed writes fuzz seed corpora from real messages, for the
// decoders' tests (`go test -update-seeds`).
package fuzzseed

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Must returns a check for builders: it fails t on an error and passes the
// built message on, so seed tables read as lists of builder calls.
func Must(t testing.TB) func([]byte, error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// Write writes each seed as a file of Go's fuzz corpus format in dir
// (testdata/fuzz/<FuzzTarget>), named by its key.
func Write(t testing.TB, dir string, seeds map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range seeds {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
