//go:build !l25gc_testhooks

package xio_test

import "testing"

// The tests of package xio drive the stack through its test hooks
// (testhooks.go), which exist only with the build tag: without it this is
// the package's only test, and it says how to run the real ones.
func TestNeedsTestHooksTag(t *testing.T) {
	t.Fatal("package xio's tests need its test hooks: run them with " +
		"go test -tags l25gc_testhooks ./xio/... (make unit does)")
}
