package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Permission checks for what the server does with its own descriptors, as
// root, on the caller's behalf: READ, READ_PLUS, SEEK and the source of
// COPY and CLONE read; LOOKUP, LOOKUPP and SECINFO search a directory;
// READDIR lists one; ACCESS reports. (Creates, removes, renames and opens
// for write run as the caller, and the kernel checks those.)
//
// The check is the kernel's generic_permission done in user space from
// attributes the operation has already fetched, so the common case costs
// no system call. Only a file with a POSIX ACL whose mask (the mode's
// group bits) is not empty, for a caller who is neither root nor the
// owner, is asked of the kernel (faccessat2 as the caller). Whether a file
// has an ACL is remembered per node while its ctime holds: setting an ACL,
// and any chmod, changes the ctime.

// Permission bits, as MAY_READ, MAY_WRITE, MAY_EXEC (and R_OK, W_OK, X_OK).
const (
	mayExec  = 1
	mayWrite = 2
	mayRead  = 4
)

// aclCache is a node's "has a POSIX access ACL", valid while the file's
// ctime is ctime. Guarded by the node's mu.
type aclCache struct {
	ctime unix.Timespec
	known bool
	has   bool
}

// forgetACL drops what is cached about n's ACL; for callers that change
// a file's ACL in ways its ctime may not show.
func (n *node) forgetACL() {
	n.mu.Lock()
	n.acl = aclCache{}
	n.mu.Unlock()
}

// rights returns the mayRead|mayWrite|mayExec bits the caller holds on n,
// whose attributes are st. Of the bits outside need it may say no when
// the answer would cost system calls (the ACL path asks only for need).
func (c *compound) rights(n *node, st *unix.Stat_t, need uint32) uint32 {
	cr := &c.cred
	switch {
	case cr.UID == 0:
		return rootRights(st)
	case cr.UID == st.Uid:
		// An ACL's owner entry is the mode's owner bits.
		return modeRights(st, cr)
	case st.Mode&0o070 != 0 && n.exp != nil && c.s.hasACL(n, st):
		// With an ACL the group bits are its mask; a mask of 0 makes the
		// kernel ignore the ACL (acl_permission_check), and so do we.
		return kernelRights(n, c.cred, need)
	}
	return modeRights(st, cr)
}

// modeOnlyRights is rights when the mode bits alone decide (no ACL is
// in play, so no call into the kernel); ok is false otherwise.
func (c *compound) modeOnlyRights(n *node, st *unix.Stat_t) (r uint32, ok bool) {
	cr := &c.cred
	if cr.UID == 0 || cr.UID == st.Uid || st.Mode&0o070 == 0 || n.exp == nil || !c.s.hasACL(n, st) {
		return modeRights(st, cr), true
	}
	return 0, false
}

// rootRights is what CAP_DAC_OVERRIDE grants: everything, except that a
// file that is not a directory is executable only with some x bit.
func rootRights(st *unix.Stat_t) uint32 {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR || st.Mode&0o111 != 0 {
		return mayRead | mayWrite | mayExec
	}
	return mayRead | mayWrite
}

// modeRights is generic_permission over the mode bits alone: the owner's
// class, else the group's (primary or supplementary gid), else others'.
func modeRights(st *unix.Stat_t, cr *Cred) uint32 {
	switch {
	case cr.UID == 0:
		return rootRights(st)
	case cr.UID == st.Uid:
		return (st.Mode >> 6) & 7
	case cr.inGroup(st.Gid):
		return (st.Mode >> 3) & 7
	}
	return st.Mode & 7
}

func (cr *Cred) inGroup(gid uint32) bool {
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

// hasACL reports whether n (attributes st) has a POSIX access ACL, from
// the cache when its ctime holds.
func (s *Server) hasACL(n *node, st *unix.Stat_t) bool {
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return false // symlinks have no ACLs, and their permissions are not checked
	}
	n.mu.Lock()
	a := n.acl
	n.mu.Unlock()
	if a.known && a.ctime == st.Ctim {
		return a.has
	}
	has := probeACL(n)
	n.mu.Lock()
	n.acl = aclCache{ctime: st.Ctim, known: true, has: has}
	n.mu.Unlock()
	return has
}

// aclXattr holds a file's POSIX access ACL.
const aclXattr = "system.posix_acl_access"

// probeACL asks the filesystem whether n has an access ACL. When it cannot
// tell, it says yes: the kernel then decides.
func probeACL(n *node) bool {
	fd, done, err := n.anyFD()
	if err != nil {
		return true
	}
	defer done()
	// An O_PATH descriptor takes no fgetxattr; its /proc link does.
	_, err = unix.Getxattr("/proc/self/fd/"+itoa(fd), aclXattr, nil)
	switch err {
	case unix.ENODATA, unix.EOPNOTSUPP:
		return false
	}
	return true
}

// kernelRights asks the kernel which of the rights in need the caller
// holds on n, with faccessat2 under the caller's filesystem identity (the
// ACL path). Anything that fails grants nothing.
func kernelRights(n *node, cr Cred, need uint32) uint32 {
	fd, done, err := n.anyFD()
	if err != nil {
		return 0
	}
	defer done()
	var got uint32
	asCaller(cr, func() error {
		for _, b := range [...]uint32{mayRead, mayWrite, mayExec} {
			if need&b != 0 && unix.Faccessat2(fd, "", b, unix.AT_EACCESS|unix.AT_EMPTY_PATH) == nil {
				got |= b
			}
		}
		return nil
	})
	return got
}

// mayLookup checks that the caller may search directory n (attributes st):
// knfsd's nfsd_lookup asks NFSD_MAY_EXEC of the directory.
func (c *compound) mayLookup(n *node, st *unix.Stat_t) nfs4.Status {
	if c.rights(n, st, mayExec)&mayExec == 0 {
		return nfs4.ErrAccess
	}
	return nfs4.OK
}

// mayReaddir checks that the caller may list the current directory
// (knfsd's nfsd_readdir opens it with NFSD_MAY_READ, no owner override).
// A missing or non-directory filehandle passes: READDIR reports those.
func (c *compound) mayReaddir() nfs4.Status {
	n := c.cfh
	if n == nil {
		return nfs4.OK
	}
	var st unix.Stat_t
	if c.s.statNode(n, &st) != nfs4.OK || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nfs4.OK
	}
	if c.rights(n, &st, mayRead)&mayRead == 0 {
		return nfs4.ErrAccess
	}
	return nfs4.OK
}

// checkRead checks a stateid of client cl for reading n (special
// stateids pass; others as find says, and for n only), and reports
// whether it is the caller's own open (or lock) stateid for n from an open
// that included read: such a READ may skip its fstat (sizeHint), its
// permission checked against the node's verdict (vfs_ioperm.go). It takes no
// lock (see find): every stateful READ calls it.
func (t *stateTable) checkRead(sid nfs4.Stateid, n *node, cl *client) (opened bool, status nfs4.Status) {
	if sid == nfs4.BypassStateid {
		// RFC 8881 section 8.2.3: READ with the bypass stateid may
		// ignore share reservations; knfsd's check_special_stateids
		// lets it through.
		return false, nfs4.OK
	}
	if sid == nfs4.AnonStateid {
		// No open: the share reservations of every open of the file
		// hold against it (issue 21 finding 7).
		if t.specialDenied(n, nfs4.ShareDenyRead) {
			return false, nfs4.ErrLocked
		}
		return false, nfs4.OK
	}
	o, st := t.find(cl, sid)
	if st != nfs4.OK {
		return false, st
	}
	if !o.node.same(n) {
		return false, nfs4.ErrBadStateid
	}
	open := o
	if o.lock != nil {
		open = o.lock.open
	}
	return cl != nil && o.client == cl && open.access.Load()&nfs4.ShareAccessRead != 0, nfs4.OK
}

// client is the client of the COMPOUND's session, nil before SEQUENCE.
func (c *compound) client() *client {
	if c.sess == nil {
		return nil
	}
	return c.sess.client
}

// accessResult answers ACCESS for the caller on n (attributes st), as
// knfsd's nfsd_access maps each bit to a permission (no owner override):
// it returns the bits it could check among want, and those granted.
func (c *compound) accessResult(n *node, st *unix.Stat_t, want uint32) (supported, granted uint32) {
	if c.minor < 2 {
		want &^= xattrAccess // RFC 8276's bits are NFSv4.2's
	}
	var need uint32
	for _, r := range accessRules(st) {
		if want&r.bit != 0 {
			need |= r.need
		}
	}
	return accessBitsFor(st, c.rights(n, st, need), want)
}

// accessRules are the ACCESS4 bits that apply to a file of st's type.
func accessRules(st *unix.Stat_t) []accessRule {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return dirAccess[:]
	}
	return fileAccess[:]
}

// accessBitsFor maps rwx rights to ACCESS4 bits for a file of st's type.
// Directories: LOOKUP is x; MODIFY, EXTEND and DELETE are w and x (an
// entry is changed by searching the directory too). Other files: EXECUTE
// is x, MODIFY and EXTEND are w.
func accessBitsFor(st *unix.Stat_t, rights, want uint32) (supported, granted uint32) {
	for _, r := range accessRules(st) {
		if want&r.bit == 0 {
			continue
		}
		supported |= r.bit
		if rights&r.need == r.need {
			granted |= r.bit
		}
	}
	return supported, granted
}

// accessRule is one ACCESS4 bit and the rights it needs.
type accessRule struct{ bit, need uint32 }

// xattrAccess are the ACCESS4 bits of RFC 8276: XAREAD and XALIST need
// read, XAWRITE write, on any file (knfsd's accessmap), as GETXATTR,
// LISTXATTRS and SETXATTR/REMOVEXATTR check (op_xattr.go).
const xattrAccess = nfs4.AccessXaread | nfs4.AccessXawrite | nfs4.AccessXalist

var dirAccess = [...]accessRule{
	{nfs4.AccessRead, mayRead},
	{nfs4.AccessLookup, mayExec},
	{nfs4.AccessModify, mayWrite | mayExec},
	{nfs4.AccessExtend, mayWrite | mayExec},
	{nfs4.AccessDelete, mayWrite | mayExec},
	{nfs4.AccessXaread, mayRead},
	{nfs4.AccessXawrite, mayWrite},
	{nfs4.AccessXalist, mayRead},
}

var fileAccess = [...]accessRule{
	{nfs4.AccessRead, mayRead},
	{nfs4.AccessExecute, mayExec},
	{nfs4.AccessModify, mayWrite},
	{nfs4.AccessExtend, mayWrite},
	{nfs4.AccessXaread, mayRead},
	{nfs4.AccessXawrite, mayWrite},
	{nfs4.AccessXalist, mayRead},
}
