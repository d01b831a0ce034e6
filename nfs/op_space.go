package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// allocateArgs is ALLOCATE4args, and DEALLOCATE4args of the same shape
// (RFC 7862 sections 15.1.1, 15.4.1).
type allocateArgs struct {
	stateid        nfs4.Stateid
	offset, length uint64
}

func decodeAllocate(d *xdr.Decoder) allocateArgs {
	return allocateArgs{stateid: nfs4.DecodeStateid(d), offset: d.Uint64(), length: d.Uint64()}
}

// fallocateOp is ALLOCATE and DEALLOCATE.
func fallocateOp(c *compound, mode uint32) nfs4.Status {
	a := decodeAllocate(c.d)
	sid, off, length := a.stateid, a.offset, a.length
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	// As fallocate(2), which knfsd passes these to: an offset or length
	// that is negative as a file offset is NFS4ERR_INVAL, a range that
	// ends past the largest offset NFS4ERR_FBIG.
	if off > maxOffset || length > maxOffset {
		return nfs4.ErrInval
	}
	if !rangeFits(off, length) {
		return nfs4.ErrFbig
	}
	if sid == nfs4.BypassStateid {
		// The all-ones stateid counts as the anonymous one here, as
		// knfsd's check_special_stateids treats it for any write-type
		// operation (pynfs ALLOC3); WRITE keeps refusing it.
		sid = nfs4.AnonStateid
	}
	fd, s := c.writeTarget(sid)
	if s != nfs4.OK {
		return s
	}
	if l := c.layoutFile(); l != nil {
		return c.proxyFallocate(l, fd, mode, off, length)
	}
	err := c.asCallerIO(func() error { return c.s.io.Fallocate(fd, mode, int64(off), int64(length)) })
	c.cfh.extent.changed()
	if err != nil {
		if err == unix.EOPNOTSUPP {
			return nfs4.ErrNotsupp
		}
		return errno(err)
	}
	return nfs4.OK
}

func opAllocate(c *compound) nfs4.Status { return fallocateOp(c, 0) }

func opDeallocate(c *compound) nfs4.Status {
	return fallocateOp(c, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE)
}

// copyArgs are the common part of COPY and CLONE: the source is the saved
// filehandle, the destination the current one.
type copyArgs struct {
	src, dst       nfs4.Stateid
	srcOff, dstOff uint64
	count          uint64
}

// copyTargets checks both files and returns the source's read descriptor
// and the destination's write descriptor.
func (c *compound) copyTargets(a *copyArgs) (int, int, nfs4.Status) {
	if c.sfh == nil { // the current one: the table's opNeedFH
		return -1, -1, nfs4.ErrNofilehandle
	}
	if c.sfh.exp == nil || c.cfh.exp == nil {
		return -1, -1, nfs4.ErrIsdir
	}
	var st unix.Stat_t
	// The source is read as its own export squashes the caller, the
	// destination written as its export does.
	saved := c.cfh
	c.cfh = c.sfh
	c.enterExport(c.sfh)
	srcFD, s := c.readTarget(a.src, &st)
	c.cfh = saved
	c.enterExport(saved)
	if s != nfs4.OK {
		return -1, -1, s
	}
	if a.srcOff > uint64(st.Size) {
		return -1, -1, nfs4.ErrInval
	}
	dstFD, s := c.writeTarget(a.dst)
	if s != nfs4.OK {
		return -1, -1, s
	}
	if a.count == 0 || a.srcOff+a.count > uint64(st.Size) || a.srcOff+a.count < a.srcOff {
		a.count = uint64(st.Size) - a.srcOff
	}
	// The destination range must be a file range too (the source one is,
	// being inside the file): as a WRITE past it, NFS4ERR_FBIG.
	if a.dstOff > maxOffset {
		return -1, -1, nfs4.ErrInval
	}
	if !rangeFits(a.dstOff, a.count) {
		return -1, -1, nfs4.ErrFbig
	}
	return srcFD, dstFD, nfs4.OK
}

func decodeCopyArgs(d *xdr.Decoder) copyArgs {
	var a copyArgs
	a.src = nfs4.DecodeStateid(d)
	a.dst = nfs4.DecodeStateid(d)
	a.srcOff, a.dstOff, a.count = d.Uint64(), d.Uint64(), d.Uint64()
	return a
}

func opClone(c *compound) nfs4.Status {
	a := decodeCopyArgs(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	whole := a.count == 0
	src, dst, s := c.copyTargets(&a)
	if s != nfs4.OK {
		return s
	}
	if s := c.noLayoutOp(c.sfh, c.cfh); s != nfs4.OK {
		return s
	}
	if whole {
		a.count = 0 // FICLONERANGE: 0 means to EOF
	}
	err := c.asCallerIO(func() error { return c.s.io.Clone(src, int64(a.srcOff), dst, int64(a.dstOff), int64(a.count)) })
	c.cfh.extent.changed()
	if err != nil {
		switch err {
		case unix.EOPNOTSUPP, unix.ENOTTY, unix.EXDEV:
			return nfs4.ErrNotsupp
		}
		return errno(err)
	}
	return nfs4.OK
}
