package nf

import (
	"os"
	"runtime"
)

// SetProcs gives the process n Ps (config tuning.procs, why there); 0
// leaves Go's default, and a GOMAXPROCS in the environment is the
// operator's choice and stands, as GOGC does for TuneGC.
func SetProcs(n int) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set || n <= 0 {
		return
	}
	runtime.GOMAXPROCS(n)
}
