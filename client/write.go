package client

import (
	"context"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Write-side operations: WRITE, COMMIT, OPEN with create, CREATE, REMOVE,
// SETATTR.

// WriteRes is WRITE4resok.
type WriteRes struct {
	Count     uint32
	Committed uint32 // nfs4.Unstable4, DataSync4 or FileSync4
	Verifier  [nfs4.VerifierSize]byte
}

// ChangeInfo is change_info4.
type ChangeInfo struct {
	Atomic        bool
	Before, After uint64
}

// EncodeWrite writes WRITE. data is borrowed, not copied: keep it
// unchanged until the call is sent.
func EncodeWrite(e *xdr.Encoder, sid nfs4.Stateid, off uint64, stable uint32, data []byte) {
	e.Uint32(nfs4.OpWrite)
	sid.Encode(e)
	e.Uint64(off)
	e.Uint32(stable)
	e.Uint32(uint32(len(data)))
	e.Borrow(data)
}

// DecodeWriteRes reads WRITE4resok.
func DecodeWriteRes(d *xdr.Decoder) (WriteRes, error) {
	var r WriteRes
	r.Count = d.Uint32()
	r.Committed = d.Uint32()
	copy(r.Verifier[:], d.Fixed(nfs4.VerifierSize))
	if err := d.Err(); err != nil {
		return r, fmt.Errorf("WRITE result: %w", err)
	}
	if r.Committed > nfs4.FileSync4 {
		return r, fmt.Errorf("WRITE result: bad stable_how %d", r.Committed)
	}
	return r, nil
}

// EncodeCommit writes COMMIT.
func EncodeCommit(e *xdr.Encoder, off uint64, count uint32) {
	e.Uint32(nfs4.OpCommit)
	e.Uint64(off)
	e.Uint32(count)
}

// DecodeCommitRes reads COMMIT4resok.
func DecodeCommitRes(d *xdr.Decoder) ([nfs4.VerifierSize]byte, error) {
	var v [nfs4.VerifierSize]byte
	copy(v[:], d.Fixed(nfs4.VerifierSize))
	if err := d.Err(); err != nil {
		return v, fmt.Errorf("COMMIT result: %w", err)
	}
	return v, nil
}

// EncodeCreate writes CREATE of a non-regular object: a directory
// (nfs4.NF4DIR) or a symlink (nfs4.NF4LNK, to target). attrs may be nil.
func EncodeCreate(e *xdr.Encoder, ftype uint32, name, target string, attrs *Attrs) {
	e.Uint32(nfs4.OpCreate)
	e.Uint32(ftype)
	switch ftype {
	case nfs4.NF4LNK:
		e.String(target)
	case nfs4.NF4BLK, nfs4.NF4CHR:
		e.Uint32(0) // specdata4
		e.Uint32(0)
	}
	e.String(name)
	encodeAttrsOrEmpty(e, attrs)
}

// DecodeCreateRes reads CREATE4resok.
func DecodeCreateRes(d *xdr.Decoder) (ChangeInfo, nfs4.Bitmap, error) {
	ci := decodeChangeInfo(d)
	bm := nfs4.DecodeBitmap(d)
	if err := d.Err(); err != nil {
		return ci, bm, fmt.Errorf("CREATE result: %w", err)
	}
	return ci, bm, nil
}

// EncodeRemove writes REMOVE.
func EncodeRemove(e *xdr.Encoder, name string) {
	e.Uint32(nfs4.OpRemove)
	e.String(name)
}

// DecodeRemoveRes reads REMOVE4resok.
func DecodeRemoveRes(d *xdr.Decoder) (ChangeInfo, error) {
	ci := decodeChangeInfo(d)
	if err := d.Err(); err != nil {
		return ci, fmt.Errorf("REMOVE result: %w", err)
	}
	return ci, nil
}

// EncodeSetattr writes SETATTR.
func EncodeSetattr(e *xdr.Encoder, sid nfs4.Stateid, attrs *Attrs) {
	e.Uint32(nfs4.OpSetattr)
	sid.Encode(e)
	EncodeFattr(e, attrs)
}

// DecodeSetattrRes reads the attrsset bitmap of a successful SETATTR.
func DecodeSetattrRes(d *xdr.Decoder) (nfs4.Bitmap, error) {
	bm := nfs4.DecodeBitmap(d)
	if err := d.Err(); err != nil {
		return bm, fmt.Errorf("SETATTR result: %w", err)
	}
	return bm, nil
}

func decodeChangeInfo(d *xdr.Decoder) ChangeInfo {
	return ChangeInfo{Atomic: d.Bool(), Before: d.Uint64(), After: d.Uint64()}
}

// Write writes data at off with the given stability (nfs4.Unstable4 ...).
// The server may write less than asked: check Count.
func (c *Client) Write(ctx context.Context, fh []byte, sid nfs4.Stateid, off uint64, stable uint32, data []byte) (WriteRes, error) {
	var res WriteRes
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeWrite(e, sid, off, stable, data)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpWrite); err == nil {
				res, err = DecodeWriteRes(r.D)
			}
		}
		return err
	})
	if err == nil && res.Count > uint32(len(data)) {
		err = fmt.Errorf("WRITE of %d bytes at %d: server claims %d written", len(data), off, res.Count)
	}
	c.stats.writeBytes.Add(uint64(res.Count))
	return res, err
}

// Commit commits count bytes at off (0, 0: the whole file) and returns the
// write verifier.
func (c *Client) Commit(ctx context.Context, fh []byte, off uint64, count uint32) ([nfs4.VerifierSize]byte, error) {
	var v [nfs4.VerifierSize]byte
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeCommit(e, off, count)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpCommit); err == nil {
				v, err = DecodeCommitRes(r.D)
			}
		}
		return err
	})
	return v, err
}

// OpenCreate opens name in dir for reading and writing, creating it with
// mode if it does not exist (UNCHECKED4: an existing file is opened as it
// is). Use OpenWith for the other create modes.
func (c *Client) OpenCreate(ctx context.Context, dir []byte, name string, mode uint32) (*File, error) {
	return c.OpenWith(ctx, dir, &OpenArgs{
		Access: nfs4.ShareAccessBoth, Name: name, Create: true,
		CreateMode: nfs4.CreateUnchecked, Attrs: modeAttrs(mode),
	})
}

// OpenWith opens with the arguments given (CLAIM_NULL in dir, or CLAIM_FH
// on dir when a.ClaimFH); ClientID and Owner are filled in.
func (c *Client) OpenWith(ctx context.Context, dir []byte, a *OpenArgs) (*File, error) {
	return c.open(ctx, dir, a)
}

func modeAttrs(mode uint32) *Attrs {
	return &Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: mode}
}

// Create creates a directory (nfs4.NF4DIR) or symlink (nfs4.NF4LNK, to
// target) named name in dir and returns its handle.
func (c *Client) Create(ctx context.Context, dir []byte, ftype uint32, name, target string, attrs *Attrs) ([]byte, error) {
	var fh []byte
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, dir)
		EncodeCreate(e, ftype, name, target, attrs)
		EncodeGetfh(e)
		return 3
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err = r.Op(nfs4.OpCreate); err != nil {
			return err
		}
		if _, _, err = DecodeCreateRes(r.D); err != nil {
			return err
		}
		fh, err = decodeFH(r)
		return err
	})
	return fh, err
}

// Mkdir creates directory name in dir with mode.
func (c *Client) Mkdir(ctx context.Context, dir []byte, name string, mode uint32) ([]byte, error) {
	return c.Create(ctx, dir, nfs4.NF4DIR, name, "", modeAttrs(mode))
}

// Remove removes name from dir (a file or an empty directory).
func (c *Client) Remove(ctx context.Context, dir []byte, name string) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, dir)
		EncodeRemove(e, name)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpRemove); err == nil {
				_, err = DecodeRemoveRes(r.D)
			}
		}
		return err
	})
}

// Setattr sets attrs on fh (sid: an open stateid when the size changes,
// the anonymous stateid otherwise) and returns the attributes set.
func (c *Client) Setattr(ctx context.Context, fh []byte, sid nfs4.Stateid, attrs *Attrs) (nfs4.Bitmap, error) {
	var set nfs4.Bitmap
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeSetattr(e, sid, attrs)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpSetattr); err == nil {
				set, err = DecodeSetattrRes(r.D)
			}
		}
		return err
	})
	return set, err
}

// Truncate sets the size of the open file f.
func (c *Client) Truncate(ctx context.Context, f *File, size uint64) error {
	_, err := c.Setattr(ctx, f.FH, f.Stateid, &Attrs{Mask: nfs4.BitmapOf(nfs4.AttrSize), Size: size})
	return err
}
