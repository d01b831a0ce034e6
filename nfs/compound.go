package nfs

import (
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
	hasSaved   bool
	sess       *session
	conn       *Conn
	nops       uint32
	recLen     int  // the request's size, for ca_maxrequestsize
	cacheThis  bool // SEQUENCE's sa_cachethis
	keepResult bool // a failing op's result body stays (e.g. LOCK denied)
	maxResp    int
	dirFD      int  // READDIR's open directory, for the entries' lookups,
	dirOpen    bool // when this is set
	// dirNoSearch: READDIR's caller may list the directory but not look
	// entries up in it.
	dirNoSearch bool
	maxCached   int // ca_maxresponsesize_cached, once SEQUENCE ran
	clock       opClock
}

type opFunc func(c *compound) uint32

// ops is the dispatch table, indexed by operation number.
var ops [nfs4.OpRemovexattr + 1]opFunc

// minorOf is the first minor version that defines an operation.
func minorOf(op uint32) uint32 {
	if op >= nfs4.OpAllocate {
		return 2
	}
	return 1
}

// sessionless ops may come without SEQUENCE, as the only op.
func sessionless(op uint32) bool {
	switch op {
	case nfs4.OpExchangeID, nfs4.OpCreateSession, nfs4.OpDestroySession,
		nfs4.OpDestroyClientid, nfs4.OpBindConnToSession:
		return true
	}
	return false
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
	c.startClock(conn)
	statusPos := e.Reserve()
	e.Opaque(tag)
	countPos := e.Reserve()
	if minor < 1 || minor > 2 {
		e.Patch(statusPos, nfs4.ErrMinorVersMismatch)
		return true
	}
	status, done := c.run()
	e.Patch(statusPos, status)
	e.Patch(countPos, uint32(done))
	return true
}

// run executes the operations and returns the COMPOUND status and the
// number of results encoded. It never runs more operations than the
// request holds: a count beyond them ends in NFS4ERR_BADXDR at the first
// missing one, and SEQUENCE refuses counts over the session's limit.
func (c *compound) run() (uint32, int) {
	for i := 0; uint32(i) < c.nops; i++ {
		op := c.d.Uint32()
		if c.d.Err() != nil {
			return c.fail(nfs4.OpIllegal, nfs4.ErrBadXDR), i + 1
		}
		if st := c.gate(op, i); st != nfs4.OK {
			if st == nfs4.ErrOpIllegal {
				op = nfs4.OpIllegal
			}
			return c.fail(op, st), i + 1
		}
		st := c.exec(op)
		if c.rep.replay.ok {
			return nfs4.OK, 0
		}
		if st != nfs4.OK {
			return st, i + 1
		}
	}
	return nfs4.OK, int(c.nops)
}

// gate checks that op may run at position i.
func (c *compound) gate(op uint32, i int) uint32 {
	if op < nfs4.OpAccess || op > nfs4.OpRemovexattr || minorOf(op) > c.minor {
		return nfs4.ErrOpIllegal
	}
	if i == 0 {
		if op == nfs4.OpSequence || (sessionless(op) && c.nops == 1) {
			return nfs4.OK
		}
		if sessionless(op) {
			return nfs4.ErrNotOnlyOp
		}
		return nfs4.ErrOpNotInSession
	}
	switch {
	case op == nfs4.OpSequence:
		return nfs4.ErrSequencePos
	case c.sess == nil:
		return nfs4.ErrOpNotInSession
	case op == nfs4.OpExchangeID || op == nfs4.OpCreateSession || op == nfs4.OpBindConnToSession:
		return nfs4.ErrNotOnlyOp
	}
	return nfs4.OK
}

// fail encodes a result of status st for op, with no body.
func (c *compound) fail(op, st uint32) uint32 {
	c.countRefused(op, st)
	c.e.Uint32(op)
	c.e.Uint32(st)
	return st
}

// exec runs one operation: op number, status, then the body the handler
// writes. A failing handler's partial body is cut off unless it asks to keep
// it.
func (c *compound) exec(op uint32) uint32 {
	c.e.Uint32(op)
	statusPos := c.e.Reserve()
	bodyPos := c.e.Pos()
	segs, reads := len(c.rep.segs), len(c.rep.Reads)
	c.beginOp()
	f := ops[op]
	var st uint32
	if f == nil {
		st = nfs4.ErrNotsupp
	} else {
		c.keepResult = false
		st = f(c)
	}
	if st == nfs4.OK && c.d.Err() != nil {
		st = nfs4.ErrBadXDR
	}
	if st == nfs4.OK {
		st = c.checkReplySize(segs)
	}
	if st != nfs4.OK && !c.keepResult && c.e.Pos() > bodyPos {
		c.e.Truncate(bodyPos)
	}
	c.e.Patch(statusPos, st)
	c.countOp(op, st, reads)
	return st
}

// checkReplySize fails an operation whose result took the reply past the
// session's ca_maxresponsesize (NFS4ERR_REP_TOO_BIG) or, when the client
// asked for the reply to be cached, past ca_maxresponsesize_cached
// (NFS4ERR_REP_TOO_BIG_TO_CACHE), per RFC 8881 section 2.10.6.4. READ and
// READ_PLUS clamp themselves to the room left; a result holding file data
// cannot be cut back, so it stays (and such a reply is simply not cached).
func (c *compound) checkReplySize(segs int) uint32 {
	if len(c.rep.segs) > segs {
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

// needFH is the common check of ops that act on the current file handle.
func (c *compound) needFH() uint32 {
	if c.cfh == nil {
		return nfs4.ErrNofilehandle
	}
	return nfs4.OK
}

// setCur sets the current stateid (RFC 8881 section 16.2.3.1.2).
func (c *compound) setCur(sid nfs4.Stateid) { c.cur, c.hasCur = sid, true }

// resolveSid replaces the special "current stateid" with the real one.
func (c *compound) resolveSid(sid nfs4.Stateid) (nfs4.Stateid, uint32) {
	if sid == nfs4.CurrentStateid {
		if !c.hasCur {
			return sid, nfs4.ErrBadStateid
		}
		return c.cur, nfs4.OK
	}
	return sid, nfs4.OK
}

// room is how many more reply bytes the session allows.
func (c *compound) room() int {
	return c.maxResp - c.e.Len()
}
