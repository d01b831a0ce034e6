package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Limits on what a COMPOUND may carry before a session says otherwise.
// maxOpsHard only bounds the quick scans of inline.go: the COMPOUND itself
// takes any count, since SEQUENCE answers NFS4ERR_TOO_MANY_OPS for more
// than the session's ca_maxoperations and the loop stops there.
const (
	maxTag     = 1024
	maxOpsHard = 1024
)

// compound is the state of one COMPOUND being executed.
type compound struct {
	s     *Server
	cred  Cred
	minor uint32
	d     *xdr.Decoder
	e     *xdr.Encoder
	rep   *Reply

	cfh, sfh   *node
	cur, saved nfs4.Stateid
	hasCur     bool
	op         uint32  // the op running, and
	opFlags    opFlags // its flags in the table (resolveSid, setCur)
	hasSaved   bool
	sess       *session
	conn       *Conn
	nops       uint32
	more       bool // ops follow the one running
	recLen     int  // the request's size, for ca_maxrequestsize
	cacheThis  bool // SEQUENCE's sa_cachethis
	keepResult bool // a failing op's result body stays (e.g. LOCK denied)
	maxResp    int
	dirFD      int  // READDIR's open directory, for the entries' lookups,
	dirOpen    bool // when this is set
	// dirNoSearch: READDIR's caller may list the directory but not look
	// entries up in it.
	dirNoSearch bool
	maxCached   int        // ca_maxresponsesize_cached, once SEQUENCE ran
	drcKey      drcKey     // a 4.0 COMPOUND's in the duplicate request
	drcKept     bool       // cache, when set (v40_drc.go)
	pdir        *pseudoDir // the pseudo directory READDIR lists
	clock       opClock

	// caller is the caller's credentials as the RPC gave them (invalid
	// ids mapped); cred is what the server acts as, squashed by the
	// options (opts) of the current filehandle's export (accExp).
	caller Cred
	accExp *export
	opts   ClientOptions
	// rootBypass: an NFSv3 GETATTR or FSINFO, which may reach an
	// export's root with AUTH_SYS whatever its sec= (putfh3).
	rootBypass bool

	// memo holds the attributes LOOKUP just read of the file it made
	// current, so the GETATTR clients send right after it (PUTFH, LOOKUP,
	// GETFH, GETATTR) does not read them again. Any operation the table
	// does not mark opKeepsMemo (GETFH, GETATTR, ACCESS) forgets it (exec).
	memo attrMemo
}

// attrMemo is an operation's fresh stat of node n.
type attrMemo struct {
	n  *node
	st unix.Stat_t
}

// remember notes st as n's current attributes (see compound.memo).
func (c *compound) remember(n *node, st *unix.Stat_t) {
	c.memo.n = n
	c.memo.st = *st
}

// recall fills st from the memo when it holds n's attributes.
func (c *compound) recall(n *node, st *unix.Stat_t) bool {
	if n == nil || c.memo.n != n {
		return false
	}
	*st = c.memo.st
	return true
}

// compound executes a COMPOUND call from connection conn; rec is the
// whole record.
func (s *Server) compound(conn *Conn, cl *call, d *xdr.Decoder, rec []byte, rep *Reply) {
	e := rep.Enc
	encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	rep.bodyPos = e.Pos()
	if !s.compoundBody(conn, cl.cred, d, len(rec), rep) {
		e.Truncate(rep.bodyPos - 4)
		e.Uint32(nfs4.AcceptGarbageArgs)
		return
	}
	if rep.replay.ok {
		// A retransmit: answer with the cached COMPOUND result.
		e.Truncate(rep.bodyPos)
		rep.emitReplay()
	}
}

// compoundBody decodes COMPOUND4args from d and encodes COMPOUND4res. It
// returns false when the header itself is unreadable.
func (s *Server) compoundBody(conn *Conn, cred Cred, d *xdr.Decoder, recLen int, rep *Reply) bool {
	e := rep.Enc
	tag := d.Opaque(maxTag)
	minor := d.Uint32()
	n := d.Uint32()
	if d.Err() != nil {
		return false
	}
	c := &rep.cmp
	*c = compound{s: s, cred: s.ids.cred(cred), minor: minor, d: d, e: e, rep: rep, nops: n,
		conn: conn, recLen: recLen, maxResp: s.MaxRecord()}
	c.caller = c.cred
	c.startClock(conn)
	statusPos := e.Reserve()
	e.Opaque(tag)
	countPos := e.Reserve()
	if minor > 2 {
		e.Patch(statusPos, uint32(nfs4.ErrMinorVersMismatch))
		return true
	}
	if minor == 0 && n > maxOps40 {
		e.Patch(statusPos, uint32(nfs4.ErrResource)) // v40.go
		return true
	}
	if minor == 0 && c.drcStart40() {
		return true // a retransmit (v40_drc.go)
	}
	status, done := c.run()
	e.Patch(statusPos, uint32(status))
	e.Patch(countPos, uint32(done))
	c.drcDone40()
	return true
}

// run executes the operations and returns the COMPOUND status and the
// number of results encoded. It never runs more operations than the
// request holds: a count beyond them ends in NFS4ERR_BADXDR at the first
// missing one, and SEQUENCE refuses counts over the session's limit.
func (c *compound) run() (nfs4.Status, int) {
	for i := 0; uint32(i) < c.nops; i++ {
		op := c.d.Uint32()
		if c.d.Err() != nil {
			return c.fail(nfs4.OpIllegal, nfs4.ErrBadXDR), i + 1
		}
		info := lookupOp(op)
		if st := c.gate(info, i); st != nfs4.OK {
			if st == nfs4.ErrOpIllegal {
				op = nfs4.OpIllegal
			}
			return c.fail(op, st), i + 1
		}
		st := c.exec(op, info, uint32(i)+1 < c.nops)
		if c.rep.replay.ok {
			return nfs4.OK, 0
		}
		if st != nfs4.OK {
			return st, i + 1
		}
	}
	return nfs4.OK, int(c.nops)
}

// gate checks that the op of entry info (nil: no such op) may run at
// position i.
func (c *compound) gate(info *opInfo, i int) nfs4.Status {
	if info == nil || info.minor > c.minor {
		return nfs4.ErrOpIllegal
	}
	if c.minor == 0 {
		return c.gate40(info) // v40.go
	}
	f := info.flags
	if i == 0 {
		if f&opFirstOnly != 0 || (f&opSessionless != 0 && c.nops == 1) {
			return nfs4.OK
		}
		if f&opSessionless != 0 {
			return nfs4.ErrNotOnlyOp
		}
		return nfs4.ErrOpNotInSession
	}
	switch {
	case f&opFirstOnly != 0:
		return nfs4.ErrSequencePos
	case c.sess == nil:
		return nfs4.ErrOpNotInSession
	case f&opOnlyOp != 0:
		// BIND_CONN_TO_SESSION only: EXCHANGE_ID and CREATE_SESSION may
		// follow SEQUENCE, a client adding a session or a client id over
		// a session it has (knfsd's nfs41_check_op_ordering; pynfs EID1b,
		// CSESS2).
		return nfs4.ErrNotOnlyOp
	case f&opV40Only != 0:
		return nfs4.ErrNotsupp // RFC 8881 section 18: MUST NOT in 4.1
	}
	return nfs4.OK
}

// fail encodes a result of status st for op, with no body.
func (c *compound) fail(op uint32, st nfs4.Status) nfs4.Status {
	c.countRefused(op, st)
	c.e.Uint32(op)
	c.e.Uint32(uint32(st))
	return st
}

// exec runs one operation: op number, status, then the body the handler
// writes. A failing handler's partial body is cut off unless it asks to keep
// it. more says whether other ops follow.
func (c *compound) exec(op uint32, info *opInfo, more bool) nfs4.Status {
	c.e.Uint32(op)
	statusPos := c.e.Reserve()
	bodyPos := c.e.Pos()
	segs, reads := len(c.rep.segs), len(c.rep.Reads)
	c.more = more
	c.op, c.opFlags = op, info.flags
	c.beginOp()
	if info.flags&opKeepsMemo == 0 {
		c.memo.n = nil
	}
	st := c.refuseReadOnly(info)
	if st == nfs4.OK && info.flags&opModifies != 0 {
		st = c.checkRoom(info.rsize(c), more)
	}
	if st == nfs4.OK && info.flags&opNeedFH != 0 && c.cfh == nil {
		st = noFH(c.d, info)
	}
	if st == nfs4.OK {
		st = c.secBefore(op) // sec.go
	}
	if st == nfs4.OK {
		c.keepResult = false
		changer := c.beginChange(info) // state_deleg.go: inotify events it causes
		if c.minor == 0 || info.flags&opV40Only != 0 {
			st = c.exec40(op, info, segs, bodyPos) // v40.go
		} else if rsizeCheck != nil {
			st = c.runChecked(op, info, segs)
		} else {
			st = info.run(c)
		}
		if changer != nil {
			changer.endChange()
		}
	}
	if st == nfs4.OK && c.d.Err() != nil {
		st = nfs4.ErrBadXDR
	}
	if st == nfs4.OK {
		st = c.secAfter(op) // sec.go: NFS4ERR_WRONGSEC
	}
	if st == nfs4.OK {
		st = c.checkReplySize(info, segs)
	}
	if st != nfs4.OK && !c.keepResult && c.e.Pos() > bodyPos {
		c.e.Truncate(bodyPos)
	}
	if c.minor == 0 && st != nfs4.OK {
		st = status40(op, st) // v40.go
	}
	c.e.Patch(statusPos, uint32(st))
	c.countOp(op, info, st, reads)
	return st
}

// noFH answers an op the table marks opNeedFH when there is no current
// filehandle: NFS4ERR_NOFILEHANDLE, once its arguments are read from d,
// since arguments the op's decoder refuses are refused for that first
// (NFS4ERR_BADXDR): knfsd decodes the whole COMPOUND before
// nfsd4_proc_compound checks ALLOWED_WITHOUT_FH. The op's own checks come
// after (a LOCK of a bad range with no filehandle is NOFILEHANDLE).
func noFH(d *xdr.Decoder, info *opInfo) nfs4.Status {
	if s := info.args.read(d); s != nfs4.OK {
		return s
	}
	return nfs4.ErrNofilehandle
}

// checkRoom is knfsd's nfsd4_check_resp_size, asked before an op that
// modifies something runs: a result of need bytes (and, when more ops
// follow, room for at least an error after it) must fit the session's
// ca_maxresponsesize (else NFS4ERR_REP_TOO_BIG) and, when the client asked
// for the reply to be cached (sa_cachethis), ca_maxresponsesize_cached
// (else NFS4ERR_REP_TOO_BIG_TO_CACHE), RFC 8881 section 2.10.6.4. Checked
// before rather than after, a non-idempotent op never runs when its reply
// could not be sent or replayed; ops that change nothing are checked on
// what they actually encode (checkReplySize), and READ, READ_PLUS and
// READDIR fit themselves to the room left.
func (c *compound) checkRoom(need int, more bool) nfs4.Status {
	if more {
		need += compoundErrSlack
	}
	if c.e.Len()+need > c.maxResp {
		return nfs4.ErrRepTooBig
	}
	if c.cacheThis && c.rep.cacheCost()+need > c.maxCached {
		return nfs4.ErrRepTooBigToCache
	}
	return nfs4.OK
}

// checkReplySize fails an operation whose result took the reply past the
// session's ca_maxresponsesize (NFS4ERR_REP_TOO_BIG) or, when the client
// asked for the reply to be cached, past ca_maxresponsesize_cached
// (NFS4ERR_REP_TOO_BIG_TO_CACHE), per RFC 8881 section 2.10.6.4. READ and
// READ_PLUS clamp themselves to the room left; a result holding file data
// cannot be cut back, so it stays (and such a reply is simply not cached).
func (c *compound) checkReplySize(info *opInfo, segs int) nfs4.Status {
	if info.flags&opDataReply != 0 && len(c.rep.segs) > segs {
		return nfs4.OK
	}
	if c.e.Len() > c.maxResp {
		return nfs4.ErrRepTooBig
	}
	if c.cacheThis && c.rep.cacheCost() > c.maxCached {
		return nfs4.ErrRepTooBigToCache
	}
	return nfs4.OK
}

// rsizeCheck, when set (by tests), is told of every op's estimated and
// actual result size, to prove the estimates are bounds.
var rsizeCheck func(op uint32, est, got int)

// runChecked runs info's handler and reports its result's size against
// the estimate to rsizeCheck.
func (c *compound) runChecked(op uint32, info *opInfo, segs int) nfs4.Status {
	est := info.rsize(c)
	before := c.e.Len()
	st := info.run(c)
	if st != nfs4.OK && !c.keepResult {
		return st // the body is cut off
	}
	got := c.e.Len() - before
	for _, sg := range c.rep.segs[segs:] {
		got += xdrLen(sg.n)
	}
	rsizeCheck(op, est, got)
	return st
}

// stateidArgs is the argument of the ops that take a stateid alone
// (DELEGRETURN, OFFLOAD_STATUS, OFFLOAD_CANCEL).
type stateidArgs struct {
	stateid nfs4.Stateid
}

func decodeStateidArgs(d *xdr.Decoder) stateidArgs {
	return stateidArgs{stateid: nfs4.DecodeStateid(d)}
}

// setCur sets the current stateid (RFC 8881 section 16.2.3.1.2), for the
// ops the table marks opSetsCurSid.
func (c *compound) setCur(sid nfs4.Stateid) {
	if curSidCheck != nil {
		curSidCheck(c.op, c.opFlags, opSetsCurSid)
	}
	if c.opFlags&opSetsCurSid != 0 {
		c.cur, c.hasCur = sid, true
	}
}

// resolveSid replaces the special "current stateid" with the real one,
// for the ops the table marks opUsesCurSid; for others it stays the
// special value, which no state matches (NFS4ERR_BAD_STATEID).
func (c *compound) resolveSid(sid nfs4.Stateid) (nfs4.Stateid, nfs4.Status) {
	if curSidCheck != nil {
		curSidCheck(c.op, c.opFlags, opUsesCurSid)
	}
	if sid == nfs4.CurrentStateid && c.opFlags&opUsesCurSid != 0 {
		if !c.hasCur {
			return sid, nfs4.ErrBadStateid
		}
		return c.cur, nfs4.OK
	}
	return sid, nfs4.OK
}

// curSidCheck, when set (by tests), is told of every setCur and
// resolveSid with the running op's flags and the flag the call needs, so
// a handler that uses the current stateid without the table saying so
// fails the tests (optable_test.go).
var curSidCheck func(op uint32, have, need opFlags)

// room is how many more reply bytes the session allows.
func (c *compound) room() int {
	return c.maxResp - c.e.Len()
}
