package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// readdirArgs is READDIR4args (RFC 8881 §18.23.1).
type readdirArgs struct {
	cookie      uint64
	cookieverf  [nfs4.VerifierSize]byte
	dircount    uint32
	maxcount    uint32
	attrRequest nfs4.Bitmap
}

func decodeReaddir(d *xdr.Decoder) readdirArgs {
	var a readdirArgs
	a.cookie = d.Uint64()
	copy(a.cookieverf[:], d.Fixed(nfs4.VerifierSize))
	a.dircount = d.Uint32()
	a.maxcount = d.Uint32()
	a.attrRequest = nfs4.DecodeBitmap(d)
	return a
}

func opReaddir(c *compound) nfs4.Status {
	if s := c.mayReaddir(); s != nfs4.OK {
		return s
	}
	a := decodeReaddir(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if !a.attrRequest.And(writeOnlyAttrs).Empty() {
		return nfs4.ErrInval // as GETATTR (knfsd's nfsd4_readdir)
	}
	var st unix.Stat_t
	if s := c.needDir(&st); s != nfs4.OK {
		return s
	}
	// Cookies 1 and 2 are reserved (RFC 8881 §18.23.3), and a listing from
	// the start carries a zero verifier: knfsd's nfsd4_readdir checks.
	// Any other verifier is ignored, as cookies never expire.
	if a.cookie == 1 || a.cookie == 2 || a.cookie == 0 && a.cookieverf != [nfs4.VerifierSize]byte{} {
		return nfs4.ErrBadCookie
	}
	// maxcount counts all of READDIR4resok: the verifier and the closing
	// "no more entries" and eof take 16 bytes even for an empty directory
	// (knfsd's nfsd4_encode_readdir).
	if a.maxcount < 16 {
		return nfs4.ErrToosmall
	}
	limit := min(int(a.maxcount), c.room()-readOverhead)
	dir := c.cfh
	// Entries' attributes and handles take a lookup, which needs search
	// (x) permission on the directory; without it each entry carries
	// rdattr_error, or, when the client did not ask for that attribute,
	// the whole READDIR fails (knfsd's nfsd4_encode_dirent).
	c.dirNoSearch = dir.exp != nil && c.rights(dir, &st, mayExec)&mayExec == 0
	defer func() { c.dirNoSearch = false }()
	if c.dirNoSearch && !a.attrRequest.Has(nfs4.AttrRdattrError) && !onlyNames(a.attrRequest) {
		return nfs4.ErrAccess
	}
	if dir.exp == nil {
		d := c.s.pseudoDirOf(dir)
		if d == nil {
			return nfs4.ErrStale
		}
		c.pdir = d
		defer func() { c.pdir = nil }()
		return c.encodeDirlist(listPseudo(d, c.conn.addr, a.cookie), a.attrRequest, int(a.dircount), limit)
	}
	ds, s := openDirStream(dir, a.cookie, limit)
	if s != nfs4.OK {
		return s
	}
	defer ds.close()
	c.dirFD, c.dirOpen = ds.fd, true
	defer func() { c.dirOpen = false }()
	return c.encodeDirlist(ds, a.attrRequest, int(a.dircount), limit)
}

// encodeDirlist writes READDIR4resok: as many entries of src as fit in
// maxcount bytes (and dircount bytes of names and cookies, when given).
func (c *compound) encodeDirlist(src dirSource, req nfs4.Bitmap, dircount, maxcount int) nfs4.Status {
	e := c.e
	start := e.Pos()
	// The verifier is zeros, as knfsd sends: cookies stay valid while the
	// directory changes, so the verifier need not change with it (RFC 8881
	// §18.23.3).
	e.Uint64(0)
	used, count := 0, 0
	// The reply may end only after an entry whose cookie a client can send
	// back (not 0, 1 or 2; no real entry of a Linux filesystem has one).
	safe, safeCount := e.Pos(), 0
	for {
		ent, ok, err := src.next()
		if err != nil {
			return errno(err)
		}
		if !ok {
			break
		}
		mark := e.Pos()
		e.Bool(true)
		e.Uint64(ent.cookie)
		e.String(ent.name)
		if !c.encodeEntryAttrs(ent.name, req) {
			e.Truncate(mark)
			continue
		}
		dirBytes := 8 + 4 + len(ent.name)
		// 8 more bytes: the closing "no more entries" and eof bools.
		if e.Pos()-start+8 > maxcount || (dircount > 0 && count > 0 && used+dirBytes > dircount) {
			e.Truncate(safe)
			if safeCount == 0 {
				return nfs4.ErrToosmall
			}
			e.Bool(false)
			e.Bool(false)
			return nfs4.OK
		}
		used += dirBytes
		count++
		if ent.cookie >= firstCookie {
			safe, safeCount = e.Pos(), count
		}
	}
	e.Bool(false)
	e.Bool(true)
	return nfs4.OK
}

// encodeEntryAttrs writes the fattr4 of one directory entry and reports
// whether to keep the entry. An entry removed since getdents64 read it is
// dropped, as knfsd drops it; one that cannot be read otherwise reports
// rdattr_error when asked for, else an empty attribute set.
func (c *compound) encodeEntryAttrs(name string, req nfs4.Bitmap) bool {
	dir := c.cfh
	var st unix.Stat_t
	var n *node
	var err error
	if dir.exp == nil {
		if c.pdir != nil {
			n = c.s.pseudoEntryNode(c.pdir, name)
		}
		if n == nil {
			err = unix.EIO
		} else if s := c.s.statNode(n, &st); s != nfs4.OK {
			err = unix.EIO
		}
	} else if c.dirNoSearch {
		err = unix.EACCES
	} else if c.dirOpen {
		n, err = c.s.lookupChildAt(dir, c.dirFD, name, &st)
	} else {
		n, err = c.s.lookupChild(dir, name, &st)
	}
	if err == unix.ENOENT {
		return false
	}
	if err != nil {
		if req.Has(nfs4.AttrRdattrError) {
			b := nfs4.BitmapOf(nfs4.AttrRdattrError)
			b.Encode(c.e)
			c.e.Uint32(4)
			c.e.Uint32(uint32(errno(err)))
			return true
		}
		nfs4.Bitmap{}.Encode(c.e)
		c.e.Uint32(0)
		return true
	}
	c.s.encodeFattr(c.e, req, &attrSource{n: n, st: &st, flavor: c.cred.Flavor, minor: c.minor})
	return true
}

// onlyNames reports whether req asks for no attribute at all: a listing of
// names needs no lookup.
func onlyNames(req nfs4.Bitmap) bool { return req.Empty() }
