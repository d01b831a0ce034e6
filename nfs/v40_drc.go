package nfs

import (
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NFSv4.0 has no sessions, so nothing but the duplicate request cache
// (nfs3_drc.go) stops a retransmitted COMPOUND from running twice: a
// CREATE sent again after the reply was lost (a reconnect, or the client
// retrying on the same connection) would answer NFS4ERR_EXIST, a REMOVE
// NFS4ERR_NOENT. As NFS-Ganesha does for 4.0, the COMPOUNDs that hold an op
// of drcOp40 and nothing that drcCompound40 leaves out are kept there,
// their COMPOUND4res by xid, client address, the caller's ids and a
// checksum of all their ops; the RPC header (and an RPCSEC_GSS wrapping) is made anew for the
// replay. 4.1 and 4.2 have the session's slot cache instead
// (state_slotcache.go).
//
// Left out are COMPOUNDs with an op that carries an open-owner's or
// lock-owner's seqid (opSeqid: OPEN, OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE,
// LOCK, LOCKU), whose owner keeps its last reply for a retransmission
// (RFC 7530 section 9.1.9, v40.go), and those whose result carries file
// data (opDataReply: READ), kept as iovecs, not bytes.

// drcOp40 reports whether op changes the namespace or attributes so that
// it answers differently if run twice: the ops of drcProc's procedures.
// WRITE is not, as in NFSv3.
func drcOp40(op uint32) bool {
	switch op {
	case nfs4.OpCreate, nfs4.OpLink, nfs4.OpRemove, nfs4.OpRename, nfs4.OpSetattr:
		return true
	}
	return false
}

// drcCompound40 reports whether the reply of a 4.0 COMPOUND of n ops,
// whose encoded ops are ops, is kept in the duplicate request cache. It
// skips the ops' arguments as Inline does; one it cannot read ends the
// COMPOUND there, so what follows does not matter.
func drcCompound40(ops []byte, n uint32) bool {
	var d xdr.Decoder
	d.Reset(ops)
	keep := false
	for range min(n, maxOps40) {
		op := d.Uint32()
		info := lookupOp(op)
		if d.Err() != nil || info == nil || info.minor > 0 {
			return keep
		}
		switch {
		case info.flags&(opSeqid|opDataReply) != 0:
			return false
		case drcOp40(op):
			keep = true
		}
		switch {
		case op == nfs4.OpSetattr: // its handler reads the argument itself
			d.Skip(stateidLen)
			d.Skip(4 * d.ArrayLen(1<<10, 4)) // fattr4's bitmap
			d.Opaque(1 << 24)                // and its values
			if d.Err() != nil {
				return keep
			}
		case info.args.read == nil:
			return false // OPENATTR: not read here
		case !info.args.skip(&d):
			return keep
		}
	}
	return keep
}

// drcStart40 looks a 4.0 COMPOUND up in the duplicate request cache once
// its header is read. It returns true when the reply is settled: the
// kept result is encoded, or the first call is still running and this one
// is dropped, its connection closed. Otherwise a COMPOUND whose reply is
// to be kept is entered (c.drcKey), and drcDone40 keeps its result.
func (c *compound) drcStart40() bool {
	ops := c.d.Rest()
	if !drcCompound40(ops, c.nops) {
		return false
	}
	k := drcKeyOf(c.conn, &c.caller, c.rep.xid, nfs4.NFSVersion, nfs4.ProcCompound, ops)
	replay, running := c.s.v3.drc.start(k, time.Now())
	switch {
	case running:
		// A 4.0 client resends only over a new connection, and a server
		// that drops a request must close its connection (RFC 7530
		// section 3.1.1): the retransmit then finds the reply kept.
		c.rep.Drop, c.rep.Close = true, true
		c.s.countProc(c.conn, nfs4.ProgramNFS, nfs4.NFSVersion, nfs4.ProcCompound, "DRC_IN_PROGRESS")
		return true
	case replay != nil:
		c.e.Truncate(c.rep.bodyPos)
		c.e.Fixed(replay)
		c.s.countProc(c.conn, nfs4.ProgramNFS, nfs4.NFSVersion, nfs4.ProcCompound, "DRC_REPLAY")
		return true
	}
	c.drcKey, c.drcKept = k, true
	return false
}

// drcDone40 keeps the COMPOUND's result for its retransmissions.
func (c *compound) drcDone40() {
	if !c.drcKept {
		return
	}
	rep := c.rep
	if rep.Drop || len(rep.Reads) > 0 || len(rep.segs) > 0 {
		c.s.v3.drc.forget(c.drcKey)
		return
	}
	c.s.v3.drc.done(c.drcKey, c.e.Header()[rep.bodyPos:])
}
