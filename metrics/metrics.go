// Package metrics keeps nfsd-uring's counters where the data path can bump
// them for a few nanoseconds: counters are sharded (by connection for the
// protocol layer, by event loop for the rings), each shard on its own cache
// lines, so requests on different connections or loops never write the
// same line. Nothing is summed until a scrape asks (see Set.Snapshot); the
// Prometheus side lives in metrics/prom, so this package needs only the
// standard library and the protocol and engine packages can import it.
package metrics

import (
	"math/bits"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// NumOps bounds operation numbers: NFSv4.2's last is 75 (REMOVEXATTR).
// Anything else (OP_ILLEGAL, unknown numbers) is counted under IllegalOp.
const (
	NumOps    = 76
	IllegalOp = 1 // no NFSv4 operation has number 1
)

// Latency histogram buckets: bucket i counts latencies up to 1024<<i ns
// (about 1 µs, 2 µs, ... 1.07 s); the last bucket is everything longer.
const NumBuckets = 22

// BucketBound is the upper bound of bucket i in seconds (i < NumBuckets-1).
func BucketBound(i int) float64 { return float64(int64(1024)<<i) / 1e9 }

func bucketOf(ns int64) int {
	if ns <= 0 {
		return 0
	}
	return min(bits.Len64(uint64(ns-1)>>10), NumBuckets-1)
}

var base = time.Now()

// Now is a monotonic clock in nanoseconds for latencies. It reads only the
// monotonic clock (time.Since takes that shortcut), half the cost of
// time.Now, which also reads the wall clock.
func Now() int64 { return int64(time.Since(base)) }

// Counter indexes the per-shard counters.
type Counter int

// Per-shard counters.
const (
	BytesRead          Counter = iota // file data sent in READ and READ_PLUS replies
	BytesWritten                      // file data written by WRITE
	ReadPlusData                      // READ_PLUS DATA segments sent
	ReadPlusHole                      // READ_PLUS HOLE segments sent
	ReadPlusHoleSkip                  // bytes a HOLE segment saved sending
	ReadPlusExtentHits                // READ_PLUS replies planned from the extent cache alone (no lseek)
	ReadPlusLseeks                    // lseeks (SEEK_DATA, SEEK_HOLE) READ_PLUS made
	ReadsDirect                       // file reads done with O_DIRECT
	ReadsBuffered                     // file reads done through the page cache
	WritesDirect                      // writes (or parts of split ones) done with O_DIRECT
	WritesBuffered                    // plain buffered writes (or parts)
	WritesDontcache                   // buffered writes with RWF_DONTCACHE
	NumCounters
)

// opStats is one operation's counts on one shard. A timed result lands in
// a bucket, so the buckets also count the operations: two atomic adds per
// timed operation, one per untimed one.
type opStats struct {
	untimed atomic.Uint64 // results not timed (Shard.Count)
	sum     atomic.Uint64 // nanoseconds
	buckets [NumBuckets]atomic.Uint64
}

// Shard is one cache-line-separated set of counters. Any goroutine may
// update it (the adds are atomic), but only the connections that hash to
// it do, so in practice the lines stay with one core.
type Shard struct {
	_        [64]byte
	ops      [NumOps]opStats
	counters [NumCounters]atomic.Uint64
	mu       sync.Mutex // guards errs: failures are off the hot path
	errs     map[opStatus]uint64
	_        [64]byte
}

type opStatus struct{ op, status uint32 }

// Op counts one result of operation op with status st that took ns
// nanoseconds.
func (sh *Shard) Op(op, st uint32, ns int64) {
	if op >= NumOps {
		op = IllegalOp
	}
	o := &sh.ops[op]
	o.buckets[bucketOf(ns)].Add(1)
	if ns > 0 {
		o.sum.Add(uint64(ns))
	}
	if st != 0 {
		sh.countError(op, st)
	}
}

// Count counts one result of operation op with status st, not timed.
func (sh *Shard) Count(op, st uint32) {
	if op >= NumOps {
		op = IllegalOp
	}
	sh.ops[op].untimed.Add(1)
	if st != 0 {
		sh.countError(op, st)
	}
}

func (sh *Shard) countError(op, st uint32) {
	sh.mu.Lock()
	if sh.errs == nil {
		sh.errs = make(map[opStatus]uint64)
	}
	sh.errs[opStatus{op, st}]++
	sh.mu.Unlock()
}

// Add adds n to counter c.
func (sh *Shard) Add(c Counter, n uint64) { sh.counters[c].Add(n) }

// Loop holds one event loop's ring counters. Only the loop's goroutine
// writes them, so an update is a plain load and store (atomic only so that
// a scrape may read them).
type Loop struct {
	_           [64]byte
	Submissions Single // SQEs handed to the kernel
	Completions Single // CQEs reaped
	CQOverflows Single // the kernel's count of CQEs it could not post
	// File reads by the loop, added to the ReadsDirect and ReadsBuffered
	// counters of a Snapshot.
	ReadsDirect, ReadsBuffered Single
	_                          [64]byte
}

// Single is a counter with one writer.
type Single struct{ v atomic.Uint64 }

// Add adds n; only the owning goroutine may call it.
func (c *Single) Add(n uint64) { c.v.Store(c.v.Load() + n) }

// Set stores n; only the owning goroutine may call it.
func (c *Single) Set(n uint64) { c.v.Store(n) }

// Load reads the counter; any goroutine may call it.
func (c *Single) Load() uint64 { return c.v.Load() }

// Gauge is a value read at scrape time.
type Gauge struct {
	Name, Help string
	Value      func() float64
}

// Set is all of a server's counters.
type Set struct {
	shards []Shard
	mask   uint64

	rejected [NumCauses]atomic.Uint64

	mu     sync.Mutex
	loops  []*Loop
	gauges []Gauge

	procTab procCounts // CountProc (procs.go)
}

// Cause is why a connection or record was refused by a limit.
type Cause int

// Causes of refusals.
const (
	MaxConns      Cause = iota // connection over --max-conns
	RecordTooBig               // record mark over the largest record
	PartialBudget              // partial records over --max-partial-bytes
	IdleTimeout                // connection idle too long
	RecordTimeout              // record not completed in time
	NumCauses
)

// CauseNames label the causes.
var CauseNames = [NumCauses]string{"max-conns", "record-too-big", "partial-budget", "idle-timeout", "record-timeout"}

// NumShards is how many shards a Set has: enough that the connections of a
// busy server rarely share one. 64 shards of ~14 KiB: under 1 MiB.
const NumShards = 64

// New returns an empty Set.
func New() *Set {
	return &Set{shards: make([]Shard, NumShards), mask: NumShards - 1}
}

// Shard returns the shard for key (a connection id).
func (s *Set) Shard(key uint64) *Shard { return &s.shards[key&s.mask] }

// NewLoop registers the counters of one event loop.
func (s *Set) NewLoop() *Loop {
	l := &Loop{}
	s.mu.Lock()
	s.loops = append(s.loops, l)
	s.mu.Unlock()
	return l
}

// AddGauge registers a value read at every scrape. A gauge registered
// again under the same name replaces the earlier one (a server restarted
// in one process, as tests do).
func (s *Set) AddGauge(g Gauge) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.gauges {
		if s.gauges[i].Name == g.Name {
			s.gauges[i] = g
			return
		}
	}
	s.gauges = append(s.gauges, g)
}

// Reject counts a connection or record refused by a limit; a nil Set
// counts nothing. One atomic add, no lock: refusals come in floods.
func (s *Set) Reject(c Cause) {
	if s != nil {
		s.rejected[c].Add(1)
	}
}

// OpCount is one operation's totals in a Snapshot.
type OpCount struct {
	OK      uint64            // results NFS4_OK
	Errors  map[uint32]uint64 // other results, by status
	Timed   uint64            // results in Buckets
	Sum     float64           // seconds
	Buckets [NumBuckets]uint64
}

// Snapshot is the sum of all shards at one moment.
type Snapshot struct {
	Ops      [NumOps]OpCount
	Counters [NumCounters]uint64
	Loops    []LoopCount
	Gauges   []GaugeValue
	Rejected [NumCauses]uint64
}

// LoopCount is one loop's ring counters in a Snapshot.
type LoopCount struct{ Submissions, Completions, CQOverflows uint64 }

// GaugeValue is a gauge read for a Snapshot.
type GaugeValue struct {
	Name, Help string
	Value      float64
}

// Snapshot sums the shards. Counters keep moving while it reads, so the
// result is a little blurred in time, never torn within one counter.
func (s *Set) Snapshot() *Snapshot {
	snap := &Snapshot{}
	for i := range s.shards {
		sh := &s.shards[i]
		for op := range sh.ops {
			o, d := &sh.ops[op], &snap.Ops[op]
			d.Sum += float64(o.sum.Load()) / 1e9
			d.OK += o.untimed.Load()
			for b := range o.buckets {
				d.Buckets[b] += o.buckets[b].Load()
			}
		}
		for c := range sh.counters {
			snap.Counters[c] += sh.counters[c].Load()
		}
		sh.mu.Lock()
		for k, n := range sh.errs {
			d := &snap.Ops[k.op]
			if d.Errors == nil {
				d.Errors = map[uint32]uint64{}
			}
			d.Errors[k.status] += n
		}
		sh.mu.Unlock()
	}
	s.mu.Lock()
	loops := append([]*Loop(nil), s.loops...)
	gauges := append([]Gauge(nil), s.gauges...)
	s.mu.Unlock()
	for c := range s.rejected {
		snap.Rejected[c] = s.rejected[c].Load()
	}
	for _, l := range loops {
		snap.Loops = append(snap.Loops, LoopCount{l.Submissions.Load(), l.Completions.Load(), l.CQOverflows.Load()})
		snap.Counters[ReadsDirect] += l.ReadsDirect.Load()
		snap.Counters[ReadsBuffered] += l.ReadsBuffered.Load()
	}
	for _, g := range gauges {
		snap.Gauges = append(snap.Gauges, GaugeValue{g.Name, g.Help, g.Value()})
	}
	for op := range snap.Ops {
		d := &snap.Ops[op]
		for _, n := range d.Buckets {
			d.Timed += n
		}
		d.OK += d.Timed
		for _, n := range d.Errors {
			d.OK -= min(n, d.OK) // a scrape may see an error before its bucket
		}
	}
	sort.Slice(snap.Gauges, func(i, j int) bool { return snap.Gauges[i].Name < snap.Gauges[j].Name })
	return snap
}
