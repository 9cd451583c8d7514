package profile

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/google/pprof/profile"
)

// FuncCost is one function's CPU time in a profile.
type FuncCost struct {
	Function string  `json:"function"`
	Seconds  float64 `json:"seconds"`
	Percent  float64 `json:"percent"` // of the profile's total
}

// CPUProfile is what the report keeps of a pprof CPU profile.
type CPUProfile struct {
	Seconds float64 // CPU time sampled
	// Flat is CPU spent in the function itself, Cum in it and what it
	// called; each the top n, largest first.
	Flat, Cum []FuncCost
}

// ReadCPUProfile parses a pprof CPU profile and keeps its top n functions
// by flat and by cumulative time.
func ReadCPUProfile(r io.Reader, n int) (CPUProfile, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return CPUProfile{}, err
	}
	idx, err := cpuIndex(p)
	if err != nil {
		return CPUProfile{}, err
	}
	flat, cum := map[string]int64{}, map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		names := sampleFunctions(s)
		if len(names) > 0 {
			flat[names[0]] += v
		}
		seen := map[string]bool{}
		for _, fn := range names {
			if !seen[fn] {
				seen[fn] = true
				cum[fn] += v
			}
		}
	}
	scale := nanosPerUnit(p.SampleType[idx].Unit)
	return CPUProfile{Seconds: float64(total) * scale / 1e9,
		Flat: top(flat, total, scale, n), Cum: top(cum, total, scale, n)}, nil
}

// cpuIndex finds the sample value that is CPU time.
func cpuIndex(p *profile.Profile) (int, error) {
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			return i, nil
		}
	}
	if len(p.SampleType) == 0 {
		return 0, errors.New("profile has no sample types")
	}
	return 0, fmt.Errorf("not a CPU profile (sample types %v)", p.SampleType)
}

func nanosPerUnit(unit string) float64 {
	switch unit {
	case "microseconds":
		return 1e3
	case "milliseconds":
		return 1e6
	case "seconds":
		return 1e9
	}
	return 1 // nanoseconds, Go's unit
}

// sampleFunctions lists a sample's stack, innermost first, inlined
// functions included (a Location's first Line is the innermost).
func sampleFunctions(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		if len(loc.Line) == 0 {
			out = append(out, fmt.Sprintf("0x%x", loc.Address))
			continue
		}
		for _, l := range loc.Line {
			if l.Function != nil {
				out = append(out, l.Function.Name)
			}
		}
	}
	return out
}

func top(m map[string]int64, total int64, scale float64, n int) []FuncCost {
	out := make([]FuncCost, 0, len(m))
	for fn, v := range m {
		c := FuncCost{Function: fn, Seconds: float64(v) * scale / 1e9}
		if total > 0 {
			c.Percent = 100 * float64(v) / float64(total)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return out[i].Function < out[j].Function
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
