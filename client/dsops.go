package client

import (
	"context"
	"strconv"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// What a pNFS metadata server needs from a data server (package pnfs):
// making a data file in one round trip, giving it an owner, and a
// keepalive. The rest (WRITE, READ, SETATTR, REMOVE) is the ordinary API.

// OwnerAttrs returns attributes that set a file's owner and group to the
// numeric ids uid and gid (the "1000" form AUTH_SYS clients send, RFC 8881
// section 5.9), and its mode when mode is not negative.
func OwnerAttrs(uid, gid uint32, mode int) *Attrs {
	a := &Attrs{Mask: nfs4.BitmapOf(nfs4.AttrOwner, nfs4.AttrOwnerGroup),
		Owner: strconv.FormatUint(uint64(uid), 10), OwnerGroup: strconv.FormatUint(uint64(gid), 10)}
	if mode >= 0 {
		a.Mask.Set(nfs4.AttrMode)
		a.Mode = uint32(mode)
	}
	return a
}

// CreateClosed creates the regular file name in dir with attrs (OPEN with
// OPEN4_CREATE in createmode, GUARDED4 or UNCHECKED4), closes it in the
// same COMPOUND (CLOSE of the current stateid, RFC 8881 section 16.2.3.1.2)
// and returns its handle. No open state is left behind, so the caller
// keeps nothing to renew or reclaim.
func (c *Client) CreateClosed(ctx context.Context, dir []byte, name string, createmode uint32, attrs *Attrs) ([]byte, error) {
	a := &OpenArgs{Access: nfs4.ShareAccessBoth, Name: name, Create: true, CreateMode: createmode, Attrs: attrs,
		ClientID: c.clientID, Owner: []byte("create-" + strconv.FormatUint(c.owners.Add(1), 10))}
	var fh []byte
	var open OpenRes
	opened := false
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, dir)
		EncodeOpen(e, a)
		EncodeGetfh(e)
		EncodeClose(e, nfs4.CurrentStateid)
		return 4
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err = r.Op(nfs4.OpOpen); err != nil {
			return err
		}
		if open, err = DecodeOpenRes(r.D); err != nil {
			return err
		}
		if fh, err = decodeFH(r); err != nil {
			return err
		}
		opened = true
		if err = r.Op(nfs4.OpClose); err != nil {
			return err
		}
		nfs4.DecodeStateid(r.D)
		return nil
	})
	if err != nil && opened {
		// The file is made and open, but CLOSE of the current stateid
		// failed (a server without current-stateid support): close the
		// stateid OPEN returned.
		err = c.CloseFile(ctx, fh, open.Stateid)
	}
	return fh, err
}

// Ping sends a COMPOUND of SEQUENCE alone: it proves the server answers
// and the session lives, and renews the client's lease (RFC 8881 section
// 18.46.3), which a client holding no state would otherwise lose.
func (c *Client) Ping(ctx context.Context) error {
	return c.Compound(ctx, func(*xdr.Encoder) int { return 0 }, func(*Reply) error { return nil })
}

// SessionLost reports whether err says the server no longer knows this
// client's session or client id (it restarted without closing the
// connection, or expired the lease): only a new Dial helps then.
func SessionLost(err error) bool {
	for _, s := range []nfs4.Status{nfs4.ErrBadsession, nfs4.ErrDeadsession, nfs4.ErrStaleClientid, nfs4.ErrExpired} {
		if IsStatus(err, s) {
			return true
		}
	}
	return false
}

// SpaceAvail returns the space_avail attribute of fh's file system (the
// bytes this caller may still write there), and whether the server gave
// it. A COMPOUND of SEQUENCE, PUTFH and GETATTR: as cheap as a keepalive,
// and it also renews the lease.
func (c *Client) SpaceAvail(ctx context.Context, fh []byte) (avail uint64, ok bool, err error) {
	err = c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeGetattr(e, nfs4.BitmapOf(nfs4.AttrSpaceAvail))
		return 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpGetattr); err != nil {
			return err
		}
		mask := nfs4.DecodeBitmap(r.D)
		vals := xdr.NewDecoder(r.D.Opaque(1 << 10))
		if mask.Has(nfs4.AttrSpaceAvail) {
			avail, ok = vals.Uint64(), true
		}
		if err := r.D.Err(); err != nil {
			return err
		}
		return vals.Err()
	})
	return avail, ok, err
}

// Fallocate sends ALLOCATE (op nfs4.OpAllocate) or DEALLOCATE
// (nfs4.OpDeallocate) of length bytes at off of the file fh, with sid
// (RFC 7862 sections 15.1 and 15.4): a metadata server passing a client's
// ALLOCATE or DEALLOCATE on to a file's data files.
func (c *Client) Fallocate(ctx context.Context, op uint32, fh []byte, sid nfs4.Stateid, off, length uint64) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		e.Uint32(op)
		sid.Encode(e)
		e.Uint64(off)
		e.Uint64(length)
		return 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		return r.Op(op)
	})
}
