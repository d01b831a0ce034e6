package client

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// ErrClosed is returned for calls on a connection that has gone away.
var ErrClosed = errors.New("client: connection closed")

// result is one reply record, or the error that ended the connection.
type result struct {
	rec []byte
	err error
}

// transport multiplexes RPC calls over one TCP connection: writers take a
// mutex to send whole records, and one reader goroutine hands each reply to
// the caller waiting on its xid.
type transport struct {
	conn net.Conn
	wmu  sync.Mutex

	mu      sync.Mutex
	pending map[uint32]chan result
	err     error
	done    chan struct{}

	xid       atomic.Uint32
	bytesOut  atomic.Uint64
	bytesIn   atomic.Uint64
	dropped   atomic.Uint64
	maxRecord int
	// onCall answers a CALL record from the server (a callback).
	onCall func(rec []byte)
}

func newTransport(conn net.Conn, maxRecord int, firstXID uint32, onCall func([]byte)) *transport {
	t := &transport{
		conn:      conn,
		onCall:    onCall,
		pending:   make(map[uint32]chan result),
		done:      make(chan struct{}),
		maxRecord: maxRecord,
	}
	t.xid.Store(firstXID)
	go t.readLoop()
	return t
}

func (t *transport) nextXID() uint32 { return t.xid.Add(1) }

// readLoop delivers reply records by xid until the connection fails.
func (t *transport) readLoop() {
	rr := xdr.NewRecordReader(t.conn, t.maxRecord)
	for {
		rec, err := rr.Next()
		if err != nil {
			t.fail(err)
			return
		}
		rr.Detach()
		t.bytesIn.Add(uint64(len(rec)) + 4)
		if len(rec) < 4 {
			t.dropped.Add(1)
			continue
		}
		if isCall(rec) && t.onCall != nil {
			go t.onCall(rec)
			continue
		}
		xid := binary.BigEndian.Uint32(rec)
		t.mu.Lock()
		ch, ok := t.pending[xid]
		delete(t.pending, xid)
		t.mu.Unlock()
		if !ok {
			t.dropped.Add(1)
			continue
		}
		ch <- result{rec: rec}
	}
}

// fail ends the connection, failing every pending call with err.
func (t *transport) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	if errors.Is(err, net.ErrClosed) {
		err = ErrClosed
	}
	t.err = err
	for xid, ch := range t.pending {
		ch <- result{err: err}
		delete(t.pending, xid)
	}
	close(t.done)
	t.conn.Close()
}

// send registers xid and writes the record pieces (record mark included).
// The returned channel receives exactly one result.
func (t *transport) send(xid uint32, bufs [][]byte) (chan result, error) {
	ch := make(chan result, 1)
	t.mu.Lock()
	if t.err != nil {
		err := t.err
		t.mu.Unlock()
		return nil, err
	}
	t.pending[xid] = ch
	t.mu.Unlock()
	if err := t.write(bufs); err != nil {
		t.forget(xid)
		t.fail(err)
		return nil, err
	}
	return ch, nil
}

// write sends bytes as they are, under the write lock.
func (t *transport) write(bufs [][]byte) error {
	nb := net.Buffers(bufs)
	t.wmu.Lock()
	n, err := nb.WriteTo(t.conn)
	t.wmu.Unlock()
	t.bytesOut.Add(uint64(n))
	return err
}

func (t *transport) forget(xid uint32) {
	t.mu.Lock()
	delete(t.pending, xid)
	t.mu.Unlock()
}

// wait returns the reply on ch, or ctx's error. On ctx's error the xid is
// forgotten, so a late reply is dropped.
func (t *transport) wait(ctx context.Context, xid uint32, ch chan result) ([]byte, error) {
	select {
	case r := <-ch:
		return r.rec, r.err
	case <-ctx.Done():
		t.forget(xid)
		return nil, ctx.Err()
	}
}

// close shuts the connection down and waits for the reader to finish.
func (t *transport) close() {
	t.fail(ErrClosed)
	<-t.done
}
