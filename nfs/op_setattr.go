package nfs

import (
	"math"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// settableAttrs are the attributes SETATTR and create operations accept.
var settableAttrs = nfs4.BitmapOf(nfs4.AttrSize, nfs4.AttrMode, nfs4.AttrOwner,
	nfs4.AttrOwnerGroup, nfs4.AttrTimeAccessSet, nfs4.AttrTimeModifySet, nfs4.AttrACL)

// newAttrs are the attributes decoded from a fattr4 sent by the client.
type newAttrs struct {
	mask         nfs4.Bitmap // the attributes given
	size         uint64
	mode         uint32
	uid, gid     uint32
	atime, mtime unix.Timespec
	// ownerName and groupName are owner strings that are not numeric,
	// mapped to uid and gid by resolveNewAttrs (acl_attr.go).
	ownerName, groupName string
	wireACL              []wireACE // the acl attribute as sent
	aces                 []ace     // wireACL with its whos mapped (resolveNewAttrs)
}

// decodeNewAttrs reads a fattr4 for SETATTR, CREATE or OPEN. Unknown or
// unsettable attributes are refused as RFC 8881 asks.
func decodeNewAttrs(d *xdr.Decoder) (newAttrs, nfs4.Status) {
	var a newAttrs
	a.mask = nfs4.DecodeBitmap(d)
	vals := d.Opaque(64 << 10)
	if d.Err() != nil {
		return a, nfs4.ErrBadXDR
	}
	for w := range a.mask {
		if a.mask[w]&^settableAttrs[w] != 0 {
			if a.mask[w]&^supportedAttrs[w] != 0 {
				return a, nfs4.ErrAttrnotsupp
			}
			return a, nfs4.ErrInval
		}
	}
	v := xdr.NewDecoder(vals)
	var st nfs4.Status = nfs4.OK
	if a.mask.Has(nfs4.AttrSize) {
		a.size = v.Uint64()
	}
	if a.mask.Has(nfs4.AttrACL) {
		// Before mode: fattr4 values come in attribute order.
		a.wireACL, st = decodeACL(v)
		if st == nfs4.OK && a.wireACL == nil {
			a.wireACL = []wireACE{}
		}
	}
	if a.mask.Has(nfs4.AttrMode) {
		a.mode = v.Uint32() & 0o7777
	}
	if a.mask.Has(nfs4.AttrOwner) && st == nfs4.OK {
		a.uid, a.ownerName, st = parseOwner(v.String(1024))
	}
	if a.mask.Has(nfs4.AttrOwnerGroup) && st == nfs4.OK {
		a.gid, a.groupName, st = parseOwner(v.String(1024))
	}
	timeOK := true
	if a.mask.Has(nfs4.AttrTimeAccessSet) {
		a.atime, timeOK = decodeSetTime(v)
	}
	if a.mask.Has(nfs4.AttrTimeModifySet) {
		var ok bool
		a.mtime, ok = decodeSetTime(v)
		timeOK = timeOK && ok
	}
	// The values must fill attr_vals exactly: bytes left over are as
	// malformed as bytes missing (RFC 8881 section 3.3.4; knfsd's
	// nfsd4_decode_fattr4 checks the length it read).
	if v.Err() != nil || v.Remaining() != 0 {
		return a, nfs4.ErrBadXDR
	}
	if !timeOK && st == nfs4.OK {
		st = nfs4.ErrInval
	}
	return a, st
}

// decodeSetTime reads settime4; "server time" becomes UTIME_NOW. A
// nanosecond count of a second or more is well-formed XDR but not a time:
// ok is false (NFS4ERR_INVAL, as knfsd's nfsd4_decode_nfstime4).
func decodeSetTime(d *xdr.Decoder) (t unix.Timespec, ok bool) {
	if d.Uint32() == nfs4.SetToServerTime {
		return unix.Timespec{Nsec: unix.UTIME_NOW}, true
	}
	sec := d.Int64()
	nsec := d.Uint32()
	if nsec >= 1e9 {
		return unix.Timespec{}, false
	}
	return unix.Timespec{Sec: sec, Nsec: int64(nsec)}, true
}

// parseOwner reads an owner string: a numeric one ("1000", as the Linux
// client sends with AUTH_SYS) is the id; any other is returned as name,
// for resolveNewAttrs to map through the server's name mapping (idmap.go).
func parseOwner(b []byte) (id uint32, name string, s nfs4.Status) {
	if len(b) == 0 {
		// No name at all is a malformed argument rather than an unknown
		// owner (knfsd's idmap: NFS4ERR_INVAL for a zero length).
		return 0, "", nfs4.ErrInval
	}
	if id, ok := numericID(string(b)); ok {
		return id, "", nfs4.OK
	}
	return 0, string(b), nfs4.OK
}

// applyAttrs sets a on the file open as fd (O_PATH is enough, except for
// size, which uses wfd). It returns the attributes it set.
func applyAttrs(fd, wfd int, a *newAttrs) (nfs4.Bitmap, error) {
	var done nfs4.Bitmap
	proc := "/proc/self/fd/" + itoa(fd)
	if a.mask.Has(nfs4.AttrSize) {
		if a.size > math.MaxInt64 {
			return done, unix.EFBIG // ftruncate would read it as negative: EINVAL
		}
		if err := unix.Ftruncate(wfd, int64(a.size)); err != nil {
			return done, err
		}
		done.Set(nfs4.AttrSize)
	}
	if a.mask.Has(nfs4.AttrMode) {
		if err := chmodFD(fd, proc, a.mode); err != nil {
			return done, err
		}
		done.Set(nfs4.AttrMode)
	}
	if a.mask.Has(nfs4.AttrOwner) || a.mask.Has(nfs4.AttrOwnerGroup) {
		if a.ownerName != "" || a.groupName != "" {
			return done, statusErr(nfs4.ErrBadowner) // not mapped (resolveNewAttrs)
		}
		uid, gid := -1, -1
		if a.mask.Has(nfs4.AttrOwner) {
			uid = int(a.uid)
		}
		if a.mask.Has(nfs4.AttrOwnerGroup) {
			gid = int(a.gid)
		}
		if err := unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return done, err
		}
		if uid >= 0 {
			done.Set(nfs4.AttrOwner)
		}
		if gid >= 0 {
			done.Set(nfs4.AttrOwnerGroup)
		}
	}
	if a.mask.Has(nfs4.AttrACL) {
		// After mode and owner, as knfsd's nfsd_setattr: the ACL wins.
		if err := applyACL(fd, proc, a); err != nil {
			return done, err
		}
		done.Set(nfs4.AttrACL)
	}
	if a.mask.Has(nfs4.AttrTimeAccessSet) || a.mask.Has(nfs4.AttrTimeModifySet) {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if a.mask.Has(nfs4.AttrTimeAccessSet) {
			ts[0] = a.atime
		}
		if a.mask.Has(nfs4.AttrTimeModifySet) {
			ts[1] = a.mtime
		}
		if err := setTimes(proc, ts); err != nil {
			return done, err
		}
		for _, b := range []int{nfs4.AttrTimeAccessSet, nfs4.AttrTimeModifySet} {
			if a.mask.Has(b) {
				done.Set(b)
			}
		}
	}
	return done, nil
}

// setTimes sets atime and mtime of the file at path (a /proc link) to ts
// (UTIME_NOW: the server's time; UTIME_OMIT: left as it is), as the
// caller asCaller switched to.
//
// Setting a time to the server's time is a "touch", which needs write
// permission, not ownership: knfsd's nfsd_setattr asks only NFSD_MAY_WRITE
// when no explicit time is given. The kernel agrees for utimensat with
// both times UTIME_NOW (or NULL), but wants ownership when one of them is
// UTIME_OMIT. That case, refused with EPERM, is retried after checking
// write permission as the caller, with the server's own fsuid: only
// UTIME_NOW and UTIME_OMIT ever reach the kernel that way.
func setTimes(path string, ts []unix.Timespec) error {
	err := unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, 0)
	if err != unix.EPERM || !onlyNow(ts) {
		return err
	}
	// faccessat2 itself, not unix.Faccessat: where faccessat2 is missing
	// that emulates AT_EACCESS from the euid (root: anything goes).
	if err := unix.Faccessat2(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS); err != nil {
		if err == unix.ENOSYS {
			return unix.EPERM
		}
		return err
	}
	return asServerFSUID(func() error { return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, 0) })
}

// onlyNow reports whether ts sets no explicit time: each is UTIME_NOW or
// UTIME_OMIT.
func onlyNow(ts []unix.Timespec) bool {
	for _, t := range ts {
		if t.Nsec != unix.UTIME_NOW && t.Nsec != unix.UTIME_OMIT {
			return false
		}
	}
	return true
}

// chmodFD sets the mode of the file open as fd (path is its /proc link).
// A symlink's mode is ignored, as knfsd's nfsd_sanitize_attrs does: Linux
// cannot change it (chmod answers EOPNOTSUPP) and nothing reads it, so
// SETATTR succeeds without changing anything (pynfs cleans its tree so).
func chmodFD(fd int, path string, mode uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil
	}
	return unix.Chmod(path, mode)
}

// exclcreatAttrs can come with an EXCLUSIVE4_1 create. The times are not
// among them: they hold the create verifier, as in the kernel server.
var exclcreatAttrs = nfs4.BitmapOf(nfs4.AttrSize, nfs4.AttrMode, nfs4.AttrOwner, nfs4.AttrOwnerGroup, nfs4.AttrACL)

func opSetattr(c *compound) nfs4.Status {
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
	if s := c.resolveNewAttrs(&a); s != nfs4.OK {
		return s
	}
	// Not the table's opNeedFH: this error result carries a bitmap too.
	if c.cfh == nil {
		return nfs4.ErrNofilehandle
	}
	n := c.cfh
	if n.exp == nil || c.readOnlyFH() {
		return nfs4.ErrRofs
	}
	// RFC 8435 section 15: another client's layout must not outlive a
	// change of who may use the file, or of its size.
	if c.s.mds != nil && (a.mask.Has(nfs4.AttrMode) || a.mask.Has(nfs4.AttrOwner) ||
		a.mask.Has(nfs4.AttrOwnerGroup) || a.mask.Has(nfs4.AttrSize) || a.mask.Has(nfs4.AttrACL)) {
		if s := c.s.recallLayouts(c.client(), n); s != nfs4.OK {
			return s
		}
	}
	// So must another client's delegation (knfsd: notify_change and
	// setxattr break delegations): its holder opens from its cache,
	// checking access there, and would go on letting in users the new
	// mode, owner or ACL keeps out.
	if a.mask.Has(nfs4.AttrMode) || a.mask.Has(nfs4.AttrOwner) || a.mask.Has(nfs4.AttrOwnerGroup) || a.mask.Has(nfs4.AttrACL) {
		if s := c.s.breakDelegs(c.client(), n, true); s != nfs4.OK {
			return s
		}
	}
	wfd := -1
	if a.mask.Has(nfs4.AttrSize) {
		fd, s := c.writeTarget(sid)
		if s != nfs4.OK {
			return s
		}
		wfd = fd
		if a.size > math.MaxInt64 {
			return nfs4.ErrFbig // RFC 8881 section 5.8.1.9; ftruncate would say EINVAL
		}
		if l := c.layoutFile(); l != nil {
			// The data files first: the export file's size is what
			// GETATTR reports (pnfs_proxy.go).
			if s := c.s.proxySetSize(l, a.size); s != nfs4.OK {
				return s
			}
		}
	}
	pfd, release, err := n.anyFD()
	if err != nil {
		return errno(err)
	}
	defer release()
	var done nfs4.Bitmap
	err = asCaller(c.cred, func() error {
		var err error
		done, err = applyAttrs(pfd, wfd, &a)
		return err
	})
	if a.mask.Has(nfs4.AttrSize) {
		n.extent.changed()
	}
	if a.mask.Has(nfs4.AttrMode) || a.mask.Has(nfs4.AttrOwner) || a.mask.Has(nfs4.AttrOwnerGroup) || a.mask.Has(nfs4.AttrACL) {
		n.forgetPerm() // the next READ checks against the new mode
	}
	c.e.Truncate(resPos)
	done.Encode(c.e)
	if err != nil {
		return errno(err)
	}
	return c.commitMeta(pfd)
}
