package nf

import (
	"runtime"
	"testing"
)

// SetProcs sets the Ps the config asks for, leaves Go's default for 0,
// and leaves a GOMAXPROCS from the environment alone.
func TestSetProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	want := before + 1
	SetProcs(want)
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("GOMAXPROCS %d after SetProcs(%d)", got, want)
	}
	SetProcs(0)
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("SetProcs(0) changed GOMAXPROCS to %d", got)
	}
	t.Setenv("GOMAXPROCS", "3")
	SetProcs(1)
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("SetProcs(1) with GOMAXPROCS=3 in the environment changed it to %d", got)
	}
}
