// Command render draws docs/metrics.png: the panels of
// contrib/grafana/nfsd-uring.json, computed from a series of /metrics
// scrapes (contrib/grafana/collect.sh) the way Grafana's queries would
// (rates between scrapes, histogram_quantile over bucket rates), drawn
// with gonum/plot. There is no Grafana here; the dashboard JSON and this
// rendering show the same queries.
//
//	go run ./contrib/grafana/render SCRAPE_DIR docs/metrics.png
package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// scrape is one /metrics text at time t (seconds since the first).
type scrape struct {
	t   float64
	fam map[string]*dto.MetricFamily
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: render SCRAPE_DIR OUT.png")
		os.Exit(2)
	}
	ss, err := load(os.Args[1])
	if err == nil {
		err = draw9(ss, os.Args[2])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func load(dir string) ([]scrape, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.prom"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var ss []scrape
	var t0 float64
	for i, n := range names {
		ms, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(n), ".prom"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: name is not unix milliseconds", n)
		}
		f, err := os.Open(n)
		if err != nil {
			return nil, err
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fam, err := p.TextToMetricFamilies(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		t := float64(ms) / 1000
		if i == 0 {
			t0 = t
		}
		ss = append(ss, scrape{t - t0, fam})
	}
	if len(ss) < 3 {
		return nil, fmt.Errorf("%s: %d scrapes, want at least 3", dir, len(ss))
	}
	return ss, nil
}

// value sums the samples of name whose labels include want (a counter or
// gauge), or returns the cumulative count of bucket le for a histogram
// when le >= 0... kept apart in bucket().
func value(s scrape, name string, want map[string]string) float64 {
	f := s.fam[name]
	if f == nil {
		return 0
	}
	var v float64
	for _, m := range f.Metric {
		if !match(m, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Untyped != nil:
			v += m.Untyped.GetValue()
		}
	}
	return v
}

func match(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if w, ok := want[l.GetName()]; ok {
			if w != l.GetValue() && !(strings.HasPrefix(w, "!") && w[1:] != l.GetValue()) {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// labelValues lists the values label takes in name's series, over all
// scrapes.
func labelValues(ss []scrape, name, label string) []string {
	seen := map[string]bool{}
	for _, s := range ss {
		if f := s.fam[name]; f != nil {
			for _, m := range f.Metric {
				for _, l := range m.Label {
					if l.GetName() == label {
						seen[l.GetValue()] = true
					}
				}
			}
		}
	}
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// rate is rate(name{want}) between consecutive scrapes, times scale.
func rate(ss []scrape, name string, want map[string]string, scale float64) plotter.XYs {
	var xy plotter.XYs
	for i := 1; i < len(ss); i++ {
		dt := ss[i].t - ss[i-1].t
		d := value(ss[i], name, want) - value(ss[i-1], name, want)
		xy = append(xy, plotter.XY{X: ss[i].t, Y: max(d, 0) / dt * scale})
	}
	return xy
}

func gauge(ss []scrape, name string, scale float64) plotter.XYs {
	var xy plotter.XYs
	for _, s := range ss {
		xy = append(xy, plotter.XY{X: s.t, Y: value(s, name, nil) * scale})
	}
	return xy
}

// quantile is histogram_quantile(q, rate(name_bucket{op}[scrape interval]))
// in microseconds; intervals with no observations are left out.
func quantile(ss []scrape, name, op string, q float64) plotter.XYs {
	var xy plotter.XYs
	for i := 1; i < len(ss); i++ {
		a, b := buckets(ss[i-1], name, op), buckets(ss[i], name, op)
		if len(a) != len(b) || len(b) == 0 {
			continue
		}
		d := make([]bucket, len(b))
		for k := range b {
			d[k] = bucket{b[k].le, b[k].n - a[k].n}
		}
		total := d[len(d)-1].n
		if total <= 0 {
			continue
		}
		rank := q * total
		prevLe, prevN := 0.0, 0.0
		for _, bk := range d {
			if bk.n >= rank {
				le := bk.le
				if math.IsInf(le, 1) {
					le = prevLe
				}
				frac := 0.0
				if bk.n > prevN {
					frac = (rank - prevN) / (bk.n - prevN)
				}
				xy = append(xy, plotter.XY{X: ss[i].t, Y: max((prevLe+(le-prevLe)*frac)*1e6, 1)})
				break
			}
			prevLe, prevN = bk.le, bk.n
		}
	}
	return xy
}

type bucket struct{ le, n float64 }

func buckets(s scrape, name, op string) []bucket {
	f := s.fam[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		if !match(m, map[string]string{"op": op}) || m.Histogram == nil {
			continue
		}
		var out []bucket
		for _, b := range m.Histogram.Bucket {
			out = append(out, bucket{b.GetUpperBound(), float64(b.GetCumulativeCount())})
		}
		return append(out, bucket{math.Inf(1), float64(m.Histogram.GetSampleCount())})
	}
	return nil
}

// series is one line of a panel.
type series struct {
	name string
	xy   plotter.XYs
}

func panel(title, unit string, lines []series) *plot.Plot { return panelOf(title, unit, lines, false) }

// panelOf draws lines, or with points a scatter: a latency quantile exists
// only where the operation ran, and lines would cross the gaps.
func panelOf(title, unit string, lines []series, points bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = unit
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	p.Add(plotter.NewGrid())
	for i, l := range lines {
		if len(l.xy) == 0 {
			continue
		}
		if points {
			sc, err := plotter.NewScatter(l.xy)
			if err != nil {
				continue
			}
			sc.Color = plotutil.Color(i)
			sc.Shape = plotutil.Shape(i / 2)
			sc.Radius = vg.Points(2)
			p.Add(sc)
			p.Legend.Add(l.name, sc)
			continue
		}
		ln, err := plotter.NewLine(l.xy)
		if err != nil {
			continue
		}
		ln.Color = plotutil.Color(i)
		ln.Width = vg.Points(1.2)
		p.Add(ln)
		p.Legend.Add(l.name, ln)
	}
	return p
}

// topOps are the operations with the most results over the run.
func topOps(ss []scrape, n int) []string {
	last := ss[len(ss)-1]
	ops := labelValues(ss, "nfsd_uring_operations_total", "op")
	sort.Slice(ops, func(i, j int) bool {
		return value(last, "nfsd_uring_operations_total", map[string]string{"op": ops[i]}) >
			value(last, "nfsd_uring_operations_total", map[string]string{"op": ops[j]})
	})
	return ops[:min(n, len(ops))]
}

func draw9(ss []scrape, out string) error {
	var opsLines, errLines, latLines, ioLines, ringLines, stateLines []series
	for _, op := range topOps(ss, 6) {
		opsLines = append(opsLines, series{op, rate(ss, "nfsd_uring_operations_total", map[string]string{"op": op}, 1)})
	}
	for _, op := range []string{"READ", "READ_PLUS", "WRITE"} {
		latLines = append(latLines, series{op + " p50", quantile(ss, "nfsd_uring_operation_seconds", op, 0.5)})
		latLines = append(latLines, series{op + " p99", quantile(ss, "nfsd_uring_operation_seconds", op, 0.99)})
	}
	for _, st := range labelValues(ss, "nfsd_uring_operations_total", "status") {
		if st != "NFS4_OK" {
			errLines = append(errLines, series{st, rate(ss, "nfsd_uring_operations_total", map[string]string{"status": st}, 1)})
		}
	}
	if len(errLines) == 0 {
		errLines = append(errLines, series{"none", rate(ss, "nfsd_uring_operations_total", map[string]string{"status": "!NFS4_OK"}, 1)})
	}
	for _, dir := range []string{"read", "write"} {
		for _, mode := range []string{"buffered", "direct", "dontcache"} {
			xy := rate(ss, "nfsd_uring_file_io_total", map[string]string{"dir": dir, "mode": mode}, 1)
			if sumY(xy) > 0 {
				ioLines = append(ioLines, series{dir + " " + mode, xy})
			}
		}
	}
	for _, loop := range labelValues(ss, "nfsd_uring_ring_submissions_total", "loop") {
		ringLines = append(ringLines,
			series{"loop " + loop + " SQEs", rate(ss, "nfsd_uring_ring_submissions_total", map[string]string{"loop": loop}, 1)},
			series{"loop " + loop + " CQEs", rate(ss, "nfsd_uring_ring_completions_total", map[string]string{"loop": loop}, 1)})
	}
	for _, g := range []string{"connections", "clients", "sessions", "stateids"} {
		stateLines = append(stateLines, series{g, gauge(ss, "nfsd_uring_"+g, 1)})
	}
	plots := [][]*plot.Plot{
		{
			panel("Operations/s (top 6)", "ops/s", opsLines),
			logY(panelOf("Operation latency (log)", "µs", latLines, true)),
			panel("Errors/s by status", "results/s", errLines),
		},
		{
			panel("File data", "MB/s", []series{
				{"read", rate(ss, "nfsd_uring_file_bytes_total", map[string]string{"dir": "read"}, 1e-6)},
				{"written", rate(ss, "nfsd_uring_file_bytes_total", map[string]string{"dir": "write"}, 1e-6)},
				{"holes not sent (READ_PLUS)", rate(ss, "nfsd_uring_read_plus_hole_bytes_total", nil, 1e-6)},
			}),
			panel("READ_PLUS segments/s", "segments/s", []series{
				{"data", rate(ss, "nfsd_uring_read_plus_segments_total", map[string]string{"type": "data"}, 1)},
				{"hole", rate(ss, "nfsd_uring_read_plus_segments_total", map[string]string{"type": "hole"}, 1)},
			}),
			panel("File I/O by mode", "I/Os per s", ioLines),
		},
		{
			panel("io_uring per loop", "per s", ringLines),
			panel("State", "count", stateLines),
			panel("Server memory", "MiB", []series{
				{"RSS", gauge(ss, "process_resident_memory_bytes", 1.0/(1<<20))},
				{"Go heap in use", gauge(ss, "go_memstats_heap_inuse_bytes", 1.0/(1<<20))},
			}),
		},
	}
	const w, h = 42 * vg.Centimeter, 30 * vg.Centimeter
	img := vgimg.New(w, h)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: 3, Cols: 3, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// logY puts p's values on a log scale (latencies span µs to seconds).
func logY(p *plot.Plot) *plot.Plot {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min = 1
	return p
}

func sumY(xy plotter.XYs) float64 {
	var s float64
	for _, p := range xy {
		s += p.Y
	}
	return s
}
