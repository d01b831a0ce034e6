package nfs

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

func init() {
	ops[nfs4.OpWrite] = opWrite
	ops[nfs4.OpCommit] = opCommit
	ops[nfs4.OpSetattr] = opSetattr
}

// createFile creates (or, for UNCHECKED, opens) a regular file for OPEN, as
// the caller.
func (c *compound) createFile(a *openArgs, res *openResult) (*node, uint32) {
	dir := c.cfh
	rel := joinRel(dir.path(), string(a.name))
	flags := unix.O_RDWR | unix.O_CREAT | unix.O_NOFOLLOW
	if a.createMode != nfs4.CreateUnchecked {
		flags |= unix.O_EXCL
	}
	mode := uint32(0o644)
	if a.attrs.mask.Has(nfs4.AttrMode) {
		mode = a.attrs.mode
	}
	var fd int
	err := asCaller(c.cred, func() error {
		var err error
		fd, err = dir.exp.openMode(rel, flags, mode)
		return err
	})
	exclusive := a.createMode == nfs4.CreateExclusive || a.createMode == nfs4.CreateExclusive41
	if err == unix.EEXIST && exclusive {
		return c.exclusiveRetry(dir, string(a.name), a.verf)
	}
	if err != nil {
		return nil, errno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, errno(err)
	}
	n := c.nodeFor(dir, rel, &st)
	// The descriptor opened by the create becomes the file's read-write
	// descriptor, so the OPEN that follows needs no second open.
	if !n.adoptWriteFD(fd) {
		defer unix.Close(fd)
	}
	// A file created now has ctime == mtime == atime to the nanosecond,
	// and no other opener yet; an UNCHECKED open of an old file has not.
	res.created = flags&unix.O_EXCL != 0 || st.Size == 0 && st.Ctim == st.Mtim
	attrs := a.attrs
	if attrs.mask.Has(nfs4.AttrMode) && st.Mode&0o7777 == attrs.mode {
		attrs.mask[nfs4.AttrMode/32] &^= 1 << (nfs4.AttrMode % 32) // already right (no umask)
	}
	if exclusive {
		attrs.mask.Set(nfs4.AttrTimeAccessSet)
		attrs.mask.Set(nfs4.AttrTimeModifySet)
		attrs.atime, attrs.mtime = verfTimes(a.verf)
	}
	if res.created || attrs.mask.Has(nfs4.AttrSize) {
		err = asCaller(c.cred, func() error {
			var err error
			res.attrset, err = applyAttrs(fd, fd, &attrs)
			return err
		})
		if err != nil {
			return nil, errno(err)
		}
	}
	if a.attrs.mask.Has(nfs4.AttrMode) {
		res.attrset.Set(nfs4.AttrMode)
	}
	return n, nfs4.OK
}

// verfTimes stores an exclusive-create verifier in atime and mtime seconds,
// where a retransmitted create finds it.
func verfTimes(v [8]byte) (atime, mtime unix.Timespec) {
	return unix.Timespec{Sec: int64(binary.BigEndian.Uint32(v[:4]))},
		unix.Timespec{Sec: int64(binary.BigEndian.Uint32(v[4:]))}
}

// exclusiveRetry answers an exclusive create of a file that exists: fine if
// it carries the same verifier (a retransmit), else NFS4ERR_EXIST.
func (c *compound) exclusiveRetry(dir *node, name string, verf [8]byte) (*node, uint32) {
	var st unix.Stat_t
	n, err := c.s.lookupChild(dir, name, &st)
	if err != nil {
		return nil, errno(err)
	}
	at, mt := verfTimes(verf)
	if st.Atim.Sec != at.Sec || st.Mtim.Sec != mt.Sec || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nfs4.ErrExist
	}
	return n, nfs4.OK
}

// nodeFor returns the node of a file just created at rel.
func (c *compound) nodeFor(dir *node, rel string, st *unix.Stat_t) *node {
	if n := c.s.files.get(nodeKey{dir.exp.id, st.Ino}); n != nil {
		n.mu.Lock()
		n.rel = rel
		n.mu.Unlock()
		return n
	}
	n := newNode(dir.exp, rel, st.Ino)
	n.handle = makeHandle(dir.exp, rel, st.Ino)
	return c.s.files.put(n)
}

// writeTarget checks a stateid for writing the current file and returns the
// descriptors to write with.
func (c *compound) writeTarget(sid nfs4.Stateid) (fd int, s uint32) {
	if s := c.needFH(); s != nfs4.OK {
		return -1, s
	}
	n := c.cfh
	if n.exp == nil {
		return -1, nfs4.ErrIsdir
	}
	sid, s = c.resolveSid(sid)
	if s != nfs4.OK {
		return -1, s
	}
	var st unix.Stat_t
	if s := c.s.statNode(n, &st); s != nfs4.OK {
		return -1, s
	}
	if s := openableType(&st); s != nfs4.OK {
		return -1, s
	}
	switch {
	case sid == nfs4.BypassStateid:
		return -1, nfs4.ErrBadStateid
	case sid == nfs4.AnonStateid:
		if accessBits(&st, c.cred, nfs4.AccessModify) == 0 {
			return -1, nfs4.ErrAccess
		}
	default:
		if s := c.s.state.checkWrite(c.sess.client, sid, n); s != nfs4.OK {
			return -1, s
		}
	}
	c.rep.pin(n) // before the descriptor is taken: the fd cache must not close it
	fd, err := n.writeFD(c.cred)
	if err != nil {
		return -1, errno(err)
	}
	return fd, nfs4.OK
}

func opWrite(c *compound) uint32 {
	sid := nfs4.DecodeStateid(c.d)
	off := c.d.Uint64()
	stable := c.d.Uint32()
	data := c.d.Opaque(c.s.cfg.MaxIO)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if stable > nfs4.FileSync4 {
		return nfs4.ErrInval
	}
	if off+uint64(len(data)) > 1<<63-1 {
		return nfs4.ErrFbig
	}
	fd, s := c.writeTarget(sid)
	if s != nfs4.OK {
		return s
	}
	n, err := c.s.io.WriteAt(File{FD: fd, node: c.cfh}, data, int64(off))
	if err != nil && n == 0 {
		return errno(err)
	}
	committed := uint32(nfs4.Unstable4)
	if stable != nfs4.Unstable4 {
		if err := c.s.io.Sync(fd, stable == nfs4.DataSync4); err != nil {
			return errno(err)
		}
		committed = stable
	}
	c.e.Uint32(uint32(n))
	c.e.Uint32(committed)
	c.e.Fixed(c.s.bootVer[:])
	return nfs4.OK
}

func opCommit(c *compound) uint32 {
	c.d.Uint64()
	c.d.Uint32()
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if s := c.needFH(); s != nfs4.OK {
		return s
	}
	n := c.cfh
	var st unix.Stat_t
	if s := c.s.statNode(n, &st); s != nfs4.OK {
		return s
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nfs4.ErrIsdir
	}
	if s := openableType(&st); s != nfs4.OK {
		return nfs4.ErrInval
	}
	c.rep.pin(n)
	fd, err := n.readFD()
	if err != nil {
		return errno(err)
	}
	if err := c.s.io.Sync(fd, true); err != nil {
		return errno(err)
	}
	c.e.Fixed(c.s.bootVer[:])
	return nfs4.OK
}

func opSetattr(c *compound) uint32 {
	sid := nfs4.DecodeStateid(c.d)
	a, s := decodeNewAttrs(c.d)
	c.keepResult = true
	resPos := c.e.Pos()
	nfs4.Bitmap{}.Encode(c.e)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if s != nfs4.OK {
		return s
	}
	if s := c.needFH(); s != nfs4.OK {
		return s
	}
	n := c.cfh
	if n.exp == nil {
		return nfs4.ErrRofs
	}
	wfd := -1
	if a.mask.Has(nfs4.AttrSize) {
		fd, s := c.writeTarget(sid)
		if s != nfs4.OK {
			return s
		}
		wfd = fd
	}
	pfd, err := n.exp.open(n.path(), unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return errno(err)
	}
	defer unix.Close(pfd)
	var done nfs4.Bitmap
	err = asCaller(c.cred, func() error {
		var err error
		done, err = applyAttrs(pfd, wfd, &a)
		return err
	})
	c.e.Truncate(resPos)
	done.Encode(c.e)
	if err != nil {
		return errno(err)
	}
	return nfs4.OK
}
