package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// setFH makes n the current file handle; the current stateid is cleared
// as RFC 8881 section 16.2.3.1.2 requires when the filehandle changes.
func (c *compound) setFH(n *node) {
	c.cfh = n
	c.hasCur = false
	c.enterExport(n)
}

func opPutrootfh(c *compound) nfs4.Status {
	n := c.s.root()
	if n == nil {
		return nfs4.ErrStale
	}
	if n.exp != nil {
		// One export is the root: its client specs apply here already.
		if s := c.admit(n.exp); s != nfs4.OK {
			return s
		}
	}
	c.setFH(n)
	return nfs4.OK
}

// putfhArgs is PUTFH4args.
type putfhArgs struct {
	fh []byte // aliases the request
}

func decodePutfh(d *xdr.Decoder) putfhArgs { return putfhArgs{fh: d.Opaque(nfs4.FHSize)} }

func opPutfh(c *compound) nfs4.Status {
	a := decodePutfh(c.d)
	if c.d.Err() != nil {
		if len(a.fh) == 0 {
			return nfs4.ErrBadhandle
		}
		return nfs4.ErrBadXDR
	}
	n, st := c.s.resolve(a.fh)
	if st != nfs4.OK {
		return st
	}
	if st := c.admitFH(n); st != nfs4.OK {
		return st
	}
	c.setFH(n)
	return nfs4.OK
}

func opGetfh(c *compound) nfs4.Status {
	c.e.Opaque(c.cfh.handle)
	return nfs4.OK
}

func opSavefh(c *compound) nfs4.Status {
	c.sfh, c.saved, c.hasSaved = c.cfh, c.cur, c.hasCur
	return nfs4.OK
}

func opRestorefh(c *compound) nfs4.Status {
	if c.sfh == nil {
		return nfs4.ErrRestorefh
	}
	c.cfh, c.cur, c.hasCur = c.sfh, c.saved, c.hasSaved
	c.enterExport(c.cfh)
	return nfs4.OK
}

// needDir checks that the current filehandle (the table's opNeedFH made
// sure there is one) is a directory.
func (c *compound) needDir(st *unix.Stat_t) nfs4.Status {
	if s := c.s.statNode(c.cfh, st); s != nfs4.OK {
		return s
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nfs4.OK
	case unix.S_IFLNK:
		return nfs4.ErrSymlink
	}
	return nfs4.ErrNotdir
}

// nameInDir checks a component name and the current filehandle, a
// directory whose attributes it leaves in st.
func (c *compound) nameInDir(name []byte, st *unix.Stat_t) nfs4.Status {
	if s := c.needDir(st); s != nfs4.OK {
		return s
	}
	return checkName(name)
}

// lookupArgs is LOOKUP4args.
type lookupArgs struct {
	name []byte // aliases the request
}

func decodeLookup(d *xdr.Decoder) lookupArgs { return lookupArgs{name: decodeName(d)} }

func opLookup(c *compound) nfs4.Status {
	a := decodeLookup(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	name := a.name
	var st unix.Stat_t
	if s := c.nameInDir(name, &st); s != nfs4.OK {
		return s
	}
	if s := c.mayLookup(c.cfh, &st); s != nfs4.OK {
		return s
	}
	if c.cfh.exp == nil {
		d := c.s.pseudoDirOf(c.cfh)
		if d == nil {
			return nfs4.ErrStale
		}
		return c.pseudoLookup(d, string(name))
	}
	n, err := c.s.lookupChild(c.cfh, string(name), &st)
	if err != nil {
		return errno(err)
	}
	c.setFH(n)
	c.remember(n, &st)
	return nfs4.OK
}

func opLookupp(c *compound) nfs4.Status { return c.lookupParent() }

// lookupParent makes the parent of the current directory the current
// filehandle (LOOKUPP; SECINFO_NO_NAME with SECINFO_STYLE4_PARENT). The
// root has none: NFS4ERR_NOENT (RFC 8881 sections 18.14.3, 18.45.3).
func (c *compound) lookupParent() nfs4.Status {
	var st unix.Stat_t
	if s := c.needDir(&st); s != nfs4.OK {
		return s
	}
	if s := c.mayLookup(c.cfh, &st); s != nfs4.OK {
		return s
	}
	n := c.cfh
	if n.exp == nil || n.isExportRoot() {
		return c.pseudoParent(n)
	}
	rel := parentRel(n.path())
	if rel == "." {
		c.setFH(c.s.exportRoot(n.exp))
		return nfs4.OK
	}
	p, err := c.s.nodeOfPath(n.exp, rel)
	if err != nil {
		return errno(err)
	}
	c.setFH(p)
	return nfs4.OK
}

// statFH fills st for the current filehandle: from the memo of the LOOKUP
// that made it current when there is one, else from the file.
func (c *compound) statFH(st *unix.Stat_t) nfs4.Status {
	if c.recall(c.cfh, st) {
		return nfs4.OK
	}
	return c.s.statNode(c.cfh, st)
}

// getattrArgs is GETATTR4args.
type getattrArgs struct {
	attrs nfs4.Bitmap
}

func decodeGetattr(d *xdr.Decoder) getattrArgs { return getattrArgs{attrs: nfs4.DecodeBitmap(d)} }

func opGetattr(c *compound) nfs4.Status {
	req := decodeGetattr(c.d).attrs
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	// Write-only attributes cannot be read (RFC 8881 section 5.5; knfsd's
	// nfsd4_getattr): asking is an error, not an empty answer.
	if !req.And(writeOnlyAttrs).Empty() {
		return nfs4.ErrInval
	}
	var st unix.Stat_t
	if s := c.statFH(&st); s != nfs4.OK {
		return s
	}
	c.delegAttrs(c.cfh, req, &st) // another client's write delegation (state_deleg.go)
	c.s.encodeFattr(c.e, req, &attrSource{n: c.cfh, st: &st, flavor: c.cred.Flavor, minor: c.minor})
	return nfs4.OK
}

// accessArgs is ACCESS4args.
type accessArgs struct {
	access uint32
}

func decodeAccess(d *xdr.Decoder) accessArgs { return accessArgs{access: d.Uint32()} }

func opAccess(c *compound) nfs4.Status {
	want := decodeAccess(c.d).access
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	var st unix.Stat_t
	if s := c.statFH(&st); s != nfs4.OK {
		return s
	}
	supported, granted := c.accessResult(c.cfh, &st, want)
	if c.readOnlyFH() {
		// knfsd's nfsd_access: a read-only export grants no change.
		granted &^= nfs4.AccessModify | nfs4.AccessExtend | nfs4.AccessDelete
	}
	c.e.Uint32(supported)
	c.e.Uint32(granted)
	return nfs4.OK
}

func opReadlink(c *compound) nfs4.Status {
	n := c.cfh
	if n.exp == nil {
		return nfs4.ErrInval
	}
	var st unix.Stat_t
	fd, err := n.openStat(unix.O_PATH, nil, &st)
	if err != nil {
		return errno(err)
	}
	defer unix.Close(fd)
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return nfs4.ErrInval
	}
	buf := make([]byte, nfs4.MaxPathLen)
	m, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return errno(err)
	}
	c.e.Opaque(buf[:m])
	return nfs4.OK
}

// secinfoArgs is SECINFO4args.
type secinfoArgs struct {
	name []byte // aliases the request
}

func decodeSecinfo(d *xdr.Decoder) secinfoArgs { return secinfoArgs{name: decodeName(d)} }

func opSecinfo(c *compound) nfs4.Status {
	name := decodeSecinfo(c.d).name
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	var st unix.Stat_t
	if s := c.nameInDir(name, &st); s != nfs4.OK {
		return s
	}
	if s := c.mayLookup(c.cfh, &st); s != nfs4.OK {
		return s
	}
	if s := c.childExists(string(name)); s != nfs4.OK {
		return s
	}
	c.encodeSecinfoFor(c.secinfoExport(string(name)))
	c.cfh = nil // SECINFO consumes the current filehandle
	return nfs4.OK
}

// childExists checks that name is in the current directory, as knfsd's
// nfsd4_secinfo does by looking it up: SECINFO of a name that does not
// exist is NFS4ERR_NOENT (RFC 8881 section 18.29.3 lists it).
func (c *compound) childExists(name string) nfs4.Status {
	if c.cfh.exp == nil {
		d := c.s.pseudoDirOf(c.cfh)
		if d == nil {
			return nfs4.ErrStale
		}
		if en := d.find(name); en == nil || !en.visible(c.conn.addr) {
			return nfs4.ErrNoent
		}
		return nfs4.OK
	}
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
	return nfs4.OK
}

// secinfo_style4 (RFC 8881 section 18.45.1).
const (
	secinfoStyleCurrentFH = 0
	secinfoStyleParent    = 1
)

// secinfoNoNameArgs is SECINFO_NO_NAME4args.
type secinfoNoNameArgs struct {
	style uint32
}

func decodeSecinfoNoName(d *xdr.Decoder) secinfoNoNameArgs {
	return secinfoNoNameArgs{style: d.Uint32()}
}

func opSecinfoNoName(c *compound) nfs4.Status {
	style := decodeSecinfoNoName(c.d).style
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	switch style {
	case secinfoStyleCurrentFH:
	case secinfoStyleParent:
		if s := c.lookupParent(); s != nfs4.OK {
			return s
		}
	default:
		return nfs4.ErrInval
	}
	c.encodeSecinfoFor(c.cfh.exp)
	c.cfh = nil
	return nfs4.OK
}
