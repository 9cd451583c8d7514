package nf

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcHeadroom is the least the heap may grow past the live data between two
// collections. With Go's default (GOGC=100: grow by the live heap) an NF
// whose live heap is 10-20 MB collects every 10-20 MB it allocates, every
// ~150 registrations in the AMF, and spent ~10 % of its CPU (25 % with the
// allocation slow paths) collecting under load. A floor of 64 MiB costs at
// most that much memory per NF; an NF with a large live heap (a UDR holding
// many subscribers) keeps Go's default proportion.
const gcHeadroom = 64 << 20

// maxGCPercent bounds the percent a tiny live heap would ask for.
const maxGCPercent = 2000

// gcPercentFor is the GOGC that gives a live heap of live bytes at least
// gcHeadroom of room, and never less than Go's default of 100.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return maxGCPercent
	}
	return int(min(max(100, gcHeadroom*100/live), maxGCPercent))
}

var tuneGCOnce sync.Once

// TuneGC keeps the heap headroom at gcHeadroom, re-reading the live heap
// after every collection. A GOGC set in the environment is the operator's
// choice and left alone. Every NF runs it; so do the simulator and the
// benchmarks, which share the cores with the NFs they measure.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	tuneGCOnce.Do(func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		retune := func() {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetGCPercent(gcPercentFor(sample[0].Value.Uint64()))
			}
		}
		retune()
		armGCHook(retune)
	})
}

// gcSentinel is garbage as soon as it is made: its finalizer runs after
// the next collection, calls f and makes the next one.
type gcSentinel struct{ _ [16]byte } // not zero-sized: finalizers need a real allocation

func armGCHook(f func()) {
	s := new(gcSentinel)
	runtime.SetFinalizer(s, func(*gcSentinel) {
		f()
		armGCHook(f)
	})
}
