package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteTable prints results as an aligned table.
func WriteTable(w io.Writer, results []*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tworkload\tfile\top\tcache\tseconds\tMB/s\tops/s\tcli CPU s\tcli CPU%\tsrv CPU s\tsrv s/GiB\tsrv µs/op\twire MB\tp50 µs\tp99 µs\tp99.9 µs\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%.1f\t%.0f\t%.2f\t%.0f\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t\n",
			r.Server, r.Workload, r.File, r.Op, cacheString(r.Cached), r.Seconds, r.MBPerSec, r.OpsPerSec,
			r.ClientCPUSeconds, r.ClientCPUPercent, opt(r.ServerCPUSeconds, 2), opt(r.ServerCPUPerGiB, 2),
			opt(r.ServerCPUPerOpUS, 1), float64(r.WireBytes)/1e6,
			lat(r, "p50"), lat(r, "p99"), lat(r, "p99.9"))
	}
	tw.Flush()
	writeDataServers(w, results)
	for _, r := range results {
		if r.Note != "" {
			fmt.Fprintf(w, "note: %s %s %s %s %s: %s\n", r.Server, r.Workload, r.File, r.Op, cacheString(r.Cached), r.Note)
		}
		if r.Error != "" {
			fmt.Fprintf(w, "ERROR: %s %s %s %s %s: %s\n", r.Server, r.Workload, r.File, r.Op, cacheString(r.Cached), r.Error)
		}
	}
}

func cacheString(c *bool) string {
	switch {
	case c == nil:
		return ""
	case *c:
		return "cached"
	}
	return "uncached"
}

func opt(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

func lat(r *Result, k string) string {
	v, ok := r.LatencyUS[k]
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// WriteJSON writes one JSON object per result, a line each.
func WriteJSON(w io.Writer, results []*Result) error {
	enc := json.NewEncoder(w)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes a header and a row per result; the last column is the
// result's rep tag (nfsbench --repeat), empty when not repeated.
func WriteCSV(w io.Writer, results []*Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"workload", "server", "file", "op", "cached", "bytes", "wire_bytes", "ops", "seconds",
		"mb_per_sec", "ops_per_sec", "client_cpu_seconds", "client_cpu_percent", "server_cpu_seconds",
		"server_cpu_seconds_per_gib", "server_cpu_us_per_op", "p50_us", "p99_us", "p99.9_us", "note", "error", "rep"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range results {
		cw.Write([]string{r.Workload, r.Server, r.File, r.Op, cacheString(r.Cached),
			strconv.FormatInt(r.Bytes, 10), strconv.FormatInt(r.WireBytes, 10), strconv.FormatInt(r.Ops, 10),
			f(r.Seconds), f(r.MBPerSec), f(r.OpsPerSec), f(r.ClientCPUSeconds), f(r.ClientCPUPercent),
			opt(r.ServerCPUSeconds, 4), opt(r.ServerCPUPerGiB, 4), opt(r.ServerCPUPerOpUS, 3),
			lat(r, "p50"), lat(r, "p99"), lat(r, "p99.9"), r.Note, r.Error, r.Tags["rep"]})
	}
	cw.Flush()
	return cw.Error()
}

// WriteRatios prints, for two servers, each phase's ratio first/second.
func WriteRatios(w io.Writer, results []*Result, a, b string) {
	pairs := map[string][2]*Result{}
	var keys []string
	for _, r := range results {
		k := r.Workload + "\t" + r.File + "\t" + r.Op + "\t" + cacheString(r.Cached)
		p, seen := pairs[k]
		if !seen {
			keys = append(keys, k)
		}
		if r.Server == a {
			p[0] = r
		} else if r.Server == b {
			p[1] = r
		}
		pairs[k] = p
	}
	fmt.Fprintf(w, "\nratios %s / %s (throughput >1: %s faster; CPU <1: %s cheaper)\n", a, b, a, a)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tfile\top\tcache\tMB/s\tops/s\tcli CPU s\tsrv s/GiB\tsrv µs/op\t")
	for _, k := range keys {
		p := pairs[k]
		if p[0] == nil || p[1] == nil {
			continue
		}
		x, y := p[0], p[1]
		if x.Error != "" || y.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\n", k, "(failed)")
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", k, ratio(x.MBPerSec, y.MBPerSec), ratio(x.OpsPerSec, y.OpsPerSec),
			ratio(x.ClientCPUSeconds, y.ClientCPUSeconds), ratioPtr(x.ServerCPUPerGiB, y.ServerCPUPerGiB), ratioPtr(x.ServerCPUPerOpUS, y.ServerCPUPerOpUS))
	}
	tw.Flush()
}

func ratio(a, b float64) string {
	if b == 0 || a == 0 {
		return "-"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "x"
}

func ratioPtr(a, b *float64) string {
	if a == nil || b == nil {
		return "-"
	}
	return ratio(*a, *b)
}
