package bench

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteBatchCharts writes the experiment's figures next to jsonPath
// (out.json → out-fig3.svg, out-fig9a-<limiter>.svg, out-fig9b-<limiter>.svg):
// Fig. 3, mean and p99 completion time per limiter setting; for each run
// with a limiter trace that moved (adaptive), Fig. 9a, E_max and E_current
// over time, and Fig. 9b, completion time by event order.
func WriteBatchCharts(jsonPath string, runs []BatchRun) ([]string, error) {
	base := strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath))
	var paths []string
	save := func(p *plot.Plot, suffix string) error {
		path := base + "-" + suffix + ".svg"
		if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
			return fmt.Errorf("chart %s: %w", path, err)
		}
		paths = append(paths, path)
		return nil
	}
	p, err := fig3(runs)
	if err == nil {
		err = save(p, "fig3")
	}
	if err != nil {
		return paths, err
	}
	for _, r := range runs {
		if !isAdaptive(r.Limiter) {
			continue
		}
		name := limiterFileName(r.Limiter)
		if len(r.Trace) > 1 {
			if p, err = fig9a(r.Result); err == nil {
				err = save(p, "fig9a-"+name)
			}
		}
		if err == nil && len(r.Events) > 0 {
			if p, err = fig9b(r); err == nil {
				err = save(p, "fig9b-"+name)
			}
		}
		if err != nil {
			return paths, err
		}
	}
	return paths, nil
}

// fig3 is bars of the mean and p99 completion time per limiter setting.
func fig3(runs []BatchRun) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("PDU session establishment completion time, batches of %d", batchOf(runs))
	p.Y.Label.Text = "completion time (ms)"
	var mean, p99 plotter.Values
	var names []string
	for _, r := range runs {
		mean, p99 = append(mean, r.LatencyMS.Mean), append(p99, r.LatencyMS.P99)
		names = append(names, r.Limiter)
	}
	w := vg.Points(14)
	for i, s := range []struct {
		name string
		v    plotter.Values
	}{{"mean", mean}, {"p99", p99}} {
		b, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return nil, err
		}
		b.Color, b.LineStyle.Width = plotutil.Color(i), 0
		b.Offset = w * vg.Length(2*i-1) / 2
		p.Add(b)
		p.Legend.Add(s.name, b)
	}
	p.Legend.Top = true
	p.NominalX(names...)
	p.Add(plotter.NewGrid())
	return p, nil
}

func batchOf(runs []BatchRun) int {
	if len(runs) == 0 {
		return 0
	}
	return runs[0].UEs
}

// fig9a is E_max and E_current against time.
func fig9a(r Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "limiter " + r.Limiter + ": E_max and E_current over time"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "events"
	var emax, ecur plotter.XYs
	for _, s := range r.Trace {
		emax = append(emax, plotter.XY{X: s.AtMS / 1000, Y: s.EMax})
		ecur = append(ecur, plotter.XY{X: s.AtMS / 1000, Y: s.ECurrent})
	}
	for i, l := range []struct {
		name string
		xys  plotter.XYs
	}{{"E_max", emax}, {"E_current", ecur}} {
		line, err := plotter.NewLine(l.xys)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(i)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	p.Legend.Top = true
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	return p, nil
}

// fig9b is each event's completion time against its order.
func fig9b(r BatchRun) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "limiter " + r.Limiter + ": completion time by event order"
	p.X.Label.Text = "event"
	p.Y.Label.Text = "completion time (ms)"
	xys := make(plotter.XYs, 0, len(r.Events))
	for _, e := range r.Events {
		xys = append(xys, plotter.XY{X: float64(e.Order), Y: e.LatencyMS})
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	s.Color, s.Shape, s.Radius = plotutil.Color(0), draw.CircleGlyph{}, vg.Points(1.5)
	p.Add(s, plotter.NewGrid())
	p.Y.Min = 0
	return p, nil
}
