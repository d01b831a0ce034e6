package engine

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/metrics"
)

// Defaults for the limits that keep a hostile or broken client from
// holding server memory or connections (Options).
const (
	// 6 minutes: knfsd closes TCP connections idle that long
	// (svc_conn_age_period in net/sunrpc/svc_xprt.c).
	defaultIdleTimeout   = 6 * time.Minute
	defaultRecordTimeout = 30 * time.Second
	defaultMaxConns      = 4096
	defaultMaxPartial    = 256 << 20
	defaultMaxQueued     = 8 << 20
)

// limitDefaults fills the zero limits of o; a negative timeout means never.
func (o *Options) limitDefaults() {
	if o.IdleTimeout == 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.RecordTimeout == 0 {
		o.RecordTimeout = defaultRecordTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns
	}
	if o.MaxPartialBytes <= 0 {
		o.MaxPartialBytes = defaultMaxPartial
	}
	if o.MaxQueuedBytes <= 0 {
		o.MaxQueuedBytes = defaultMaxQueued
	}
}

// sweepEvery is how often connections are checked against the timeouts:
// an eighth of the shorter one, so a connection overstays by at most
// about 12%, and never more often than every 10 ms.
func (o *Options) sweepEvery() time.Duration {
	d := time.Duration(0)
	for _, t := range []time.Duration{o.IdleTimeout, o.RecordTimeout} {
		if t > 0 && (d == 0 || t < d) {
			d = t
		}
	}
	if d == 0 {
		return 0
	}
	return min(max(d/8, 10*time.Millisecond), time.Second)
}

// timeouts holds a connection's state for the idle and partial-record
// timeouts. It is checked by a periodic sweep, not timed per event: the
// data path only sets a flag.
type timeouts struct {
	active      atomic.Bool // bytes moved since the last sweep
	lastActive  time.Time
	partialFrom time.Time // when the sweep first saw the current record partial
	seenRecords uint64    // records completed at that sweep
}

// verdict says why a connection should close at this sweep, or "".
//
//   - idle: nothing received and no reply bytes sent for IdleTimeout while
//     none of its requests is being worked on (busy), or while a send
//     makes no progress (a peer that never reads);
//   - stalled record: a record begun but not completed within
//     RecordTimeout while the engine was reading (paused: flow control
//     stopped reading, so the time is the server's, not the client's).
func (t *timeouts) verdict(now time.Time, o *Options, busy, partial, paused bool, records uint64) string {
	if t.active.Swap(false) || t.lastActive.IsZero() {
		t.lastActive = now
	}
	if o.IdleTimeout > 0 && !busy && now.Sub(t.lastActive) >= o.IdleTimeout {
		o.Metrics.Reject(metrics.IdleTimeout)
		return "idle"
	}
	switch {
	case !partial || paused || records != t.seenRecords || t.partialFrom.IsZero():
		t.seenRecords = records
		t.partialFrom = time.Time{}
		if partial && !paused {
			t.partialFrom = now
		}
	case o.RecordTimeout > 0 && now.Sub(t.partialFrom) >= o.RecordTimeout:
		o.Metrics.Reject(metrics.RecordTimeout)
		return "record not completed in time"
	}
	return ""
}

// connGate counts open connections against MaxConns. Connections over the
// cap are closed at accept; the log says so at most once per logEvery,
// with how many were refused, so a flood cannot flood the log too.
type connGate struct {
	stats   *metrics.Set
	max     int64
	open    atomic.Int64
	refused atomic.Int64
	lastLog atomic.Int64 // unix nanoseconds
}

const logEvery = 10 * time.Second

// enter takes a place for a new connection, or reports false (and logs,
// rate-limited) when the server is full.
func (g *connGate) enter(log *slog.Logger, remote string) bool {
	if g.open.Add(1) <= g.max {
		return true
	}
	g.open.Add(-1)
	g.stats.Reject(metrics.MaxConns)
	n := g.refused.Add(1)
	now := time.Now().UnixNano()
	last := g.lastLog.Load()
	if now-last >= int64(logEvery) && g.lastLog.CompareAndSwap(last, now) {
		g.refused.Add(-n)
		log.Warn("connection limit reached: closing new connections", "max-conns", g.max, "refused", n, "last", remote)
	}
	return false
}

func (g *connGate) leave() { g.open.Add(-1) }

// partialBudget bounds the memory held by records still being received,
// server-wide. Record buffers grow with the bytes received, so a client
// pays for what it has sent; past the budget the connection whose partial
// record has gone longest without growing is closed (evicted). A
// legitimate client's record keeps growing until it completes, within
// moments, so the records at the front are those of clients that send
// slowly or stopped mid-record. A record that arrives whole in one read
// is never charged: it is not held waiting for anything.
type partialBudget struct {
	max   int64
	stats *metrics.Set

	mu   sync.Mutex
	used int64
	head partialHold // sentinel of the list of holders, oldest first
}

// partialHold is one connection's claim on the budget for its record in
// progress. evict closes the connection; it is called under the budget's
// lock, so it must only post the close (never call back into the budget).
type partialHold struct {
	b          *partialBudget
	evict      func()
	bytes      int64
	prev, next *partialHold
	evicted    bool
}

func newPartialBudget(max int, stats *metrics.Set) *partialBudget {
	b := &partialBudget{max: int64(max), stats: stats}
	b.head.prev, b.head.next = &b.head, &b.head
	return b
}

func (b *partialBudget) hold(evict func()) *partialHold {
	return &partialHold{b: b, evict: evict}
}

// grow charges n more bytes for h's record, which moves to the back of
// the list of holders (it made progress). It reports false when h is
// itself the only holder left and the budget is spent: the caller then
// closes its connection. Evicted holders' bytes count as freed at once;
// their connections free the memory moments later.
func (h *partialHold) grow(n int) bool {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.evicted {
		return false
	}
	if h.next != nil { // progress: to the back of the list
		h.prev.next, h.next.prev = h.next, h.prev
	}
	h.prev, h.next = b.head.prev, &b.head
	b.head.prev.next = h
	b.head.prev = h
	for b.used+int64(n) > b.max {
		old := b.head.next
		b.stats.Reject(metrics.PartialBudget)
		if old == h {
			return false
		}
		b.unlink(old)
		old.evicted = true
		old.evict()
	}
	h.bytes += int64(n)
	b.used += int64(n)
	return true
}

// done returns h's bytes: its record completed or was dropped.
func (h *partialHold) done() {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.next != nil {
		b.unlink(h)
	}
}

func (b *partialBudget) unlink(h *partialHold) {
	h.prev.next = h.next
	h.next.prev = h.prev
	h.prev, h.next = nil, nil
	b.used -= h.bytes
	h.bytes = 0
}

// inUse reports the bytes charged now (for tests).
func (b *partialBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
