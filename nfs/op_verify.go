package nfs

import (
	"bytes"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// opVerify is VERIFY (RFC 8881 section 18.31): NFS4ERR_NOT_SAME unless
// the attributes given are the current file's.
func opVerify(c *compound) nfs4.Status {
	same, s := c.attrsSame()
	switch {
	case s != nfs4.OK:
		return s
	case !same:
		return nfs4.ErrNotSame
	}
	return nfs4.OK
}

// opNverify is NVERIFY (RFC 8881 section 18.15): NFS4ERR_SAME when the
// attributes given are the current file's.
func opNverify(c *compound) nfs4.Status {
	same, s := c.attrsSame()
	switch {
	case s != nfs4.OK:
		return s
	case same:
		return nfs4.ErrSame
	}
	return nfs4.OK
}

// maxVerifyAttrs bounds the attribute values VERIFY may carry, as
// SETATTR's fattr4 is bounded.
const maxVerifyAttrs = 64 << 10

// verifyArgs is VERIFY4args, and NVERIFY4args of the same shape: a fattr4.
type verifyArgs struct {
	attrs nfs4.Bitmap
	vals  []byte // aliases the request
}

func decodeVerify(d *xdr.Decoder) verifyArgs {
	return verifyArgs{attrs: nfs4.DecodeBitmap(d), vals: d.Opaque(maxVerifyAttrs)}
}

// attrsSame reads a fattr4 and reports whether it equals what GETATTR of
// the same attributes would return for the current file, byte for byte
// (as knfsd's _nfsd4_verify compares). Attributes we do not support are
// NFS4ERR_ATTRNOTSUPP; write-only ones and rdattr_error, which GETATTR
// never returns, are NFS4ERR_INVAL (RFC 8881 section 18.31.3).
func (c *compound) attrsSame() (bool, nfs4.Status) {
	a := decodeVerify(c.d)
	req, vals := a.attrs, a.vals
	if c.d.Err() != nil {
		return false, nfs4.ErrBadXDR
	}
	if req.And(c.s.supportedFor(c.minor)) != req {
		return false, nfs4.ErrAttrnotsupp
	}
	if !req.And(writeOnlyAttrs).Empty() || req.Has(nfs4.AttrRdattrError) {
		return false, nfs4.ErrInval
	}
	var st unix.Stat_t
	if s := c.s.statNode(c.cfh, &st); s != nfs4.OK {
		return false, s
	}
	e := xdr.NewEncoder(len(vals) + 64)
	c.s.encodeFattr(e, req, &attrSource{n: c.cfh, st: &st, flavor: c.cred.Flavor, minor: c.minor})
	d := xdr.NewDecoder(e.Header())
	got := nfs4.DecodeBitmap(d)
	have := d.Opaque(maxVerifyAttrs)
	// An attribute this file cannot report (the pseudo root's, or a
	// statfs that failed) makes the lists differ.
	return got == req && d.Err() == nil && bytes.Equal(have, vals), nfs4.OK
}
