package profile

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Where the report's numbers come from, said in the report itself.
const (
	CPUSource      = "/proc/PID/stat utime+stime"
	SwitchesSource = "/proc/PID/task/*/status voluntary_ctxt_switches, nonvoluntary_ctxt_switches"
)

// Report is the cost of each process over a benchmark's measured run.
type Report struct {
	Procedure   string    `json:"procedure"`
	Procedures  int       `json:"procedures"` // completed in the window
	WallSeconds float64   `json:"wall_seconds"`
	CPUSource   string    `json:"cpu_source"`
	Switches    string    `json:"context_switches_source"`
	Processes   []Process `json:"processes"`
	// Total sums every process: the CPU one procedure costs the machine.
	TotalCPUSeconds         float64 `json:"total_cpu_seconds"`
	TotalMicrosPerProcedure float64 `json:"total_cpu_us_per_procedure"`
}

// Process is one process's cost in the window.
type Process struct {
	Name                 string     `json:"name"`
	PID                  int        `json:"pid"`
	CPUSeconds           float64    `json:"cpu_seconds"`
	MicrosPerProcedure   float64    `json:"cpu_us_per_procedure"`
	VoluntarySwitches    int64      `json:"voluntary_context_switches"`
	InvoluntarySwitches  int64      `json:"involuntary_context_switches"`
	Syscalls             int64      `json:"syscalls"`
	SyscallsPerProcedure float64    `json:"syscalls_per_procedure"`
	SyscallSource        string     `json:"syscall_source"`
	TopSyscalls          []Count    `json:"top_syscalls"`
	Profile              string     `json:"profile,omitempty"` // file in the profile directory
	ProfileSeconds       float64    `json:"profile_cpu_seconds,omitempty"`
	TopFlat              []FuncCost `json:"top_flat,omitempty"`
	TopCum               []FuncCost `json:"top_cum,omitempty"`
	Notes                []string   `json:"notes,omitempty"`
}

// Count is a number of calls of one system call.
type Count struct {
	Name  string `json:"name"`
	Calls int64  `json:"calls"`
}

// topCounts is the n most frequent calls and their sum.
func topCounts(m map[string]int64, n int) ([]Count, int64) {
	var all []Count
	var sum int64
	for k, v := range m {
		all = append(all, Count{k, v})
		sum += v
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Calls != all[j].Calls {
			return all[i].Calls > all[j].Calls
		}
		return all[i].Name < all[j].Name
	})
	if len(all) > n {
		all = all[:n]
	}
	return all, sum
}

// finish fills the per-procedure figures and totals, most costly first.
func (r *Report) finish() {
	sort.SliceStable(r.Processes, func(i, j int) bool { return r.Processes[i].CPUSeconds > r.Processes[j].CPUSeconds })
	r.TotalCPUSeconds = 0
	for i := range r.Processes {
		p := &r.Processes[i]
		r.TotalCPUSeconds += p.CPUSeconds
		if r.Procedures > 0 {
			p.MicrosPerProcedure = p.CPUSeconds * 1e6 / float64(r.Procedures)
			p.SyscallsPerProcedure = float64(p.Syscalls) / float64(r.Procedures)
		}
	}
	if r.Procedures > 0 {
		r.TotalMicrosPerProcedure = r.TotalCPUSeconds * 1e6 / float64(r.Procedures)
	}
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Print writes the report as tables: the cost per process, then each
// process's top functions.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "\nprofile: %d %s in %.2f s (measured run only); CPU from %s\n", r.Procedures, r.Procedure, r.WallSeconds, r.CPUSource)
	fmt.Fprintf(w, "%-10s %8s %9s %9s %9s %9s  %-s\n", "process", "CPU s", "µs/proc", "vol cs", "invol cs", "sysc/proc", "top syscalls (source)")
	for _, p := range r.Processes {
		fmt.Fprintf(w, "%-10s %8.3f %9.1f %9d %9d %9.1f  %s (%s)\n", p.Name, p.CPUSeconds, p.MicrosPerProcedure,
			p.VoluntarySwitches, p.InvoluntarySwitches, p.SyscallsPerProcedure, syscallList(p.TopSyscalls), p.SyscallSource)
	}
	fmt.Fprintf(w, "%-10s %8.3f %9.1f\n", "total", r.TotalCPUSeconds, r.TotalMicrosPerProcedure)
	for _, p := range r.Processes {
		r.printFunctions(w, p)
	}
}

func syscallList(cs []Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d", c.Name, c.Calls)
	}
	return strings.Join(parts, ", ")
}

func (r *Report) printFunctions(w io.Writer, p Process) {
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  %s: note: %s\n", p.Name, n)
	}
	if len(p.TopFlat) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s (%s, %.2f CPU s sampled): top functions\n", p.Name, p.Profile, p.ProfileSeconds)
	fmt.Fprintf(w, "  %6s %-52s %6s %s\n", "flat%", "function", "cum%", "function")
	for i := 0; i < max(len(p.TopFlat), len(p.TopCum)); i++ {
		var flat, cum FuncCost
		if i < len(p.TopFlat) {
			flat = p.TopFlat[i]
		}
		if i < len(p.TopCum) {
			cum = p.TopCum[i]
		}
		fmt.Fprintf(w, "  %5.1f%% %-52s %5.1f%% %s\n", flat.Percent, clip(flat.Function, 52), cum.Percent, cum.Function)
	}
}

// clip shortens a function name from the left, where the package path is.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return "…" + string(r[len(r)-n+1:])
	}
	return s
}
