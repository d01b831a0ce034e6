package client

import (
	"context"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Extended attributes (RFC 8276, NFSv4.2). Names are wire names: the
// server stores "x" as the user xattr "user.x".

// EncodeGetxattr writes GETXATTR.
func EncodeGetxattr(e *xdr.Encoder, name string) {
	e.Uint32(nfs4.OpGetxattr)
	e.String(name)
}

// EncodeSetxattr writes SETXATTR; option is nfs4.Setxattr*.
func EncodeSetxattr(e *xdr.Encoder, option uint32, name string, value []byte) {
	e.Uint32(nfs4.OpSetxattr)
	e.Uint32(option)
	e.String(name)
	e.Opaque(value)
}

// EncodeListxattrs writes LISTXATTRS.
func EncodeListxattrs(e *xdr.Encoder, cookie uint64, maxcount uint32) {
	e.Uint32(nfs4.OpListxattrs)
	e.Uint64(cookie)
	e.Uint32(maxcount)
}

// EncodeRemovexattr writes REMOVEXATTR.
func EncodeRemovexattr(e *xdr.Encoder, name string) {
	e.Uint32(nfs4.OpRemovexattr)
	e.String(name)
}

// XattrPage is one LISTXATTRS4resok.
type XattrPage struct {
	Cookie uint64
	Names  []string
	EOF    bool
}

// DecodeListxattrsRes reads LISTXATTRS4resok.
func DecodeListxattrsRes(d *xdr.Decoder) (XattrPage, error) {
	var p XattrPage
	p.Cookie = d.Uint64()
	n := d.ArrayLen(1<<16, 4)
	for range n {
		p.Names = append(p.Names, string(d.Opaque(nfs4.MaxNameLen)))
	}
	p.EOF = d.Bool()
	return p, d.Err()
}

// xattrOp sends PUTFH fh plus one xattr operation and hands its result
// body to decode.
func (c *Client) xattrOp(ctx context.Context, fh []byte, op uint32, enc func(e *xdr.Encoder), decode func(d *xdr.Decoder) error) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		enc(e)
		return 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(op); err != nil {
			return err
		}
		return decode(r.D)
	})
}

// Getxattr returns the value of xattr name of fh.
func (c *Client) Getxattr(ctx context.Context, fh []byte, name string) ([]byte, error) {
	var v []byte
	err := c.xattrOp(ctx, fh, nfs4.OpGetxattr, func(e *xdr.Encoder) { EncodeGetxattr(e, name) },
		func(d *xdr.Decoder) error {
			v = clone(d.Opaque(1 << 20))
			return d.Err()
		})
	return v, err
}

// Setxattr sets xattr name of fh (option: nfs4.Setxattr*).
func (c *Client) Setxattr(ctx context.Context, fh []byte, option uint32, name string, value []byte) (ChangeInfo, error) {
	var ci ChangeInfo
	err := c.xattrOp(ctx, fh, nfs4.OpSetxattr, func(e *xdr.Encoder) { EncodeSetxattr(e, option, name, value) },
		func(d *xdr.Decoder) error {
			ci = decodeChangeInfo(d)
			return d.Err()
		})
	return ci, err
}

// Removexattr removes xattr name of fh.
func (c *Client) Removexattr(ctx context.Context, fh []byte, name string) (ChangeInfo, error) {
	var ci ChangeInfo
	err := c.xattrOp(ctx, fh, nfs4.OpRemovexattr, func(e *xdr.Encoder) { EncodeRemovexattr(e, name) },
		func(d *xdr.Decoder) error {
			ci = decodeChangeInfo(d)
			return d.Err()
		})
	return ci, err
}

// ListxattrsPage sends one LISTXATTRS.
func (c *Client) ListxattrsPage(ctx context.Context, fh []byte, cookie uint64, maxcount uint32) (XattrPage, error) {
	var p XattrPage
	err := c.xattrOp(ctx, fh, nfs4.OpListxattrs, func(e *xdr.Encoder) { EncodeListxattrs(e, cookie, maxcount) },
		func(d *xdr.Decoder) (err error) {
			p, err = DecodeListxattrsRes(d)
			return err
		})
	return p, err
}

// Listxattrs lists every xattr name of fh, following cookies until eof,
// maxcount bytes a reply.
func (c *Client) Listxattrs(ctx context.Context, fh []byte, maxcount uint32) ([]string, error) {
	var names []string
	cookie := uint64(0)
	for {
		p, err := c.ListxattrsPage(ctx, fh, cookie, maxcount)
		if err != nil {
			return names, err
		}
		names = append(names, p.Names...)
		if p.EOF {
			return names, nil
		}
		if len(p.Names) == 0 || p.Cookie <= cookie {
			return names, fmt.Errorf("LISTXATTRS: no progress at cookie %d (next %d)", cookie, p.Cookie)
		}
		cookie = p.Cookie
	}
}
