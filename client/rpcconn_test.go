package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// reverseServer answers the calls it reads on c in pairs, the second
// first, each reply the call's xid and its last argument word: replies
// out of call order, as a server running calls in parallel sends them. A
// call with no second one within a few milliseconds is answered alone.
func reverseServer(c net.Conn) {
	defer c.Close()
	recs := make(chan []byte)
	go func() {
		defer close(recs)
		rr := xdr.NewRecordReader(c, 1<<20)
		for {
			rec, err := rr.Next()
			if err != nil {
				return
			}
			rr.Detach()
			recs <- rec
		}
	}()
	var held []byte
	for {
		var out []byte
		select {
		case rec, ok := <-recs:
			if !ok {
				return
			}
			reply := binary.BigEndian.AppendUint32(nil, xdr.RecordMark(8))
			reply = append(reply, rec[:4]...)
			reply = append(reply, rec[len(rec)-4:]...)
			if held == nil {
				held = reply
				continue
			}
			out = append(reply, held...)
		case <-time.After(5 * time.Millisecond):
			if held == nil {
				continue
			}
			out = held
		}
		held = nil
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// TestRPCConnPipelined: calls from many goroutines over one RPCConn, in
// flight together, each get their own reply whatever order they come
// in; after Close, calls fail with ErrClosed.
func TestRPCConnPipelined(t *testing.T) {
	cc, sc := net.Pipe()
	go reverseServer(sc)
	rc := NewRPCConn(cc, 1<<20, 1000)
	const callers, calls = 8, 50
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				arg := uint32(g*calls + i)
				xid := rc.NextXID()
				rec := SysCall(xid, 100003, 3, 0, &Cred{UID: 1}, func(e *xdr.Encoder) { e.Uint32(arg) })
				rep, err := rc.Call(context.Background(), xid, rec)
				if err != nil {
					t.Error(err)
					return
				}
				if got := fmt.Sprint(binary.BigEndian.Uint32(rep), binary.BigEndian.Uint32(rep[4:])); got != fmt.Sprint(xid, arg) {
					t.Errorf("call xid %d arg %d: reply %s", xid, arg, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if out, in := rc.Bytes(); out == 0 || in != callers*calls*12 {
		t.Errorf("Bytes: sent %d, received %d (want %d)", out, in, callers*calls*12)
	}
	rc.Close()
	xid := rc.NextXID()
	if _, err := rc.Call(context.Background(), xid, SysCall(xid, 100003, 3, 0, nil, nil)); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
}
