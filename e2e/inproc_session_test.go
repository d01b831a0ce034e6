package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestRetransmitOverTCP is issue 12.3 over a socket and an engine: a
// retransmit of [SEQUENCE, PUTROOTFH, LOOKUP, READ, PUTROOTFH, REMOVE
// victim] (same slot, same sequence id) after the victim is re-created must
// get the original reply bytes, OK, every time, and must not remove the
// new victim: nothing runs again but the read.
func TestRetransmitOverTCP(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	data := bytes.Repeat([]byte("retransmit data "), 4096) // 64 KiB: a real READ
	victim := filepath.Join(f.dir, "rt-victim")
	for name, b := range map[string][]byte{"rt-data": data, "rt-victim": []byte("v1")} {
		if err := os.WriteFile(filepath.Join(f.dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slot, seq, err := c.AcquireSlot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.ReleaseSlot(slot, seq+1)
	xid := c.NextXID()
	rec := c.CallRecord(xid, 2, func(e *xdr.Encoder) int {
		client.EncodeSequence(e, c.SessionID(), seq, slot, c.HighestSlot(), false)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("rt-data")
		e.Uint32(nfs4.OpRead)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(uint32(len(data)))
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpRemove)
		e.String("rt-victim")
		return 6
	})
	first, err := c.RawCall(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if st := compoundStatus(t, first); st != nfs4.OK {
		t.Fatalf("first: status %d", st)
	}
	if !bytes.Contains(first, data) {
		t.Fatal("first reply lacks the file data")
	}
	if _, err := os.Stat(victim); err == nil {
		t.Fatal("REMOVE did not remove")
	}
	for i := range 2 {
		if err := os.WriteFile(victim, []byte("v2"), 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := c.RawCall(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, first) {
			t.Fatalf("retransmit %d: reply differs (status %d)", i, compoundStatus(t, again))
		}
		if _, err := os.Stat(victim); err != nil {
			t.Fatalf("retransmit %d re-ran REMOVE: %v", i, err)
		}
	}
}

// compoundStatus returns the COMPOUND status of a reply record.
func compoundStatus(t *testing.T, rep []byte) nfs4.Status {
	t.Helper()
	d := xdr.NewDecoder(rep)
	d.Skip(6 * 4) // xid, REPLY, MSG_ACCEPTED, verifier, SUCCESS
	st := nfs4.Status(d.Uint32())
	if d.Err() != nil {
		t.Fatalf("short reply %x", rep)
	}
	return st
}

// TestTooManyOpsOverTCP is issue 8.13: a 10,000-op COMPOUND got an
// RPC-level GARBAGE_ARGS; it gets NFS4ERR_TOO_MANY_OPS from SEQUENCE, and
// the connection goes on working.
func TestTooManyOpsOverTCP(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	slot, seq, err := c.AcquireSlot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.RawCompound(ctx, 2, func(e *xdr.Encoder) int {
		client.EncodeSequence(e, c.SessionID(), seq, slot, c.HighestSlot(), false)
		for range 9999 {
			e.Uint32(nfs4.OpPutrootfh)
		}
		return 10000
	})
	c.ReleaseSlot(slot, seq) // refused before the slot was used
	if err != nil {
		t.Fatalf("10,000 ops: %v", err)
	}
	if r.Status != nfs4.ErrTooManyOps || r.N != 1 {
		t.Fatalf("10,000 ops: status %d with %d results", r.Status, r.N)
	}
	alive(t, c, "10,000 ops")
}
