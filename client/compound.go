package client

import (
	"context"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// BuildFunc encodes COMPOUND operations and returns how many it wrote.
type BuildFunc func(e *xdr.Encoder) int

// ParseFunc reads the results of the operations a BuildFunc wrote.
type ParseFunc func(r *Reply) error

// Reply is a decoded COMPOUND4res header with a decoder positioned at the
// next operation result.
type Reply struct {
	Status nfs4.Status // overall COMPOUND status
	Tag    []byte
	N      int // number of results in resarray
	D      *xdr.Decoder
	Raw    []byte // the whole RPC reply record, record mark excluded
	// Placed is the length of the last result's opaque when it was read
	// into the caller's buffer (a sink) rather than into Raw, which then
	// ends where the opaque's bytes would start; -1 when it was not.
	Placed int
	next   int
}

// Op reads the next result header, checks its operation number and returns
// a *StatusError if its status is not NFS4_OK. On success D is left at the
// operation's result body.
func (r *Reply) Op(op uint32) error {
	if r.next >= r.N {
		if r.Status != nfs4.OK {
			return &StatusError{Op: op, Status: r.Status}
		}
		return fmt.Errorf("reply has %d results, missing %s", r.N, OpName(op))
	}
	r.next++
	got := r.D.Uint32()
	st := nfs4.Status(r.D.Uint32())
	if err := r.D.Err(); err != nil {
		return fmt.Errorf("%s result: %w", OpName(op), err)
	}
	if got != op {
		if st != nfs4.OK {
			return &StatusError{Op: got, Status: st}
		}
		return fmt.Errorf("result for %s where %s expected", OpName(got), OpName(op))
	}
	if st != nfs4.OK {
		return &StatusError{Op: op, Status: st}
	}
	return nil
}

// Done checks that decoding went well and that the reply held nothing
// unread; call it after the last Op's body.
func (r *Reply) Done() error {
	if err := r.D.Err(); err != nil {
		return fmt.Errorf("decoding reply: %w", err)
	}
	if r.Status != nfs4.OK {
		return &StatusError{Status: r.Status}
	}
	return nil
}

// encodeCompoundHeader writes COMPOUND4args up to the argarray count and
// returns the count's position.
func encodeCompoundHeader(e *xdr.Encoder, tag string, minor uint32) int {
	e.String(tag)
	e.Uint32(minor)
	return e.Reserve()
}

// decodeCompound parses an RPC reply record into a Reply.
func decodeCompound(rec []byte, xid uint32) (*Reply, error) {
	d := xdr.NewDecoder(rec)
	if err := decodeReplyHeader(d, xid); err != nil {
		return nil, err
	}
	return compoundResults(d, rec)
}

// compoundResults parses COMPOUND4res's header from d, positioned at it
// in the reply record rec.
func compoundResults(d *xdr.Decoder, rec []byte) (*Reply, error) {
	r := &Reply{D: d, Raw: rec, Placed: -1}
	r.Status = nfs4.Status(d.Uint32())
	r.Tag = d.Opaque(nfs4.OpaqueLimit)
	r.N = d.ArrayLen(1<<16, 8)
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("COMPOUND reply header: %w", err)
	}
	return r, nil
}

// buildCall encodes a whole RPC record for a COMPOUND.
func (c *Client) buildCall(xid, minor uint32, build BuildFunc) *xdr.Encoder {
	return c.buildCallAs(xid, minor, &c.cred, build)
}

// buildCallAs is buildCall with another credential (see WithCred).
func (c *Client) buildCallAs(xid, minor uint32, cred *Cred, build BuildFunc) *xdr.Encoder {
	if c.gss != nil {
		return c.gss.buildCall(xid, c.opts.Tag, minor, build)
	}
	e := xdr.NewEncoder(512)
	encodeCallHeader(e, xid, cred)
	npos := encodeCompoundHeader(e, c.opts.Tag, minor)
	e.Patch(npos, uint32(build(e)))
	finishRecord(e)
	return e
}

// RawCompound sends one COMPOUND with the given minor version exactly as
// build encodes it (no SEQUENCE is added, nothing is retried) and returns
// the decoded reply header. RPC-level failures are *RPCError.
func (c *Client) RawCompound(ctx context.Context, minor uint32, build BuildFunc) (*Reply, error) {
	xid := c.t.nextXID()
	e := c.buildCall(xid, minor, build)
	ch, err := c.t.send(xid, e.Iovecs())
	if err != nil {
		return nil, err
	}
	rec, err := c.t.wait(ctx, xid, ch)
	if err != nil {
		return nil, err
	}
	return c.decodeReply(rec, xid)
}

// RawCall sends record (an RPC message without record mark; the mark is
// added) and waits for the reply whose xid matches the record's first four
// bytes. The reply is returned without its record mark.
func (c *Client) RawCall(ctx context.Context, record []byte) ([]byte, error) {
	if len(record) < 4 {
		return nil, fmt.Errorf("raw call: record of %d bytes has no xid", len(record))
	}
	xid := uint32(record[0])<<24 | uint32(record[1])<<16 | uint32(record[2])<<8 | uint32(record[3])
	mark := xdr.NewEncoder(4)
	mark.Uint32(xdr.RecordMark(len(record)))
	ch, err := c.t.send(xid, [][]byte{mark.Header(), record})
	if err != nil {
		return nil, err
	}
	return c.t.wait(ctx, xid, ch)
}

// WriteRaw writes b to the connection as is, with no record marking, for
// tests that send broken framing. Replies, if any, go to whichever call
// waits for their xid.
func (c *Client) WriteRaw(b []byte) error { return c.t.write([][]byte{b}) }

// NextXID returns a fresh transaction id, for building records by hand.
func (c *Client) NextXID() uint32 { return c.t.nextXID() }

// CallRecord encodes a complete RPC COMPOUND call record (record mark
// excluded) with this client's credential, for tests that alter it.
func (c *Client) CallRecord(xid, minor uint32, build BuildFunc) []byte {
	e := c.buildCall(xid, minor, build)
	return e.AppendTo(nil)[4:]
}
