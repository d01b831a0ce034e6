package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// writeTarget checks a stateid for writing the current file and returns the
// descriptors to write with.
func (c *compound) writeTarget(sid nfs4.Stateid) (fd int, s nfs4.Status) {
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
	case sid == nfs4.AnonStateid || sid == nfs4.BypassStateid:
		// No open: every open's DENY_WRITE holds against it (knfsd's
		// check_special_stateids; issue 21 finding 7). The READ bypass
		// stateid bypasses nothing here: in WRITE and SETATTR it is
		// treated like the anonymous one (RFC 8881 section 8.2.3).
		if c.s.state.specialDenied(n, nfs4.ShareDenyWrite) {
			return -1, nfs4.ErrLocked
		}
	default:
		if s := c.s.state.checkWrite(c.sess.client, sid, n); s != nfs4.OK {
			return -1, s
		}
	}
	// Checked on every WRITE and SETATTR(size), whatever the stateid,
	// against the mode the fstat above just read (vfs_ioperm.go).
	if s := c.mayWrite(n, &st); s != nfs4.OK {
		return -1, s
	}
	c.rep.pin(n) // before the descriptor is taken: the fd cache must not close it
	fd, err := n.writeFD(c.cred)
	if err != nil {
		return -1, errno(err)
	}
	if s := c.dropPrivs(fd, &st); s != nfs4.OK {
		return -1, s
	}
	return fd, nfs4.OK
}

// dropPrivs clears the set-user-ID and set-group-ID bits of a file about to
// be changed by a caller other than root, as the kernel's file_remove_privs
// does for a writer without CAP_FSETID (and as knfsd gets by writing as the
// caller): set-user-ID always; set-group-ID when group-execute is set, or
// when the caller is not in the file's group. Our writes run as root on a
// shared descriptor, so the kernel keeps the bits; we clear them here. st
// is the stat writeTarget already made, so files without the bits (nearly
// all) cost nothing more.
func (c *compound) dropPrivs(fd int, st *unix.Stat_t) nfs4.Status {
	mode := st.Mode & 0o7777
	if mode&(unix.S_ISUID|unix.S_ISGID) == 0 || !canSwitch || c.cred.UID == 0 {
		// No bits; or we are not root, so the kernel clears them itself;
		// or the caller is root, who keeps them.
		return nfs4.OK
	}
	kill := mode & unix.S_ISUID
	if mode&unix.S_ISGID != 0 && (mode&unix.S_IXGRP != 0 || !inGroup(c.cred, st.Gid)) {
		kill |= unix.S_ISGID
	}
	if kill == 0 {
		return nfs4.OK
	}
	if err := unix.Fchmod(fd, mode&^kill); err != nil {
		return errno(err)
	}
	st.Mode &^= kill
	return nfs4.OK
}

// inGroup reports whether the caller's primary or supplementary groups
// hold gid.
func inGroup(cr Cred, gid uint32) bool {
	if cr.GID == gid {
		return true
	}
	for _, g := range cr.GIDs[:cr.NGIDs] {
		if g == gid {
			return true
		}
	}
	return false
}

// writeArgs is WRITE4args (RFC 8881 section 18.32.1).
type writeArgs struct {
	stateid nfs4.Stateid
	offset  uint64
	stable  uint32
	data    []byte // aliases the request
}

// decodeWrite reads WRITE4args. The data may be as long as the request
// holds: opWrite refuses more than the server's maximum.
func decodeWrite(d *xdr.Decoder) writeArgs {
	a := decodeWriteHead(d)
	a.data = d.Opaque(d.Remaining())
	return a
}

// decodeWriteHead reads WRITE4args up to the data.
func decodeWriteHead(d *xdr.Decoder) writeArgs {
	return writeArgs{stateid: nfs4.DecodeStateid(d), offset: d.Uint64(), stable: d.Uint32()}
}

// writeDataAt is WRITE's dataAt (opInfo): the data's bytes follow.
func writeDataAt(d *xdr.Decoder) uint64 {
	a := decodeWriteHead(d)
	d.Uint32() // the data's length
	return a.offset
}

func opWrite(c *compound) nfs4.Status {
	a := decodeWrite(c.d)
	if c.d.Err() != nil || len(a.data) > c.s.cfg.MaxIO {
		return nfs4.ErrBadXDR
	}
	sid, off, stable, data := a.stateid, a.offset, a.stable, a.data
	if stable > nfs4.FileSync4 {
		return nfs4.ErrInval
	}
	// As knfsd's nfsd4_write: a range past the largest file offset is
	// NFS4ERR_FBIG. Checked without computing off+len, which wraps for
	// offsets near 2^64 (and io_uring reads offset -1 as "the current
	// position").
	if !rangeFits(off, uint64(len(data))) {
		return nfs4.ErrFbig
	}
	fd, s := c.writeTarget(sid)
	if s != nfs4.OK {
		return s
	}
	if l := c.layoutFile(); l != nil {
		return c.proxied(func() nfs4.Status { return c.proxyWrite(l, fd, off, data) }) // pnfs_proxy.go
	}
	var n int
	err := c.asCallerIO(func() error {
		var err error
		n, err = c.s.io.WriteAt(File{FD: fd, node: c.cfh}, data, int64(off))
		return err
	})
	c.cfh.extent.changed()
	if n, err = writtenCount(n, len(data), err); n == 0 && len(data) > 0 {
		return errno(err)
	}
	committed := uint32(nfs4.Unstable4)
	if stable != nfs4.Unstable4 {
		if err := c.s.io.Sync(fd, stable == nfs4.DataSync4); err != nil {
			return errno(err)
		}
		committed = stable
	}
	c.countWritten(n)
	c.e.Uint32(uint32(n))
	c.e.Uint32(committed)
	c.e.Fixed(c.s.bootVer[:])
	return nfs4.OK
}

// commitArgs is COMMIT4args (RFC 8881 section 18.3.1). The whole file is
// synced, not just the range: fsync has no durable range form, and
// flushing more than asked is allowed (section 18.3.3). knfsd clamps the
// range rather than refusing one past the largest offset, so no range is
// an error here either.
type commitArgs struct {
	offset uint64
	count  uint32
}

func decodeCommit(d *xdr.Decoder) commitArgs {
	return commitArgs{offset: d.Uint64(), count: d.Uint32()}
}

func opCommit(c *compound) nfs4.Status {
	_ = decodeCommit(c.d) // not used: the whole file is synced
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
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
