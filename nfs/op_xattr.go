package nfs

import (
	"bytes"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Extended attributes (RFC 8276): GETXATTR, SETXATTR, LISTXATTRS and
// REMOVEXATTR reach the user namespace only. A wire name carries no
// prefix; on disk the name "x" is "user.x", and listings show the user
// names without it (as knfsd). Each operation opens the current file by
// the confined, checked open (O_PATH), checks the caller's permission the
// way knfsd's fh_verify does (NFSD_MAY_READ to get or list, NFSD_MAY_WRITE
// to set or remove, no owner override) and then makes the *xattr call as
// the caller through the descriptor's /proc link: an O_PATH descriptor
// takes no f*xattr, and its link names exactly the checked file.

// Kernel limits (include/uapi/linux/limits.h).
const (
	xattrUserPrefix = "user."
	// xattrNameMax is the longest wire name: XATTR_NAME_MAX (255) less
	// the prefix the server adds.
	xattrNameMax uint64 = 255 - uint64(len(xattrUserPrefix))
	// xattrSizeMax is XATTR_SIZE_MAX, the largest value the kernel takes.
	xattrSizeMax = 64 << 10
	// xattrListMax is XATTR_LIST_MAX, the largest listxattr answer.
	xattrListMax = 64 << 10
	// listxattrsOverhead is what LISTXATTRS4resok takes besides the
	// names: cookie, array count, eof. lxa_maxcount bounds all of it
	// (RFC 8276 section 8.4.3).
	listxattrsOverhead = 8 + 4 + 4
)

// getxattrArgs is GETXATTR4args; name is the on-disk name ("user.x").
type getxattrArgs struct{ name string }

// setxattrArgs is SETXATTR4args. value aliases the request record.
type setxattrArgs struct {
	option uint32
	name   string
	value  []byte
}

// listxattrsArgs is LISTXATTRS4args.
type listxattrsArgs struct {
	cookie   uint64
	maxcount uint32
}

// removexattrArgs is REMOVEXATTR4args.
type removexattrArgs struct{ name string }

// decodeXattrName reads an xattrkey4 and returns the on-disk name. As
// knfsd's nfsd4_decode_xattr_name: a name too long to take the prefix is
// NFS4ERR_NAMETOOLONG (checked before its bytes are read), an empty name or
// one with a NUL (it cannot reach the kernel) NFS4ERR_BADXDR.
func decodeXattrName(d *xdr.Decoder) (string, nfs4.Status) {
	n := d.Uint32()
	if d.Err() != nil {
		return "", nfs4.ErrBadXDR
	}
	if uint64(n) > xattrNameMax {
		return "", nfs4.ErrNametoolong
	}
	b := d.Fixed(int(n))
	if d.Err() != nil || n == 0 || bytes.IndexByte(b, 0) >= 0 {
		return "", nfs4.ErrBadXDR
	}
	return xattrUserPrefix + string(b), nfs4.OK
}

func decodeGetxattr(d *xdr.Decoder) (getxattrArgs, nfs4.Status) {
	name, s := decodeXattrName(d)
	return getxattrArgs{name}, s
}

func decodeRemovexattr(d *xdr.Decoder) (removexattrArgs, nfs4.Status) {
	name, s := decodeXattrName(d)
	return removexattrArgs{name}, s
}

// decodeSetxattr reads SETXATTR4args. An unknown option is NFS4ERR_INVAL,
// a value over XATTR_SIZE_MAX NFS4ERR_XATTR2BIG, checked before its bytes
// are read (knfsd's nfsd4_decode_setxattr).
func decodeSetxattr(d *xdr.Decoder) (setxattrArgs, nfs4.Status) {
	var a setxattrArgs
	a.option = d.Uint32()
	if d.Err() != nil {
		return a, nfs4.ErrBadXDR
	}
	if a.option > nfs4.SetxattrReplace {
		return a, nfs4.ErrInval
	}
	var s nfs4.Status
	if a.name, s = decodeXattrName(d); s != nfs4.OK {
		return a, s
	}
	n := d.Uint32()
	if d.Err() != nil {
		return a, nfs4.ErrBadXDR
	}
	if n > xattrSizeMax {
		return a, nfs4.ErrXattr2big
	}
	a.value = d.Fixed(int(n))
	if d.Err() != nil {
		return a, nfs4.ErrBadXDR
	}
	return a, nfs4.OK
}

func decodeListxattrs(d *xdr.Decoder) (listxattrsArgs, nfs4.Status) {
	a := listxattrsArgs{cookie: d.Uint64(), maxcount: d.Uint32()}
	if d.Err() != nil {
		return a, nfs4.ErrBadXDR
	}
	return a, nfs4.OK
}

// xattrFile is the current file opened for an xattr operation: an O_PATH
// descriptor from the confined open, checked to be the file, and its
// attributes.
type xattrFile struct {
	fd int
	st unix.Stat_t
}

// openXattrFile opens the current file (not the pseudo-root) and checks
// that the caller holds need (mayRead or mayWrite) on it.
func (c *compound) openXattrFile(need uint32) (xattrFile, nfs4.Status) {
	f := xattrFile{fd: -1}
	fd, err := c.cfh.open(unix.O_PATH, nil)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		err = unix.ESTALE
	}
	if err != nil {
		return f, errno(err)
	}
	f.fd = fd
	if err := unix.Fstat(fd, &f.st); err != nil {
		f.close()
		return xattrFile{fd: -1}, errno(err)
	}
	if c.rights(c.cfh, &f.st, need)&need == 0 {
		f.close()
		return xattrFile{fd: -1}, nfs4.ErrAccess
	}
	return f, nfs4.OK
}

func (f *xattrFile) close() {
	if f.fd >= 0 {
		unix.Close(f.fd)
		f.fd = -1
	}
}

// path is the /proc link the *xattr calls go through.
func (f *xattrFile) path() string { return "/proc/self/fd/" + itoa(f.fd) }

// holdsUser reports whether the file can have user xattrs: Linux allows
// them on regular files and directories only (xattr_permission); the
// others answer as the kernel does, without a call.
func (f *xattrFile) holdsUser() bool {
	t := f.st.Mode & unix.S_IFMT
	return t == unix.S_IFREG || t == unix.S_IFDIR
}

// change is the file's change attribute now.
func (f *xattrFile) change() uint64 {
	var st unix.Stat_t
	if unix.Fstat(f.fd, &st) != nil {
		return changeAttr(&f.st)
	}
	return changeAttr(&st)
}

// xattrErrno maps an *xattr call's error as knfsd's nfsd_xattr_errno:
// ENODATA is NFS4ERR_NOXATTR, E2BIG NFS4ERR_XATTR2BIG, ERANGE (a list or
// value larger than the kernel returns) NFS4ERR_TOOSMALL.
func xattrErrno(err error) nfs4.Status {
	switch err {
	case unix.ENODATA:
		return nfs4.ErrNoxattr
	case unix.E2BIG:
		return nfs4.ErrXattr2big
	case unix.ERANGE:
		return nfs4.ErrToosmall
	}
	return errno(err)
}

// readSized fills a buffer from call, which returns the size needed when
// given an empty buffer (getxattr, listxattr): probe, then read; a value
// that grew in between (ERANGE) is probed again, a few times.
func readSized(limit int, call func(buf []byte) (int, error)) ([]byte, error) {
	for range 3 {
		n, err := call(nil)
		if err != nil {
			return nil, err
		}
		if n > limit {
			return nil, unix.E2BIG
		}
		buf := make([]byte, n)
		m, err := call(buf)
		if err == unix.ERANGE {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:m], nil
	}
	return nil, unix.ERANGE
}

func opGetxattr(c *compound) nfs4.Status {
	a, s := decodeGetxattr(c.d)
	if s != nfs4.OK {
		return s
	}
	if c.cfh.exp == nil {
		return nfs4.ErrNoxattr // the pseudo-root has none
	}
	f, s := c.openXattrFile(mayRead)
	if s != nfs4.OK {
		return s
	}
	defer f.close()
	if !f.holdsUser() {
		return nfs4.ErrNoxattr
	}
	var val []byte
	err := asCaller(c.cred, func() error {
		var err error
		val, err = readSized(xattrSizeMax, func(buf []byte) (int, error) {
			return unix.Getxattr(f.path(), a.name, buf)
		})
		return err
	})
	if err != nil {
		return xattrErrno(err)
	}
	// A value larger than the session's replies fails in checkReplySize
	// (NFS4ERR_REP_TOO_BIG).
	c.e.Opaque(val)
	return nfs4.OK
}

// setxattrFlags maps setxattr_option4 to setxattr(2)'s flags.
var setxattrFlags = [...]int{
	nfs4.SetxattrEither:  0,
	nfs4.SetxattrCreate:  unix.XATTR_CREATE,
	nfs4.SetxattrReplace: unix.XATTR_REPLACE,
}

func opSetxattr(c *compound) nfs4.Status {
	a, s := decodeSetxattr(c.d)
	if s != nfs4.OK {
		return s
	}
	return c.changeXattr(func(path string) error {
		return unix.Setxattr(path, a.name, a.value, setxattrFlags[a.option])
	})
}

func opRemovexattr(c *compound) nfs4.Status {
	a, s := decodeRemovexattr(c.d)
	if s != nfs4.OK {
		return s
	}
	return c.changeXattr(func(path string) error {
		return unix.Removexattr(path, a.name)
	})
}

// changeXattr runs change (SETXATTR's or REMOVEXATTR's call on the file's
// /proc path) as the caller and encodes the file's change_info4. Files
// that cannot hold user xattrs give NFS4ERR_PERM, as the kernel's EPERM.
func (c *compound) changeXattr(change func(path string) error) nfs4.Status {
	if c.cfh.exp == nil {
		return nfs4.ErrRofs
	}
	f, s := c.openXattrFile(mayWrite)
	if s != nfs4.OK {
		return s
	}
	defer f.close()
	if !f.holdsUser() {
		return nfs4.ErrPerm
	}
	before := changeAttr(&f.st)
	if err := asCaller(c.cred, func() error { return change(f.path()) }); err != nil {
		return xattrErrno(err)
	}
	changeInfo{before, f.change()}.encode(c.e)
	return nfs4.OK
}

func opListxattrs(c *compound) nfs4.Status {
	a, s := decodeListxattrs(c.d)
	if s != nfs4.OK {
		return s
	}
	var names [][]byte
	if c.cfh.exp != nil {
		f, s := c.openXattrFile(mayRead)
		if s != nfs4.OK {
			return s
		}
		defer f.close()
		if f.holdsUser() {
			var err error
			if names, err = userXattrs(c.cred, &f); err != nil {
				return xattrErrno(err)
			}
		}
	}
	return c.encodeXattrList(names, a)
}

// userXattrs lists the file's user xattrs, without the prefix, in the
// order the filesystem gives them. The names alias one buffer.
func userXattrs(cr Cred, f *xattrFile) ([][]byte, error) {
	var list []byte
	err := asCaller(cr, func() error {
		var err error
		list, err = readSized(xattrListMax, func(buf []byte) (int, error) {
			return unix.Listxattr(f.path(), buf)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	var names [][]byte
	for _, name := range bytes.Split(list, []byte{0}) {
		if rest, ok := bytes.CutPrefix(name, []byte(xattrUserPrefix)); ok && len(rest) > 0 {
			names = append(names, rest)
		}
	}
	return names, nil
}

// encodeXattrList encodes LISTXATTRS4resok: the names from the cookie on
// (the cookie counts names already returned) that fit in lxa_maxcount and
// in the session's reply. RFC 8276 section 8.4.3: a cookie past the list
// is NFS4ERR_BADCOOKIE, a maxcount too small for the first name
// NFS4ERR_TOOSMALL.
func (c *compound) encodeXattrList(names [][]byte, a listxattrsArgs) nfs4.Status {
	if a.cookie > uint64(len(names)) {
		return nfs4.ErrBadCookie
	}
	rest := names[a.cookie:]
	budget := min(int(a.maxcount), c.room()) - listxattrsOverhead
	if budget < 0 {
		return nfs4.ErrToosmall
	}
	fit := 0
	for _, n := range rest {
		size := 4 + len(n) + xdr.Pad(len(n))
		if size > budget {
			break
		}
		budget -= size
		fit++
	}
	if fit == 0 && len(rest) > 0 {
		return nfs4.ErrToosmall
	}
	e := c.e
	e.Uint64(a.cookie + uint64(fit))
	e.Uint32(uint32(fit))
	for _, n := range rest[:fit] {
		e.Opaque(n)
	}
	e.Bool(fit == len(rest))
	return nfs4.OK
}
