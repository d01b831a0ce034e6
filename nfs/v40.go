package nfs

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NFSv4.0 (RFC 7530). A COMPOUND of minor version 0 runs through the same
// op table and handlers as 4.1 and 4.2; what differs is kept here:
//
//   - There are no sessions. The client is named by SETCLIENTID's client
//     id, which OPEN, LOCK, LOCKT, RENEW and RELEASE_LOCKOWNER carry, or by
//     the stateid an op carries (gate40 binds it). The handlers find it
//     where 4.1 puts it, in c.sess.client: each 4.0 client has a session
//     of its own that no SEQUENCE can name (v40State.sess), and a COMPOUND
//     naming no client gets v40Anon's, whose client owns nothing.
//   - Any op that names a valid client renews its lease, as RENEW does.
//   - Open-owners and lock-owners order their requests with seqids, and
//     the last reply of each owner is kept to answer a retransmission
//     (RFC 7530 section 9.1.9): exec40.
//   - A new open-owner confirms itself with OPEN_CONFIRM.
//   - Callbacks go over a connection the server opens to the address
//     SETCLIENTID gave (v40_callback.go).

// The op table flags of NFSv4.0.
const (
	// opV40Only: an NFSv4.0 operation that RFC 8881 marks MUST NOT
	// implement for 4.1 (SETCLIENTID, SETCLIENTID_CONFIRM, RENEW,
	// OPEN_CONFIRM, RELEASE_LOCKOWNER): NFS4ERR_NOTSUPP there.
	opV40Only = opSetsCurSid << (1 + iota)
	// opSeqid: in 4.0 the op carries an open-owner or lock-owner seqid
	// (OPEN, OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE, LOCK, LOCKU).
	opSeqid
)

func init() {
	v40 := func(op uint32, run opFunc, flags opFlags, rsize int, args argShape) {
		e := &opTable[op]
		e.run, e.flags, e.rsize, e.args = run, flags|opV40Only, fixed(rsize), args
	}
	// SETCLIENTID4res: the client id and confirm verifier, or on
	// NFS4ERR_CLID_INUSE the clientaddr4 of the client holding it.
	v40(nfs4.OpSetclientid, opSetclientid, opModifies, max(8+verifierLen, 2*opaqueMax), argsOf(decodeSetclientid))
	v40(nfs4.OpSetclientidConfirm, opSetclientidConfirm, opModifies, 0, fixedArgs(decodeSetclientidConfirm))
	v40(nfs4.OpRenew, opRenew, 0, 0, fixedArgs(decodeClientidArgs))
	v40(nfs4.OpOpenConfirm, opOpenConfirm, opModifies|opSeqid|opUsesCurSid, stateidLen, fixedArgs(decodeOpenConfirm))
	v40(nfs4.OpReleaseLockowner, opReleaseLockowner, opModifies, 0, argsOf(decodeLockOwner))
	for _, op := range []uint32{nfs4.OpOpen, nfs4.OpOpenDowngrade, nfs4.OpClose, nfs4.OpLock, nfs4.OpLocku} {
		opTable[op].flags |= opSeqid
	}
}

// v40State is what a 4.0 client has beyond a 4.1 one. It is made with the
// client by SETCLIENTID and never replaced; its fields are under mu
// unless said otherwise.
type v40State struct {
	// sess holds the client for the handlers (c.sess.client) and its
	// callback path (cb); it is in no table.
	sess *session

	mu          sync.Mutex
	confirmVerf [8]byte
	cb          v40Callback
	// update is a SETCLIENTID of the confirmed client that changes its
	// callback (RFC 7530 section 16.33.5), waiting for its confirm.
	update *v40Update
	// owners are the client's open-owners ("o:" + owner) and lock-owners
	// ("l:" + owner) with their seqid and last reply.
	owners map[string]*v40Owner
	// closed finds an owner by the stateid its last CLOSE closed.
	closed map[[nfs4.OtherSize]byte]string
	// seqMu orders the seqid ops of the client: the check of the
	// seqid, the op and the recording of its reply are one step.
	seqMu sync.Mutex
	// conn is the callback connection (v40_callback.go).
	conn *v40Conn
	// settled: the client has done with reclaiming (v40Settle).
	settled atomic.Bool
}

// v40Update is a pending callback change.
type v40Update struct {
	verf [8]byte
	cb   v40Callback
}

// v40Callback is the callback path SETCLIENTID names.
type v40Callback struct {
	prog         uint32
	netid, uaddr string
	ident        uint32
	sec          cbSec
}

// v40Owner is an open-owner's or lock-owner's sequence state.
type v40Owner struct {
	seq       uint32 // the last seqid it used
	confirmed bool   // an open-owner: OPEN_CONFIRM done
	op        uint32 // the op of the kept reply
	status    nfs4.Status
	kept      bool   // op, status and reply hold its last request's
	reply     []byte // the op's result body
	// closed is the stateid its last CLOSE closed, kept so that the
	// CLOSE's retransmission finds its owner (knfsd keeps it too).
	closed [nfs4.OtherSize]byte
}

// maxOps40 bounds the ops of a 4.0 COMPOUND, which no session limits:
// more is NFS4ERR_RESOURCE (knfsd's NFSD_MAX_OPS_PER_COMPOUND; pynfs
// COMP6 grows a COMPOUND until it gets that).
const maxOps40 = 200

// maxV40Owners bounds the owners a client keeps sequence state for; past
// it, owners holding no state are forgotten.
const maxV40Owners = 4096

func newV40State(cl *client) *v40State {
	v := &v40State{owners: make(map[string]*v40Owner), closed: make(map[[nfs4.OtherSize]byte]string)}
	v.sess = &session{client: cl}
	return v
}

// v40Anon is the session of a 4.0 COMPOUND that names no client: its
// client owns no state, so a stateid it does not know is a bad one.
var v40Anon = &session{client: &client{
	sessions: map[[nfs4.SessionIDSize]byte]*session{},
	opens:    map[openKey]*openState{},
}}

// gate40 checks an op of a 4.0 COMPOUND and finds the client it acts
// for.
func (c *compound) gate40(info *opInfo) nfs4.Status {
	if info.minor > 0 {
		return nfs4.ErrOpIllegal
	}
	c.sess = v40Anon
	d := c.peekArgs()
	var id uint64
	var sid nfs4.Stateid
	named := false // the arguments name a client id, which must be a confirmed client's
	switch c.opNum(info) {
	case nfs4.OpOpen:
		a := decodeOpen(&d)
		if d.Err() == nil {
			if s := openArgs40(&a); s != nfs4.OK {
				return s
			}
		}
		id, named = a.clientID, true
	case nfs4.OpLock:
		a := decodeLock(&d)
		if a.newLockOwner {
			sid = a.openStateid
			id, named = a.lockOwner.clientID, true
		} else {
			sid = a.lockStateid
		}
	case nfs4.OpLockt:
		id, named = decodeLockt(&d).owner.clientID, true
	case nfs4.OpClose:
		sid = decodeClose(&d).openStateid
	case nfs4.OpLocku:
		sid = decodeLocku(&d).lockStateid
	case nfs4.OpRead, nfs4.OpWrite, nfs4.OpSetattr, nfs4.OpDelegReturn, nfs4.OpOpenDowngrade, nfs4.OpOpenConfirm:
		sid = nfs4.DecodeStateid(&d)
	default:
		return nfs4.OK
	}
	if d.Err() != nil {
		return nfs4.OK // the handler answers NFS4ERR_BADXDR
	}
	t := c.s.state
	if sid != (nfs4.Stateid{}) {
		if cl, ok := t.closed40.Load(sid.Other); ok && c.opNum(info) == nfs4.OpClose {
			c.bind40(cl.(*client))
			return nfs4.OK
		}
		if o := t.opens.get(sid.Other); o != nil && o.client.v40 != nil {
			if named && id != o.client.id && c.opNum(info) == nfs4.OpLock {
				// open_to_lock_owner4 names a client other than the
				// open's (knfsd's same_clid check in nfsd4_lock).
				return nfs4.ErrBadStateid
			}
			c.bind40(o.client)
			if op := c.opNum(info); (op == nfs4.OpRead || op == nfs4.OpWrite) && sid.Seqid != 0 && sid.Seqid <= o.seq.Load() {
				c.currentSeqid40()
			}
			return nfs4.OK
		}
	}
	if !named {
		return nfs4.OK // a special or unknown stateid: the handler judges it
	}
	cl, s := t.client40(id)
	if s != nfs4.OK {
		return s
	}
	c.bind40(cl)
	return nfs4.OK
}

// status40 is st as NFSv4.0 has it, for an op's result (knfsd's
// nfsd4_map_status): RFC 7530 has no NFS4ERR_WRONG_TYPE, so an op on an
// object of the wrong type is NFS4ERR_INVAL, and OPEN of anything but a
// regular file or a directory is NFS4ERR_SYMLINK (section 16.16.6); a
// revoked delegation's stateid is simply a bad one (NFS4ERR_DELEG_REVOKED
// is 4.1's).
func status40(op uint32, st nfs4.Status) nfs4.Status {
	switch st {
	case nfs4.ErrWrongType:
		if op == nfs4.OpOpen {
			return nfs4.ErrSymlink
		}
		return nfs4.ErrInval
	case nfs4.ErrDelegRevoked:
		return nfs4.ErrBadStateid
	}
	return st
}

// openArgs40 refuses what OPEN4args of 4.0 cannot hold: 4.1's claims and
// EXCLUSIVE4_1 are not arms of its unions (NFS4ERR_BADXDR), and the
// share_access want bits are 4.1's (NFS4ERR_INVAL, as knfsd).
func openArgs40(a *openArgs) nfs4.Status {
	if a.claim > nfs4.ClaimDelegatePrev || (a.create && a.createMode == nfs4.CreateExclusive41) {
		return nfs4.ErrBadXDR
	}
	if a.access&^nfs4.ShareAccessBoth != 0 {
		return nfs4.ErrInval
	}
	return nfs4.OK
}

// currentSeqid40 lets a READ or WRITE carry an open or lock stateid of
// an earlier seqid: the client's I/O races with its own OPENs of the file,
// which move the open stateid's seqid on (the Linux 4.0 client sends the
// seqid it has, where 4.1 sends 0; knfsd answers NFS4ERR_OLD_STATEID and
// the client sends the WRITE again). The access checked is the open's
// current one whatever the seqid, so nothing is allowed that the open
// does not allow now. The seqid is set to 0 ("the current one") in the
// request itself, where the handler reads it: the record is the
// server's until the reply is sent. A seqid that is current when gate40
// looks is set to 0 as well: an OPEN running beside the READ or WRITE
// may move the open on before the handler looks again (seqids only
// grow), which answered NFS4ERR_OLD_STATEID to a WRITE the client sent
// with the newest stateid it had.
func (c *compound) currentSeqid40() {
	if b := c.d.Rest(); len(b) >= 4 {
		binary.BigEndian.PutUint32(b, 0)
	}
}

// opNum is the number of the op info describes.
func (c *compound) opNum(info *opInfo) uint32 {
	return uint32((uintptr(unsafe.Pointer(info)) - uintptr(unsafe.Pointer(&opTable[0]))) / unsafe.Sizeof(opTable[0]))
}

// client40 finds the confirmed 4.0 client of id: NFS4ERR_STALE_CLIENTID
// for one of an earlier boot or not confirmed (RFC 7530 section 9.1.2),
// NFS4ERR_EXPIRED for one of this boot that is gone, its lease over
// (knfsd's set_client), so that the client sets up a new one.
func (t *stateTable) client40(id uint64) (*client, nfs4.Status) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cl := t.clients[id]
	if cl == nil && uint32(id>>32) == t.s.boot {
		return nil, nfs4.ErrExpired
	}
	if cl == nil || !cl.confirmed || cl.v40 == nil {
		return nil, nfs4.ErrStaleClientid
	}
	return cl, nfs4.OK
}

// bind40 makes cl the client of the COMPOUND and renews its lease.
func (c *compound) bind40(cl *client) {
	c.sess = cl.v40.sess
	cl.renew()
	if !cl.v40.settled.Load() {
		c.s.state.v40Settle(cl)
	}
}

// v40Settle ends a 4.0 client's reclaims once it may do no more (RFC 7530
// has no RECLAIM_COMPLETE): outside a grace period, or when the previous
// boot did not know it. Until then its new opens get NFS4ERR_GRACE, as
// everyone's do during the grace period.
func (t *stateTable) v40Settle(cl *client) {
	defer t.syncRecords()
	t.mu.Lock()
	defer t.mu.Unlock()
	if cl.reclaimDone {
		cl.v40.settled.Store(true)
		return
	}
	if t.inGraceLocked() && t.grace.pending[clientRecord{cl.owner, cl.principal}] {
		return
	}
	t.reclaimCompleteLocked(cl)
	cl.v40.settled.Store(true)
}

// exec40 runs op (entry info) of a COMPOUND of minor version c.minor, for
// exec: in 4.1 and later a 4.0-only op is NFS4ERR_NOTSUPP; in 4.0 a seqid
// op goes through its owner's sequence (RFC 7530 section 9.1.7). bodyPos
// is where the op's result body starts.
func (c *compound) exec40(op uint32, info *opInfo, segs, bodyPos int) nfs4.Status {
	if c.minor > 0 {
		return nfs4.ErrNotsupp
	}
	if info.flags&opSeqid == 0 || c.sess == v40Anon || c.sess == nil {
		return c.run40(op, info, segs)
	}
	v := c.sess.client.v40
	v.seqMu.Lock()
	defer v.seqMu.Unlock()
	q := c.seqOf(op)
	if q.key == "" {
		return c.run40(op, info, segs)
	}
	key, seqid := q.key, q.seqid
	if q.newLock {
		// open_to_lock_owner4: the open-owner's seqid orders the request,
		// the new lock-owner starts at lock_seqid.
		key, seqid = q.openKey, q.openSeqid
	}
	v.mu.Lock()
	ow := v.owners[key]
	var s nfs4.Status
	switch {
	case ow == nil:
		// A new open-owner (or one whose state was forgotten).
	case ow.kept && seqid == ow.seq && ow.op == op:
		// A retransmission: the last reply again (section 9.1.9).
		body, st := ow.reply, ow.status
		v.mu.Unlock()
		info.args.read(c.d)
		c.keepResult = true
		c.e.Fixed(body)
		return st
	case op == nfs4.OpOpen && !ow.confirmed:
		// An unconfirmed open-owner is taken as new: the client may have
		// lost the OPEN whose OPEN_CONFIRM it never sent (knfsd too).
	case seqid != ow.seq+1:
		s = nfs4.ErrBadSeqid
	case !ow.confirmed && key[0] == 'o' && op != nfs4.OpOpen && op != nfs4.OpOpenConfirm:
		s = nfs4.ErrBadStateid
	}
	v.mu.Unlock()
	if s != nfs4.OK {
		info.args.read(c.d)
		return s
	}

	st := c.run40(op, info, segs)

	if !seqidBumps(st) {
		return st
	}
	v.mu.Lock()
	full := len(v.owners) >= maxV40Owners
	v.mu.Unlock()
	var held map[string]bool
	if full {
		held = c.s.state.heldOwners40(c.sess.client)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if held != nil {
		c.s.state.pruneOwners40(c.sess.client, held)
	}
	if ow = v.owners[key]; ow == nil {
		ow = &v40Owner{confirmed: key[0] == 'l'}
		v.owners[key] = ow
	}
	if q.newLock && st == nfs4.OK {
		v.owners[q.key] = &v40Owner{seq: q.lockSeqid, confirmed: true}
	}
	switch {
	case op == nfs4.OpClose && st == nfs4.OK && q.closing != [nfs4.OtherSize]byte{}:
		delete(v.closed, ow.closed)
		c.s.state.closed40.Delete(ow.closed)
		ow.closed = q.closing
		v.closed[q.closing] = key
		c.s.state.closed40.Store(q.closing, c.sess.client)
	case op == nfs4.OpOpenConfirm && st == nfs4.OK:
		ow.confirmed = true
	case op == nfs4.OpOpen && st == nfs4.OK && !ow.confirmed:
		// OPEN4_RESULT_CONFIRM: the client must OPEN_CONFIRM (RFC 7530
		// section 16.16.5). rflags follow the stateid and change_info4.
		pos := bodyPos + stateidLen + changeInfoLen
		c.e.Patch(pos, beUint32(c.e.Header()[pos:])|openResultConfirm)
	}
	ow.seq, ow.op, ow.status, ow.kept = seqid, op, st, true
	ow.reply = nil
	if st == nfs4.OK || c.keepResult {
		ow.reply = bytes.Clone(c.e.Header()[bodyPos:])
	}
	return st
}

// openResultConfirm is OPEN4_RESULT_CONFIRM.
const openResultConfirm = 0x2

// run40 runs the handler, as exec does.
func (c *compound) run40(op uint32, info *opInfo, segs int) nfs4.Status {
	if rsizeCheck != nil {
		return c.runChecked(op, info, segs)
	}
	return info.run(c)
}

// seqidBumps reports whether an op that failed with st still used its
// seqid (RFC 7530 section 9.1.7): all but the errors that say the request
// could not be matched to its owner.
func seqidBumps(st nfs4.Status) bool {
	switch st {
	case nfs4.ErrStaleClientid, nfs4.ErrStaleStateid, nfs4.ErrBadStateid, nfs4.ErrBadSeqid,
		nfs4.ErrBadXDR, nfs4.ErrResource, nfs4.ErrNofilehandle, nfs4.ErrMoved:
		return false
	}
	return true
}

// seqRef is the owner a seqid op orders itself by.
type seqRef struct {
	key   string // "o:" or "l:" and the owner; "" when the op names no known state
	seqid uint32
	// A LOCK that makes a lock-owner: the open-owner's seqid is checked
	// and replayed, the lock-owner starts at lockSeqid.
	newLock              bool
	openKey              string
	openSeqid, lockSeqid uint32
	closing              [nfs4.OtherSize]byte // CLOSE's stateid
}

// seqOf reads the owner and seqid of the seqid op at c.d (without
// consuming it). A stateid the client does not hold gives no owner: the
// handler then answers for it.
func (c *compound) seqOf(op uint32) seqRef {
	d := c.peekArgs()
	var sid nfs4.Stateid
	var q seqRef
	switch op {
	case nfs4.OpOpen:
		q.seqid = d.Uint32()
		d.Skip(8)
		d.Uint64()
		q.key = "o:" + string(d.Opaque(nfs4.OpaqueLimit))
		if d.Err() != nil {
			return seqRef{}
		}
		return q
	case nfs4.OpOpenConfirm:
		a := decodeOpenConfirm(&d)
		sid, q.seqid = a.stateid, a.seqid
	case nfs4.OpOpenDowngrade:
		a := decodeOpenDowngrade(&d)
		sid, q.seqid = a.openStateid, a.seqid
	case nfs4.OpClose:
		a := decodeClose(&d)
		sid, q.seqid = a.openStateid, a.seqid
	case nfs4.OpLocku:
		a := decodeLocku(&d)
		sid, q.seqid = a.lockStateid, a.seqid
	case nfs4.OpLock:
		a := decodeLock(&d)
		if a.newLockOwner {
			q.newLock = true
			q.key = "l:" + string(a.lockOwner.owner)
			q.openSeqid, q.lockSeqid = a.openSeqid, a.lockSeqid
			q.seqid = a.lockSeqid
			o := c.s.state.opens.get(a.openStateid.Other)
			if o == nil || o.client != c.sess.client || o.lock != nil || o.deleg != nil {
				return seqRef{} // the handler refuses the stateid
			}
			q.openKey = o.key.owner
			return q
		}
		sid, q.seqid = a.lockStateid, a.lockSeqid
	}
	if d.Err() != nil {
		return seqRef{}
	}
	if sid.Other == nfs4.CurrentStateid.Other && c.hasCur {
		sid = c.cur
	}
	o := c.s.state.opens.get(sid.Other)
	if o == nil && op == nfs4.OpClose {
		v := c.sess.client.v40
		v.mu.Lock()
		q.key = v.closed[sid.Other]
		v.mu.Unlock()
		return q
	}
	if o == nil || o.client != c.sess.client || o.deleg != nil {
		return seqRef{}
	}
	q.key = o.key.owner
	if op == nfs4.OpClose {
		q.closing = sid.Other
	}
	return q
}

// heldOwners40 returns the owners of cl's open and lock state.
func (t *stateTable) heldOwners40(cl *client) map[string]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	held := make(map[string]bool, len(cl.opens))
	for k := range cl.opens {
		held[k.owner] = true
	}
	return held
}

// pruneOwners40 forgets the sequence state of cl's owners not in held
// (holding no open or lock state). The caller holds cl.v40.mu, and not
// t.mu (which comes first).
func (t *stateTable) pruneOwners40(cl *client, held map[string]bool) {
	for k, ow := range cl.v40.owners {
		if !held[k] {
			t.closed40.Delete(ow.closed)
			delete(cl.v40.closed, ow.closed)
			delete(cl.v40.owners, k)
		}
	}
}

func beUint32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// setclientidArgs is SETCLIENTID4args (RFC 7530 section 16.33.1).
type setclientidArgs struct {
	verf  [8]byte
	id    []byte
	cb    v40Callback
	cbSec bool
}

func decodeSetclientid(d *xdr.Decoder) setclientidArgs {
	var a setclientidArgs
	copy(a.verf[:], d.Fixed(8))
	a.id = d.Opaque(nfs4.OpaqueLimit)
	a.cb.prog = d.Uint32()
	a.cb.netid = string(d.String(nfs4.OpaqueLimit))
	a.cb.uaddr = string(d.String(nfs4.OpaqueLimit))
	a.cb.ident = d.Uint32()
	return a
}

func opSetclientid(c *compound) nfs4.Status {
	a := decodeSetclientid(c.d)
	if c.d.Err() != nil || len(a.id) == 0 {
		return nfs4.ErrBadXDR
	}
	a.cb.sec = c.cbSec40()
	id, verf, inuse, s := c.s.state.setclientid(c, string(a.id), a.verf, a.cb)
	if s == nfs4.ErrClidInuse {
		// clientaddr4 of the holder's callback (RFC 7530 section 16.33.2).
		c.keepResult = true
		c.e.String(inuse.netid)
		c.e.String(inuse.uaddr)
		return s
	}
	if s != nfs4.OK {
		return s
	}
	c.e.Uint64(id)
	c.e.Fixed(verf[:])
	return nfs4.OK
}

// cbSec40 is the security the callbacks of a 4.0 client carry: its own
// AUTH_SYS credential, as knfsd sends (the client's callback service takes
// AUTH_SYS and AUTH_NONE).
func (c *compound) cbSec40() cbSec {
	e := xdr.NewEncoder(64)
	e.Uint32(0)
	e.String("nfsd-uring")
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	return cbSec{flavor: nfs4.AuthSys, body: append([]byte(nil), e.Header()...)}
}

// setclientid is RFC 7530 section 16.33.5's case table. The principal is
// the caller's AUTH_SYS uid, as EXCHANGE_ID's.
func (t *stateTable) setclientid(c *compound, owner string, verf [8]byte, cb v40Callback) (uint64, [8]byte, v40Callback, nfs4.Status) {
	uid := c.caller.UID
	addr := c.conn.addr
	t.mu.Lock()
	defer t.mu.Unlock()
	conf := t.owners[owner]
	if conf != nil && conf.v40 == nil {
		// A 4.1 client's owner: the two versions do not share records.
		if conf.hasState() {
			return 0, [8]byte{}, v40Callback{}, nfs4.ErrClidInuse
		}
		t.removeClientLocked(conf)
		conf = nil
	}
	if conf != nil && conf.principal != uid {
		// Another principal using this owner: refused while the record
		// holds state and its lease runs (knfsd's nfsd4_setclientid).
		if conf.hasState() && !t.leaseExpiredLocked(conf, time.Now()) {
			conf.v40.mu.Lock()
			held := conf.v40.cb
			conf.v40.mu.Unlock()
			return 0, [8]byte{}, held, nfs4.ErrClidInuse
		}
		t.removeClientLocked(conf)
		conf = nil
	}
	if old := t.unconfirmed[owner]; old != nil {
		t.removeClientLocked(old)
	}
	var cv [8]byte
	binary.BigEndian.PutUint64(cv[:], t.rng.Uint64())
	if conf != nil && conf.verifier == verf {
		// The confirmed client changing its callback: the same client id,
		// the change waits for its SETCLIENTID_CONFIRM.
		conf.v40.mu.Lock()
		conf.v40.update = &v40Update{verf: cv, cb: cb}
		conf.v40.mu.Unlock()
		return conf.id, cv, v40Callback{}, nfs4.OK
	}
	// A new client, or a rebooted one (another verifier): a new record,
	// unconfirmed; a rebooted client's old one goes at the confirm.
	if !t.roomForClientLocked(addr) {
		return 0, [8]byte{}, v40Callback{}, nfs4.ErrDelay
	}
	cl := &client{
		id: t.newClientID(), owner: owner, verifier: verf, principal: uid, addr: addr, csSeq: 1,
		sessions: make(map[[nfs4.SessionIDSize]byte]*session),
		opens:    make(map[openKey]*openState),
	}
	cl.v40 = newV40State(cl)
	cl.v40.confirmVerf = cv
	cl.v40.cb = cb
	cl.renew()
	t.clients[cl.id] = cl
	t.useOf(addr).clients++
	t.unconfirmed[owner] = cl
	return cl.id, cv, v40Callback{}, nfs4.OK
}

type setclientidConfirmArgs struct {
	clientID uint64
	verf     [8]byte
}

func decodeSetclientidConfirm(d *xdr.Decoder) setclientidConfirmArgs {
	a := setclientidConfirmArgs{clientID: d.Uint64()}
	copy(a.verf[:], d.Fixed(8))
	return a
}

func opSetclientidConfirm(c *compound) nfs4.Status {
	a := decodeSetclientidConfirm(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	cl, s := c.s.state.setclientidConfirm(a.clientID, a.verf, c.caller.UID)
	if s != nfs4.OK {
		return s
	}
	c.s.state.v40Settle(cl)
	c.s.probe40(cl)
	return nfs4.OK
}

// setclientidConfirm confirms a client record, or the callback change of
// a confirmed one (RFC 7530 section 16.34.4).
func (t *stateTable) setclientidConfirm(id uint64, verf [8]byte, uid uint32) (*client, nfs4.Status) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cl := t.clients[id]
	if cl == nil || cl.v40 == nil {
		return nil, nfs4.ErrStaleClientid
	}
	if cl.principal != uid {
		return nil, nfs4.ErrClidInuse
	}
	v := cl.v40
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case cl.confirmed && v.update != nil && v.update.verf == verf:
		v.confirmVerf, v.cb, v.update = v.update.verf, v.update.cb, nil
	case v.confirmVerf != verf:
		return nil, nfs4.ErrStaleClientid
	case !cl.confirmed:
		t.confirmLocked(cl)
	}
	cl.renew()
	return cl, nfs4.OK
}

func opRenew(c *compound) nfs4.Status {
	id := decodeClientidArgs(c.d).clientID
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	cl, s := c.s.state.client40(id)
	if s != nfs4.OK {
		return s
	}
	cl.renew()
	// A client holding delegations must hear when its callback path is
	// down (RFC 7530 section 16.29.4).
	if c.s.state.hasDelegs(cl) && !cl.v40.sess.canCall() {
		return nfs4.ErrCbPathDown
	}
	return nfs4.OK
}

// hasDelegs reports whether cl holds a delegation.
func (t *stateTable) hasDelegs(cl *client) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range cl.opens {
		if o.deleg != nil {
			return true
		}
	}
	return false
}

type openConfirmArgs struct {
	stateid nfs4.Stateid
	seqid   uint32
}

func decodeOpenConfirm(d *xdr.Decoder) openConfirmArgs {
	return openConfirmArgs{stateid: nfs4.DecodeStateid(d), seqid: d.Uint32()}
}

// opOpenConfirm confirms an open-owner's first open (RFC 7530 section
// 16.18); exec40 checks the seqid and marks the owner confirmed.
func opOpenConfirm(c *compound) nfs4.Status {
	a := decodeOpenConfirm(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	// The current filehandle is checked here, not by the table (opNeedFH),
	// as in 4.1 the op is NFS4ERR_NOTSUPP whatever the filehandle.
	if c.cfh == nil {
		return nfs4.ErrNofilehandle
	}
	t := c.s.state
	if c.sess == nil || c.sess.client.v40 == nil {
		return t.unknownStateid(a.stateid) // no client holds it: stale, expired or bad
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	o, s := c.openStateLocked(a.stateid)
	if s != nfs4.OK {
		return s
	}
	v := c.sess.client.v40
	v.mu.Lock()
	ow := v.owners[o.key.owner]
	confirmed := ow == nil || ow.confirmed
	v.mu.Unlock()
	if confirmed {
		return nfs4.ErrBadStateid
	}
	out := nfs4.Stateid{Seqid: o.seq.Add(1), Other: o.other}
	out.Encode(c.e)
	return nfs4.OK
}

// opReleaseLockowner forgets a lock-owner's stateids (RFC 7530 section
// 16.37): NFS4ERR_LOCKS_HELD while it holds locks.
func opReleaseLockowner(c *compound) nfs4.Status {
	a := decodeLockOwner(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	cl, s := c.s.state.client40(a.clientID)
	if s != nfs4.OK {
		return s
	}
	cl.renew()
	key := "l:" + string(a.owner)
	t := c.s.state
	t.mu.Lock()
	var states []*openState
	for k, o := range cl.opens {
		if k.owner == key {
			if o.lock != nil && o.lock.ranges > 0 {
				t.mu.Unlock()
				return nfs4.ErrLocksHeld
			}
			states = append(states, o)
		}
	}
	for _, o := range states {
		t.dropLocked(o)
	}
	t.mu.Unlock()
	cl.v40.mu.Lock()
	if ow := cl.v40.owners[key]; ow != nil {
		t.closed40.Delete(ow.closed)
		delete(cl.v40.closed, ow.closed)
		delete(cl.v40.owners, key)
	}
	cl.v40.mu.Unlock()
	return nfs4.OK
}

// expiredOthers remembers the stateids of 4.0 clients that were removed
// (lease expired, a courtesy client's state wanted by another, a
// SETCLIENTID that replaced the client), so that using one is
// NFS4ERR_EXPIRED rather than NFS4ERR_BAD_STATEID: a 4.0 client has no
// SEQUENCE status flags to learn of it otherwise. Bounded, and fair per
// client address (fairQueues): a host churning through client ids forgets
// its own oldest, not another host's; a forgotten one is merely bad. 4.1
// clients lose their sessions with their state, so their stateids are
// never asked.
type expiredOthers struct {
	mu  sync.Mutex
	set map[[nfs4.OtherSize]byte]struct{}
	q   fairQueues[[nfs4.OtherSize]byte]
}

// maxExpiredOthers bounds expiredOthers (12 bytes and a map entry each).
const maxExpiredOthers = 1 << 16

// addClient records the stateids of c, a 4.0 client being removed.
func (x *expiredOthers) addClient(c *client) {
	if c.v40 == nil || len(c.opens) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.set == nil {
		x.set = make(map[[nfs4.OtherSize]byte]struct{})
		x.q.max = maxExpiredOthers
	}
	for _, o := range c.opens {
		if _, ok := x.set[o.other]; ok {
			continue
		}
		if out, ok := x.q.push(c.addr, o.other); ok {
			delete(x.set, out)
		}
		x.set[o.other] = struct{}{}
	}
}

// has reports whether other was a removed 4.0 client's stateid.
func (x *expiredOthers) has(other [nfs4.OtherSize]byte) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	_, ok := x.set[other]
	return ok
}

// forget40Locked forgets what the state table keeps of a 4.0 client
// going away.
func (t *stateTable) forget40Locked(cl *client) {
	if cl.v40 == nil {
		return
	}
	cl.v40.mu.Lock()
	for other := range cl.v40.closed {
		t.closed40.Delete(other)
	}
	vc := cl.v40.conn
	cl.v40.conn = nil
	cl.v40.mu.Unlock()
	if vc != nil {
		vc.close()
	}
}
