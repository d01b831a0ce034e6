package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Lock types.
const (
	readLT   = 1
	writeLT  = 2
	readWLT  = 3
	writeWLT = 4
)

// lockRange is a byte range held by a lock stateid: [start, end), end
// saturating at 2^64-1 for "to end of file".
type lockRange struct {
	start, end uint64
	write      bool
	st         *openState
}

// rangeOf checks offset and length per RFC 8881 section 18.10.3.
func rangeOf(off, length uint64) (uint64, uint64, nfs4.Status) {
	switch {
	case length == 0:
		return 0, 0, nfs4.ErrInval
	case length == ^uint64(0):
		return off, ^uint64(0), nfs4.OK
	case off+length < off:
		return 0, 0, nfs4.ErrInval
	}
	return off, off + length, nfs4.OK
}

// lockRange checks the lock type, the range and the current file of LOCK
// and LOCKT.
func (c *compound) lockRange(typ uint32, off, length uint64) (uint64, uint64, nfs4.Status) {
	if typ < readLT || typ > writeWLT {
		return 0, 0, nfs4.ErrInval
	}
	start, end, s := rangeOf(off, length)
	if s != nfs4.OK {
		return 0, 0, s
	}
	if c.cfh.exp == nil {
		return 0, 0, nfs4.ErrIsdir
	}
	return start, end, nfs4.OK
}

// conflict returns a lock held by another owner that blocks the request.
func conflict(locks []lockRange, client *client, owner string, start, end uint64, write bool) *lockRange {
	for i := range locks {
		l := &locks[i]
		if l.start < end && start < l.end && (write || l.write) &&
			(l.st.client != client || l.st.lock.owner != owner) {
			return l
		}
	}
	return nil
}

// encodeDenied writes LOCK4denied for a blocking lock.
func encodeDenied(e *xdr.Encoder, l *lockRange) {
	e.Uint64(l.start)
	if l.end == ^uint64(0) {
		e.Uint64(^uint64(0))
	} else {
		e.Uint64(l.end - l.start)
	}
	if l.write {
		e.Uint32(writeLT)
	} else {
		e.Uint32(readLT)
	}
	e.Uint64(l.st.client.id)
	e.String(l.st.lock.owner)
}

// cut removes [start, end) from the ranges of st, splitting where needed.
func cut(locks []lockRange, st *openState, start, end uint64) []lockRange {
	out := locks[:0:0]
	for _, l := range locks {
		if l.st != st || l.end <= start || end <= l.start {
			out = append(out, l)
			continue
		}
		if l.start < start {
			out = append(out, lockRange{l.start, start, l.write, st})
		}
		if end < l.end {
			out = append(out, lockRange{end, l.end, l.write, st})
		}
	}
	return out
}

// addLock gives st the lock [start, end) of the type asked, as POSIX
// locks of one owner do (knfsd leaves them to the VFS): the ranges of st
// it overlaps become the new type, and the new range merges with the
// ranges of st of the same type it touches, so that a test reports one
// lock [25, 125) after locks [25, 75) and [50, 125). The result is a new
// slice.
func addLock(locks []lockRange, st *openState, start, end uint64, write bool) []lockRange {
	out := cut(locks, st, start, end)
	kept := out[:0]
	for _, l := range out {
		// After the cut, a range of st touching [start, end) abuts it.
		if l.st == st && l.write == write && (l.end == start || l.start == end) {
			start, end = min(start, l.start), max(end, l.end)
			continue
		}
		kept = append(kept, l)
	}
	return append(kept, lockRange{start, end, write, st})
}

func countRanges(locks []lockRange, st *openState) int {
	n := 0
	for _, l := range locks {
		if l.st == st {
			n++
		}
	}
	return n
}

func removeOwnerLocks(locks []lockRange, st *openState) []lockRange {
	return cut(locks, st, 0, ^uint64(0))
}

// lockOwner4 is lock_owner4 (RFC 8881 section 3.3.11).
type lockOwner4 struct {
	clientID uint64
	owner    []byte // aliases the request
}

func decodeLockOwner(d *xdr.Decoder) lockOwner4 {
	return lockOwner4{clientID: d.Uint64(), owner: d.Opaque(nfs4.OpaqueLimit)}
}

// lockArgs is LOCK4args (RFC 8881 section 18.10.1). The seqids of
// open_to_lock_owner4 and exist_lock_owner4 are NFSv4.0's: in 4.1 the
// session's slot orders requests and they are ignored (RFC 8881 section
// 8.4.3), as knfsd does.
type lockArgs struct {
	locktype       uint32
	reclaim        bool
	offset, length uint64
	newLockOwner   bool
	// open_to_lock_owner4, when newLockOwner.
	openSeqid   uint32
	openStateid nfs4.Stateid
	lockSeqid   uint32
	lockOwner   lockOwner4
	// exist_lock_owner4 (lockSeqid too), otherwise.
	lockStateid nfs4.Stateid
}

func decodeLock(d *xdr.Decoder) lockArgs {
	var a lockArgs
	a.locktype = d.Uint32()
	a.reclaim = d.Bool()
	a.offset, a.length = d.Uint64(), d.Uint64()
	a.newLockOwner = d.Bool()
	if a.newLockOwner {
		a.openSeqid = d.Uint32()
		a.openStateid = nfs4.DecodeStateid(d)
		a.lockSeqid = d.Uint32()
		a.lockOwner = decodeLockOwner(d)
	} else {
		a.lockStateid = nfs4.DecodeStateid(d)
		a.lockSeqid = d.Uint32()
	}
	return a
}

func opLock(c *compound) nfs4.Status {
	a := decodeLock(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	start, end, s := c.lockRange(a.locktype, a.offset, a.length)
	if s != nfs4.OK {
		return s
	}
	t := c.s.state
	defer t.syncRecords() // after any courtesy client this lock expired
	t.mu.Lock()
	defer t.mu.Unlock()
	var st *openState
	if a.newLockOwner {
		st, s = t.lockStateLocked(c, a.openStateid, string(a.lockOwner.owner))
	} else {
		st, s = t.find(c.sess.client, a.lockStateid)
		if s == nfs4.OK && (st.lock == nil || !st.node.same(c.cfh)) {
			s = nfs4.ErrBadStateid
		}
	}
	if s != nfs4.OK {
		return s
	}
	if s := t.lockGraceLocked(c.sess.client, a.reclaim); s != nfs4.OK {
		return s
	}
	write := a.locktype == writeLT || a.locktype == writeWLT
	if write && st.lock.open.access.Load()&nfs4.ShareAccessWrite == 0 {
		return nfs4.ErrOpenmode
	}
	n := st.node
	if l := t.lockConflictLocked(n, st.client, st.lock.owner, start, end, write); l != nil {
		c.keepResult = true
		encodeDenied(c.e, l)
		return nfs4.ErrDenied
	}
	if s := t.setRangesLocked(st, addLock(t.peekFileLocked(n).locks, st, start, end, write)); s != nfs4.OK {
		return s
	}
	out := nfs4.Stateid{Seqid: st.seq.Add(1), Other: st.other}
	c.setCur(out)
	out.Encode(c.e)
	return nfs4.OK
}

// setRangesLocked installs locks as the lock list of st's file, unless the
// ranges st's client would then hold exceed the server's cap: a client
// could otherwise grow memory without bound, one range (or one split of a
// range by LOCKU) at a time. knfsd answers allocation failures here with
// NFS4ERR_RESOURCE-like errors too.
func (t *stateTable) setRangesLocked(st *openState, locks []lockRange) nfs4.Status {
	ranges := countRanges(locks, st)
	cl := st.client
	if total := cl.lockRanges - st.lock.ranges + ranges; ranges > st.lock.ranges && total > t.s.cfg.MaxLockRangesPerClient {
		return nfs4.ErrResource
	}
	cl.lockRanges += ranges - st.lock.ranges
	st.lock.ranges = ranges
	t.fileLocked(st.node).locks = locks
	t.tidyFileLocked(st.node)
	return nfs4.OK
}

// lockStateLocked finds or makes the lock stateid of a lock owner on the
// file of an open stateid.
// lock_owner4's clientid is ignored: the session names the client (RFC
// 8881 section 18.11.3).
func (t *stateTable) lockStateLocked(c *compound, openSid nfs4.Stateid, owner string) (*openState, nfs4.Status) {
	openSid, s := c.resolveSid(openSid)
	if s != nfs4.OK {
		return nil, s
	}
	o, s := t.find(c.sess.client, openSid)
	if s != nfs4.OK {
		return nil, s
	}
	if o.lock != nil || !o.node.same(c.cfh) {
		return nil, nfs4.ErrBadStateid
	}
	key := openKey{owner: "l:" + owner, node: o.node}
	if st := o.client.opens[key]; st != nil {
		return st, nfs4.OK
	}
	if len(o.client.opens) >= t.s.cfg.MaxOpensPerClient {
		return nil, nfs4.ErrResource
	}
	st := &openState{other: t.newOther(), client: o.client, node: o.node, key: key,
		lock: &lockOwner{open: o, owner: owner}}
	o.client.opens[key] = st
	t.opens.put(st.other, st)
	return st, nfs4.OK
}

// locksHeldLocked reports whether lock stateids of open o hold ranges.
func (t *stateTable) locksHeldLocked(o *openState) bool {
	for _, l := range t.peekFileLocked(o.node).locks {
		if l.st.lock.open == o {
			return true
		}
	}
	return false
}

// dropLockStatesLocked forgets the lock stateids made from open o.
func (t *stateTable) dropLockStatesLocked(o *openState) {
	for _, st := range o.client.opens {
		if st.lock != nil && st.lock.open == o {
			t.dropLocked(st)
		}
	}
}

// locktArgs is LOCKT4args (RFC 8881 section 18.11.1). The owner's
// clientid is ignored: the owner's client is the session's (section
// 18.11.3).
type locktArgs struct {
	locktype       uint32
	offset, length uint64
	owner          lockOwner4
}

func decodeLockt(d *xdr.Decoder) locktArgs {
	return locktArgs{locktype: d.Uint32(), offset: d.Uint64(), length: d.Uint64(), owner: decodeLockOwner(d)}
}

func opLockt(c *compound) nfs4.Status {
	a := decodeLockt(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	start, end, s := c.lockRange(a.locktype, a.offset, a.length)
	if s != nfs4.OK {
		return s
	}
	// Only regular files have byte ranges to lock (knfsd's fh_verify for
	// S_IFREG): NFS4ERR_ISDIR, NFS4ERR_SYMLINK or NFS4ERR_WRONG_TYPE. LOCK
	// needs an open stateid, which only a regular file has.
	var st unix.Stat_t
	if s := c.statFH(&st); s != nfs4.OK {
		return s
	}
	if s := openableType(&st); s != nfs4.OK {
		return s
	}
	t := c.s.state
	defer t.syncRecords() // after any courtesy client this test expired
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.locktGraceLocked(); s != nfs4.OK {
		return s
	}
	write := a.locktype == writeLT || a.locktype == writeWLT
	if l := t.lockConflictLocked(c.cfh, c.sess.client, string(a.owner.owner), start, end, write); l != nil {
		c.keepResult = true
		encodeDenied(c.e, l)
		return nfs4.ErrDenied
	}
	return nfs4.OK
}

// lockuArgs is LOCKU4args (RFC 8881 section 18.12.1). Any lock type
// unlocks, but it must be one (LOCK's check); seqid is NFSv4.0's and
// ignored.
type lockuArgs struct {
	locktype       uint32
	seqid          uint32
	lockStateid    nfs4.Stateid
	offset, length uint64
}

func decodeLocku(d *xdr.Decoder) lockuArgs {
	return lockuArgs{locktype: d.Uint32(), seqid: d.Uint32(), lockStateid: nfs4.DecodeStateid(d),
		offset: d.Uint64(), length: d.Uint64()}
}

func opLocku(c *compound) nfs4.Status {
	a := decodeLocku(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if a.locktype < readLT || a.locktype > writeWLT {
		return nfs4.ErrInval
	}
	sid := a.lockStateid
	start, end, s := rangeOf(a.offset, a.length)
	if s != nfs4.OK {
		return s
	}
	sid, s = c.resolveSid(sid)
	if s != nfs4.OK {
		return s
	}
	t := c.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	st, s := t.find(c.sess.client, sid)
	if s != nfs4.OK {
		return s
	}
	if st.lock == nil || !st.node.same(c.cfh) {
		return nfs4.ErrBadStateid
	}
	// An unlock in the middle of a range splits it: capped like LOCK.
	if s := t.setRangesLocked(st, cut(t.peekFileLocked(st.node).locks, st, start, end)); s != nfs4.OK {
		return s
	}
	out := nfs4.Stateid{Seqid: st.seq.Add(1), Other: st.other}
	c.setCur(out)
	out.Encode(c.e)
	return nfs4.OK
}
