package prom

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

var procsDesc = prometheus.NewDesc(ns+"_procedures_total",
	"RPC calls of programs other than NFSv4 COMPOUND (NFSv3, MOUNT...) by program, version, procedure and result status",
	[]string{"program", "version", "proc", "status"}, nil)

// collectProcs sends nfsd_uring_procedures_total.
func (c *Collector) collectProcs(ch chan<- prometheus.Metric) {
	for _, p := range c.set.ProcCounts() {
		proc := nfs.ProcName(p.Prog, p.Vers, p.Proc)
		if proc == "" {
			proc = strconv.Itoa(int(p.Proc))
		}
		ch <- prometheus.MustNewConstMetric(procsDesc, prometheus.CounterValue, float64(p.N),
			nfs.ProgramName(p.Prog), strconv.Itoa(int(p.Vers)), proc, p.Status)
	}
}
