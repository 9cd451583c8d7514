//go:build !l25gc_testhooks

package xio

// handBackHook runs in handBack once its last look found the ring empty,
// before the token goes back; tests hold a goroutine there (testhooks.go).
// Without the test hooks tag it is empty and compiles to nothing.
func handBackHook() {}

// The hooks of the Go data path (shmops.go, ring.go), the C data path's
// XIO_TAKE_PAUSED, XIO_SEND_HOOK, XIO_SLEEP_HOOK and
// ONVM_WEDGE_CHECK_HOOK: tests arm them through testhooks.go. Here they
// do nothing.
func takePausedHook() bool                    { return false }
func sendHook(c, gen, side uint32, chunk int) {}
func sleepHook()                              {}
func wedgeCheckHook(r *shmRing)               {}
