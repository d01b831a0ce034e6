package client

import (
	"context"
	"net"
)

// RPCConn carries calls of any ONC RPC program over one connection, many
// in flight, each reply handed to the call of its xid: the Client's
// transport without NFSv4's session, for the NFSv3, MOUNT and NLM callers
// (nfsbench's v3 client, tests). Its methods may be called from many
// goroutines; small records sent meanwhile go out in one system call, as
// the Client's do.
type RPCConn struct{ t *transport }

// NewRPCConn takes over conn: replies of up to maxRecord bytes are read
// (larger ones end the connection), and calls use xids after firstXID.
func NewRPCConn(conn net.Conn, maxRecord int, firstXID uint32) *RPCConn {
	return &RPCConn{t: newTransport(conn, maxRecord, firstXID, nil)}
}

// NextXID returns the xid of a new call: one more than the last.
func (c *RPCConn) NextXID() uint32 { return c.t.nextXID() }

// Call sends record (record mark included, as SysCall and GSS.Call
// return it), a call of xid, and returns its reply record without the
// mark. The reply is the caller's. When ctx ends first, the reply is
// dropped when it comes.
func (c *RPCConn) Call(ctx context.Context, xid uint32, record []byte) ([]byte, error) {
	ch, err := c.t.send(xid, [][]byte{record})
	if err != nil {
		return nil, err
	}
	return c.t.wait(ctx, xid, ch)
}

// CallInto is Call for a reply whose last item is an opaque the caller
// wants in dst (READ's data), read from the socket straight into dst
// with no record buffer to allocate or copy out of. locate, given the
// reply's first bytes (at most 512, without the record mark), returns
// where the opaque's bytes start and how many there are, or ok false; the
// opaque must end the record and fit in dst. A placed reply returns the
// record up to the opaque and placed, its length; otherwise the whole
// record and placed -1. When ctx ends first, CallInto returns only once
// dst is no longer written.
func (c *RPCConn) CallInto(ctx context.Context, xid uint32, record, dst []byte,
	locate func(head []byte) (start, n int, ok bool)) (rec []byte, placed int, err error) {
	ch, err := c.t.sendSink(xid, [][]byte{record}, &sink{dst: dst, locate: locate})
	if err != nil {
		return nil, -1, err
	}
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		if c.t.unsink(xid) {
			c.t.forget(xid)
			return nil, -1, ctx.Err()
		}
		r = c.t.awaitPlaced(ch) // being read into dst: wait for it
		if r.err == nil {
			r.err = ctx.Err()
		}
	}
	if r.err != nil {
		return nil, -1, r.err
	}
	if !r.sunk {
		return r.rec, -1, nil
	}
	return r.rec, r.placed, nil
}

// Bytes returns the bytes sent and received so far, record marks
// included.
func (c *RPCConn) Bytes() (sent, received uint64) { return c.t.bytesOut.Load(), c.t.bytesIn.Load() }

// Close closes the connection; calls waiting for replies fail with
// ErrClosed.
func (c *RPCConn) Close() error {
	c.t.close()
	return nil
}
