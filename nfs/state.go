package nfs

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// stateTable holds clients, sessions and open state. One mutex guards the
// maps; each session has its own mutex for its slot table, so the hot path
// (SEQUENCE on an existing session) takes the table lock only to find the
// session.
type stateTable struct {
	s  *Server
	mu sync.Mutex

	nextClient uint32
	nextState  uint64
	clients    map[uint64]*client
	owners     map[string]*client
	sessions   map[[nfs4.SessionIDSize]byte]*session
	opens      map[[nfs4.OtherSize]byte]*openState
}

type client struct {
	id        uint64
	owner     string
	verifier  [8]byte
	principal uint32 // uid of the EXCHANGE_ID caller
	confirmed bool
	// csSeq is the sequence id the next CREATE_SESSION must carry; csReply
	// caches the last CREATE_SESSION result for its replay.
	csSeq       uint32
	csReply     []byte
	sessions    map[[nfs4.SessionIDSize]byte]*session
	opens       map[openKey]*openState
	renewed     atomic.Int64 // unix nanoseconds of the last renewal
	reclaimDone bool
}

type openKey struct {
	owner string
	node  *node
}

type session struct {
	id     [nfs4.SessionIDSize]byte
	client *client
	fore   channelAttrs

	mu    sync.Mutex
	slots []slot
}

type channelAttrs struct {
	headerPad, maxReq, maxResp, maxRespCached, maxOps, maxReqs uint32
}

type slot struct {
	seq   uint32
	inUse bool
	// A finished request leaves either its encoded COMPOUND result (reply)
	// or, when the reply carried file data, the request itself to run again
	// (request): re-reading is cheaper than caching megabytes per slot. The
	// buffers are reused from request to request.
	cached  slotCache
	reply   []byte
	request []byte
}

type slotCache int

const (
	cacheNone slotCache = iota
	cacheReply
	cacheRequest
)

// openState is the state behind an open or a lock stateid. A lock
// stateid (lock != nil) takes its access from the open it came from.
type openState struct {
	other  [nfs4.OtherSize]byte
	seq    uint32
	client *client
	node   *node
	key    openKey
	access uint32
	deny   uint32
	lock   *lockOwner
}

// lockOwner is the lock-specific part of a lock stateid.
type lockOwner struct {
	open   *openState
	owner  string
	ranges int // ranges held: the stateid cannot be freed while > 0
}

func newStateTable(s *Server) *stateTable {
	return &stateTable{
		s:        s,
		clients:  make(map[uint64]*client),
		owners:   make(map[string]*client),
		sessions: make(map[[nfs4.SessionIDSize]byte]*session),
		opens:    make(map[[nfs4.OtherSize]byte]*openState),
	}
}

// newOther returns a fresh stateid "other" field: the boot epoch then a
// counter, so stateids from an earlier server instance read as stale.
func (t *stateTable) newOther() [nfs4.OtherSize]byte {
	t.nextState++
	var o [nfs4.OtherSize]byte
	binary.BigEndian.PutUint32(o[:4], t.s.boot)
	binary.BigEndian.PutUint64(o[4:], t.nextState)
	return o
}

func (t *stateTable) newClientID() uint64 {
	t.nextClient++
	return uint64(t.s.boot)<<32 | uint64(t.nextClient)
}

// removeClientLocked drops a client with all its sessions and state.
func (t *stateTable) removeClientLocked(c *client) {
	for id := range c.sessions {
		delete(t.sessions, id)
	}
	for _, o := range c.opens {
		t.dropLocked(o)
	}
	delete(t.clients, c.id)
	if t.owners[c.owner] == c {
		delete(t.owners, c.owner)
	}
}

func (t *stateTable) session(id []byte) *session {
	var k [nfs4.SessionIDSize]byte
	copy(k[:], id)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[k]
}

// holds reports whether open or lock state refers to n.
func (t *stateTable) holds(n *node) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(n.opens) > 0 || len(n.locks) > 0
}

// dropLocked forgets an open or lock stateid, with the locks it holds.
func (t *stateTable) dropLocked(o *openState) {
	delete(t.opens, o.other)
	delete(o.client.opens, o.key)
	n := o.node
	for i, x := range n.opens {
		if x == o {
			n.opens = append(n.opens[:i], n.opens[i+1:]...)
			break
		}
	}
	if o.lock != nil {
		n.locks = removeOwnerLocks(n.locks, o)
	}
}

// finishSlot stores a finished reply in its slot for retransmits.
func (t *stateTable) finishSlot(rep *Reply) {
	sl := rep.slot
	sess := rep.sess
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sl.seq != rep.slotSeq {
		return
	}
	sl.inUse = false
	if rep.keptRequest {
		sl.cached = cacheRequest
		return
	}
	sl.reply = append(sl.reply[:0], rep.Enc.Header()[rep.bodyPos:]...)
	sl.cached = cacheReply
}

// keepRequest copies a request whose reply carries file data into its
// slot, to re-execute on a retransmit.
func (t *stateTable) keepRequest(rep *Reply, rec []byte) {
	rep.sess.mu.Lock()
	defer rep.sess.mu.Unlock()
	if rep.slot.seq == rep.slotSeq {
		rep.slot.request = append(rep.slot.request[:0], rec...)
		rep.keptRequest = true
	}
}

// stateStatus checks a stateid against node n for I/O, per RFC 8881
// section 8.2: special stateids pass, unknown ones are bad, ones from an
// earlier boot are stale, and a seqid other than 0 must be current.
func (t *stateTable) checkIO(sid nfs4.Stateid, n *node) uint32 {
	if sid == nfs4.AnonStateid || sid == nfs4.BypassStateid {
		return nfs4.OK
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	o, st := t.findLocked(sid)
	if st != nfs4.OK {
		return st
	}
	if !o.node.same(n) {
		return nfs4.ErrBadStateid
	}
	return nfs4.OK
}

// checkWrite checks an open or lock stateid for writing n.
func (t *stateTable) checkWrite(sid nfs4.Stateid, n *node) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, st := t.findLocked(sid)
	if st != nfs4.OK {
		return st
	}
	if !o.node.same(n) {
		return nfs4.ErrBadStateid
	}
	if o.lock != nil {
		o = o.lock.open
	}
	if o.access&nfs4.ShareAccessWrite == 0 {
		return nfs4.ErrOpenmode
	}
	return nfs4.OK
}

func (t *stateTable) findLocked(sid nfs4.Stateid) (*openState, uint32) {
	if binary.BigEndian.Uint32(sid.Other[:4]) != t.s.boot {
		return nil, nfs4.ErrStaleStateid
	}
	o := t.opens[sid.Other]
	if o == nil {
		return nil, nfs4.ErrBadStateid
	}
	switch {
	case sid.Seqid == 0 || sid.Seqid == o.seq:
		return o, nfs4.OK
	case sid.Seqid < o.seq:
		return nil, nfs4.ErrOldStateid
	}
	return nil, nfs4.ErrBadStateid
}

// expire drops clients whose lease ran out. Called periodically.
func (t *stateTable) expire(now time.Time) {
	lease := time.Duration(t.s.cfg.LeaseTime) * time.Second
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.clients {
		// Two leases of grace: a client busy on a slow link keeps its state.
		if now.Sub(time.Unix(0, c.renewed.Load())) > 2*lease {
			t.s.log.Info("lease expired", "clientid", c.id)
			t.removeClientLocked(c)
		}
	}
}

func putU64(b []byte, v uint64) { binary.BigEndian.PutUint64(b, v) }
