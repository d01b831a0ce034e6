package nfs

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Permission on every READ and WRITE, not only at OPEN (issue 21 finding
// 6). knfsd checks each stateful I/O again (nfs4_preprocess_stateid_op,
// nfs4_check_file: nfsd_permission with NFSD_MAY_OWNER_OVERRIDE), so
// after the owner's chmod 0600 another user's old open stateid reads and
// writes no more, and after a reload to root_squash neither does root's.
// The file's owner may always read and write its file (a client that
// did fchmod(fd, 0) keeps its descriptor working).
//
// The check costs no system call. WRITE, SETATTR(size) and a READ that
// does its fstat check against the attributes that fstat just gave. A READ
// that skips its fstat (sizeHint) uses the verdict the last fstat of the
// file left on the node (ioPerm) while it is younger than permTTL and for
// the same caller; else it does the fstat. The caller's credentials are
// those of the export's current options, so a reload shows at once. A
// SETATTR of mode or owner through this server drops the verdict; a
// change made on the host (chmod, chown, setfacl) is seen by the next
// fstat, and by READs without one within permTTL.

// permTTL bounds how long a READ without an fstat trusts the verdict of
// the file's last fstat: a busy file costs one fstat per permTTL, and a
// permission taken away on the host reaches such READs within it.
const permTTL = int64(100 * time.Millisecond)

// ioPerm is the rights one caller holds on a file, from the attributes an
// fstat saw at time at (metrics.Now()). Never changed once published.
type ioPerm struct {
	mode, uid, gid uint32
	ctime          unix.Timespec
	at             int64
	cred           Cred
	rights         uint32 // mayRead|mayWrite|mayExec
}

// now is the time the current operation began, read when the COMPOUND
// timed it: no clock read of its own.
func (c *compound) now() int64 {
	if c.clock.t != 0 {
		return c.clock.t
	}
	return metrics.Now()
}

// ioRights returns the rights the caller holds on n, whose attributes st
// an fstat has just read, from n's verdict when it was made for the same
// caller and attributes within permTTL.
func (c *compound) ioRights(n *node, st *unix.Stat_t) uint32 {
	now := c.now()
	p := n.perm.Load()
	if p != nil && p.cred == c.cred && p.mode == st.Mode && p.uid == st.Uid && p.gid == st.Gid && now-p.at < permTTL {
		return p.rights
	}
	r := c.rights(n, st, mayRead|mayWrite|mayExec)
	n.perm.Store(&ioPerm{mode: st.Mode, uid: st.Uid, gid: st.Gid, ctime: st.Ctim, at: now, cred: c.cred, rights: r})
	return r
}

// cachedReadOK reports whether n's verdict, younger than permTTL, lets
// the caller read: the check of a READ that does no fstat. False when it
// does not know: the caller then does the fstat and checks against it.
func (c *compound) cachedReadOK(n *node) bool {
	p := n.perm.Load()
	if p == nil || c.now()-p.at >= permTTL {
		return false
	}
	if p.cred != c.cred {
		// Another caller: its rights from the same attributes.
		st := unix.Stat_t{Mode: p.mode, Uid: p.uid, Gid: p.gid, Ctim: p.ctime}
		if r, ok := c.modeOnlyRights(n, &st); ok {
			// The mode bits decide: cheaper to redo than to store, and
			// callers that take turns on one file allocate nothing.
			return readAllowed(p.uid, r, &c.cred)
		}
		r := c.rights(n, &st, mayRead|mayWrite|mayExec)
		p = &ioPerm{mode: p.mode, uid: p.uid, gid: p.gid, ctime: p.ctime, at: p.at, cred: c.cred, rights: r}
		n.perm.Store(p)
	}
	return readAllowed(p.uid, p.rights, &c.cred)
}

// readAllowed is knfsd's nfsd_permission for a READ: NFSD_MAY_READ with
// the owner's override, and read access to binaries of mode 111 (a
// client runs them by reading them).
func readAllowed(owner, rights uint32, cr *Cred) bool {
	return cr.UID == owner || rights&(mayRead|mayExec) != 0
}

// mayRead checks that the caller may read regular file n (attributes st)
// as knfsd's nfsd_permission does for a READ: the owner always may (a file
// chmod'ed 0 after its open stays readable), as may anyone who may read or
// execute it.
func (c *compound) mayRead(n *node, st *unix.Stat_t) nfs4.Status {
	// ioRights even for the owner: it leaves the verdict that READs
	// without an fstat use.
	if readAllowed(st.Uid, c.ioRights(n, st), &c.cred) {
		return nfs4.OK
	}
	return nfs4.ErrAccess
}

// mayWrite checks that the caller may write regular file n (attributes
// st) for a WRITE or a SETATTR of size, whatever the stateid: knfsd's
// nfsd_permission with NFSD_MAY_WRITE|NFSD_MAY_OWNER_OVERRIDE (a
// read-only export was refused before: refuseReadOnly, opSetattr).
func (c *compound) mayWrite(n *node, st *unix.Stat_t) nfs4.Status {
	if c.ioRights(n, st)&mayWrite != 0 || c.cred.UID == st.Uid {
		return nfs4.OK
	}
	return nfs4.ErrAccess
}

// forgetPerm drops n's verdict: the server changed the file's mode or
// owner.
func (n *node) forgetPerm() { n.perm.Store(nil) }
