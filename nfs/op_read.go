package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// readTarget does the checks common to READ, READ_PLUS and SEEK and returns
// the file's descriptor and attributes.
func (c *compound) readTarget(sid nfs4.Stateid, st *unix.Stat_t) (int, nfs4.Status) {
	fd, _, s := c.readFD(sid)
	if s != nfs4.OK {
		return -1, s
	}
	return fd, c.statRead(fd, st)
}

// readFD checks the current filehandle and sid for a read and returns the
// file's read descriptor (its node pinned by the reply) and whether sid is
// an open's (or a lock's or delegation's) on it with read access: then
// the READ may skip its fstat. The caller's permission is checked after
// (statRead, or cachedReadOK without an fstat).
func (c *compound) readFD(sid nfs4.Stateid) (fd int, opened bool, s nfs4.Status) {
	n := c.cfh
	if n.exp == nil {
		return -1, false, nfs4.ErrIsdir
	}
	// The type from the handle, before any open: a FIFO or device is
	// never opened for a READ (the open could block the event loop).
	if s := openableMode(n.mode); s != nfs4.OK {
		return -1, false, s
	}
	sid, s = c.resolveSid(sid)
	if s != nfs4.OK {
		return -1, false, s
	}
	opened, s = c.s.state.checkRead(sid, n, c.client())
	if s != nfs4.OK {
		return -1, false, s
	}
	c.rep.pin(n) // before the descriptor is taken: the fd cache must not close it
	fd, err := n.readFD()
	if err != nil {
		if err == unix.EISDIR {
			return -1, false, nfs4.ErrIsdir
		}
		if err == unix.ELOOP {
			return -1, false, nfs4.ErrSymlink
		}
		return -1, false, errno(err)
	}
	return fd, opened, nfs4.OK
}

// statRead reads the attributes of the current file, open as fd, for a
// read, checks the caller may read it now (whatever the stateid: knfsd
// checks every READ), and keeps the size for later READs (sizeHint).
func (c *compound) statRead(fd int, st *unix.Stat_t) nfs4.Status {
	n := c.cfh
	gen := n.extent.gen.Load() // before the fstat: a change after it voids the hint
	if err := unix.Fstat(fd, st); err != nil {
		return errno(err)
	}
	if s := openableType(st); s != nfs4.OK {
		return s
	}
	if s := c.mayRead(n, st); s != nfs4.OK {
		return s
	}
	if h := n.size.Load(); h == nil || h.size != st.Size || h.gen != gen {
		n.size.Store(&sizeHint{size: st.Size, gen: gen})
	}
	return nfs4.OK
}

// sizeHint is a regular file's size as an fstat saw it, valid while the
// file's extent generation (bumped by every change this server makes to
// its data, allocation or size: WRITE, SETATTR of size, ALLOCATE,
// DEALLOCATE, COPY, CLONE) is gen. A READ with an open's stateid that
// ends before it skips its fstat (so does a READ_PLUS of a range the
// extent cache has as data, see cachedData), about half of the server's
// own work on a cached 4 KiB READ (BENCHMARKS.md, "READ without its
// fstat"): its eof is false, and the engine's short read still patches
// count and eof if the file shrank. Only a local process that truncates
// the file to exactly the READ's end can make it say eof false at the
// end of the file; the client's next READ then gets zero bytes and eof,
// which is what a READ racing that truncation could see anyway.
type sizeHint struct {
	size int64
	gen  uint64
}

// within reports whether count bytes at off end before the end of n's
// file by its size hint.
func (n *node) within(off uint64, count int) bool {
	h := n.size.Load()
	end := off + uint64(count)
	return h != nil && h.gen == n.extent.gen.Load() && end >= off && end < uint64(h.size)
}

// readOverhead is the reply room kept for the rest of the COMPOUND.
const readOverhead = 512

// clampCount limits a read to the server's maximum and the session's room.
func (c *compound) clampCount(count uint32) int {
	n := int(count)
	if n > c.s.cfg.MaxIO {
		n = c.s.cfg.MaxIO
	}
	if r := c.room() - readOverhead; n > r {
		n = max(r, 0)
	}
	return n
}

// readArgs is READ4args, and READ_PLUS4args, of the same shape (RFC 8881
// section 18.22.1, RFC 7862 section 15.10.1).
type readArgs struct {
	stateid nfs4.Stateid
	offset  uint64
	count   uint32
}

func decodeRead(d *xdr.Decoder) readArgs {
	return readArgs{stateid: nfs4.DecodeStateid(d), offset: d.Uint64(), count: d.Uint32()}
}

// readPlan is the range a READ or READ_PLUS reads, worked out from its
// readArgs: n bytes at off, clamped to the file, the server's maximum and
// the session's reply room; eof when the range reaches the end of the
// file.
type readPlan struct {
	fd     int
	st     unix.Stat_t
	off    uint64
	n      int
	eof    bool
	opened bool // sid is an open's (or lock's, delegation's) with read access
	hinted bool // no fstat: the range ends before the size hint (a.st zero)
}

// planRead fills a from the arguments being decoded. A range of an opened
// file that ends before its size hint, for a caller the node's recent
// verdict lets read, is read without an fstat (a.hinted; a.st stays zero,
// a.eof false); stat does the fstat later if the caller needs the
// attributes after all.
func (c *compound) planRead(a *readPlan) nfs4.Status {
	args := decodeRead(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	a.off = args.offset
	count := args.count
	fd, opened, s := c.readFD(args.stateid)
	if s != nfs4.OK {
		return s
	}
	a.fd, a.opened = fd, opened
	a.n = c.clampCount(count)
	if opened && c.cfh.within(a.off, a.n) && c.cachedReadOK(c.cfh) {
		a.hinted = true
		return nfs4.OK
	}
	return c.stat(a)
}

// stat reads the file's attributes for a (checking the caller may read
// it) and clamps the range to the file's size.
func (c *compound) stat(a *readPlan) nfs4.Status {
	a.hinted = false
	if s := c.statRead(a.fd, &a.st); s != nfs4.OK {
		return s
	}
	size := uint64(a.st.Size)
	if a.off >= size {
		a.n = 0
	} else if rem := size - a.off; uint64(a.n) > rem {
		a.n = int(rem)
	}
	a.eof = a.off+uint64(a.n) >= size
	return nfs4.OK
}

func opRead(c *compound) nfs4.Status {
	if l := c.layoutFile(); l != nil {
		return c.proxied(func() nfs4.Status { return c.proxyRead(l, false) }) // pnfs_proxy.go
	}
	var a readPlan
	if s := c.planRead(&a); s != nfs4.OK {
		return s
	}
	e := c.e
	eofPos := e.Pos()
	e.Bool(a.eof)
	countPos := e.Reserve()
	e.Patch(countPos, uint32(a.n))
	if a.n > 0 {
		c.rep.addRead(c.cfh, a.fd, int64(a.off), a.n)
		c.rep.addSeg(countPos, eofPos, 0, a.n)
	}
	return nfs4.OK
}

// seekArgs is SEEK4args (RFC 7862 section 15.11.1).
type seekArgs struct {
	stateid nfs4.Stateid
	offset  uint64
	what    uint32 // data_content4
}

func decodeSeek(d *xdr.Decoder) seekArgs {
	return seekArgs{stateid: nfs4.DecodeStateid(d), offset: d.Uint64(), what: d.Uint32()}
}

func opSeek(c *compound) nfs4.Status {
	a := decodeSeek(c.d)
	sid, off, what := a.stateid, a.offset, a.what
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if c.layoutFile() != nil {
		return c.proxied(func() nfs4.Status { return c.proxySeek(a) }) // pnfs_proxy.go
	}
	var st unix.Stat_t
	fd, s := c.readTarget(sid, &st)
	if s != nfs4.OK {
		return s
	}
	whence := unix.SEEK_DATA
	switch what {
	case nfs4.ContentData:
	case nfs4.ContentHole:
		whence = unix.SEEK_HOLE
	default:
		return nfs4.ErrUnionNotsupp
	}
	if off > 1<<63-1 {
		return nfs4.ErrNxio
	}
	pos, err := seeker(fd, int64(off), whence)
	if err != nil {
		return errno(err)
	}
	c.e.Bool(pos >= st.Size)
	c.e.Uint64(uint64(pos))
	return nfs4.OK
}
