package main

import (
	"os"

	"github.com/l25gc/l25gc/nf"

	"github.com/l25gc/l25gc/xio/xiobench"
)

// The onvm manager (the X-IO shared memory's DPDK primary) and the
// `l25gc bench sbi` echo server run as re-executions of this binary with a
// role in $L25GC_XIO_ROLE (package xioproc), started by the node supervisor
// and by the benchmark. The role runs here, before any command parses flags:
// it is the whole life of such a process.
func init() {
	// Before any role: the onvm manager and holder are profiled too.
	nf.ProfileOnSignal()
	if ok, code := xiobench.RunChildRole(); ok {
		os.Exit(code)
	}
}
