package nfs

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// stateTable holds clients, sessions and open state. One mutex guards
// every change; each session has its own mutex for its slot table. The
// lookups of every request (a session for SEQUENCE, a stateid for READ and
// WRITE) take no lock: sessions and opens are lockFreeMaps, and what the
// stateid checks read of an openState is atomic (issue 10 goal 5).
type stateTable struct {
	s  *Server
	mu sync.Mutex

	// rng makes client ids, session ids and stateids: a CSPRNG seeded
	// once per boot, so another client cannot guess them (issue 8.6) and
	// making one costs no system call.
	rng      *rand.ChaCha8
	drcUsed  int64 // reply cache memory reserved by sessions' slots
	clients  map[uint64]*client
	owners   map[string]*client
	sessions lockFreeMap[[nfs4.SessionIDSize]byte, *session]
	opens    lockFreeMap[[nfs4.OtherSize]byte, *openState]
	dl       delegTable // delegations (state_deleg.go)
	// layouts are the pNFS layout stateids, by their other field
	// (state_layout.go).
	layouts map[[nfs4.OtherSize]byte]*layoutState
	// files holds the opens, delegations and locks of each file that has
	// any, by device and inode (state_file.go).
	files map[fileID]*fileState
	// denying counts the opens whose share deny is not DENY_NONE, so
	// that I/O with a special stateid takes mu only when one may
	// conflict (state_file.go).
	denying atomic.Int32

	// Grace period and the clients that may reclaim after a restart
	// (state_grace.go, state_store.go). recGen counts changes to records and
	// grace.pending, so syncRecords knows whether the list on disk is
	// current; it is bumped under mu.
	grace   graceState
	records map[string]clientRecord
	recGen  atomic.Uint64
	store   clientStore

	// unconfirmed finds an owner's unconfirmed client record, owners its
	// confirmed one: RFC 8881 section 18.35.4 lets an owner have both
	// while a rebooted client confirms its new record.
	unconfirmed map[string]*client

	// byAddr is what each client address holds: client records and
	// reply cache memory, each capped at a share of the whole (state_limits.go)
	// so that one host cannot lock every other out (issue 21).
	byAddr      map[netip.Addr]*addrUse
	shareWarned time.Time // when an address was last logged for holding its share

	closed40  sync.Map      // NFSv4.0: the client of each open-owner's last closed stateid (v40.go)
	expired40 expiredOthers // NFSv4.0: stateids of clients whose state was dropped (v40.go)
}

// addrUse is what the clients of one address hold.
type addrUse struct {
	clients int   // client records, confirmed or not
	drc     int64 // reply cache memory their sessions reserved
}

type client struct {
	id        uint64
	owner     string
	verifier  [8]byte
	principal uint32     // uid of the EXCHANGE_ID caller
	mach      *machCred  // SP4_MACH_CRED's machine principal (machcred.go); nil: SP4_NONE
	addr      netip.Addr // the address its EXCHANGE_ID came from: its record and sessions count against it
	confirmed bool
	// csSeq is the sequence id the next CREATE_SESSION must carry; csReply
	// caches the last CREATE_SESSION result for its replay.
	csSeq      uint32
	csReply    []byte
	sessions   map[[nfs4.SessionIDSize]byte]*session
	opens      map[openKey]*openState  // open and lock stateids
	lockRanges int                     // byte ranges its lock stateids hold
	layouts    map[fileID]*layoutState // its layout stateids, one per file (state_layout.go)
	// recallAnyAt is when CB_RECALL_ANY was last sent for its layouts.
	recallAnyAt time.Time
	stripeOK    atomic.Bool  // its EXCHANGE_ID's implementation id takes striped layouts (pnfs_stripe_client.go)
	renewed     atomic.Int64 // unix nanoseconds of the last renewal
	revoked     atomic.Int32 // revoked delegations not yet freed (state_deleg.go)
	// changingOps counts the client's operations under way that can
	// change a file's attributes or names, changedAt (unix nanoseconds)
	// is when the last ended: an inotify event then is taken for the
	// client's own (state_deleg.go, changing).
	changingOps atomic.Int32
	changedAt   atomic.Int64
	reclaimDone bool
	recorded    bool // on the list of clients that may reclaim after a restart
	// reclaims counts the reclaims the grace period let through, for the
	// log line at RECLAIM_COMPLETE.
	reclaims struct{ opens, locks int }
	v40      *v40State // an NFSv4.0 client's (v40.go); nil for 4.1
}

type openKey struct {
	owner string
	node  *node
}

type session struct {
	id     [nfs4.SessionIDSize]byte
	client *client
	fore   channelAttrs
	drc    int64 // reply cache memory its slots reserved

	// slots each have their own lock: the requests of one session, even
	// over many connections (Linux nconnect trunks them all onto one
	// session), share no lock on their way through SEQUENCE.
	slots []slot
	// conns are the ids of the connections bound to the session (RFC
	// 8881 section 2.10.3.1), most recent last; DESTROY_SESSION must come
	// on one. Every SEQUENCE checks it, so it is read without a lock: a
	// new binding (mu held) replaces the slice.
	mu    sync.Mutex
	conns atomic.Pointer[[]uint64]
	cb    backChannel // callbacks (state_callback.go)
}

type channelAttrs struct {
	headerPad, maxReq, maxResp, maxRespCached, maxOps, maxReqs uint32
}

// slot is one entry of a session's slot table (RFC 8881 section 2.10.6.1).
// Its reply cache is in state_slotcache.go.
type slot struct {
	mu    sync.Mutex
	seq   uint32
	inUse bool
	cache replyCache
}

// openState is the state behind an open or a lock stateid. A lock
// stateid (lock != nil) takes its access from the open it came from.
// other, client, node, key, lock and deleg are set before the state is
// published and never change; seq and access change under stateTable.mu
// but are atomic, so that find and the I/O checks may read them without
// it; the rest is under stateTable.mu.
type openState struct {
	other  [nfs4.OtherSize]byte
	seq    atomic.Uint32
	client *client
	node   *node
	key    openKey
	access atomic.Uint32
	deny   uint32
	modes  shareModes // access and deny values opened with (state_file.go)
	lock   *lockOwner
	deleg  *delegState // set for a delegation stateid (state_deleg.go)
}

// lockOwner is the lock-specific part of a lock stateid.
type lockOwner struct {
	open   *openState
	owner  string
	ranges int // ranges held: the stateid cannot be freed while > 0
}

func newStateTable(s *Server) *stateTable {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return &stateTable{
		s:       s,
		rng:     rand.NewChaCha8(seed),
		clients: make(map[uint64]*client),
		owners:  make(map[string]*client),
		records: make(map[string]clientRecord),
		files:   make(map[fileID]*fileState),
		layouts: make(map[[nfs4.OtherSize]byte]*layoutState),
		store:   clientStore{dir: s.cfg.StateDir, ext: s.cfg.ClientRecords, log: s.log},

		unconfirmed: make(map[string]*client),
		byAddr:      make(map[netip.Addr]*addrUse),
	}
}

// unknownStateid is the error for a stateid that names none of the
// caller's state (knfsd's nfsd4_lookup_stateid): a special stateid where
// the op takes none, or one this boot never issued, is bad; one of an
// earlier boot is stale; one of a 4.0 client whose lease ran out and
// whose state was dropped is expired (RFC 7530 section 9.6.3), so the
// client knows to recover its lease rather than give up the file.
func (t *stateTable) unknownStateid(sid nfs4.Stateid) nfs4.Status {
	switch {
	case sid.Other == nfs4.AnonStateid.Other || sid.Other == nfs4.BypassStateid.Other:
		return nfs4.ErrBadStateid
	case binary.BigEndian.Uint32(sid.Other[:4]) != t.s.boot:
		return nfs4.ErrStaleStateid
	case t.expired40.has(sid.Other):
		return nfs4.ErrExpired
	}
	return nfs4.ErrBadStateid
}

// newOther returns a fresh stateid "other" field: the boot epoch, so that
// stateids from an earlier server instance read as stale, then 64 random
// bits, so that no client can name another's state by guessing.
func (t *stateTable) newOther() [nfs4.OtherSize]byte {
	for {
		var o [nfs4.OtherSize]byte
		binary.BigEndian.PutUint32(o[:4], t.s.boot)
		binary.BigEndian.PutUint64(o[4:], t.rng.Uint64())
		if t.opens.get(o) == nil && t.layouts[o] == nil {
			return o
		}
	}
}

// newClientID returns a fresh client id: boot epoch and 32 random bits.
func (t *stateTable) newClientID() uint64 {
	for {
		id := uint64(t.s.boot)<<32 | t.rng.Uint64()&0xffffffff
		if t.clients[id] == nil {
			return id
		}
	}
}

// newSessionID returns a fresh session id: boot epoch and 96 random bits.
func (t *stateTable) newSessionID() [nfs4.SessionIDSize]byte {
	for {
		var id [nfs4.SessionIDSize]byte
		binary.BigEndian.PutUint32(id[:4], t.s.boot)
		binary.BigEndian.PutUint64(id[4:], t.rng.Uint64())
		binary.BigEndian.PutUint32(id[12:], uint32(t.rng.Uint64()))
		if t.sessions.get(id) == nil {
			return id
		}
	}
}

// removeClientLocked drops a client with all its sessions and state.
func (t *stateTable) removeClientLocked(c *client) {
	for _, sess := range c.sessions {
		t.removeSessionLocked(sess)
	}
	// RFC 8435 section 14: a client gone can no longer use its layouts.
	t.dropClientLayoutsLocked(c, true)
	t.expired40.addClient(c) // before its opens go
	for _, o := range c.opens {
		t.dropLocked(o)
	}
	t.forgetRecordLocked(c)
	t.forget40Locked(c)
	if t.clients[c.id] == c {
		delete(t.clients, c.id)
		t.useOf(c.addr).clients--
		t.tidyUse(c.addr)
	}
	if t.owners[c.owner] == c {
		delete(t.owners, c.owner)
	}
	if t.unconfirmed[c.owner] == c {
		delete(t.unconfirmed, c.owner)
	}
}

// session finds a session by id. It takes no lock: SEQUENCE, the first
// op of nearly every request, calls it.
func (t *stateTable) session(id []byte) *session {
	var k [nfs4.SessionIDSize]byte
	copy(k[:], id)
	return t.sessions.get(k)
}

// holds reports whether open, lock or delegation state refers to n's
// file.
func (t *stateTable) holds(n *node) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.peekFileLocked(n).empty()
}

// heldInodes returns the (device, inode) of every file that holds open,
// lock, delegation or layout state: a removed file's orphaned data files
// (sweepOrphans, known by its stat alone) wait while any file of that
// inode number holds state, so they are never removed while a client may
// still reach them.
func (t *stateTable) heldInodes() map[fileID]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	held := make(map[fileID]bool)
	for k, f := range t.files {
		if !f.empty() {
			held[fileID{dev: k.dev, ino: k.ino}] = true
		}
	}
	return held
}

// dropLocked forgets an open or lock stateid, with the locks it holds.
func (t *stateTable) dropLocked(o *openState) {
	t.opens.del(o.other)
	delete(o.client.opens, o.key)
	t.setDenyLocked(o, 0)
	if o.deleg != nil {
		t.unlinkDelegLocked(o)
	}
	f := t.fileLocked(o.node)
	for i, x := range f.opens {
		if x == o {
			f.opens = append(f.opens[:i], f.opens[i+1:]...)
			break
		}
	}
	if o.lock != nil {
		f.locks = removeOwnerLocks(f.locks, o)
		o.client.lockRanges -= o.lock.ranges
		o.lock.ranges = 0
	}
	t.tidyFileLocked(o.node)
}

// checkWrite checks an open or lock stateid of client cl for writing n.
// It takes no lock (see find).
func (t *stateTable) checkWrite(cl *client, sid nfs4.Stateid, n *node) nfs4.Status {
	o, st := t.find(cl, sid)
	if st != nfs4.OK {
		return st
	}
	if !o.node.same(n) {
		return nfs4.ErrBadStateid
	}
	if o.lock != nil {
		o = o.lock.open
	}
	if o.access.Load()&nfs4.ShareAccessWrite == 0 {
		return nfs4.ErrOpenmode
	}
	return nfs4.OK
}

// find looks sid up among the state of client cl, per RFC 8881 section
// 8.2: ones from an earlier boot are stale, unknown ones are bad, and a
// seqid other than 0 must be current. Another client's stateid is as
// unknown as one never issued (section 8.2.4: a stateid is valid only for
// the client it was given to), so it cannot be used to read, write, lock
// or close through someone else's open.
//
// find takes no lock. Called without stateTable.mu (the I/O checks), its
// answer is that of a moment during the call: a CLOSE or OPEN_DOWNGRADE
// racing with a READ may take effect just before or just after it, as it
// could with the lock, while one whose reply the client has seen always
// counts. Callers that change the state they found hold stateTable.mu.
func (t *stateTable) find(cl *client, sid nfs4.Stateid) (*openState, nfs4.Status) {
	o := t.opens.get(sid.Other)
	if o == nil || o.client != cl {
		return nil, t.unknownStateid(sid)
	}
	if o.deleg != nil && o.deleg.revoked.Load() {
		return nil, nfs4.ErrDelegRevoked
	}
	switch seq := o.seq.Load(); {
	case sid.Seqid == 0 || sid.Seqid == seq:
		return o, nfs4.OK
	case sid.Seqid < seq:
		return nil, nfs4.ErrOldStateid
	}
	return nil, nfs4.ErrBadStateid
}
