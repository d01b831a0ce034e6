// Package prom exports a metrics.Set to Prometheus. The counters are summed
// only when a scrape asks (a custom prometheus.Collector over
// metrics.Set.Snapshot), so the data path never touches a Prometheus type.
package prom

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

const ns = "nfsd_uring"

// Collector is a prometheus.Collector over a metrics.Set.
type Collector struct {
	set *metrics.Set

	ops, opSeconds, bytes, segs, holeBytes, fileIO  *prometheus.Desc
	extentHits, lseeks                              *prometheus.Desc
	ringSub, ringComp, ringOverflow, rejected, info *prometheus.Desc
	version, revision                               string
}

// NewCollector returns a collector for set; version and revision label the
// nfsd_uring_build_info gauge.
func NewCollector(set *metrics.Set, version, revision string) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(ns+"_"+name, help, labels, nil)
	}
	return &Collector{set: set, version: version, revision: revision,
		ops:          d("operations_total", "NFSv4 operations by name and result status", "op", "status"),
		opSeconds:    d("operation_seconds", "time to serve an NFSv4 operation, with the SEQUENCE, PUTFH and the like before it; READ and READ_PLUS until their file data is read", "op"),
		bytes:        d("file_bytes_total", "file data read (sent in READ and READ_PLUS replies) and written", "dir"),
		segs:         d("read_plus_segments_total", "READ_PLUS segments sent, by type", "type"),
		holeBytes:    d("read_plus_hole_bytes_total", "bytes not sent because READ_PLUS described them as a hole"),
		extentHits:   d("read_plus_extent_cache_hits_total", "READ_PLUS replies planned from the file's extent cache alone (no lseek)"),
		lseeks:       d("read_plus_lseeks_total", "lseeks (SEEK_DATA, SEEK_HOLE) READ_PLUS made to find data and holes"),
		fileIO:       d("file_io_total", "file reads and writes (parts of split writes counted apart) by how they were done", "dir", "mode"),
		ringSub:      d("ring_submissions_total", "SQEs submitted by an io_uring event loop", "loop"),
		ringComp:     d("ring_completions_total", "CQEs reaped by an io_uring event loop", "loop"),
		ringOverflow: d("ring_cq_overflows_total", "CQEs the kernel could not post to an event loop's full completion queue", "loop"),
		rejected:     d("rejected_total", "connections and records refused by a limit, by cause", "cause"),
		info:         d("build_info", "always 1; labels say which build runs", "version", "revision"),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.ops, c.opSeconds, c.bytes, c.segs, c.holeBytes, c.fileIO, c.extentHits, c.lseeks,
		c.ringSub, c.ringComp, c.ringOverflow, c.rejected, c.info} {
		ch <- d
	}
	// The gauges of Set.AddGauge are registered by their owners at run
	// time: this collector is "unchecked" for them.
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.set.Snapshot()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for op := range s.Ops {
		o := &s.Ops[op]
		name := opName(uint32(op))
		if name == "" {
			continue
		}
		if o.OK == 0 && len(o.Errors) == 0 {
			continue // never seen: no series
		}
		counter(c.ops, o.OK, name, "NFS4_OK")
		for st, n := range o.Errors {
			counter(c.ops, n, name, statusName(st))
		}
		if o.Timed == 0 {
			continue // SEQUENCE, PUTFH...: counted, not timed
		}
		var cum uint64
		buckets := make(map[float64]uint64, metrics.NumBuckets-1)
		for b := range metrics.NumBuckets - 1 {
			cum += o.Buckets[b]
			buckets[metrics.BucketBound(b)] = cum
		}
		ch <- prometheus.MustNewConstHistogram(c.opSeconds, o.Timed, o.Sum, buckets, name)
	}
	k := &s.Counters
	counter(c.bytes, k[metrics.BytesRead], "read")
	counter(c.bytes, k[metrics.BytesWritten], "write")
	counter(c.segs, k[metrics.ReadPlusData], "data")
	counter(c.segs, k[metrics.ReadPlusHole], "hole")
	counter(c.holeBytes, k[metrics.ReadPlusHoleSkip])
	counter(c.extentHits, k[metrics.ReadPlusExtentHits])
	counter(c.lseeks, k[metrics.ReadPlusLseeks])
	counter(c.fileIO, k[metrics.ReadsDirect], "read", "direct")
	counter(c.fileIO, k[metrics.ReadsBuffered], "read", "buffered")
	counter(c.fileIO, k[metrics.WritesDirect], "write", "direct")
	counter(c.fileIO, k[metrics.WritesBuffered], "write", "buffered")
	counter(c.fileIO, k[metrics.WritesDontcache], "write", "dontcache")
	for i, l := range s.Loops {
		loop := strconv.Itoa(i)
		counter(c.ringSub, l.Submissions, loop)
		counter(c.ringComp, l.Completions, loop)
		counter(c.ringOverflow, l.CQOverflows, loop)
	}
	for cause, n := range s.Rejected {
		counter(c.rejected, n, metrics.CauseNames[cause])
	}
	for _, g := range s.Gauges {
		d := prometheus.NewDesc(ns+"_"+g.Name, g.Help, nil, nil)
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, g.Value)
	}
	c.collectProcs(ch) // procs.go
	ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, c.version, c.revision)
}

// opName is the operation table's name for op (nfs.OpName), so metrics,
// logs and the table never disagree.
func opName(op uint32) string { return nfs.OpName(op) }

func statusName(st uint32) string {
	if n, ok := statusNames[st]; ok {
		return n
	}
	return fmt.Sprintf("NFS4ERR_%d", st)
}

// Handler returns an HTTP handler serving /metrics (the set, plus the Go
// runtime and process collectors) and, with debug, net/http/pprof under
// /debug/pprof/.
func Handler(c *Collector, debug bool) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if debug {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "nfsd-uring: metrics at /metrics")
		if debug {
			fmt.Fprintln(w, "profiles at /debug/pprof/")
		}
	})
	return mux
}
