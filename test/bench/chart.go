package bench

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteCharts writes, next to the JSON file at jsonPath, one SVG chart per
// procedure in results (out.json → out-registration.svg, …): latency p50
// (solid) and p99 (dashed) in ms against the number of UEs, one colour per
// SBI mode. It returns the files written.
func WriteCharts(jsonPath string, results []Result) ([]string, error) {
	base := strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath))
	var paths []string
	for _, procedure := range procedures(results) {
		p, err := latencyChart(procedure, results)
		if err != nil {
			return paths, err
		}
		path := base + "-" + procedure + ".svg"
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return paths, fmt.Errorf("chart %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// procedures lists the procedures of results in first-seen order.
func procedures(results []Result) []string {
	var out []string
	for _, r := range results {
		if !slices.Contains(out, r.Procedure) {
			out = append(out, r.Procedure)
		}
	}
	return out
}

// series are the points of one SBI mode: UEs against p50 and p99.
type series struct {
	mode     string
	p50, p99 plotter.XYs
}

// modeSeries groups one procedure's results by SBI mode, sorted by UEs;
// a count with no success has no latency and no point.
func modeSeries(procedure string, results []Result) []series {
	var out []series
	for _, r := range results {
		if r.Procedure != procedure || r.Succeeded == 0 {
			continue
		}
		i := slices.IndexFunc(out, func(s series) bool { return s.mode == r.SBI })
		if i < 0 {
			out = append(out, series{mode: r.SBI})
			i = len(out) - 1
		}
		out[i].p50 = append(out[i].p50, plotter.XY{X: float64(r.UEs), Y: r.LatencyMS.P50})
		out[i].p99 = append(out[i].p99, plotter.XY{X: float64(r.UEs), Y: r.LatencyMS.P99})
	}
	for _, s := range out {
		sort.Slice(s.p50, func(a, b int) bool { return s.p50[a].X < s.p50[b].X })
		sort.Slice(s.p99, func(a, b int) bool { return s.p99[a].X < s.p99[b].X })
	}
	return out
}

func latencyChart(procedure string, results []Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = procedure + " latency by SBI mode (solid p50, dashed p99)"
	p.X.Label.Text = "UEs"
	p.Y.Label.Text = "latency (ms)"
	// Latency grows with the UEs: the top left is where the lines are not.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), vg.Points(-5)
	p.Add(plotter.NewGrid())
	all := modeSeries(procedure, results)
	if spansDecades(all) {
		// UE counts like 1, 64, 1000, 10000 read on a log axis.
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range all {
		c := plotutil.Color(i)
		for _, line := range []struct {
			name string
			xys  plotter.XYs
			dash []vg.Length
		}{{s.mode + " p50", s.p50, nil}, {s.mode + " p99", s.p99, []vg.Length{vg.Points(4), vg.Points(3)}}} {
			l, pts, err := plotter.NewLinePoints(line.xys)
			if err != nil {
				return nil, fmt.Errorf("chart %s, %s: %w", procedure, line.name, err)
			}
			l.Color, l.Dashes = c, line.dash
			pts.Color, pts.Shape = c, draw.CircleGlyph{}
			p.Add(l, pts)
			p.Legend.Add(line.name, l, pts)
		}
	}
	p.Y.Min = 0
	return p, nil
}

// spansDecades says whether the UE counts cover at least a factor of ten.
func spansDecades(all []series) bool {
	lo, hi := 0.0, 0.0
	for _, s := range all {
		for _, xy := range s.p50 {
			if lo == 0 || xy.X < lo {
				lo = xy.X
			}
			hi = max(hi, xy.X)
		}
	}
	return lo > 0 && hi/lo >= 10
}
