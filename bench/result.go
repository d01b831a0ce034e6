package bench

import (
	"sync"
	"sync/atomic"
	"time"
)

// Measure collects what a phase did; safe for concurrent use.
type Measure struct {
	bytes, ops atomic.Int64
	mu         sync.Mutex
	lat        []time.Duration
	notes      []string
	progress   progress
}

// Add counts n bytes moved and ops operations done.
func (m *Measure) Add(bytes, ops int64) {
	m.bytes.Add(bytes)
	m.ops.Add(ops)
	m.progress.add(bytes, ops)
}

// Latencies merges a worker's latency samples.
func (m *Measure) Latencies(l []time.Duration) {
	m.mu.Lock()
	m.lat = append(m.lat, l...)
	m.mu.Unlock()
}

// Note records a remark for the result (once per distinct text).
func (m *Measure) Note(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range m.notes {
		if n == s {
			return
		}
	}
	m.notes = append(m.notes, s)
}

// Result is one phase on one target: a line of the table, an object of
// --json, a row of --csv.
type Result struct {
	Workload         string             `json:"workload"`
	Server           string             `json:"server"`
	File             string             `json:"file,omitempty"`
	Op               string             `json:"op"`
	Cached           *bool              `json:"cached,omitempty"`
	Bytes            int64              `json:"bytes"`
	WireBytes        int64              `json:"wire_bytes"`
	Ops              int64              `json:"ops"`
	Seconds          float64            `json:"seconds"`
	MBPerSec         float64            `json:"mb_per_sec"`
	OpsPerSec        float64            `json:"ops_per_sec"`
	ClientCPUSeconds float64            `json:"client_cpu_seconds"`
	ClientCPUPercent float64            `json:"client_cpu_percent"`
	LatencyUS        map[string]float64 `json:"latency_us,omitempty"`
	ServerCPUSeconds *float64           `json:"server_cpu_seconds,omitempty"`
	ServerCPUPerGiB  *float64           `json:"server_cpu_seconds_per_gib,omitempty"`
	ServerCPUPerOpUS *float64           `json:"server_cpu_us_per_op,omitempty"`
	// DataServers are the bytes and ops this client sent straight to
	// each pNFS data server in the phase; MDSFallbacks the READs and
	// WRITEs that went through the MDS instead (no layout, a failed
	// data server).
	DataServers  []DSResult `json:"data_servers,omitempty"`
	MDSFallbacks uint64     `json:"mds_fallbacks,omitempty"`
	Note         string     `json:"note,omitempty"`
	Error        string     `json:"error,omitempty"`
	// Tags are the caller's labels of the run (nfsbench --tag K=V), for
	// nfsbench summarize to group by: a repetition, a flag's value.
	Tags map[string]string `json:"tags,omitempty"`
}

func (r *Result) fill(m *Measure, cpu, srv0, srv1 float64) {
	r.Bytes, r.Ops = m.bytes.Load(), m.ops.Load()
	r.ClientCPUSeconds = cpu
	if r.Seconds > 0 {
		r.MBPerSec = float64(r.Bytes) / 1e6 / r.Seconds
		r.OpsPerSec = float64(r.Ops) / r.Seconds
		r.ClientCPUPercent = 100 * cpu / r.Seconds
	}
	r.LatencyUS = percentiles(m.lat)
	for i, n := range m.notes {
		if i > 0 {
			r.Note += "; "
		}
		r.Note += n
	}
	if srv0 < 0 || srv1 < 0 {
		return
	}
	s := srv1 - srv0
	r.ServerCPUSeconds = &s
	if r.Bytes > 0 {
		v := s / (float64(r.Bytes) / (1 << 30))
		r.ServerCPUPerGiB = &v
	}
	if r.Ops > 0 {
		v := s / float64(r.Ops) * 1e6
		r.ServerCPUPerOpUS = &v
	}
}
