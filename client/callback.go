package client

import (
	"context"
	"encoding/binary"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Callbacks configure the client's back channel: with Options.Callbacks
// set, CREATE_SESSION asks for the back channel on the client's one
// connection (CREATE_SESSION4_FLAG_CONN_BACK_CHAN) and the client answers
// the server's CB_COMPOUND calls on it: CB_SEQUENCE, CB_RECALL (by
// returning the delegation, or through OnRecall), CB_GETATTR (through
// OnGetattr, else NFS4ERR_BADHANDLE) and CB_OFFLOAD (see WaitOffload).
type Callbacks struct {
	// OnRecall, when set, is called (on its own goroutine) instead of
	// the default answer to CB_RECALL, which is to send DELEGRETURN.
	OnRecall func(sid nfs4.Stateid, fh []byte)
	// OnGetattr answers CB_GETATTR for fh with the size and change
	// attribute the client holds; ok false answers NFS4ERR_BADHANDLE.
	OnGetattr func(fh []byte) (size, change uint64, ok bool)
	// DropRecalls leaves the first DropRecalls CB_COMPOUNDs that carry a
	// CB_RECALL unanswered and unacted on, as if the reply had been lost
	// with a connection: for tests of a server's retries.
	DropRecalls int
	// IgnoreNull leaves CB_NULL unanswered, as a client whose callbacks
	// cannot reach it would: for tests of a server's back-channel probe.
	IgnoreNull bool
	// OnLayoutRecall, when set, answers CB_LAYOUTRECALL instead of the
	// default (layoutrecall.go): its status is the answer.
	OnLayoutRecall func(r LayoutRecall) nfs4.Status
}

// cbCounters count what came over the back channel.
type cbCounters struct {
	recalls  atomic.Uint64
	dropped  atomic.Int64 // CB_RECALLs left unanswered (Callbacks.DropRecalls)
	getattrs atomic.Uint64
	returns  atomic.Uint64 // DELEGRETURNs sent for recalls (counted as they go)
	offloads atomic.Uint64 // CB_OFFLOADs answered
	layouts  atomic.Uint64 // CB_LAYOUTRECALLs answered
	anys     atomic.Uint64 // CB_RECALL_ANYs answered
}

// Recalls returns how many CB_RECALLs the client has answered.
func (c *Client) Recalls() uint64 { return c.cb.recalls.Load() }

// CBGetattrs returns how many CB_GETATTRs the client has answered.
func (c *Client) CBGetattrs() uint64 { return c.cb.getattrs.Load() }

// DelegReturns returns how many DELEGRETURNs the client has sent for
// recalls (counted before each is sent).
func (c *Client) DelegReturns() uint64 { return c.cb.returns.Load() }

// DelegReturn returns a delegation (PUTFH, DELEGRETURN).
func (c *Client) DelegReturn(ctx context.Context, fh []byte, sid nfs4.Stateid) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		EncodePutfh(e, fh)
		e.Uint32(nfs4.OpDelegReturn)
		sid.Encode(e)
		return 2
	}, func(r *Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		return r.Op(nfs4.OpDelegReturn)
	})
}

// onCall answers a CALL record from the server: a CB_COMPOUND. It runs on
// its own goroutine.
func (c *Client) onCall(rec []byte) {
	d := xdr.NewDecoder(rec)
	xid := d.Uint32()
	d.Uint32() // CALL
	d.Uint32() // rpcvers
	d.Uint32() // prog
	d.Uint32() // vers
	proc := d.Uint32()
	if proc == nfs4.CBProcNull && c.opts.Callbacks.IgnoreNull {
		return
	}
	d.Uint32()
	d.Opaque(nfs4.MaxAuthBytes)
	d.Uint32()
	d.Opaque(nfs4.MaxAuthBytes)
	e := xdr.NewEncoder(256)
	e.Reserve()
	e.Uint32(xid)
	e.Uint32(nfs4.MsgReply)
	e.Uint32(nfs4.MsgAccepted)
	e.Uint32(nfs4.AuthNone)
	e.Uint32(0)
	if d.Err() != nil || proc > nfs4.CBProcCompound {
		e.Uint32(nfs4.AcceptGarbageArgs)
	} else {
		e.Uint32(nfs4.AcceptSuccess)
		if proc == nfs4.CBProcCompound {
			if c.dropsRecall(*d) {
				return
			}
			c.cbCompound(d, e)
		}
	}
	finishRecord(e)
	c.t.write(e.Iovecs())
}

// dropsRecall reports whether the CB_COMPOUND4args d holds (a copy of the
// call's decoder, at the tag) carry a CB_RECALL that Callbacks.DropRecalls
// says to leave unanswered.
func (c *Client) dropsRecall(d xdr.Decoder) bool {
	if c.opts.Callbacks.DropRecalls == 0 || !carriesRecall(&d) {
		return false
	}
	return c.cb.dropped.Add(1) <= int64(c.opts.Callbacks.DropRecalls)
}

// carriesRecall reports whether CB_COMPOUND4args, read from d, have a
// CB_RECALL after their CB_SEQUENCE.
func carriesRecall(d *xdr.Decoder) bool {
	d.Opaque(nfs4.OpaqueLimit) // tag
	d.Skip(8)                  // minorversion, callback_ident
	if d.ArrayLen(16, 4) < 2 || d.Uint32() != nfs4.OpCBSequence {
		return false
	}
	d.Skip(nfs4.SessionIDSize + 4*4) // sessionid, sequenceid, slotid, highest_slotid, cachethis
	if d.ArrayLen(16, 4) != 0 {
		return false // referring call lists: not sent by the servers tested
	}
	return d.Uint32() == nfs4.OpCBRecall && d.Err() == nil
}

// cbCompound executes CB_COMPOUND4args from d into e.
func (c *Client) cbCompound(d *xdr.Decoder, e *xdr.Encoder) {
	tag := d.Opaque(nfs4.OpaqueLimit)
	d.Uint32() // minorversion
	d.Uint32() // callback_ident
	n := d.ArrayLen(16, 4)
	statusPos := e.Reserve()
	e.Opaque(tag)
	countPos := e.Reserve()
	status, done := nfs4.OK, 0
	for i := 0; i < n && status == nfs4.OK; i++ {
		op := d.Uint32()
		e.Uint32(op)
		stPos := e.Reserve()
		status = c.cbOp(op, d, e)
		e.Patch(stPos, uint32(status))
		done++
	}
	e.Patch(statusPos, uint32(status))
	e.Patch(countPos, uint32(done))
}

func (c *Client) cbOp(op uint32, d *xdr.Decoder, e *xdr.Encoder) nfs4.Status {
	switch op {
	case nfs4.OpCBSequence:
		sid := d.Fixed(nfs4.SessionIDSize)
		seq, slot, highest := d.Uint32(), d.Uint32(), d.Uint32()
		d.Bool()
		lists := d.ArrayLen(16, 4)
		for i := 0; i < lists; i++ {
			d.Fixed(nfs4.SessionIDSize)
			calls := d.ArrayLen(64, 8)
			d.Skip(8 * calls)
		}
		if d.Err() != nil {
			return nfs4.ErrBadXDR
		}
		e.Fixed(sid)
		e.Uint32(seq)
		e.Uint32(slot)
		e.Uint32(highest)
		e.Uint32(highest)
	case nfs4.OpCBRecall:
		sid := nfs4.DecodeStateid(d)
		d.Bool()
		fh := clone(d.Opaque(nfs4.FHSize))
		if d.Err() != nil {
			return nfs4.ErrBadXDR
		}
		c.cb.recalls.Add(1)
		if f := c.opts.Callbacks.OnRecall; f != nil {
			go f(sid, fh)
		} else {
			go c.returnRecalled(fh, sid)
		}
	case nfs4.OpCBGetattr:
		fh := d.Opaque(nfs4.FHSize)
		nfs4.DecodeBitmap(d)
		if d.Err() != nil {
			return nfs4.ErrBadXDR
		}
		c.cb.getattrs.Add(1)
		f := c.opts.Callbacks.OnGetattr
		if f == nil {
			return nfs4.ErrBadhandle
		}
		size, change, ok := f(fh)
		if !ok {
			return nfs4.ErrBadhandle
		}
		nfs4.BitmapOf(nfs4.AttrChange, nfs4.AttrSize).Encode(e)
		e.Uint32(16)
		e.Uint64(change)
		e.Uint64(size)
	case nfs4.OpCBOffload:
		return c.cbOffload(d)
	case opCBLayoutrecall:
		return c.cbLayoutRecall(d)
	case opCBRecallAny:
		return c.cbRecallAny(d)
	default:
		return nfs4.ErrOpIllegal
	}
	return nfs4.OK
}

// returnRecalled answers a recall by returning the delegation.
func (c *Client) returnRecalled(fh []byte, sid nfs4.Stateid) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.cb.returns.Add(1)
	c.DelegReturn(ctx, fh, sid)
}

// isCall reports whether rec is an RPC CALL (from the server: a callback).
func isCall(rec []byte) bool {
	return len(rec) >= 8 && binary.BigEndian.Uint32(rec[4:]) == nfs4.MsgCall
}

// SeqStatusFlags returns the sr_status_flags of the latest SEQUENCE reply.
func (c *Client) SeqStatusFlags() uint32 { return c.seqFlags.Load() }
