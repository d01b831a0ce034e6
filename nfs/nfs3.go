package nfs

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NFSv3 (RFC 1813) on the same machinery as NFSv4: a v3 call runs in a
// compound of its own (no session, no COMPOUND), so file handles,
// the confinement point, the exports' client rules and squashing
// (admit.go), the permission checks (vfs_access.go, vfs_ioperm.go), the
// READ reply plan (reads left for the engine, zero copy), the WRITE path
// (FileIO, the same write verifier) and COMMIT are the v4 ones. Where a v4
// operation handler does exactly what a v3 procedure needs, it runs as it
// is on arguments in its own XDR shape (v4op), its v4 result discarded.

// Program numbers and versions.
const (
	nfs3Version  = 3
	progMount    = 100005
	mountVersion = 3
)

// NFSv3 procedures (RFC 1813 section 3).
const (
	nfs3Null = iota
	nfs3Getattr
	nfs3Setattr
	nfs3Lookup
	nfs3Access
	nfs3Readlink
	nfs3Read
	nfs3Write
	nfs3Create
	nfs3Mkdir
	nfs3Symlink
	nfs3Mknod
	nfs3Remove
	nfs3Rmdir
	nfs3Rename
	nfs3Link
	nfs3Readdir
	nfs3Readdirplus
	nfs3Fsstat
	nfs3Fsinfo
	nfs3Pathconf
	nfs3Commit
	nfs3NumProcs
)

var nfs3ProcNames = [nfs3NumProcs]string{"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK",
	"READ", "WRITE", "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK",
	"READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT"}

// nfsstat3 values (RFC 1813 section 2.6) that differ from NFSv4's or that
// v4 does not have.
const (
	nfs3OK          = 0
	nfs3ErrPerm     = 1
	nfs3ErrNoent    = 2
	nfs3ErrIO       = 5
	nfs3ErrAcces    = 13
	nfs3ErrExist    = 17
	nfs3ErrNotdir   = 20
	nfs3ErrIsdir    = 21
	nfs3ErrInval    = 22
	nfs3ErrNametoo  = 63
	nfs3ErrRofs     = 30
	nfs3ErrStale    = 70
	nfs3ErrBadhdl   = 10001
	nfs3ErrNotSync  = 10002
	nfs3ErrNotsupp  = 10004
	nfs3ErrToosmall = 10005
	nfs3ErrFault    = 10006
	nfs3ErrBadtype  = 10007
	nfs3ErrJukebox  = 10008
)

// nfs3Stat maps an NFSv4 status to nfsstat3. The codes RFC 1813 shares
// with RFC 8881 (errno values and 10001-10008) are the same numbers.
func nfs3Stat(s nfs4.Status) uint32 {
	switch s {
	case nfs4.OK, nfs4.ErrPerm, nfs4.ErrNoent, nfs4.ErrIO, nfs4.ErrNxio, nfs4.ErrAccess, nfs4.ErrExist,
		nfs4.ErrXdev, nfs4.ErrNotdir, nfs4.ErrIsdir, nfs4.ErrInval, nfs4.ErrFbig, nfs4.ErrNospc,
		nfs4.ErrRofs, nfs4.ErrMlink, nfs4.ErrNametoolong, nfs4.ErrNotempty, nfs4.ErrDquot,
		nfs4.ErrStale, nfs4.ErrBadhandle, nfs4.ErrBadCookie, nfs4.ErrNotsupp, nfs4.ErrToosmall,
		nfs4.ErrServerfault, nfs4.ErrBadtype:
		return uint32(s)
	case nfs4.ErrDelay, nfs4.ErrGrace:
		return nfs3ErrJukebox
	case nfs4.ErrLocked, nfs4.ErrShareDenied, nfs4.ErrDenied, nfs4.ErrFileOpen, nfs4.ErrWrongsec,
		nfs4.ErrWrongCred:
		return nfs3ErrAcces
	case nfs4.ErrBadname, nfs4.ErrBadchar, nfs4.ErrBadXDR, nfs4.ErrBadRange, nfs4.ErrBadowner:
		return nfs3ErrInval
	case nfs4.ErrSymlink:
		// A directory operation on a symlink (knfsd's fh_verify for v3;
		// READ and WRITE map it to NFS3ERR_INVAL themselves).
		return nfs3ErrNotdir
	case nfs4.ErrWrongType:
		return nfs3ErrInval
	case nfs4.ErrAttrnotsupp, nfs4.ErrUnionNotsupp, nfs4.ErrLockNotsupp:
		return nfs3ErrNotsupp
	case nfs4.ErrNofilehandle, nfs4.ErrFhexpired:
		return nfs3ErrBadhdl
	case nfs4.ErrResource, nfs4.ErrRepTooBig, nfs4.ErrRepTooBigToCache:
		return nfs3ErrFault
	}
	return nfs3ErrIO
}

// nfs3Max is NFS3_FHSIZE: a handle longer than this cannot be sent to a v3
// client. The server's handles are 32 bytes plus the kernel's (8 to 20 on
// ext4, xfs, btrfs and tmpfs) plus a 16-byte MAC: 64 at most there.
const nfs3Max = 64

// newCall makes the compound a v3 or MOUNT call runs in: no session; the
// caller's credentials, squashed per export on every file handle it
// enters, as in a COMPOUND.
func (s *Server) newCall(conn *Conn, cl *call, d *xdr.Decoder, rep *Reply) *compound {
	c := &rep.cmp
	*c = compound{s: s, cred: s.ids.cred(cl.cred), minor: 1, d: d, e: rep.Enc, rep: rep,
		conn: conn, maxResp: s.MaxRecord()}
	c.caller = c.cred
	// The v4 code a call shares passes the anonymous stateid: resolving
	// it is allowed (optable_test.go checks the flags of every use).
	c.opFlags = opUsesCurSid
	c.startClock(conn)
	return c
}

// handleV3 serves the programs of NFSv3: NFS version 3 and MOUNT.
func (s *Server) handleV3(conn *Conn, cl *call, d *xdr.Decoder, rep *Reply) {
	if cl.prog == progMount {
		s.handleMount(conn, cl, d, rep)
		return
	}
	s.handleNFS3(conn, cl, d, rep)
}

// inline3 is Inline for calls other than NFSv4's: an NFSv3 READ, GETATTR
// or ACCESS of a file whose descriptor the server holds open runs on the
// event loop, as the same v4 operations after a known PUTFH do (no path
// walk, no open); anything else goes to a worker.
func (s *Server) inline3(cl *call, d *xdr.Decoder) bool {
	if cl.prog != nfs4.ProgramNFS || cl.vers != nfs3Version || s.mds != nil {
		return false
	}
	switch cl.proc {
	case nfs3Read:
		if s.state.dl.writes.Load() > 0 {
			return false // it may wait for a delegation's recall (proc3Read)
		}
	case nfs3Getattr, nfs3Access:
	default:
		return false
	}
	n, known := s.knownHandle(d.Opaque(nfs3Max))
	return d.Err() == nil && known && n != nil && n.hasOpenFD()
}

// writeAlign3 is WriteAlign for an NFSv3 WRITE: its data follows the
// handle, offset, count, stable and the data's length.
func writeAlign3(cl *call, d *xdr.Decoder) (dataOff int, fileOff uint64, ok bool) {
	if cl.prog != nfs4.ProgramNFS || cl.vers != nfs3Version || cl.proc != nfs3Write {
		return 0, 0, false
	}
	d.Opaque(nfs3Max)
	fileOff = d.Uint64()
	d.Uint32() // count
	d.Uint32() // stable
	d.Uint32() // the data's length
	return d.Offset(), fileOff, d.Err() == nil
}

// handleNFS3 serves one NFSv3 call (program 100003 version 3).
func (s *Server) handleNFS3(conn *Conn, cl *call, d *xdr.Decoder, rep *Reply) {
	if cl.proc >= nfs3NumProcs {
		s.replyAccepted(cl, rep, nfs4.AcceptProcUnavail)
		s.countProc(conn, nfs4.ProgramNFS, nfs3Version, cl.proc, "PROC_UNAVAIL")
		return
	}
	var key drcKey
	// RPCSEC_GSS replies are not cached: a retransmit comes with a new
	// sequence number its reply's verifier must sign (RFC 2203 5.3.3.1).
	cached := drcProc(cl.proc) && cl.gssx == nil
	if cached {
		key = drcKeyOf(conn, &cl.cred, cl.xid, nfs3Version, cl.proc, d.Rest()[:min(d.Remaining(), drcSum)])
		replay, running := s.v3.drc.start(key, time.Now())
		switch {
		case running:
			rep.Drop = true // the first is still running: the client sends it again
			s.countProc(conn, nfs4.ProgramNFS, nfs3Version, cl.proc, "DRC_IN_PROGRESS")
			return
		case replay != nil:
			rep.Enc.Fixed(replay)
			s.countProc(conn, nfs4.ProgramNFS, nfs3Version, cl.proc, "DRC_REPLAY")
			return
		}
	}
	start := rep.Enc.Pos()
	statPos := s.replyAccepted(cl, rep, nfs4.AcceptSuccess)
	rep.bodyPos = rep.Enc.Pos()
	c := s.newCall(conn, cl, d, rep)
	c.rootBypass = cl.proc == nfs3Getattr || cl.proc == nfs3Fsinfo
	st, ok := nfs3Procs[cl.proc](c)
	if !ok || d.Err() != nil {
		replyGarbage(rep, statPos)
		if cached {
			s.v3.drc.forget(key)
		}
		s.countProc(conn, nfs4.ProgramNFS, nfs3Version, cl.proc, "GARBAGE_ARGS")
		return
	}
	if cached {
		s.v3.drc.done(key, rep.Enc.Header()[start:]) // no file data: all header bytes
	}
	s.countProc(conn, nfs4.ProgramNFS, nfs3Version, cl.proc, nfs3StatName(st))
}

// nfs3StatName labels an nfsstat3 in the metrics.
func nfs3StatName(st uint32) string {
	switch st {
	case nfs3OK:
		return "NFS3_OK"
	case nfs3ErrPerm:
		return "NFS3ERR_PERM"
	case nfs3ErrNoent:
		return "NFS3ERR_NOENT"
	case nfs3ErrIO:
		return "NFS3ERR_IO"
	case nfs3ErrAcces:
		return "NFS3ERR_ACCES"
	case nfs3ErrExist:
		return "NFS3ERR_EXIST"
	case nfs3ErrNotdir:
		return "NFS3ERR_NOTDIR"
	case nfs3ErrIsdir:
		return "NFS3ERR_ISDIR"
	case nfs3ErrInval:
		return "NFS3ERR_INVAL"
	case nfs3ErrRofs:
		return "NFS3ERR_ROFS"
	case nfs3ErrStale:
		return "NFS3ERR_STALE"
	case nfs3ErrBadhdl:
		return "NFS3ERR_BADHANDLE"
	case nfs3ErrJukebox:
		return "NFS3ERR_JUKEBOX"
	}
	return "NFS3ERR_" + strconv.Itoa(int(st))
}

// countProc counts one call of a program other than NFSv4's COMPOUND.
func (s *Server) countProc(conn *Conn, prog, vers, proc uint32, status string) {
	s.stats.CountProc(prog, vers, proc, status)
}

// ProcName names procedure proc of program prog version vers, for the
// metrics ("" when unknown).
func ProcName(prog, vers, proc uint32) string {
	switch {
	case prog == nfs4.ProgramNFS && vers == nfs3Version && proc < nfs3NumProcs:
		return nfs3ProcNames[proc]
	case prog == progMount && proc < uint32(len(mountProcNames)):
		return mountProcNames[proc]
	case prog == NLMProgram || prog == NSMProgram:
		return lockProcName(prog, vers, proc) // nlm_xdr.go
	case prog == nfs4.ProgramNFS && vers == nfs4.NFSVersion && proc <= nfs4.ProcCompound:
		return [...]string{"NULL", "COMPOUND"}[proc]
	}
	return ""
}

// ProgramName names an RPC program for the metrics.
func ProgramName(prog uint32) string {
	switch prog {
	case nfs4.ProgramNFS:
		return "nfs"
	case progMount:
		return "mount"
	case NLMProgram:
		return "nlm"
	case NSMProgram:
		return "nsm"
	}
	return strconv.Itoa(int(prog))
}

// fh3 reads an nfs_fh3 and makes its file the current one, with the
// export's client rules checked and its squashing applied as PUTFH does.
func (c *compound) fh3() nfs4.Status {
	h := c.d.Opaque(nfs3Max)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	return c.putfh3(h)
}

// putfh3 makes the file of handle h current. Pseudo-filesystem handles are
// NFSv4's: a v3 client mounts an export's root through MOUNT.
func (c *compound) putfh3(h []byte) nfs4.Status {
	n, st := c.s.resolve(h)
	if st != nfs4.OK {
		return st
	}
	if n.exp == nil {
		return nfs4.ErrBadhandle
	}
	if st := c.admit(n.exp); st != nfs4.OK {
		return st
	}
	if !c.sysAllowed(n.exp) && !c.rootBypassed(n) {
		return nfs4.ErrWrongsec // NFS3ERR_ACCES, as knfsd's map_new_errors
	}
	c.setFH(n)
	return nfs4.OK
}

// rootBypassed: GETATTR and FSINFO of an export's root with AUTH_SYS or
// AUTH_NONE pass its sec= list, which then holds a Kerberos flavour (RFC
// 2623 section 2.3.2: a client may mount with AUTH_SYS and use RPCSEC_GSS
// for the rest), as knfsd's NFSD_MAY_BYPASS_GSS_ON_ROOT.
func (c *compound) rootBypassed(n *node) bool {
	return c.rootBypass && c.caller.Flavor != nfs4.AuthGSS && n.isExportRoot()
}

// encodeFH3 writes n's handle as nfs_fh3, or reports that it is too long.
func encodeFH3(e *xdr.Encoder, n *node) bool {
	if len(n.handle) > nfs3Max {
		return false
	}
	e.Opaque(n.handle)
	return true
}

// fsid3 is the fsid of n's filesystem: the export id and, with crossmnt, the
// filesystem's within it.
func fsid3(n *node) uint64 {
	return n.exp.id ^ n.fs*0x9E3779B97F4A7C15
}

// encodeFattr3 writes fattr3 for n from st.
func encodeFattr3(e *xdr.Encoder, n *node, st *unix.Stat_t) {
	e.Uint32(ftype(st.Mode))
	e.Uint32(st.Mode & 0o7777)
	e.Uint32(uint32(st.Nlink))
	e.Uint32(st.Uid)
	e.Uint32(st.Gid)
	e.Uint64(uint64(st.Size))
	e.Uint64(uint64(st.Blocks) * 512)
	e.Uint32(unix.Major(st.Rdev))
	e.Uint32(unix.Minor(st.Rdev))
	e.Uint64(fsid3(n))
	e.Uint64(st.Ino)
	encodeTime3(e, st.Atim)
	encodeTime3(e, st.Mtim)
	encodeTime3(e, st.Ctim)
}

// encodeTime3 writes nfstime3 (seconds are 32 bits unsigned in v3).
func encodeTime3(e *xdr.Encoder, t unix.Timespec) {
	e.Uint32(uint32(t.Sec))
	e.Uint32(uint32(t.Nsec))
}

// postOp writes post_op_attr for n: its attributes when a stat works.
func (c *compound) postOp(n *node) {
	var st unix.Stat_t
	if n == nil || n.exp == nil || c.s.statNode(n, &st) != nfs4.OK {
		c.e.Bool(false)
		return
	}
	c.postOpStat(n, &st)
}

// postOpStat writes post_op_attr from attributes already read.
func (c *compound) postOpStat(n *node, st *unix.Stat_t) {
	c.e.Bool(true)
	encodeFattr3(c.e, n, st)
}

// preOp is a file's wcc_attr (size, mtime, ctime) before a change.
type preOp struct {
	ok           bool
	size         uint64
	mtime, ctime unix.Timespec
}

// pre reads n's wcc_attr before a change.
func (c *compound) pre(n *node) preOp {
	var st unix.Stat_t
	if n == nil || n.exp == nil || c.s.statNode(n, &st) != nfs4.OK {
		return preOp{}
	}
	return preOpOf(&st)
}

func preOpOf(st *unix.Stat_t) preOp {
	return preOp{ok: true, size: uint64(st.Size), mtime: st.Mtim, ctime: st.Ctim}
}

// wcc writes wcc_data for n: p, then its attributes now.
func (c *compound) wcc(n *node, p preOp) {
	c.e.Bool(p.ok)
	if p.ok {
		c.e.Uint64(p.size)
		encodeTime3(c.e, p.mtime)
		encodeTime3(c.e, p.ctime)
	}
	c.postOp(n)
}

// sattr3 is a decoded sattr3 (RFC 1813 section 2.6), as NFSv4's newAttrs.
func decodeSattr3(d *xdr.Decoder) newAttrs {
	var a newAttrs
	if d.Bool() {
		a.mask.Set(nfs4.AttrMode)
		a.mode = d.Uint32() & 0o7777
	}
	if d.Bool() {
		a.mask.Set(nfs4.AttrOwner)
		a.uid = d.Uint32()
	}
	if d.Bool() {
		a.mask.Set(nfs4.AttrOwnerGroup)
		a.gid = d.Uint32()
	}
	if d.Bool() {
		a.mask.Set(nfs4.AttrSize)
		a.size = d.Uint64()
	}
	a.atime = decodeSetTime3(d, &a.mask, nfs4.AttrTimeAccessSet)
	a.mtime = decodeSetTime3(d, &a.mask, nfs4.AttrTimeModifySet)
	return a
}

// time_how (RFC 1813 section 2.6).
const (
	dontChange        = 0
	setToServerTime   = 1
	setToClientTime   = 2
	nfs3CreateUncheck = 0
	nfs3CreateGuarded = 1
	nfs3CreateExcl    = 2
)

func decodeSetTime3(d *xdr.Decoder, mask *nfs4.Bitmap, bit int) unix.Timespec {
	switch d.Uint32() {
	case dontChange:
		return unix.Timespec{}
	case setToServerTime:
		mask.Set(bit)
		return unix.Timespec{Nsec: unix.UTIME_NOW}
	case setToClientTime:
		mask.Set(bit)
		sec, nsec := d.Uint32(), d.Uint32()
		if nsec >= 1e9 {
			d.Fail(xdr.ErrTooLong)
		}
		return unix.Timespec{Sec: int64(sec), Nsec: int64(nsec)}
	}
	d.Fail(xdr.ErrTooLong)
	return unix.Timespec{}
}

// encodeFattr4 writes a as the fattr4 an NFSv4 SETATTR or CREATE reads
// (decodeNewAttrs), for running those handlers on v3 arguments.
func encodeFattr4(e *xdr.Encoder, a *newAttrs) {
	a.mask.Encode(e)
	v := xdr.NewEncoder(64)
	if a.mask.Has(nfs4.AttrSize) {
		v.Uint64(a.size)
	}
	if a.mask.Has(nfs4.AttrMode) {
		v.Uint32(a.mode)
	}
	if a.mask.Has(nfs4.AttrOwner) {
		v.String(strconv.FormatUint(uint64(a.uid), 10))
	}
	if a.mask.Has(nfs4.AttrOwnerGroup) {
		v.String(strconv.FormatUint(uint64(a.gid), 10))
	}
	for _, t := range [...]struct {
		bit int
		ts  unix.Timespec
	}{{nfs4.AttrTimeAccessSet, a.atime}, {nfs4.AttrTimeModifySet, a.mtime}} {
		if !a.mask.Has(t.bit) {
			continue
		}
		if t.ts.Nsec == unix.UTIME_NOW {
			v.Uint32(nfs4.SetToServerTime)
			continue
		}
		v.Uint32(nfs4.SetToClientTime)
		v.Int64(t.ts.Sec)
		v.Uint32(uint32(t.ts.Nsec))
	}
	e.Opaque(v.AppendTo(nil))
}

// v4op runs the NFSv4 operation handler run with its arguments read from
// args (bytes in the v4 operation's XDR shape), its v4 result discarded:
// the one implementation of that operation's checks and effects serves
// both versions.
func (c *compound) v4op(run func(*compound) nfs4.Status, args []byte) nfs4.Status {
	saved := c.d
	var d xdr.Decoder
	d.Reset(args)
	c.d = &d
	mark := c.e.Pos()
	st := run(c)
	if st == nfs4.OK && d.Err() != nil {
		st = nfs4.ErrBadXDR
	}
	c.e.Truncate(mark)
	c.d = saved
	return st
}

// readOnly3 answers NFS3ERR_ROFS for a change in an export the caller may
// only read (the v4 table's opChangesFS check).
func (c *compound) readOnly3() nfs4.Status {
	if c.readOnlyFH() {
		return nfs4.ErrRofs
	}
	return nfs4.OK
}
