package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// replyCache is what a session slot keeps of its last reply, so that a
// retransmit gets the original reply without any operation running again
// (RFC 8881 section 2.10.6.1.3; re-running a COMPOUND would redo its
// REMOVE or OPEN). It holds the encoded COMPOUND result with the file data
// left out, and where in it each piece of file data went: a retransmit is
// answered with the same bytes and only the reads are redone, into pieces
// of the same lengths, so a slot never holds file data (issue 8.8: a copy
// of every data-carrying request grew RSS by 400 MB).
type replyCache struct {
	ok    bool // body is the reply to the slot's current sequence id
	body  []byte
	reads []cachedRead
	segs  []cachedSeg
}

// cachedRead is one Read of a cached reply, redone on a retransmit.
type cachedRead struct {
	node        *node
	off         int64
	n           int
	first, last int // its segs
}

// cachedSeg is one piece of file data in a cached reply: n bytes from off
// in its read's buffer, placed at offset at of the body.
type cachedSeg struct {
	at, off, n int
}

// What a cached read and segment are charged against the slot's limit,
// roughly their size in memory.
const (
	cachedReadCost = 40
	cachedSegCost  = 24
)

// cacheCost is what keeping the reply built so far would cost a slot.
func (r *Reply) cacheCost() int {
	return r.Enc.Pos() - r.bodyPos + len(r.Reads)*cachedReadCost + len(r.segs)*cachedSegCost
}

// store keeps rep in the cache when it costs at most limit bytes; a reply
// that does not fit is forgotten, and its retransmit is answered
// NFS4ERR_RETRY_UNCACHED_REP (a reply the client asked to be cached, with
// sa_cachethis, never gets here too big: see compound.exec).
func (rc *replyCache) store(rep *Reply, limit int) {
	rc.ok = false
	clear(rc.reads) // let go of nodes
	rc.reads, rc.segs = rc.reads[:0], rc.segs[:0]
	if rep.cacheCost() > limit {
		return
	}
	rc.body = append(rc.body[:0], rep.Enc.Header()[rep.bodyPos:]...)
	for _, rd := range rep.Reads {
		rc.reads = append(rc.reads, cachedRead{node: rd.node, off: rd.Off, n: rd.Len, first: rd.first, last: rd.last})
	}
	for _, sg := range rep.segs {
		rc.segs = append(rc.segs, cachedSeg{at: sg.at - rep.bodyPos, off: sg.off, n: sg.n})
	}
	rc.ok = true
}

// copyTo copies the cache into dst, reusing dst's memory.
func (rc *replyCache) copyTo(dst *replyCache) {
	dst.ok = rc.ok
	dst.body = append(dst.body[:0], rc.body...)
	dst.reads = append(dst.reads[:0], rc.reads...)
	dst.segs = append(dst.segs[:0], rc.segs...)
}

// finishSlot stores a finished reply in its slot for retransmits.
func (t *stateTable) finishSlot(rep *Reply) {
	sl := rep.slot
	sess := rep.sess
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.seq != rep.slotSeq {
		return
	}
	sl.inUse = false
	sl.cache.store(rep, int(sess.fore.maxRespCached))
	rep.slot = nil // finished: Reset leaves the slot alone
}

// abandon frees the slot of a reply that was given up before Complete:
// nothing is cached, so a retransmit of seq answers
// NFS4ERR_RETRY_UNCACHED_REP (the client cannot know whether the request
// ran; RFC 8881 section 2.10.6.1.3) instead of NFS4ERR_DELAY.
func (sl *slot) abandon(seq uint32) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.seq == seq && sl.inUse {
		sl.inUse = false
		sl.cache.ok = false
	}
}

// emitReplay answers a retransmit from the slot's cache (SEQUENCE found it):
// the cached result bytes, with the file data read again into pieces of the
// original lengths. Nothing but reads runs.
func (rep *Reply) emitReplay() {
	rc := &rep.replay
	e := rep.Enc
	prev := 0
	for _, r := range rc.reads {
		fd := -1
		if r.node != nil {
			rep.pin(r.node)
			if f, err := r.node.readFD(); err == nil {
				fd = f
			}
		}
		if fd >= 0 {
			rep.addRead(r.node, fd, r.off, r.n)
		}
		for _, sg := range rc.segs[r.first:r.last] {
			e.Fixed(rc.body[prev:sg.at])
			prev = sg.at
			if fd >= 0 {
				rep.addSeg(-1, -1, sg.off, sg.n)
			} else {
				// The file is gone: zeros keep the reply's shape.
				e.Borrow(make([]byte, sg.n))
			}
		}
	}
	e.Fixed(rc.body[prev:])
	rep.zeroFill = true
}

// takeSlot applies the slot rules of RFC 8881 section 2.10.6.1.
func (c *compound) takeSlot(sess *session, slotID, seq uint32) nfs4.Status {
	sl := &sess.slots[slotID]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	switch seq {
	case sl.seq + 1:
		sl.seq = seq
		sl.inUse = true
		sl.cache.ok = false
		c.rep.slot, c.rep.sess, c.rep.slotSeq = sl, sess, seq
		// SP4_NONE: SEQUENCE binds its connection to the session (RFC
		// 8881 section 2.10.3.1), as knfsd's nfsd4_sequence_check_conn.
		sess.bind(c.conn)
		return nfs4.OK
	case sl.seq:
		switch {
		case sl.inUse:
			return nfs4.ErrDelay
		case !sl.cache.ok:
			return nfs4.ErrRetryUncachedRep
		}
		// Copied under the lock: the slot's next request may overwrite
		// the cache while this reply is still being sent.
		sl.cache.copyTo(&c.rep.replay)
		return nfs4.OK
	}
	return nfs4.ErrSeqMisordered
}
