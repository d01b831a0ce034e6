package client

import (
	"context"
	"fmt"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// session is the fore channel slot table of one NFSv4.1 session. A slot is
// owned by whoever took it from free until it is put back; seq[slot] is the
// sequence id the next request on that slot must carry.
type session struct {
	id      [nfs4.SessionIDSize]byte
	free    chan uint32
	seq     []uint32
	highest uint32
	attrs   ChannelAttrs
}

func newSession(id [nfs4.SessionIDSize]byte, attrs ChannelAttrs) *session {
	n := max(attrs.MaxRequests, 1)
	s := &session{id: id, free: make(chan uint32, n), seq: make([]uint32, n), highest: n - 1, attrs: attrs}
	for i := range n {
		s.seq[i] = 1
		s.free <- i
	}
	return s
}

// AcquireSlot takes a free slot, waiting for one if all are busy. It
// returns the slot and the sequence id its next request must carry. Tests
// use it to send hand-built SEQUENCE operations; give the slot back with
// ReleaseSlot.
func (c *Client) AcquireSlot(ctx context.Context) (slot, seqid uint32, err error) {
	select {
	case slot = <-c.sess.free:
		return slot, c.sess.seq[slot], nil
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	case <-c.t.done:
		return 0, 0, ErrClosed
	}
}

// ReleaseSlot returns slot to the table with the sequence id its next
// request will carry.
func (c *Client) ReleaseSlot(slot, nextSeqid uint32) {
	c.sess.seq[slot] = nextSeqid
	c.sess.free <- slot
}

// SessionID returns the session's id.
func (c *Client) SessionID() [nfs4.SessionIDSize]byte { return c.sess.id }

// HighestSlot is the highest slot id of the fore channel.
func (c *Client) HighestSlot() uint32 { return c.sess.highest }

// ForeChannel returns the fore channel attributes the server granted.
func (c *Client) ForeChannel() ChannelAttrs { return c.sess.attrs }

// Compound sends SEQUENCE followed by the operations build encodes, and
// hands the reply, positioned after the SEQUENCE result, to parse. It
// retries with backoff while the server answers NFS4ERR_DELAY, and for
// Options.GraceWait while it answers NFS4ERR_GRACE. parse should call r.Op
// for each operation in order; a failed operation comes back as a
// *StatusError.
func (c *Client) Compound(ctx context.Context, build BuildFunc, parse ParseFunc) error {
	return c.compound(ctx, build, parse, nil)
}

// compound is Compound whose last result's opaque may be read into s (see
// sink); parse finds in Reply.Placed whether it was.
func (c *Client) compound(ctx context.Context, build BuildFunc, parse ParseFunc, s *sink) error {
	wait := c.opts.DelayMin
	var graceSince time.Time
	delays := 0 // NFS4ERR_DELAY retries; the grace period has its own bound
	for {
		err := c.compoundOnce(ctx, build, parse, s)
		switch {
		case IsStatus(err, nfs4.ErrGrace):
			if !c.waitGrace(&graceSince) {
				return err
			}
			// The grace period lasts seconds to minutes: a slower
			// pace than NFS4ERR_DELAY's retries would not shorten it.
			wait = max(wait, c.opts.DelayMax)
		case !IsStatus(err, nfs4.ErrDelay) || delays >= c.opts.DelayRetries:
			return err
		default:
			delays++
			c.stats.delays.Add(1)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, c.opts.DelayMax)
	}
}

// waitGrace decides whether a COMPOUND answered NFS4ERR_GRACE is sent
// again: while less than GraceWait has passed since *since (set at the
// first NFS4ERR_GRACE, when OnGrace is called).
func (c *Client) waitGrace(since *time.Time) bool {
	if c.opts.GraceWait <= 0 {
		return false
	}
	if since.IsZero() {
		*since = time.Now()
		c.stats.graceWaits.Add(1)
		if c.opts.OnGrace != nil {
			c.opts.OnGrace()
		}
	}
	return time.Since(*since) < c.opts.GraceWait
}

func (c *Client) compoundOnce(ctx context.Context, build BuildFunc, parse ParseFunc, s *sink) error {
	if c.gss != nil {
		s = nil // protected replies are checked whole, never placed
	}
	slot, seq, err := c.AcquireSlot(ctx)
	if err != nil {
		return err
	}
	xid := c.t.nextXID()
	e := c.buildCallAs(xid, c.opts.Minor, c.credFor(ctx), func(e *xdr.Encoder) int {
		EncodeSequence(e, c.sess.id, seq, slot, c.sess.highest, false)
		return 1 + build(e)
	})
	ch, err := c.t.sendSink(xid, e.Iovecs(), s)
	if err != nil {
		c.ReleaseSlot(slot, seq)
		return err
	}
	var res result
	select {
	case res = <-ch:
	case <-ctx.Done():
		if s != nil && !c.t.unsink(xid) {
			// The reply is being read into s.dst: wait for it, so
			// the caller gets its buffer back untouched from here on.
			res = c.t.awaitPlaced(ch)
			break
		}
		go func() { c.settleSlot(slot, seq, xid, <-ch) }()
		return ctx.Err()
	}
	r, err := c.settleSlot(slot, seq, xid, res)
	if err != nil {
		return err
	}
	if r.Status == nfs4.ErrDelay {
		return &StatusError{Op: nfs4.OpSequence, Status: nfs4.ErrDelay}
	}
	if err := parse(r); err != nil {
		return err
	}
	return r.Done()
}

// settleSlot decodes a reply up to the end of the SEQUENCE result and
// returns the slot with the right next sequence id: advanced when SEQUENCE
// succeeded, unchanged otherwise.
func (c *Client) settleSlot(slot, seq, xid uint32, res result) (*Reply, error) {
	next := seq
	defer func() { c.ReleaseSlot(slot, next) }()
	if res.err != nil {
		return nil, res.err
	}
	r, err := c.decodeReply(res.rec, xid)
	if err != nil {
		return nil, err
	}
	if res.sunk {
		r.Placed = res.placed
	}
	if err := r.Op(nfs4.OpSequence); err != nil {
		return nil, err
	}
	sr := DecodeSequenceRes(r.D)
	if err := r.D.Err(); err != nil {
		return nil, fmt.Errorf("SEQUENCE result: %w", err)
	}
	next = seq + 1
	c.seqFlags.Store(sr.StatusFlags)
	if sr.SessionID != c.sess.id || sr.Seqid != seq || sr.Slot != slot {
		return nil, fmt.Errorf("SEQUENCE reply for session/seq/slot %x/%d/%d, sent %x/%d/%d",
			sr.SessionID, sr.Seqid, sr.Slot, c.sess.id, seq, slot)
	}
	return r, nil
}

// SequenceRes is SEQUENCE4resok.
type SequenceRes struct {
	SessionID     [nfs4.SessionIDSize]byte
	Seqid         uint32
	Slot          uint32
	HighestSlot   uint32
	TargetHighest uint32
	StatusFlags   uint32
}

// EncodeSequence writes a SEQUENCE operation.
func EncodeSequence(e *xdr.Encoder, sid [nfs4.SessionIDSize]byte, seqid, slot, highest uint32, cache bool) {
	e.Uint32(nfs4.OpSequence)
	e.Fixed(sid[:])
	e.Uint32(seqid)
	e.Uint32(slot)
	e.Uint32(highest)
	e.Bool(cache)
}

// DecodeSequenceRes reads SEQUENCE4resok.
func DecodeSequenceRes(d *xdr.Decoder) SequenceRes {
	var s SequenceRes
	copy(s.SessionID[:], d.Fixed(nfs4.SessionIDSize))
	s.Seqid = d.Uint32()
	s.Slot = d.Uint32()
	s.HighestSlot = d.Uint32()
	s.TargetHighest = d.Uint32()
	s.StatusFlags = d.Uint32()
	return s
}

// ChannelAttrs is channel_attrs4.
type ChannelAttrs struct {
	HeaderPad     uint32
	MaxRequest    uint32
	MaxResponse   uint32
	MaxRespCached uint32
	MaxOps        uint32
	MaxRequests   uint32
	RDMAIrd       []uint32
}

func (a ChannelAttrs) encode(e *xdr.Encoder) {
	e.Uint32(a.HeaderPad)
	e.Uint32(a.MaxRequest)
	e.Uint32(a.MaxResponse)
	e.Uint32(a.MaxRespCached)
	e.Uint32(a.MaxOps)
	e.Uint32(a.MaxRequests)
	e.Uint32(uint32(len(a.RDMAIrd)))
	for _, v := range a.RDMAIrd {
		e.Uint32(v)
	}
}

func decodeChannelAttrs(d *xdr.Decoder) ChannelAttrs {
	var a ChannelAttrs
	a.HeaderPad = d.Uint32()
	a.MaxRequest = d.Uint32()
	a.MaxResponse = d.Uint32()
	a.MaxRespCached = d.Uint32()
	a.MaxOps = d.Uint32()
	a.MaxRequests = d.Uint32()
	n := d.ArrayLen(1, 4)
	for range n {
		a.RDMAIrd = append(a.RDMAIrd, d.Uint32())
	}
	return a
}
