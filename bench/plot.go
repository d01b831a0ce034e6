package bench

import (
	"fmt"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot draws readmatrix MB/s as grouped bars: per file, one bar per
// server, op (READ, READ_PLUS) and cache mode, as PNG.
func Plot(w io.Writer, results []*Result) error {
	var files, series []string
	val := map[string]map[string]float64{}
	for _, r := range results {
		if r.Workload != "readmatrix" {
			continue
		}
		if !slices.Contains(files, r.File) {
			files = append(files, r.File)
		}
		s := fmt.Sprintf("%s %s %s", r.Server, r.Op, cacheString(r.Cached))
		if !slices.Contains(series, s) {
			series = append(series, s)
			val[s] = map[string]float64{}
		}
		if r.Error == "" {
			val[s][r.File] = r.MBPerSec
		}
	}
	if len(files) == 0 {
		return fmt.Errorf("plot: no readmatrix results")
	}
	p := plot.New()
	p.Title.Text = "nfsbench readmatrix: sequential read throughput"
	p.Y.Label.Text = "MB/s"
	width := vg.Points(float64(min(14, 60/len(series))))
	for i, s := range series {
		v := make(plotter.Values, len(files))
		for j, f := range files {
			v[j] = val[s][f]
		}
		bars, err := plotter.NewBarChart(v, width)
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(i)-float64(len(series)-1)/2)
		p.Add(bars)
		p.Legend.Add(s, bars)
	}
	p.Legend.Top = true
	p.NominalX(files...)
	wt, err := p.WriterTo(vg.Length(max(8, 0.12*float64(len(files)*len(series))))*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
