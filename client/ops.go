package client

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// decodeFH reads a GETFH result, copied.
func decodeFH(r *Reply) ([]byte, error) {
	if err := r.Op(nfs4.OpGetfh); err != nil {
		return nil, err
	}
	fh := clone(r.D.Opaque(nfs4.FHSize))
	return fh, r.D.Err()
}

// RootFH returns the root file handle.
func (c *Client) RootFH(ctx context.Context) ([]byte, error) { return c.LookupPath(ctx, "/") }

// Lookup returns the handle of name in directory dir.
func (c *Client) Lookup(ctx context.Context, dir []byte, name string) ([]byte, error) {
	var fh []byte
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, dir)
		EncodeLookup(e, name)
		EncodeGetfh(e)
		return 3
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpLookup); err == nil {
				fh, err = decodeFH(r)
			}
		}
		return err
	})
	return fh, err
}

// LookupPath resolves a slash-separated path from the root in one COMPOUND.
func (c *Client) LookupPath(ctx context.Context, path string) ([]byte, error) {
	names := splitPath(path)
	var fh []byte
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutrootfh(e)
		for _, n := range names {
			EncodeLookup(e, n)
		}
		EncodeGetfh(e)
		return len(names) + 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutrootfh); err != nil {
			return err
		}
		for range names {
			if err := r.Op(nfs4.OpLookup); err != nil {
				return err
			}
		}
		var err error
		fh, err = decodeFH(r)
		return err
	})
	return fh, err
}

func splitPath(path string) []string {
	var out []string
	for _, n := range strings.Split(path, "/") {
		if n != "" && n != "." {
			out = append(out, n)
		}
	}
	return out
}

// Getattr returns the attributes in bm of fh.
func (c *Client) Getattr(ctx context.Context, fh []byte, bm nfs4.Bitmap) (Attrs, error) {
	var a Attrs
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeGetattr(e, bm)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpGetattr); err == nil {
				a, err = DecodeFattr(r.D)
			}
		}
		return err
	})
	return a, err
}

// ReaddirAttrs is the bitmap Readdir asks for with each entry.
var ReaddirAttrs = nfs4.BitmapOf(nfs4.AttrType, nfs4.AttrFileid, nfs4.AttrSize, nfs4.AttrMode, nfs4.AttrChange)

// Readdir lists directory dir, following cookies until eof.
func (c *Client) Readdir(ctx context.Context, dir []byte) ([]DirEntry, error) {
	return c.ReaddirWith(ctx, dir, ReaddirAttrs, 32<<10)
}

// ReaddirWith is Readdir with a chosen attribute bitmap and reply size.
func (c *Client) ReaddirWith(ctx context.Context, dir []byte, bm nfs4.Bitmap, maxcount uint32) ([]DirEntry, error) {
	var (
		ents   []DirEntry
		cookie uint64
		verf   [nfs4.VerifierSize]byte
		eof    bool
	)
	for !eof {
		before := len(ents)
		err := c.Compound(ctx, func(e *xdr.Encoder) int {
			EncodePutfh(e, dir)
			EncodeReaddir(e, cookie, verf, maxcount, maxcount, bm)
			return 2
		}, func(r *Reply) (err error) {
			if err = r.Op(nfs4.OpPutfh); err == nil {
				if err = r.Op(nfs4.OpReaddir); err == nil {
					verf, ents, eof, err = DecodeReaddirRes(r.D, ents)
				}
			}
			return err
		})
		if err != nil {
			return ents, err
		}
		if len(ents) == before {
			if !eof {
				return ents, fmt.Errorf("READDIR: no entries and no eof after cookie %d", cookie)
			}
			break
		}
		cookie = ents[len(ents)-1].Cookie
	}
	return ents, nil
}

// File is an open file: its handle and open stateid.
type File struct {
	FH      []byte
	Stateid nfs4.Stateid
	Open    OpenRes
}

// Open opens name in dir (CLAIM_NULL, no create, deny none) with access
// OPEN4_SHARE_ACCESS_*. Each open uses its own open owner, so concurrent
// opens of one file do not share state.
func (c *Client) Open(ctx context.Context, dir []byte, name string, access uint32) (*File, error) {
	return c.open(ctx, dir, &OpenArgs{Access: access, Name: name})
}

// OpenFH opens the file fh (CLAIM_FH).
func (c *Client) OpenFH(ctx context.Context, fh []byte, access uint32) (*File, error) {
	return c.open(ctx, fh, &OpenArgs{Access: access, ClaimFH: true})
}

func (c *Client) open(ctx context.Context, fh []byte, a *OpenArgs) (*File, error) {
	a.ClientID = c.clientID
	a.Owner = fmt.Appendf(nil, "open-%d", c.owners.Add(1))
	f := &File{}
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeOpen(e, a)
		EncodeGetfh(e)
		return 3
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err = r.Op(nfs4.OpOpen); err != nil {
			return err
		}
		if f.Open, err = DecodeOpenRes(r.D); err != nil {
			return err
		}
		f.Stateid = f.Open.Stateid
		f.FH, err = decodeFH(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// CloseFile closes an open stateid (the CLOSE operation; Close ends the
// whole client).
func (c *Client) CloseFile(ctx context.Context, fh []byte, sid nfs4.Stateid) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeClose(e, sid)
		return 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpClose); err != nil {
			return err
		}
		nfs4.DecodeStateid(r.D)
		return nil
	})
}

// Read reads up to count bytes at off. data is the reply's own memory.
func (c *Client) Read(ctx context.Context, fh []byte, sid nfs4.Stateid, off uint64, count uint32) (data []byte, eof bool, err error) {
	err = c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeRead(e, sid, off, count)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpRead); err == nil {
				data, eof, err = DecodeReadRes(r.D, count)
			}
		}
		return err
	})
	c.stats.readBytes.Add(uint64(len(data)))
	return data, eof, err
}

// ReadInto reads up to len(dst) bytes at off into dst and returns how
// many it read. The data goes from the socket straight into dst (see
// sink): no reply buffer is allocated or copied out of, which is what
// bounds a client's throughput at 1 MiB per call. dst must not be touched
// until ReadInto returns.
func (c *Client) ReadInto(ctx context.Context, fh []byte, sid nfs4.Stateid, off uint64, dst []byte) (n int, eof bool, err error) {
	count := uint32(min(len(dst), math.MaxUint32))
	s := &sink{dst: dst[:count], locate: locateReadData}
	err = c.compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeRead(e, sid, off, count)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err = r.Op(nfs4.OpRead); err != nil {
			return err
		}
		if r.Placed >= 0 {
			eof = r.D.Bool()
			if got := r.D.Uint32(); int(got) != r.Placed {
				return fmt.Errorf("READ result: %d bytes placed, %d announced", r.Placed, got)
			}
			n = r.Placed
			return nil
		}
		var data []byte
		data, eof, err = DecodeReadRes(r.D, count)
		n = copy(dst, data)
		return err
	}, s)
	c.stats.readBytes.Add(uint64(n))
	return n, eof, err
}

// locateReadData finds the data of a successful SEQUENCE, PUTFH, READ
// reply in its first bytes: where it starts and its length. Anything else
// (an error, a long verifier or tag) is left to the ordinary decoder.
func locateReadData(head []byte) (start, n int, ok bool) {
	d, ok := locateResult(head, nfs4.OpRead)
	if !ok {
		return 0, 0, false
	}
	d.Bool() // eof
	n = int(d.Uint32())
	if d.Err() != nil {
		return 0, 0, false
	}
	return d.Offset(), n, true
}

// locateReadPlusData is locateReadData for a READ_PLUS reply of one DATA
// segment (what a server sends for a range of data): the segment's bytes.
// Its offset is checked by decodePlacedReadPlus.
func locateReadPlusData(head []byte) (start, n int, ok bool) {
	d, ok := locateResult(head, nfs4.OpReadPlus)
	if !ok {
		return 0, 0, false
	}
	d.Bool() // eof
	if d.Uint32() != 1 || d.Uint32() != nfs4.ContentData {
		return 0, 0, false
	}
	d.Uint64() // offset
	n = int(d.Uint32())
	if d.Err() != nil {
		return 0, 0, false
	}
	return d.Offset(), n, true
}

// locateResult decodes the head of a successful SEQUENCE, PUTFH, op reply
// up to op's result.
func locateResult(head []byte, op uint32) (*xdr.Decoder, bool) {
	d := xdr.NewDecoder(head)
	d.Uint32() // xid, matched by the transport
	if d.Uint32() != nfs4.MsgReply || d.Uint32() != nfs4.MsgAccepted {
		return nil, false
	}
	d.Uint32()                  // verifier flavor
	d.Opaque(nfs4.MaxAuthBytes) // verifier body
	if d.Uint32() != nfs4.AcceptSuccess || nfs4.Status(d.Uint32()) != nfs4.OK {
		return nil, false
	}
	d.Opaque(nfs4.OpaqueLimit) // tag
	if d.Uint32() != 3 || d.Uint32() != nfs4.OpSequence || nfs4.Status(d.Uint32()) != nfs4.OK {
		return nil, false
	}
	d.Fixed(nfs4.SessionIDSize + 5*4) // SEQUENCE4resok
	for _, o := range []uint32{nfs4.OpPutfh, op} {
		if d.Uint32() != o || nfs4.Status(d.Uint32()) != nfs4.OK {
			return nil, false
		}
	}
	return d, d.Err() == nil
}

// ReadPlus reads up to count bytes at off with READ_PLUS into dst (at
// least count long), zero-filling holes (unless Options.NoHoleFill). n is the bytes filled; segs are
// the segments as sent. See DecodeReadPlusRes for the checks made.
//
// A reply of one DATA segment (a range of data) is read straight into dst,
// as ReadInto does for READ, so the two cost the load generator the same;
// any other is read into a buffer the client reuses (its DATA is copied
// out into dst, so nothing of it outlives the call): a fresh 1 MiB record
// per reply, cleared by the allocator and soon garbage, cost the load
// generator more CPU than the copy.
func (c *Client) ReadPlus(ctx context.Context, fh []byte, sid nfs4.Stateid, off uint64, count uint32, dst []byte) (n int, eof bool, segs []Segment, err error) {
	if len(dst) < int(count) {
		return 0, false, nil, fmt.Errorf("READ_PLUS: buffer of %d bytes for %d requested", len(dst), count)
	}
	bp := c.replyBuffer(readPlusReplyMax(count))
	defer c.recs.Put(bp)
	err = c.compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeReadPlus(e, sid, off, count)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpReadPlus); err == nil {
				if r.Placed >= 0 {
					n, eof, segs, err = decodePlacedReadPlus(r.D, off, r.Placed)
				} else {
					n, eof, segs, err = decodeReadPlusRes(r.D, off, count, dst, !c.opts.NoHoleFill)
				}
			}
		}
		return err
	}, &sink{dst: dst[:count], locate: locateReadPlusData, whole: (*bp)[:0]})
	c.countReadPlus(n, segs)
	return n, eof, segs, err
}

// decodePlacedReadPlus checks the rest of a one-DATA-segment READ_PLUS
// result whose placed bytes were read into the caller's buffer (see
// locateReadPlusData), as DecodeReadPlusRes would have.
func decodePlacedReadPlus(d *xdr.Decoder, off uint64, placed int) (n int, eof bool, segs []Segment, err error) {
	eof = d.Bool()
	d.Uint32() // one segment, DATA: checked by locate
	d.Uint32()
	at := d.Uint64()
	got := d.Uint32()
	switch {
	case d.Err() != nil:
		return 0, false, nil, fmt.Errorf("READ_PLUS result: %w", d.Err())
	case int(got) != placed:
		return 0, false, nil, fmt.Errorf("READ_PLUS result: %d bytes placed, %d announced", placed, got)
	case at != off:
		return 0, false, nil, fmt.Errorf("READ_PLUS segment 0 at %d: want the requested offset %d", at, off)
	case placed == 0 && !eof:
		return 0, false, nil, ErrNoProgress
	}
	return placed, eof, []Segment{{Type: nfs4.ContentData, Offset: off, Length: uint64(placed)}}, nil
}

// readPlusReplyMax is the reply size ReadPlus keeps a buffer for: the data,
// room for a segment header per 512 bytes and the RPC and COMPOUND
// headers. A larger reply (a server cutting the range finer) is read into
// fresh memory, as any other.
func readPlusReplyMax(count uint32) int { return int(count) + int(count)/32 + 4096 }

// replyBuffer returns a pooled buffer of capacity n or more.
func (c *Client) replyBuffer(n int) *[]byte {
	if bp, ok := c.recs.Get().(*[]byte); ok && cap(*bp) >= n {
		return bp
	}
	b := make([]byte, 0, n)
	return &b
}

func (c *Client) countReadPlus(n int, segs []Segment) {
	c.stats.readPlusCalls.Add(1)
	c.stats.readPlusSegs.Add(uint64(len(segs)))
	c.stats.readPlusDelivered.Add(uint64(n))
	for _, s := range segs {
		if s.Type == nfs4.ContentData {
			c.stats.readPlusData.Add(s.Length)
		} else {
			c.stats.readPlusHole.Add(s.Length)
		}
	}
}

// Seek finds the next data (what = nfs4.ContentData) or hole
// (nfs4.ContentHole) at or after off.
func (c *Client) Seek(ctx context.Context, fh []byte, sid nfs4.Stateid, off uint64, what uint32) (eof bool, pos uint64, err error) {
	err = c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeSeek(e, sid, off, what)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpSeek); err == nil {
				eof, pos = r.D.Bool(), r.D.Uint64()
			}
		}
		return err
	})
	return eof, pos, err
}

// Readlink returns the target of symlink fh.
func (c *Client) Readlink(ctx context.Context, fh []byte) (string, error) {
	var s string
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeReadlink(e)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpReadlink); err == nil {
				s = string(r.D.String(nfs4.MaxPathLen))
			}
		}
		return err
	})
	return s, err
}

// Access asks which of the ACCESS4_* bits in mask the caller has.
func (c *Client) Access(ctx context.Context, fh []byte, mask uint32) (supported, access uint32, err error) {
	err = c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		EncodeAccess(e, mask)
		return 2
	}, func(r *Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpAccess); err == nil {
				supported, access = r.D.Uint32(), r.D.Uint32()
			}
		}
		return err
	})
	return supported, access, err
}

// TestStateid returns the status of each stateid.
func (c *Client) TestStateid(ctx context.Context, sids ...nfs4.Stateid) ([]nfs4.Status, error) {
	var codes []nfs4.Status
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodeTestStateid(e, sids)
		return 1
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpTestStateid); err != nil {
			return err
		}
		for range r.D.ArrayLen(len(sids), 4) {
			codes = append(codes, nfs4.Status(r.D.Uint32()))
		}
		return nil
	})
	return codes, err
}

// FreeStateid frees a stateid.
func (c *Client) FreeStateid(ctx context.Context, sid nfs4.Stateid) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodeFreeStateid(e, sid)
		return 1
	}, func(r *Reply) error { return r.Op(nfs4.OpFreeStateid) })
}
