package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Medians folds the repetitions of each phase on each server (results with
// the same server, workload, file, op and cache) into one result holding
// the median of every measured field over the repetitions that did not
// fail, in the order the phases first appear. A result whose repetitions
// failed carries their errors ("rep K: ..."), so that its table line says
// so and WriteRatios prints "(failed)" for it; notes are merged. Ratios of
// two such results (WriteRatios) are thus ratios of medians.
func Medians(results []*Result) []*Result {
	groups := map[string][]*Result{}
	var keys []string
	for _, r := range results {
		k := strings.Join([]string{r.Server, r.Workload, r.File, r.Op, cacheString(r.Cached)}, "\x00")
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]*Result, 0, len(keys))
	for _, k := range keys {
		out = append(out, median(groups[k]))
	}
	return out
}

// median is one phase's repetitions (rs, all of one server) as one result.
func median(rs []*Result) *Result {
	first := rs[0]
	m := &Result{Workload: first.Workload, Server: first.Server, File: first.File, Op: first.Op, Cached: first.Cached}
	var ok []*Result
	var errs, notes []string
	for i, r := range rs {
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("rep %s: %s", repName(r, i), r.Error))
		} else {
			ok = append(ok, r)
		}
		if r.Note != "" && !slices.Contains(notes, r.Note) {
			notes = append(notes, r.Note)
		}
	}
	m.Error, m.Note = strings.Join(errs, "; "), strings.Join(notes, "; ")
	if len(ok) == 0 {
		return m
	}
	of := func(f func(*Result) float64) float64 {
		v := make([]float64, len(ok))
		for i, r := range ok {
			v[i] = f(r)
		}
		return Median(v)
	}
	m.Bytes = int64(math.Round(of(func(r *Result) float64 { return float64(r.Bytes) })))
	m.WireBytes = int64(math.Round(of(func(r *Result) float64 { return float64(r.WireBytes) })))
	m.Ops = int64(math.Round(of(func(r *Result) float64 { return float64(r.Ops) })))
	m.Seconds = of(func(r *Result) float64 { return r.Seconds })
	m.MBPerSec = of(func(r *Result) float64 { return r.MBPerSec })
	m.OpsPerSec = of(func(r *Result) float64 { return r.OpsPerSec })
	m.ClientCPUSeconds = of(func(r *Result) float64 { return r.ClientCPUSeconds })
	m.ClientCPUPercent = of(func(r *Result) float64 { return r.ClientCPUPercent })
	m.ServerCPUSeconds = medianPtr(ok, func(r *Result) *float64 { return r.ServerCPUSeconds })
	m.ServerCPUPerGiB = medianPtr(ok, func(r *Result) *float64 { return r.ServerCPUPerGiB })
	m.ServerCPUPerOpUS = medianPtr(ok, func(r *Result) *float64 { return r.ServerCPUPerOpUS })
	for q := range ok[0].LatencyUS {
		var v []float64
		for _, r := range ok {
			if x, has := r.LatencyUS[q]; has {
				v = append(v, x)
			}
		}
		if len(v) > 0 {
			if m.LatencyUS == nil {
				m.LatencyUS = map[string]float64{}
			}
			m.LatencyUS[q] = Median(v)
		}
	}
	return m
}

// medianPtr is the median of an optional field; nil unless every
// repetition has it (server CPU is known for all or none).
func medianPtr(rs []*Result, f func(*Result) *float64) *float64 {
	var v []float64
	for _, r := range rs {
		p := f(r)
		if p == nil {
			return nil
		}
		v = append(v, *p)
	}
	x := Median(v)
	return &x
}

// repName is a result's rep tag, or its place among its repetitions.
func repName(r *Result, i int) string {
	if k, ok := r.Tags["rep"]; ok {
		return k
	}
	return fmt.Sprint(i + 1)
}
