package client

import (
	"context"
	"fmt"
	"sync"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// CopyArgs are COPY's arguments (RFC 7862 section 15.2.1) for a copy
// within one server: Count bytes (0: to the source's end) from SrcOff of
// SrcFH to DstOff of DstFH.
type CopyArgs struct {
	SrcFH, DstFH           []byte
	SrcStateid, DstStateid nfs4.Stateid
	SrcOff, DstOff, Count  uint64
	// Synchronous is ca_synchronous. An asynchronous copy's end comes in
	// CB_OFFLOAD (see WaitOffload), so it needs Options.BackChannel.
	Synchronous bool
}

// CopyRes is COPY4resok: write_response4 and copy_requirements4.
type CopyRes struct {
	// CallbackID is the copy stateid of a copy the server runs
	// asynchronously; nil when it copied at once (even when asked not to).
	CallbackID  *nfs4.Stateid
	Count       uint64
	Committed   uint32
	Verifier    [nfs4.VerifierSize]byte
	Consecutive bool
	Synchronous bool
}

// Copy sends PUTFH, SAVEFH, PUTFH, COPY. A synchronous copy may be short
// (the server caps what one request copies): Count says how much was done.
func (c *Client) Copy(ctx context.Context, a *CopyArgs) (CopyRes, error) {
	var res CopyRes
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, a.SrcFH)
		e.Uint32(nfs4.OpSavefh)
		EncodePutfh(e, a.DstFH)
		e.Uint32(nfs4.OpCopy)
		a.SrcStateid.Encode(e)
		a.DstStateid.Encode(e)
		e.Uint64(a.SrcOff)
		e.Uint64(a.DstOff)
		e.Uint64(a.Count)
		e.Bool(true) // ca_consecutive
		e.Bool(a.Synchronous)
		e.Uint32(0) // ca_source_server: none, an intra-server copy
		return 4
	}, func(r *Reply) error {
		for _, op := range []uint32{nfs4.OpPutfh, nfs4.OpSavefh, nfs4.OpPutfh, nfs4.OpCopy} {
			if err := r.Op(op); err != nil {
				return err
			}
		}
		res = decodeCopyRes(r.D)
		return r.D.Err()
	})
	return res, err
}

func decodeCopyRes(d *xdr.Decoder) CopyRes {
	var res CopyRes
	if d.ArrayLen(1, 16) == 1 {
		sid := nfs4.DecodeStateid(d)
		res.CallbackID = &sid
	}
	res.Count, res.Committed = d.Uint64(), d.Uint32()
	copy(res.Verifier[:], d.Fixed(nfs4.VerifierSize))
	res.Consecutive, res.Synchronous = d.Bool(), d.Bool()
	return res
}

// CopyAll copies a's range with synchronous COPYs, sending the next for
// the rest after each short count, and returns the bytes copied. a.Count
// must be the range's length (not 0).
func (c *Client) CopyAll(ctx context.Context, a CopyArgs) (uint64, error) {
	a.Synchronous = true
	var done uint64
	for done < a.Count {
		step := a
		step.SrcOff, step.DstOff, step.Count = a.SrcOff+done, a.DstOff+done, a.Count-done
		res, err := c.Copy(ctx, &step)
		if err != nil {
			return done, err
		}
		if res.Count == 0 || res.Count > step.Count {
			return done, fmt.Errorf("COPY of %d bytes at %d: server copied %d", step.Count, step.SrcOff, res.Count)
		}
		done += res.Count
	}
	return done, nil
}

// Offload is the end of an asynchronous copy as CB_OFFLOAD told it (RFC
// 7862 section 16.1.2): its status, the bytes copied and, on success, how
// stable they are.
type Offload struct {
	FH        []byte
	Stateid   nfs4.Stateid
	Status    nfs4.Status
	Count     uint64
	Committed uint32
}

// offloads hands CB_OFFLOADs to WaitOffload, whichever comes first (the
// callback may overtake COPY's reply).
type offloads struct {
	mu sync.Mutex
	ch map[[nfs4.OtherSize]byte]chan Offload
}

func (o *offloads) get(other [nfs4.OtherSize]byte) chan Offload {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ch == nil {
		o.ch = make(map[[nfs4.OtherSize]byte]chan Offload)
	}
	ch := o.ch[other]
	if ch == nil {
		ch = make(chan Offload, 1)
		o.ch[other] = ch
	}
	return ch
}

func (o *offloads) forget(other [nfs4.OtherSize]byte) {
	o.mu.Lock()
	delete(o.ch, other)
	o.mu.Unlock()
}

// WaitOffload waits for the CB_OFFLOAD of the asynchronous copy sid (a
// CopyRes.CallbackID).
func (c *Client) WaitOffload(ctx context.Context, sid nfs4.Stateid) (Offload, error) {
	ch := c.offloads.get(sid.Other)
	defer c.offloads.forget(sid.Other)
	select {
	case o := <-ch:
		return o, nil
	case <-ctx.Done():
		return Offload{}, ctx.Err()
	}
}

// Offloads returns how many CB_OFFLOADs the client has answered.
func (c *Client) Offloads() uint64 { return c.cb.offloads.Load() }

// cbOffload reads CB_OFFLOAD4args and hands them to WaitOffload.
func (c *Client) cbOffload(d *xdr.Decoder) nfs4.Status {
	o := Offload{FH: clone(d.Opaque(nfs4.FHSize)), Stateid: nfs4.DecodeStateid(d), Status: nfs4.Status(d.Uint32())}
	if o.Status == nfs4.OK {
		d.ArrayLen(1, 16) // wr_callback_id: none here
		o.Count, o.Committed = d.Uint64(), d.Uint32()
		d.Fixed(nfs4.VerifierSize)
	} else {
		o.Count = d.Uint64()
	}
	if d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	c.cb.offloads.Add(1)
	select {
	case c.offloads.get(o.Stateid.Other) <- o:
	default: // a second CB_OFFLOAD for one copy: the first stands
	}
	return nfs4.OK
}

// OffloadStatus sends OFFLOAD_STATUS for copy sid on the destination fh
// and returns the bytes copied so far and, once the copy ended, its status
// (nil before).
func (c *Client) OffloadStatus(ctx context.Context, fh []byte, sid nfs4.Stateid) (count uint64, complete *nfs4.Status, err error) {
	err = c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		e.Uint32(nfs4.OpOffloadStatus)
		sid.Encode(e)
		return 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpOffloadStatus); err != nil {
			return err
		}
		count = r.D.Uint64()
		if r.D.ArrayLen(1, 4) == 1 {
			st := nfs4.Status(r.D.Uint32())
			complete = &st
		}
		return r.D.Err()
	})
	return count, complete, err
}

// OffloadCancel sends OFFLOAD_CANCEL for copy sid on the destination fh.
func (c *Client) OffloadCancel(ctx context.Context, fh []byte, sid nfs4.Stateid) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		e.Uint32(nfs4.OpOffloadCancel)
		sid.Encode(e)
		return 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		return r.Op(nfs4.OpOffloadCancel)
	})
}
