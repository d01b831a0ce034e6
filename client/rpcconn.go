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

// Bytes returns the bytes sent and received so far, record marks
// included.
func (c *RPCConn) Bytes() (sent, received uint64) { return c.t.bytesOut.Load(), c.t.bytesIn.Load() }

// Close closes the connection; calls waiting for replies fail with
// ErrClosed.
func (c *RPCConn) Close() error {
	c.t.close()
	return nil
}
