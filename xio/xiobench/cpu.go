package xiobench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procCost is what a process's threads have cost so far: CPU time and
// context switches. A loaded machine stretches latency, but the CPU and
// the switches one round trip costs barely move with load, so they tell
// a change to the transport from noise.
type procCost struct {
	cpuNS    int64 // time on a CPU, all threads (schedstat, ns)
	switches int64 // voluntary + involuntary context switches, all threads
}

func (a procCost) sub(b procCost) procCost {
	return procCost{cpuNS: a.cpuNS - b.cpuNS, switches: a.switches - b.switches}
}

func (a procCost) add(b procCost) procCost {
	return procCost{cpuNS: a.cpuNS + b.cpuNS, switches: a.switches + b.switches}
}

// costOf sums pid's threads' /proc schedstat and context-switch counts; a
// thread that exits between the listing and the read is left out.
func costOf(pid int) procCost {
	var c procCost
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*"))
	for _, t := range tasks {
		if b, err := os.ReadFile(filepath.Join(t, "schedstat")); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				c.cpuNS += ns
			}
		}
		b, err := os.ReadFile(filepath.Join(t, "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				c.switches += n
			}
		}
	}
	return c
}
