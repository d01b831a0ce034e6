package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// opClock is what a COMPOUND keeps for counting its operations: the
// connection's shard of the server's counters and when the current
// operation began. A READ or READ_PLUS that left reads for the engine is
// timed to Complete, so its latency includes the file I/O.
type opClock struct {
	stats   *metrics.Shard
	t       int64  // metrics.Now() when the current operation began (0: not read yet)
	ioOp    uint32 // operation waiting for its reads, or 0
	ioStart int64
}

// startClock begins counting a COMPOUND from connection conn.
func (c *compound) startClock(conn *Conn) {
	var key uint64
	if conn != nil {
		key = conn.ID
	}
	c.clock = opClock{stats: c.s.stats.Shard(key), t: metrics.Now()}
}

// countOp counts the result st of op (of entry info), which ran since the
// last one ended; reads is how many reads the reply had planned before op
// ran.
func (c *compound) countOp(op uint32, info *opInfo, st nfs4.Status, reads int) {
	k := &c.clock
	if info.flags&opUntimed != 0 {
		// Counted, not timed: a clock read costs as much as the
		// operation. Its time goes to the operation after it.
		k.stats.Count(op, uint32(st))
		return
	}
	if st == nfs4.OK && len(c.rep.Reads) > reads && info.flags&opDataReply != 0 {
		// The last such operation of the compound is timed to Complete;
		// an earlier one ends now. The clock is read again only if
		// another operation follows (beginOp): a READ usually ends the
		// compound, and a clock read costs as much as a quick operation.
		if k.ioOp != 0 {
			k.stats.Op(k.ioOp, uint32(nfs4.OK), metrics.Now()-k.ioStart)
		}
		k.ioOp, k.ioStart, k.t = op, k.t, 0
		return
	}
	now := metrics.Now()
	k.stats.Op(op, uint32(st), now-k.t)
	k.t = now
}

// beginOp reads the clock for an operation that follows a READ timed to
// Complete (see countOp).
func (c *compound) beginOp() {
	if c.clock.t == 0 {
		c.clock.t = metrics.Now()
	}
}

// countRefused counts an operation refused before it ran (not timed).
func (c *compound) countRefused(op uint32, st nfs4.Status) {
	if c.clock.stats != nil {
		c.clock.stats.Count(op, uint32(st))
	}
}

// countSegments counts a READ_PLUS reply's segments and the bytes its
// HOLE segments saved sending.
func (c *compound) countSegments(segs []extent) {
	var data, holes, holeBytes uint64
	for _, s := range segs {
		if s.hole {
			holes++
			holeBytes += uint64(s.end - s.off)
		} else {
			data++
		}
	}
	sh := c.clock.stats
	sh.Add(metrics.ReadPlusData, data)
	if holes > 0 {
		sh.Add(metrics.ReadPlusHole, holes)
		sh.Add(metrics.ReadPlusHoleSkip, holeBytes)
	}
}

// countExtentLookup counts one READ_PLUS extent lookup that made seeks
// lseeks: none is a hit of the file's extent cache.
func (c *compound) countExtentLookup(seeks uint64) {
	sh := c.clock.stats
	if seeks == 0 {
		sh.Add(metrics.ReadPlusExtentHits, 1)
		return
	}
	sh.Add(metrics.ReadPlusLseeks, seeks)
}

// countComplete finishes the counts of a reply whose reads are done: the
// data it carries and the latency of the read that waited for them.
func (s *Server) countComplete(rep *Reply) {
	if len(rep.segs) == 0 {
		return
	}
	k := &rep.cmp.clock
	var n uint64
	for i := range rep.segs {
		n += uint64(rep.segs[i].n)
	}
	k.stats.Add(metrics.BytesRead, n)
	if k.ioOp != 0 {
		k.stats.Op(k.ioOp, uint32(nfs4.OK), metrics.Now()-k.ioStart)
		k.ioOp = 0
	}
}

// StateCounts is the protocol state held, for gauges.
type StateCounts struct {
	Clients, Sessions, Stateids, LockRanges int
}

// State counts the clients, sessions, open and lock stateids and lock
// ranges held now. It takes the state lock once, for a walk of the clients.
func (s *Server) State() StateCounts {
	t := s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	sc := StateCounts{Clients: len(t.clients), Sessions: t.sessions.len(), Stateids: t.opens.len()}
	for _, c := range t.clients {
		sc.LockRanges += c.lockRanges
	}
	return sc
}

// Metrics returns the counters the server updates.
func (s *Server) Metrics() *metrics.Set { return s.stats }

// registerGauges makes the state counts part of every scrape of set.
func (s *Server) registerGauges(set *metrics.Set) {
	gauge := func(name, help string, f func(StateCounts) int) {
		set.AddGauge(metrics.Gauge{Name: name, Help: help, Value: func() float64 { return float64(f(s.State())) }})
	}
	gauge("clients", "NFSv4 client records (EXCHANGE_ID), confirmed or not", func(c StateCounts) int { return c.Clients })
	gauge("sessions", "NFSv4.1 sessions", func(c StateCounts) int { return c.Sessions })
	gauge("stateids", "open and lock stateids", func(c StateCounts) int { return c.Stateids })
	gauge("lock_ranges", "byte ranges held by lock stateids", func(c StateCounts) int { return c.LockRanges })
}

// countWritten counts the file data a WRITE wrote.
func (c *compound) countWritten(n int) { c.clock.stats.Add(metrics.BytesWritten, uint64(n)) }
