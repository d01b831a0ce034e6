package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// nfs3Proc serves one NFSv3 procedure: it reads its arguments from c.d
// and writes its result (nfsstat3 first) to c.e. ok is false when the
// arguments do not decode (GARBAGE_ARGS); st is the nfsstat3 sent.
type nfs3Proc func(c *compound) (st uint32, ok bool)

var nfs3Procs [nfs3NumProcs]nfs3Proc

func init() {
	nfs3Procs = [nfs3NumProcs]nfs3Proc{
		nfs3Null:        func(*compound) (uint32, bool) { return nfs3OK, true },
		nfs3Getattr:     proc3Getattr,
		nfs3Setattr:     proc3Setattr,
		nfs3Lookup:      proc3Lookup,
		nfs3Access:      proc3Access,
		nfs3Readlink:    proc3Readlink,
		nfs3Read:        proc3Read,
		nfs3Write:       proc3Write,
		nfs3Create:      proc3Create,
		nfs3Mkdir:       proc3Mkdir,
		nfs3Symlink:     proc3Symlink,
		nfs3Mknod:       proc3Mknod,
		nfs3Remove:      func(c *compound) (uint32, bool) { return proc3Remove(c, false) },
		nfs3Rmdir:       func(c *compound) (uint32, bool) { return proc3Remove(c, true) },
		nfs3Rename:      proc3Rename,
		nfs3Link:        proc3Link,
		nfs3Readdir:     func(c *compound) (uint32, bool) { return proc3Readdir(c, false) },
		nfs3Readdirplus: func(c *compound) (uint32, bool) { return proc3Readdir(c, true) },
		nfs3Fsstat:      proc3Fsstat,
		nfs3Fsinfo:      proc3Fsinfo,
		nfs3Pathconf:    proc3Pathconf,
		nfs3Commit:      proc3Commit,
	}
}

// status3 writes s as nfsstat3 and returns it.
func (c *compound) status3(s nfs4.Status) uint32 {
	st := nfs3Stat(s)
	c.e.Uint32(st)
	return st
}

// args3 is an encoder for the v4 arguments v4op runs a handler on.
func args3() *xdr.Encoder { return xdr.NewEncoder(128) }

func bytesOf(e *xdr.Encoder) []byte { return e.AppendTo(nil) }

// fhArgs reads a handle and the rest of a call's arguments (rest), and
// resolves the handle once they all decoded. bad: garbage.
func (c *compound) fhArgs(rest func()) (s nfs4.Status, bad bool) {
	h := c.d.Opaque(nfs3Max)
	if rest != nil {
		rest()
	}
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR, true
	}
	return c.putfh3(h), false
}

func proc3Getattr(c *compound) (uint32, bool) {
	s, bad := c.fhArgs(nil)
	if bad {
		return 0, false
	}
	var st unix.Stat_t
	if s == nfs4.OK {
		s = c.s.statNode(c.cfh, &st)
	}
	r := c.status3(s)
	if s == nfs4.OK {
		encodeFattr3(c.e, c.cfh, &st)
	}
	return r, true
}

func proc3Setattr(c *compound) (uint32, bool) {
	var a newAttrs
	var guard bool
	var ctime [2]uint32
	s, bad := c.fhArgs(func() {
		a = decodeSattr3(c.d)
		if guard = c.d.Bool(); guard {
			ctime[0], ctime[1] = c.d.Uint32(), c.d.Uint32()
		}
	})
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.wcc(nil, preOp{})
		return r, true
	}
	n := c.cfh
	var st unix.Stat_t
	var pre preOp
	if s = c.s.statNode(n, &st); s == nfs4.OK {
		pre = preOpOf(&st)
		if guard && (uint32(st.Ctim.Sec) != ctime[0] || uint32(st.Ctim.Nsec) != ctime[1]) {
			c.e.Uint32(nfs3ErrNotSync)
			c.wcc(n, pre)
			return nfs3ErrNotSync, true
		}
		s = c.readOnly3()
	}
	if s == nfs4.OK && (a.mask.Has(nfs4.AttrSize) || a.mask.Has(nfs4.AttrMode) ||
		a.mask.Has(nfs4.AttrOwner) || a.mask.Has(nfs4.AttrOwnerGroup)) && n.isReg() {
		s = c.s.breakDelegs(nil, n, true) // another client's delegation (state_deleg.go)
	}
	if s == nfs4.OK {
		e := args3()
		e.Fixed(make([]byte, 16)) // the anonymous stateid
		encodeFattr4(e, &a)
		s = c.v4op(opSetattr, bytesOf(e))
	}
	r := c.status3(s)
	c.wcc(n, pre)
	return r, true
}

func proc3Lookup(c *compound) (uint32, bool) {
	var name []byte
	s, bad := c.fhArgs(func() { name = c.d.String(nfs4.MaxNameLen + 1) })
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.e.Bool(false)
		return r, true
	}
	dir := c.cfh
	s = c.lookup3(string(name))
	r := c.status3(s)
	if s != nfs4.OK {
		c.postOp(dir)
		return r, true
	}
	n := c.cfh
	if !encodeFH3(c.e, n) {
		c.e.Truncate(c.e.Pos() - 4)
		r = c.status3(nfs4.ErrServerfault)
		c.postOp(dir)
		return r, true
	}
	var st unix.Stat_t
	if c.recall(n, &st) {
		c.postOpStat(n, &st)
	} else {
		c.postOp(n)
	}
	c.postOp(dir)
	return r, true
}

// lookup3 makes the entry name of the current directory current: NFSv4's
// LOOKUP, plus the "." and ".." v3 clients send. ".." of an export's root
// is the root itself: a v3 client never leaves the export it mounted.
func (c *compound) lookup3(name string) nfs4.Status {
	switch name {
	case ".":
		var st unix.Stat_t
		if s := c.needDir(&st); s != nfs4.OK {
			return s
		}
		return c.mayLookup(c.cfh, &st)
	case "..":
		n := c.cfh
		if n.isExportRoot() {
			var st unix.Stat_t
			if s := c.needDir(&st); s != nfs4.OK {
				return s
			}
			return c.mayLookup(n, &st)
		}
		return c.lookupParent()
	}
	e := args3()
	e.String(name)
	return c.v4op(opLookup, bytesOf(e))
}

func proc3Access(c *compound) (uint32, bool) {
	var want uint32
	s, bad := c.fhArgs(func() { want = c.d.Uint32() })
	if bad {
		return 0, false
	}
	var st unix.Stat_t
	if s == nfs4.OK {
		s = c.s.statNode(c.cfh, &st)
	}
	r := c.status3(s)
	if s != nfs4.OK {
		c.e.Bool(false)
		return r, true
	}
	want &= nfs4.AccessRead | nfs4.AccessLookup | nfs4.AccessModify | nfs4.AccessExtend |
		nfs4.AccessDelete | nfs4.AccessExecute
	_, granted := c.accessResult(c.cfh, &st, want)
	if c.readOnlyFH() {
		granted &^= nfs4.AccessModify | nfs4.AccessExtend | nfs4.AccessDelete
	}
	c.postOpStat(c.cfh, &st)
	c.e.Uint32(granted)
	return r, true
}

func proc3Readlink(c *compound) (uint32, bool) {
	s, bad := c.fhArgs(nil)
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.e.Bool(false)
		return r, true
	}
	statusPos := c.e.Reserve()
	c.postOp(c.cfh)
	mark := c.e.Pos()
	s = opReadlink(c)
	if s != nfs4.OK {
		c.e.Truncate(mark)
	}
	r := nfs3Stat(s)
	c.e.Patch(statusPos, r)
	return r, true
}

func proc3Read(c *compound) (uint32, bool) {
	var off uint64
	var count uint32
	s, bad := c.fhArgs(func() { off, count = c.d.Uint64(), c.d.Uint32() })
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.e.Bool(false)
		return r, true
	}
	n := c.cfh
	if c.layoutFile() != nil {
		// A pNFS metadata server's files keep their data on the data
		// servers; v3 I/O through the MDS is not done.
		r := c.status3(nfs4.ErrNotsupp)
		c.postOp(n)
		return r, true
	}
	// Another client's write delegation: its cached writes come back
	// first, as a local open breaks the lease (knfsd's nfsd_open). One
	// atomic load while no write delegation is out.
	if c.s.state.dl.writes.Load() > 0 && n.isReg() {
		if s := c.s.breakDelegs(nil, n, false); s != nfs4.OK {
			r := c.status3(s)
			c.postOp(n)
			return r, true
		}
	}
	// The v4 READ's checks and plan, with the anonymous stateid: every
	// open's DENY_READ holds against it.
	a := readPlan{off: off}
	fd, _, s := c.readFD(nfs4.AnonStateid)
	if s == nfs4.OK {
		a.fd = fd
		a.n = c.clampCount(count)
		s = c.stat(&a)
	}
	if s != nfs4.OK {
		if s == nfs4.ErrSymlink || s == nfs4.ErrWrongType {
			s = nfs4.ErrInval
		}
		r := c.status3(s)
		c.postOp(n)
		return r, true
	}
	e := c.e
	e.Uint32(nfs3OK)
	c.postOpStat(n, &a.st)
	countPos := e.Reserve()
	e.Patch(countPos, uint32(a.n))
	eofPos := e.Pos()
	e.Bool(a.eof)
	lenPos := e.Reserve()
	e.Patch(lenPos, uint32(a.n))
	if a.n > 0 {
		c.rep.addRead(n, a.fd, int64(a.off), a.n)
		c.rep.addSeg(lenPos, eofPos, 0, a.n)
		c.rep.segs[len(c.rep.segs)-1].count2Pos = countPos
	}
	return nfs3OK, true
}

func proc3Write(c *compound) (uint32, bool) {
	var off uint64
	var count, stable uint32
	var data []byte
	s, bad := c.fhArgs(func() {
		off, count, stable = c.d.Uint64(), c.d.Uint32(), c.d.Uint32()
		data = c.d.Opaque(c.d.Remaining())
	})
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.wcc(nil, preOp{})
		return r, true
	}
	n := c.cfh
	var pre preOp
	var written int
	var committed uint32
	s = func() nfs4.Status {
		var st unix.Stat_t
		if s := c.s.statNode(n, &st); s != nfs4.OK {
			return s
		}
		pre = preOpOf(&st)
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFDIR:
			return nfs4.ErrIsdir
		case stable > nfs4.FileSync4 || count > uint32(len(data)) || len(data) > c.s.cfg.MaxIO:
			return nfs4.ErrInval
		case c.readOnlyFH():
			return nfs4.ErrRofs
		case c.layoutFile() != nil:
			return nfs4.ErrNotsupp
		}
		data = data[:count]
		if !rangeFits(off, uint64(len(data))) {
			return nfs4.ErrFbig
		}
		if s := c.s.breakDelegs(nil, n, true); s != nfs4.OK {
			return s
		}
		fd, s := c.writeTarget(nfs4.AnonStateid)
		if s != nfs4.OK {
			return s
		}
		var w int
		err := c.asCallerIO(func() error {
			var err error
			w, err = c.s.io.WriteAt(File{FD: fd, node: n}, data, int64(off))
			return err
		})
		n.extent.changed()
		if w, err = writtenCount(w, len(data), err); w == 0 && len(data) > 0 {
			return errno(err)
		}
		committed = nfs4.Unstable4
		if stable != nfs4.Unstable4 {
			if err := c.s.io.Sync(fd, stable == nfs4.DataSync4); err != nil {
				return errno(err)
			}
			committed = stable
		}
		c.countWritten(w)
		written = w
		return nfs4.OK
	}()
	if s == nfs4.ErrSymlink || s == nfs4.ErrWrongType {
		s = nfs4.ErrInval
	}
	r := c.status3(s)
	c.wcc(n, pre)
	if s == nfs4.OK {
		c.e.Uint32(uint32(written))
		c.e.Uint32(committed)
		c.e.Fixed(c.s.bootVer[:])
	}
	return r, true
}

// where3 reads diropargs3 (a directory handle and a name) and the rest of
// the arguments, and makes the directory current.
func (c *compound) where3(rest func()) (name []byte, s nfs4.Status, bad bool) {
	s, bad = c.fhArgs(func() {
		name = c.d.String(nfs4.MaxNameLen + 1)
		if rest != nil {
			rest()
		}
	})
	return name, s, bad
}

// created3 writes the result of CREATE, MKDIR, SYMLINK and MKNOD: the new
// object's handle and attributes and the directory's wcc.
func (c *compound) created3(s nfs4.Status, dir *node, pre preOp, obj *node) uint32 {
	if s == nfs4.OK && obj != nil && len(obj.handle) > nfs3Max {
		s = nfs4.ErrServerfault
	}
	r := c.status3(s)
	if s == nfs4.OK {
		c.e.Bool(true)
		encodeFH3(c.e, obj)
		c.postOp(obj)
	}
	c.wcc(dir, pre)
	return r
}

// createStart checks a create in the current directory: the export is
// writable for the caller and name is a name.
func (c *compound) createStart(name []byte) (dir *node, pre preOp, s nfs4.Status) {
	dir = c.cfh
	pre = c.pre(dir)
	if s := c.readOnly3(); s != nfs4.OK {
		return dir, pre, s
	}
	if s := checkName(name); s != nfs4.OK {
		return dir, pre, s
	}
	var st unix.Stat_t
	return dir, pre, c.needDir(&st)
}

func proc3Create(c *compound) (uint32, bool) {
	var how uint32
	var a newAttrs
	var verf [8]byte
	name, s, bad := c.where3(func() {
		switch how = c.d.Uint32(); how {
		case nfs3CreateUncheck, nfs3CreateGuarded:
			a = decodeSattr3(c.d)
		case nfs3CreateExcl:
			copy(verf[:], c.d.Fixed(8))
		default:
			c.d.Fail(xdr.ErrTooLong)
		}
	})
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.wcc(nil, preOp{})
		return r, true
	}
	dir, pre, s := c.createStart(name)
	var obj *node
	if s == nfs4.OK {
		mode := [...]uint32{nfs4.CreateUnchecked, nfs4.CreateGuarded, nfs4.CreateExclusive}[how]
		var res openResult
		obj, s = c.createFile(&openArgs{create: true, createMode: mode, verf: verf, attrs: a, name: name}, &res)
	}
	return c.created3(s, dir, pre, obj), true
}

// create3 runs NFSv4's CREATE for a directory, symlink or special file.
func (c *compound) create3(typ uint32, name, link []byte, major, minor uint32, a *newAttrs) (*node, nfs4.Status) {
	e := args3()
	e.Uint32(typ)
	switch typ {
	case nfs4.NF4LNK:
		e.Opaque(link)
	case nfs4.NF4BLK, nfs4.NF4CHR:
		e.Uint32(major)
		e.Uint32(minor)
	}
	e.Opaque(name)
	encodeFattr4(e, a)
	if s := c.v4op(opCreate, bytesOf(e)); s != nfs4.OK {
		return nil, s
	}
	return c.cfh, nfs4.OK
}

func proc3Mkdir(c *compound) (uint32, bool) {
	var a newAttrs
	name, s, bad := c.where3(func() { a = decodeSattr3(c.d) })
	if bad {
		return 0, false
	}
	return c.make3(s, nfs4.NF4DIR, name, nil, 0, 0, &a), true
}

// make3 is MKDIR, SYMLINK and MKNOD once their arguments decoded.
func (c *compound) make3(s nfs4.Status, typ uint32, name, link []byte, major, minor uint32, a *newAttrs) uint32 {
	if s != nfs4.OK {
		r := c.status3(s)
		c.wcc(nil, preOp{})
		return r
	}
	dir, pre, s := c.createStart(name)
	var obj *node
	if s == nfs4.OK {
		obj, s = c.create3(typ, name, link, major, minor, a)
	}
	return c.created3(s, dir, pre, obj)
}

func proc3Symlink(c *compound) (uint32, bool) {
	var a newAttrs
	var link []byte
	name, s, bad := c.where3(func() {
		a = decodeSattr3(c.d)
		link = c.d.String(nfs4.MaxPathLen)
	})
	if bad {
		return 0, false
	}
	// A symlink's mode means nothing on Linux.
	a.mask[nfs4.AttrMode/32] &^= 1 << (nfs4.AttrMode % 32)
	return c.make3(s, nfs4.NF4LNK, name, link, 0, 0, &a), true
}

func proc3Mknod(c *compound) (uint32, bool) {
	var a newAttrs
	var typ, major, minor uint32
	name, s, bad := c.where3(func() {
		switch typ = c.d.Uint32(); typ {
		case nfs4.NF4CHR, nfs4.NF4BLK:
			a = decodeSattr3(c.d)
			major, minor = c.d.Uint32(), c.d.Uint32()
		case nfs4.NF4SOCK, nfs4.NF4FIFO:
			a = decodeSattr3(c.d)
		}
	})
	if bad {
		return 0, false
	}
	if s == nfs4.OK {
		switch typ {
		case nfs4.NF4CHR, nfs4.NF4BLK, nfs4.NF4SOCK, nfs4.NF4FIFO:
		default:
			s = nfs4.ErrBadtype
		}
	}
	return c.make3(s, typ, name, nil, major, minor, &a), true
}

func proc3Remove(c *compound, rmdir bool) (uint32, bool) {
	name, s, bad := c.where3(nil)
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.wcc(nil, preOp{})
		return r, true
	}
	dir := c.cfh
	pre := c.pre(dir)
	s = c.readOnly3()
	if s == nfs4.OK && string(name) == "." && rmdir {
		s = nfs4.ErrInval
	}
	if s == nfs4.OK {
		s = checkName(name)
	}
	if s == nfs4.OK {
		// REMOVE takes no directory and RMDIR nothing else (knfsd's
		// nfsd_unlink by type): NFSv4's REMOVE takes both.
		s = c.childType(string(name), rmdir)
	}
	if s == nfs4.OK {
		e := args3()
		e.Opaque(name)
		s = c.v4op(opRemove, bytesOf(e))
	}
	r := c.status3(s)
	c.wcc(dir, pre)
	return r, true
}

// childType checks that entry name of the current directory is a
// directory (dir) or is not (!dir).
func (c *compound) childType(name string, dir bool) nfs4.Status {
	dfd, err := c.cfh.dirFD()
	if err == unix.ENOENT {
		err = unix.ESTALE
	}
	if err != nil {
		return errno(err)
	}
	defer c.cfh.unpin()
	var st unix.Stat_t
	if err := statChild(dfd, name, &st); err != nil {
		return errno(err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	switch {
	case dir && !isDir:
		return nfs4.ErrNotdir
	case !dir && isDir:
		return nfs4.ErrIsdir
	}
	return nfs4.OK
}

func proc3Rename(c *compound) (uint32, bool) {
	fromFH := c.d.Opaque(nfs3Max)
	fromName := c.d.String(nfs4.MaxNameLen + 1)
	toFH := c.d.Opaque(nfs3Max)
	toName := c.d.String(nfs4.MaxNameLen + 1)
	if c.d.Err() != nil {
		return 0, false
	}
	var from, to *node
	var preFrom, preTo preOp
	s := c.putfh3(fromFH)
	if s == nfs4.OK {
		from = c.cfh
		preFrom = c.pre(from)
		s = c.putfh3(toFH)
	}
	if s == nfs4.OK {
		to = c.cfh
		preTo = c.pre(to)
		c.sfh = from
		s = c.readOnly3()
	}
	if s == nfs4.OK {
		e := args3()
		e.Opaque(fromName)
		e.Opaque(toName)
		s = c.v4op(opRename, bytesOf(e))
	}
	r := c.status3(s)
	c.wcc(from, preFrom)
	c.wcc(to, preTo)
	return r, true
}

func proc3Link(c *compound) (uint32, bool) {
	fileFH := c.d.Opaque(nfs3Max)
	dirFH := c.d.Opaque(nfs3Max)
	name := c.d.String(nfs4.MaxNameLen + 1)
	if c.d.Err() != nil {
		return 0, false
	}
	var file, dir *node
	var pre preOp
	s := c.putfh3(fileFH)
	if s == nfs4.OK {
		file = c.cfh
		s = c.putfh3(dirFH)
	}
	if s == nfs4.OK {
		dir = c.cfh
		pre = c.pre(dir)
		c.sfh = file
		s = c.readOnly3()
	}
	if s == nfs4.OK {
		e := args3()
		e.Opaque(name)
		s = c.v4op(opLink, bytesOf(e))
	}
	r := c.status3(s)
	c.postOp(file)
	c.wcc(dir, pre)
	return r, true
}

// proc3Readdir is READDIR and READDIRPLUS (plus: each entry with its
// attributes and handle, as NFSv4's READDIR looks them up).
func proc3Readdir(c *compound, plus bool) (uint32, bool) {
	var cookie uint64
	var dircount, maxcount uint32
	s, bad := c.fhArgs(func() {
		cookie = c.d.Uint64()
		c.d.Fixed(8) // cookieverf: cookies never expire (op_readdir.go)
		dircount = c.d.Uint32()
		if plus {
			maxcount = c.d.Uint32()
		} else {
			maxcount, dircount = dircount, 0
		}
	})
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.e.Bool(false)
		return r, true
	}
	dir := c.cfh
	var st unix.Stat_t
	s = c.needDir(&st)
	if s == nfs4.OK {
		s = c.mayReaddir()
	}
	var ds *dirStream
	limit := min(int(maxcount), c.room()-readOverhead, c.s.cfg.MaxIO)
	if s == nfs4.OK {
		ds, s = openDirStream(dir, cookie, limit)
	}
	statusPos := c.e.Reserve()
	if s != nfs4.OK {
		c.postOp(dir)
		r := nfs3Stat(s)
		c.e.Patch(statusPos, r)
		return r, true
	}
	defer ds.close()
	noSearch := c.rights(dir, &st, mayExec)&mayExec == 0
	e := c.e
	start := statusPos
	c.postOpStat(dir, &st)
	e.Uint64(0) // cookieverf
	used, count := 0, 0
	safe, safeCount := e.Pos(), 0
	eof := true
	for {
		ent, ok, err := ds.next()
		if err != nil {
			e.Truncate(statusPos + 4)
			c.postOp(dir)
			r := nfs3Stat(errno(err))
			e.Patch(statusPos, r)
			return r, true
		}
		if !ok {
			break
		}
		mark := e.Pos()
		e.Bool(true)
		ino := ds.ino
		var n *node
		var est unix.Stat_t
		if plus && !noSearch {
			n, err = c.s.lookupChildAt(dir, ds.fd, ent.name, &est)
			if err == unix.ENOENT {
				e.Truncate(mark)
				continue // removed since getdents64 read it
			}
			if err == nil {
				ino = est.Ino
			}
		}
		e.Uint64(ino)
		e.String(ent.name)
		e.Uint64(ent.cookie)
		if plus {
			if n != nil {
				c.postOpStat(n, &est)
				if len(n.handle) <= nfs3Max {
					e.Bool(true)
					e.Opaque(n.handle)
				} else {
					e.Bool(false)
				}
			} else {
				e.Bool(false)
				e.Bool(false)
			}
		}
		dirBytes := 8 + 4 + len(ent.name) + 8
		if e.Pos()-start+8 > limit || (dircount > 0 && count > 0 && used+dirBytes > int(dircount)) {
			e.Truncate(safe)
			eof = false
			break
		}
		used += dirBytes
		count++
		if ent.cookie >= firstCookie {
			safe, safeCount = e.Pos(), count
		}
	}
	if !eof && safeCount == 0 {
		e.Truncate(statusPos + 4)
		c.postOp(dir)
		e.Patch(statusPos, nfs3ErrToosmall)
		return nfs3ErrToosmall, true
	}
	e.Bool(false)
	e.Bool(eof)
	e.Patch(statusPos, nfs3OK)
	return nfs3OK, true
}

// statfs3 reads the statfs of the current file's filesystem.
func (c *compound) statfs3(fs *unix.Statfs_t) nfs4.Status {
	n := c.cfh
	if err := unix.Fstatfs(n.exp.mountFD(n.fs), fs); err != nil {
		return errno(err)
	}
	return nfs4.OK
}

func proc3Fsstat(c *compound) (uint32, bool) {
	s, bad := c.fhArgs(nil)
	if bad {
		return 0, false
	}
	var fs unix.Statfs_t
	if s == nfs4.OK {
		s = c.statfs3(&fs)
	}
	r := c.status3(s)
	if s != nfs4.OK {
		c.postOp(c.cfh)
		return r, true
	}
	c.postOp(c.cfh)
	bs := uint64(fs.Bsize)
	c.e.Uint64(fs.Blocks * bs)
	c.e.Uint64(fs.Bfree * bs)
	c.e.Uint64(fs.Bavail * bs)
	c.e.Uint64(fs.Files)
	c.e.Uint64(fs.Ffree)
	c.e.Uint64(fs.Ffree)
	c.e.Uint32(0) // invarsec
	return r, true
}

// FSINFO3 properties (RFC 1813 section 3.3.19).
const (
	fsf3Link        = 0x1
	fsf3Symlink     = 0x2
	fsf3Homogeneous = 0x8
	fsf3Cansettime  = 0x10
)

func proc3Fsinfo(c *compound) (uint32, bool) {
	s, bad := c.fhArgs(nil)
	if bad {
		return 0, false
	}
	r := c.status3(s)
	c.postOp(c.cfh)
	if s != nfs4.OK {
		return r, true
	}
	maxIO := uint32(c.s.cfg.MaxIO)
	e := c.e
	e.Uint32(maxIO)    // rtmax
	e.Uint32(maxIO)    // rtpref
	e.Uint32(4096)     // rtmult
	e.Uint32(maxIO)    // wtmax
	e.Uint32(maxIO)    // wtpref
	e.Uint32(4096)     // wtmult
	e.Uint32(64 << 10) // dtpref
	e.Uint64(1<<63 - 1)
	e.Uint32(0) // time_delta: 1 ns
	e.Uint32(1)
	e.Uint32(fsf3Link | fsf3Symlink | fsf3Homogeneous | fsf3Cansettime)
	return r, true
}

func proc3Pathconf(c *compound) (uint32, bool) {
	s, bad := c.fhArgs(nil)
	if bad {
		return 0, false
	}
	r := c.status3(s)
	c.postOp(c.cfh)
	if s != nfs4.OK {
		return r, true
	}
	e := c.e
	e.Uint32(65000)           // linkmax (ext4's)
	e.Uint32(nfs4.MaxNameLen) // name_max
	e.Bool(true)              // no_trunc
	e.Bool(true)              // chown_restricted
	e.Bool(false)             // case_insensitive
	e.Bool(true)              // case_preserving
	return r, true
}

func proc3Commit(c *compound) (uint32, bool) {
	var off uint64
	var count uint32
	s, bad := c.fhArgs(func() { off, count = c.d.Uint64(), c.d.Uint32() })
	if bad {
		return 0, false
	}
	if s != nfs4.OK {
		r := c.status3(s)
		c.wcc(nil, preOp{})
		return r, true
	}
	n := c.cfh
	pre := c.pre(n)
	// NFSv4's COMMIT: the whole file is synced, and the verifier is the
	// one WRITE sends.
	e := args3()
	e.Uint64(off)
	e.Uint32(count)
	s = c.v4op(opCommit, bytesOf(e))
	r := c.status3(s)
	c.wcc(n, pre)
	if s == nfs4.OK {
		c.e.Fixed(c.s.bootVer[:])
	}
	return r, true
}
