package nfs

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// changeInfo is change_info4. atomic is false: the directory is not locked
// between the two samples, so the client must not assume nothing else
// changed.
type changeInfo struct{ before, after uint64 }

func (ci changeInfo) encode(e *xdr.Encoder) {
	e.Bool(false)
	e.Uint64(ci.before)
	e.Uint64(ci.after)
}

// dirOp is a directory being changed: its node, an O_PATH descriptor for
// the *at syscalls, and its change attribute before.
type dirOp struct {
	n      *node
	fd     int
	before uint64
}

// openDir prepares a change to directory n.
func (c *compound) openDir(n *node) (dirOp, nfs4.Status) {
	if n == nil {
		return dirOp{}, nfs4.ErrNofilehandle
	}
	if n.exp == nil {
		return dirOp{}, nfs4.ErrRofs
	}
	fd, err := n.dirFD()
	if err == unix.ENOTDIR {
		return dirOp{}, nfs4.ErrNotdir
	}
	if err == unix.ENOENT {
		err = unix.ESTALE
	}
	if err != nil {
		return dirOp{}, errno(err)
	}
	var st unix.Stat_t
	if err := staleIfRemoved(&st, unix.Fstat(fd, &st)); err != nil {
		n.unpin()
		return dirOp{}, errno(err)
	}
	return dirOp{n: n, fd: fd, before: changeAttr(&st)}, nfs4.OK
}

// done closes the directory and returns its change info.
func (d dirOp) done() changeInfo {
	var st unix.Stat_t
	after := d.before
	if unix.Fstat(d.fd, &st) == nil {
		after = changeAttr(&st)
	}
	d.n.unpin()
	return changeInfo{d.before, after}
}

// createArgs is CREATE4args (RFC 8881 section 18.4.1).
type createArgs struct {
	typ          uint32
	link         []byte // NF4LNK's target; aliases the request
	major, minor uint32 // NF4BLK's and NF4CHR's specdata4
	name         []byte // aliases the request
	attrs        newAttrs
	attrStatus   nfs4.Status // decodeNewAttrs' verdict on attrs
}

func decodeCreate(d *xdr.Decoder) createArgs {
	var a createArgs
	a.typ = d.Uint32()
	switch a.typ {
	case nfs4.NF4LNK:
		a.link = d.String(nfs4.MaxPathLen)
	case nfs4.NF4BLK, nfs4.NF4CHR:
		a.major, a.minor = d.Uint32(), d.Uint32()
	}
	a.name = decodeName(d)
	a.attrs, a.attrStatus = decodeNewAttrs(d)
	return a
}

func opCreate(c *compound) nfs4.Status {
	a := decodeCreate(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if s := checkName(a.name); s != nfs4.OK {
		return s
	}
	if a.attrStatus != nfs4.OK {
		return a.attrStatus
	}
	if s := c.resolveNewAttrs(&a.attrs); s != nfs4.OK {
		return s
	}
	if a.typ == nfs4.NF4REG {
		return nfs4.ErrBadtype
	}
	dir, s := c.openDir(c.cfh)
	if s != nfs4.OK {
		return s
	}
	mode := uint32(0o755)
	if a.typ != nfs4.NF4DIR {
		mode = 0o644
	}
	if a.attrs.mask.Has(nfs4.AttrMode) {
		mode = a.attrs.mode
	}
	var set nfs4.Bitmap
	err := asCaller(c.cred, func() error {
		if err := mknod(dir.fd, string(a.name), a.typ, mode, a.link, a.major, a.minor); err != nil {
			return err
		}
		fd, err := unix.Openat(dir.fd, string(a.name), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		ok := unix.Fstat(fd, &st) == nil
		want := keptSetgid(mode, &st)
		if ok && st.Mode&0o7777 == want || a.typ == nfs4.NF4LNK || inheritsACL(dir.fd) {
			// The mode is already right (no umask in the way).
			a.attrs.mask[nfs4.AttrMode/32] &^= 1 << (nfs4.AttrMode % 32)
		} else {
			a.attrs.mask.Set(nfs4.AttrMode)
			a.attrs.mode = want
		}
		set, err = applyAttrs(fd, -1, &a.attrs)
		if err != nil {
			// Do not leave behind an object the client is told failed.
			flags := 0
			if a.typ == nfs4.NF4DIR {
				flags = unix.AT_REMOVEDIR
			}
			unix.Unlinkat(dir.fd, string(a.name), flags)
			return err
		}
		if a.typ != nfs4.NF4LNK {
			set.Set(nfs4.AttrMode)
		}
		return nil
	})
	var n *node
	if err == nil {
		var st unix.Stat_t
		n, err = c.s.lookupChildAt(c.cfh, dir.fd, string(a.name), &st)
	}
	if err == nil {
		if s := c.commitCreated(dir.fd, string(a.name)); s != nfs4.OK {
			dir.done()
			return s
		}
	}
	ci := dir.done()
	if err != nil {
		return errno(err)
	}
	c.setFH(n)
	ci.encode(c.e)
	set.Encode(c.e)
	return nfs4.OK
}

// keptSetgid is the mode a new object st should end with when the client
// asked for mode: mode, plus the set-group-ID bit a directory inherited
// from a set-group-ID parent (mkdir(2)). Chmod'ing it away would make files
// created inside get their creator's group instead of the project's; a
// local mkdir keeps it, and knfsd drops the mode from its post-create
// SETATTR (nfsd_create_setattr: "Mode has already been set by file
// creation"). The rest of mode is still applied, in case a umask took
// bits away (the server itself runs with umask 0).
func keptSetgid(mode uint32, st *unix.Stat_t) uint32 {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mode&unix.S_ISGID != 0 {
		return mode | unix.S_ISGID
	}
	return mode
}

// mknod creates a non-regular object of NFS type typ.
func mknod(dirfd int, name string, typ, mode uint32, link []byte, major, minor uint32) error {
	switch typ {
	case nfs4.NF4DIR:
		return unix.Mkdirat(dirfd, name, mode)
	case nfs4.NF4LNK:
		return unix.Symlinkat(string(link), dirfd, name)
	case nfs4.NF4FIFO:
		return unix.Mknodat(dirfd, name, unix.S_IFIFO|mode, 0)
	case nfs4.NF4SOCK:
		return unix.Mknodat(dirfd, name, unix.S_IFSOCK|mode, 0)
	case nfs4.NF4BLK:
		return unix.Mknodat(dirfd, name, unix.S_IFBLK|mode, int(unix.Mkdev(major, minor)))
	case nfs4.NF4CHR:
		return unix.Mknodat(dirfd, name, unix.S_IFCHR|mode, int(unix.Mkdev(major, minor)))
	}
	return unix.EBADMSG
}

// removeArgs is REMOVE4args.
type removeArgs struct {
	name []byte // aliases the request
}

func decodeRemove(d *xdr.Decoder) removeArgs { return removeArgs{name: decodeName(d)} }

func opRemove(c *compound) nfs4.Status {
	name := decodeRemove(c.d).name
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if s := checkName(name); s != nfs4.OK {
		return s
	}
	dir, s := c.openDir(c.cfh)
	if s != nfs4.OK {
		return s
	}
	var st unix.Stat_t
	gone := unix.Fstatat(dir.fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW)
	if gone == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		if s := c.breakDelegsOf(&st); s != nfs4.OK { // state_deleg.go
			dir.done()
			return s
		}
	}
	var dying *FileLayout // the layout of the file's last name, going
	if gone == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink <= 1 {
		dying = c.layoutOfName(dir.fd, string(name), &st)
	}
	err := asCaller(c.cred, func() error {
		if gone == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return unix.Unlinkat(dir.fd, string(name), unix.AT_REMOVEDIR)
		}
		return unix.Unlinkat(dir.fd, string(name), 0)
	})
	if err == nil {
		if s := c.commitMeta(dir.fd); s != nfs4.OK {
			dir.done()
			return s
		}
	}
	ci := dir.done()
	if err != nil {
		if err == unix.EEXIST {
			err = unix.ENOTEMPTY
		}
		return errno(err)
	}
	c.s.orphan(fileID{dev: st.Dev, ino: st.Ino}, dying) // pnfs_mds.go: its data files go once nothing holds it
	if gone == nil && (st.Nlink <= 1 || st.Mode&unix.S_IFMT == unix.S_IFDIR) {
		if f := c.cfh.exp.fsOfDev(st.Dev); f != nil {
			if n := c.s.files.get(nodeKey{c.cfh.exp.id, f.id, st.Ino}); n != nil {
				c.s.files.drop(n)
			}
		}
	}
	ci.encode(c.e)
	return nfs4.OK
}

// renameArgs is RENAME4args: from the saved directory to the current one.
type renameArgs struct {
	oldName, newName []byte // alias the request
}

func decodeRename(d *xdr.Decoder) renameArgs {
	return renameArgs{oldName: decodeName(d), newName: decodeName(d)}
}

func opRename(c *compound) nfs4.Status {
	a := decodeRename(c.d)
	oldName, newName := a.oldName, a.newName
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if c.sfh == nil { // the current one: the table's opNeedFH
		return nfs4.ErrNofilehandle
	}
	if s := checkName(oldName); s != nfs4.OK {
		return s
	}
	if s := checkName(newName); s != nfs4.OK {
		return s
	}
	if c.sfh.exp != c.cfh.exp {
		return nfs4.ErrXdev
	}
	src, s := c.openDir(c.sfh)
	if s != nfs4.OK {
		return s
	}
	dst, s := c.openDir(c.cfh)
	if s != nfs4.OK {
		src.done()
		return s
	}
	// A regular file renamed over loses its last name: its data files
	// go as a REMOVE's would.
	var over unix.Stat_t
	var dying *FileLayout
	if c.s.mds != nil && unix.Fstatat(dst.fd, string(newName), &over, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		over.Mode&unix.S_IFMT == unix.S_IFREG && over.Nlink <= 1 {
		dying = c.layoutOfName(dst.fd, string(newName), &over)
	}
	err := asCaller(c.cred, func() error {
		return unix.Renameat(src.fd, string(oldName), dst.fd, string(newName))
	})
	var moved unix.Stat_t
	if err == nil {
		if unix.Fstatat(dst.fd, string(newName), &moved, unix.AT_SYMLINK_NOFOLLOW) != nil {
			moved.Mode = unix.S_IFDIR // unknown: repoint as for a directory
		}
		if dying != nil && (moved.Dev != over.Dev || moved.Ino != over.Ino) {
			c.s.orphan(fileID{dev: over.Dev, ino: over.Ino}, dying)
		}
		if s := c.commitMeta(src.fd, dst.fd); s != nfs4.OK {
			src.done()
			dst.done()
			return s
		}
	}
	sci, dci := src.done(), dst.done()
	if err != nil {
		if err == unix.EEXIST {
			err = unix.ENOTEMPTY
		}
		return errno(err)
	}
	oldRel, newRel := joinRel(c.sfh.path(), string(oldName)), joinRel(c.cfh.path(), string(newName))
	if moved.Mode&unix.S_IFMT == unix.S_IFDIR {
		c.s.files.renamed(c.cfh.exp, oldRel, newRel)
	} else if f := c.cfh.exp.fsOfDev(moved.Dev); f != nil {
		c.s.files.renamedFile(nodeKey{c.cfh.exp.id, f.id, moved.Ino}, oldRel, newRel)
	}
	sci.encode(c.e)
	dci.encode(c.e)
	return nfs4.OK
}

// renamedFile repoints the node of a file (not a directory) renamed from
// oldRel to newRel, if the table has it. Nothing else can be under oldRel,
// so the table is not walked: a RENAME costs the same with a million
// nodes as with ten. (A node whose path went stale some other way finds
// its file again through its kernel handle on its next open.)
func (t *fileTable) renamedFile(k nodeKey, oldRel, newRel string) {
	n := t.get(k)
	if n == nil {
		return
	}
	n.relMu.Lock()
	if n.rel == oldRel {
		n.rel = newRel
	}
	n.relMu.Unlock()
}

// renamed repoints the nodes at or under oldRel to newRel: a directory
// was renamed. It walks the whole table.
func (t *fileTable) renamed(e *export, oldRel, newRel string) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for k, n := range t.nodes.all() {
		if k.exp != e.id || n.exp != e {
			continue
		}
		n.relMu.Lock()
		switch {
		case n.rel == oldRel:
			n.rel = newRel
		case strings.HasPrefix(n.rel, oldRel+"/"):
			n.rel = newRel + n.rel[len(oldRel):]
		}
		n.relMu.Unlock()
	}
}

// linkArgs is LINK4args: a new name in the current directory for the
// saved file.
type linkArgs struct {
	name []byte // aliases the request
}

func decodeLink(d *xdr.Decoder) linkArgs { return linkArgs{name: decodeName(d)} }

func opLink(c *compound) nfs4.Status {
	name := decodeLink(c.d).name
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if c.sfh == nil { // the current one: the table's opNeedFH
		return nfs4.ErrNofilehandle
	}
	if s := checkName(name); s != nfs4.OK {
		return s
	}
	src := c.sfh
	if src.exp == nil {
		return nfs4.ErrIsdir
	}
	if src.exp != c.cfh.exp {
		return nfs4.ErrXdev
	}
	var st unix.Stat_t
	if s := c.s.statNode(src, &st); s != nfs4.OK {
		return s
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nfs4.ErrIsdir
	}
	dir, s := c.openDir(c.cfh)
	if s != nfs4.OK {
		return s
	}
	err := src.linkInto(c.cred, dir.fd, string(name))
	if err == nil {
		// The new name and the source's link count.
		if s := c.commitCreated(dir.fd, string(name)); s != nfs4.OK {
			dir.done()
			return s
		}
	}
	ci := dir.done()
	if err != nil {
		return errno(err)
	}
	ci.encode(c.e)
	return nfs4.OK
}
