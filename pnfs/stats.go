package pnfs

import (
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// serverStats are one data server's counters.
type serverStats struct {
	calls, errors   atomic.Uint64 // calls made to it, and those that failed
	read, written   atomic.Uint64 // bytes the metadata server read and wrote (proxied I/O)
	reported        atomic.Uint64 // Failed calls (client error reports)
	downs, connects atomic.Uint64 // times it left service; sessions made
}

// ServerStats is one data server's health and counters.
type ServerStats struct {
	ID             nfs.DeviceID
	Server         string // HOST:PORT/PATH
	InService      bool
	Since          time.Time // when InService last changed
	Reason         string    // why it is out of service
	Calls, Errors  uint64
	BytesRead      uint64
	BytesWritten   uint64
	Reported       uint64 // failures clients reported (Failed)
	Downs          uint64 // times it left service
	Connects       uint64 // sessions made
	PendingRepairs int    // fences and removals waiting for it
	StaleFiles     int    // mirrors that missed writes (need resilvering)
}

// Stats returns every data server's health and counters.
func (p *Pool) Stats() []ServerStats {
	out := make([]ServerStats, len(p.servers))
	for i, s := range p.servers {
		s.mu.Lock()
		out[i] = ServerStats{ID: s.id, Server: s.cfg.String(), InService: s.inService, Since: s.since, Reason: s.reason,
			PendingRepairs: len(s.pending), StaleFiles: len(s.stale)}
		s.mu.Unlock()
		st := &s.stats
		out[i].Calls, out[i].Errors = st.calls.Load(), st.errors.Load()
		out[i].BytesRead, out[i].BytesWritten = st.read.Load(), st.written.Load()
		out[i].Reported, out[i].Downs, out[i].Connects = st.reported.Load(), st.downs.Load(), st.connects.Load()
	}
	return out
}

// registerGauges exports the pool's totals (metrics.Set gauges carry no
// labels; per-server figures are in Stats).
func (p *Pool) registerGauges(set *metrics.Set) {
	if set == nil {
		return
	}
	sum := func(f func(ServerStats) uint64) func() float64 {
		return func() float64 {
			var n uint64
			for _, s := range p.Stats() {
				n += f(s)
			}
			return float64(n)
		}
	}
	for _, g := range []metrics.Gauge{
		{Name: "pnfs_data_servers", Help: "data servers configured", Value: func() float64 { return float64(len(p.servers)) }},
		{Name: "pnfs_data_servers_in_service", Help: "data servers in service (named in new layouts)", Value: func() float64 { return float64(len(p.Devices())) }},
		{Name: "pnfs_ds_calls", Help: "calls the metadata server made to data servers", Value: sum(func(s ServerStats) uint64 { return s.Calls })},
		{Name: "pnfs_ds_call_errors", Help: "calls to data servers that failed", Value: sum(func(s ServerStats) uint64 { return s.Errors })},
		{Name: "pnfs_ds_read_bytes", Help: "bytes the metadata server read from data servers (proxied READ)", Value: sum(func(s ServerStats) uint64 { return s.BytesRead })},
		{Name: "pnfs_ds_written_bytes", Help: "bytes the metadata server wrote to data servers (proxied WRITE)", Value: sum(func(s ServerStats) uint64 { return s.BytesWritten })},
		{Name: "pnfs_ds_reported_failures", Help: "data server errors clients reported (LAYOUTERROR, LAYOUTRETURN)", Value: sum(func(s ServerStats) uint64 { return s.Reported })},
		{Name: "pnfs_ds_out_of_service_events", Help: "times a data server left service", Value: sum(func(s ServerStats) uint64 { return s.Downs })},
		{Name: "pnfs_ds_stale_files", Help: "mirror data files that missed writes while their server was out of reach (need resilvering)", Value: sum(func(s ServerStats) uint64 { return uint64(s.StaleFiles) })},
		{Name: "pnfs_ds_resilvered_files", Help: "stale mirrors copied over from a good one", Value: func() float64 { return float64(p.rsvFiles.Load()) }},
		{Name: "pnfs_ds_resilvered_bytes", Help: "bytes copied onto stale mirrors", Value: func() float64 { return float64(p.rsvBytes.Load()) }},
	} {
		set.AddGauge(g)
	}
}
