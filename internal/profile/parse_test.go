package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// A synthetic CPU profile: main→handle→json.Marshal (inlined encode)
// 30 ms, main→handle 10 ms, and a recursive walk→walk 20 ms.
func syntheticProfile(t *testing.T) []byte {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	mainF, handle, marshal, encode, walk := fn(1, "main.main"), fn(2, "sbi.handle"), fn(3, "json.Marshal"), fn(4, "json.encode"), fn(5, "tree.walk")
	loc := func(id uint64, fs ...*profile.Function) *profile.Location {
		l := &profile.Location{ID: id}
		for _, f := range fs {
			l.Line = append(l.Line, profile.Line{Function: f})
		}
		return l
	}
	lMain, lHandle, lMarshal, lWalk := loc(1, mainF), loc(2, handle), loc(3, encode, marshal), loc(4, walk)
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{lMarshal, lHandle, lMain}, Value: []int64{3, 30e6}},
			{Location: []*profile.Location{lHandle, lMain}, Value: []int64{1, 10e6}},
			{Location: []*profile.Location{lWalk, lWalk, lMain}, Value: []int64{2, 20e6}},
		},
		Location:   []*profile.Location{lMain, lHandle, lMarshal, lWalk},
		Function:   []*profile.Function{mainF, handle, marshal, encode, walk},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10e6,
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadCPUProfileFlatAndCumulative(t *testing.T) {
	cp, err := ReadCPUProfile(bytes.NewReader(syntheticProfile(t)), 3)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Seconds != 0.06 {
		t.Errorf("total %v s, want 0.06", cp.Seconds)
	}
	// Flat: the innermost frame, inlined encode counted, not Marshal.
	wantFlat := []string{"json.encode", "tree.walk", "sbi.handle"}
	// Cumulative: main in all, handle 40 ms, then Marshal and encode 30
	// (tied, by name); recursion counts walk once per sample.
	wantCum := []string{"main.main", "sbi.handle", "json.Marshal"}
	for i, c := range cp.Flat {
		if c.Function != wantFlat[i] {
			t.Errorf("flat[%d] = %s, want %s", i, c.Function, wantFlat[i])
		}
	}
	for i, c := range cp.Cum {
		if c.Function != wantCum[i] {
			t.Errorf("cum[%d] = %s, want %s", i, c.Function, wantCum[i])
		}
	}
	if cp.Cum[0].Percent != 100 || cp.Flat[0].Seconds != 0.03 {
		t.Errorf("main %.1f%%, encode flat %v s: want 100%%, 0.03", cp.Cum[0].Percent, cp.Flat[0].Seconds)
	}
	full, _ := ReadCPUProfile(bytes.NewReader(syntheticProfile(t)), 10)
	for _, c := range full.Cum {
		if c.Function == "tree.walk" && c.Seconds != 0.02 {
			t.Errorf("recursive walk cum %v s, want 0.02 (counted once per sample)", c.Seconds)
		}
	}
}

func TestReadCPUProfileRefusesOtherProfiles(t *testing.T) {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCPUProfile(&b, 10); err == nil {
		t.Fatal("a heap profile read as a CPU profile")
	}
	if _, err := ReadCPUProfile(strings.NewReader("not a profile"), 10); err == nil {
		t.Fatal("garbage read as a profile")
	}
}

// Output of `strace -c -f -p PID -o FILE` on an NF, errors column blank
// on most lines.
const straceOutput = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.20    0.428382          12     35027      4120 futex
 20.10    0.140000           7     20000           nanosleep
 10.00    0.070000           3     21000           write
  8.70    0.060900           3     20300       300 read
------ ----------- ----------- --------- --------- ----------------
100.00    0.699282           7     96327      4420 total
`

func TestParseStrace(t *testing.T) {
	got, err := ParseStrace(strings.NewReader(straceOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"futex": 35027, "nanosleep": 20000, "write": 21000, "read": 20300}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d calls, want %d", k, got[k], v)
		}
	}
	if _, err := ParseStrace(strings.NewReader("strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n")); err == nil {
		t.Error("an error message parsed as a table")
	}
}

// Output of `perf stat -x , -e raw_syscalls:sys_enter,syscalls:sys_enter_write,... -p PID -o FILE`.
const perfStatOutput = `# started on Tue Nov 24 07:50:00 2026

1304000,,raw_syscalls:sys_enter,265637281,100.00,,
651387,,syscalls:sys_enter_write,265637281,100.00,,
0,,syscalls:sys_enter_open,265637281,100.00,,
<not counted>,,syscalls:sys_enter_close,0,100.00,,
1200,,syscalls:sys_enter_futex,265637281,100.00,,
651380,,syscalls:sys_enter_read,265637281,100.00,,
`

func TestParsePerfStat(t *testing.T) {
	got, err := ParsePerfStat(strings.NewReader(perfStatOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"write": 651387, "futex": 1200, "read": 651380, "other": 33}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d", k, got[k], v)
		}
	}
	if _, err := ParsePerfStat(strings.NewReader("# started\n")); err == nil {
		t.Error("output without counts parsed")
	}
}

// A fake /proc: CPU from stat (a name with spaces and a parenthesis),
// context switches summed over the threads, syscr/syscw from io.
func TestReadProcSumsThreads(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "42")
	write := func(rel, content string) {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", "42 (l25gc nf) x) S 1 42 42 0 -1 4194560 100 0 0 0 250 120 0 0 20 0 12 0 1000 0 0\n")
	write("task/42/status", "Name:\tl25gc\nvoluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t2\n")
	write("task/43/status", "Name:\tl25gc\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t1\n")
	write("io", "rchar: 100\nwchar: 200\nsyscr: 7\nsyscw: 9\n")
	s, err := readProcAt(root, 42)
	if err != nil {
		t.Fatal(err)
	}
	want := ProcSample{CPUTicks: 370, Voluntary: 15, Involuntary: 3, SysCR: 7, SysCW: 9}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	if s.CPUSeconds() != 3.7 {
		t.Errorf("%v CPU s, want 3.7", s.CPUSeconds())
	}
	d := s.Sub(ProcSample{CPUTicks: 70, Voluntary: 5, Involuntary: 1, SysCR: -1, SysCW: -1})
	if d.CPUTicks != 300 || d.Voluntary != 10 || d.SysCR != -1 {
		t.Errorf("difference %+v: want 300 ticks, 10 voluntary, no syscr (unknown before)", d)
	}
}

func TestReportPerProcedureAndTable(t *testing.T) {
	r := &Report{Procedure: "registration", Procedures: 2000, WallSeconds: 1, CPUSource: CPUSource, Processes: []Process{
		{Name: "udm", CPUSeconds: 0.2, Syscalls: 4000, SyscallSource: SourcePerf, TopSyscalls: []Count{{"futex", 3000}}},
		{Name: "amf", CPUSeconds: 0.6, TopFlat: []FuncCost{{"x.y", 0.1, 50}}, TopCum: []FuncCost{{"x.z", 0.2, 100}}, Profile: "amf.pprof"},
	}}
	r.finish()
	if r.Processes[0].Name != "amf" || r.Processes[0].MicrosPerProcedure != 300 {
		t.Errorf("first %s %.1f µs, want amf 300 (most costly first)", r.Processes[0].Name, r.Processes[0].MicrosPerProcedure)
	}
	if r.TotalMicrosPerProcedure != 400 || r.Processes[1].SyscallsPerProcedure != 2 {
		t.Errorf("total %.1f µs, udm %.1f syscalls/proc: want 400, 2", r.TotalMicrosPerProcedure, r.Processes[1].SyscallsPerProcedure)
	}
	var b bytes.Buffer
	r.Print(&b)
	for _, want := range []string{"futex 3000 (perf stat", "total", "amf (amf.pprof", "x.y", "x.z"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
