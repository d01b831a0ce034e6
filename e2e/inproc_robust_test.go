package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// alive checks that c still gets answers on its connection.
func alive(t *testing.T, c *client.Client, after string) {
	t.Helper()
	if _, err := c.RootFH(ctxT(t)); err != nil {
		t.Fatalf("after %s: connection no longer works: %v", after, err)
	}
}

// rpcHeader builds an RPC CALL header with the given fields and AUTH_NONE.
func rpcHeader(xid, rpcvers, prog, vers, proc uint32) []byte {
	b := []byte{}
	for _, v := range []uint32{xid, nfs4.MsgCall, rpcvers, prog, vers, proc, nfs4.AuthNone, 0, nfs4.AuthNone, 0} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

func rawCall(t *testing.T, c *client.Client, rec []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctxT(t), 3*time.Second)
	defer cancel()
	return c.RawCall(ctx, rec)
}

func TestRPCHeaderErrors(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	u := func(vs ...uint32) []byte {
		b := []byte{}
		for _, v := range vs {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		return b
	}
	tests := []struct {
		name  string
		rec   func(xid uint32) []byte
		reply []byte // expected reply after the xid
	}{
		{"NULL procedure", func(x uint32) []byte { return rpcHeader(x, 2, nfs4.ProgramNFS, 4, 0) },
			u(nfs4.MsgReply, nfs4.MsgAccepted, 0, 0, nfs4.AcceptSuccess)},
		{"rpc version 3", func(x uint32) []byte { return rpcHeader(x, 3, nfs4.ProgramNFS, 4, 0) },
			u(nfs4.MsgReply, nfs4.MsgDenied, nfs4.RejectRPCMismatch, 2, 2)},
		{"unknown program", func(x uint32) []byte { return rpcHeader(x, 2, 100099, 3, 0) },
			u(nfs4.MsgReply, nfs4.MsgAccepted, 0, 0, nfs4.AcceptProgUnavail)},
		{"NFS version 2", func(x uint32) []byte { return rpcHeader(x, 2, nfs4.ProgramNFS, 2, 0) },
			u(nfs4.MsgReply, nfs4.MsgAccepted, 0, 0, nfs4.AcceptProgMismatch, 3, 4)},
		{"NFS version 3 NULL", func(x uint32) []byte { return rpcHeader(x, 2, nfs4.ProgramNFS, 3, 0) },
			u(nfs4.MsgReply, nfs4.MsgAccepted, 0, 0, nfs4.AcceptSuccess)},
		{"unknown procedure", func(x uint32) []byte { return rpcHeader(x, 2, nfs4.ProgramNFS, 4, 7) },
			u(nfs4.MsgReply, nfs4.MsgAccepted, 0, 0, nfs4.AcceptProcUnavail)},
	}
	for _, tc := range tests {
		xid := c.NextXID()
		rep, err := rawCall(t, c, tc.rec(xid))
		if err != nil || len(rep) < 4 || !bytes.Equal(rep[4:], tc.reply) {
			t.Errorf("%s: reply %x err %v, want xid+%x", tc.name, rep, err, tc.reply)
		}
		alive(t, c, tc.name)
	}
	// An unknown credential flavor is an AUTH_ERROR.
	xid := c.NextXID()
	rec := rpcHeader(xid, 2, nfs4.ProgramNFS, 4, 0)
	binary.BigEndian.PutUint32(rec[24:], 99)
	rep, err := rawCall(t, c, rec)
	if err != nil || len(rep) < 16 || binary.BigEndian.Uint32(rep[8:]) != nfs4.MsgDenied || binary.BigEndian.Uint32(rep[12:]) != nfs4.RejectAuthError {
		t.Errorf("credential flavor 99: reply %x err %v, want MSG_DENIED AUTH_ERROR", rep, err)
	}
	alive(t, c, "bad credential")
}

// TestGarbageRecords sends records of random bytes: the server may answer
// or drop them, but must keep serving, and a connection it keeps must work.
func TestGarbageRecords(t *testing.T) {
	f := startServer(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10 {
		var batch []byte
		for i := range 20 {
			rec := make([]byte, 4+rng.IntN(300))
			for j := range rec {
				rec[j] = byte(rng.Uint32())
			}
			if i%2 == 0 && len(rec) >= 24 { // a plausible CALL header, garbage after
				copy(rec[4:], rpcHeader(0, 2, nfs4.ProgramNFS, 4, 1)[4:24])
			}
			batch = binary.BigEndian.AppendUint32(batch, xdr.RecordMark(len(rec)))
			batch = append(batch, rec...)
		}
		sendRaw(t, f, batch)
	}
	c := dial(t, f)
	alive(t, c, "garbage on other connections")
	// Garbage on a working connection: answered or dropped, never fatal
	// to the session.
	for range 20 {
		rec := make([]byte, 4+rng.IntN(100))
		for j := range rec {
			rec[j] = byte(rng.Uint32())
		}
		binary.BigEndian.PutUint32(rec, c.NextXID())
		c.WriteRaw(append(binary.BigEndian.AppendUint32(nil, xdr.RecordMark(len(rec))), rec...))
	}
	if _, err := c.RootFH(ctxT(t)); err != nil {
		if c.Err() == nil {
			t.Fatalf("connection up but no answer after garbage: %v", err)
		}
		t.Logf("server closed the connection after garbage records: %v", c.Err())
	}
}

// sendRaw writes b on a fresh connection and reads until the server
// closes it or goes quiet.
func sendRaw(t *testing.T, f *fixture, b []byte) (reply []byte, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(b)
	conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	reply, err = io.ReadAll(conn)
	var ne net.Error
	return reply, !(errors.As(err, &ne) && ne.Timeout())
}

func TestHugeRecordMark(t *testing.T) {
	f := startServer(t)
	for _, mark := range []uint32{0xffffffff, 0x7fffffff, 0x80000000 | 64<<20} {
		conn, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		b := binary.BigEndian.AppendUint32(nil, mark)
		conn.Write(append(b, make([]byte, 64)...))
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(make([]byte, 100))
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("record mark %#x: server kept the connection open (it should close it)", mark)
		} else if n > 0 {
			t.Logf("record mark %#x: server replied %d bytes before closing", mark, n)
		}
		conn.Close()
	}
	c := dial(t, f)
	alive(t, c, "huge record marks")
}

// TestTruncatedCompound cuts a sessionless COMPOUND at every byte after
// the RPC header: each must get a reply (GARBAGE_ARGS or a COMPOUND error)
// and leave the connection working.
func TestTruncatedCompound(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	full := c.CallRecord(0, 2, func(e *xdr.Encoder) int {
		client.EncodePutrootfh(e)
		client.EncodeLookup(e, "data.bin")
		client.EncodeGetattr(e, client.StandardAttrs)
		return 3
	})
	hdr := len(c.CallRecord(0, 2, func(e *xdr.Encoder) int { return 0 })) - 12 // up to the tag
	for cut := hdr; cut < len(full); cut++ {
		xid := c.NextXID()
		rec := append([]byte(nil), full[:cut]...)
		binary.BigEndian.PutUint32(rec, xid)
		rep, err := rawCall(t, c, rec)
		if err != nil {
			t.Fatalf("cut at %d of %d: no reply: %v", cut, len(full), err)
		}
		if !garbageOrCompoundError(rep) {
			t.Errorf("cut at %d of %d: reply %x, want GARBAGE_ARGS or a COMPOUND error", cut, len(full), rep)
		}
	}
	alive(t, c, "truncated COMPOUNDs")
}

// garbageOrCompoundError reports whether rep is an accepted reply with
// GARBAGE_ARGS, or a COMPOUND reply whose status is not NFS4_OK.
func garbageOrCompoundError(rep []byte) bool {
	d := xdr.NewDecoder(rep)
	d.Skip(12)
	d.Uint32()
	d.Opaque(400)
	st := d.Uint32()
	if st == nfs4.AcceptGarbageArgs {
		return d.Err() == nil
	}
	cst := nfs4.Status(d.Uint32())
	return st == nfs4.AcceptSuccess && cst != nfs4.OK && d.Err() == nil
}

// TestTruncatedSequence cuts a COMPOUND inside its SEQUENCE arguments: the
// slot must not advance, so the client's next use of it works.
func TestTruncatedSequence(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	slot, seq, err := c.AcquireSlot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sid := c.SessionID()
	full := c.CallRecord(0, 2, func(e *xdr.Encoder) int {
		client.EncodeSequence(e, sid, seq, slot, c.HighestSlot(), false)
		client.EncodePutrootfh(e)
		return 2
	})
	seqStart := len(c.CallRecord(0, 2, func(e *xdr.Encoder) int { return 0 }))
	for cut := seqStart; cut < seqStart+4+16+16; cut++ {
		rec := append([]byte(nil), full[:cut]...)
		binary.BigEndian.PutUint32(rec, c.NextXID())
		if _, err := rawCall(t, c, rec); err != nil {
			t.Fatalf("cut at %d: no reply: %v", cut, err)
		}
	}
	c.ReleaseSlot(slot, seq)
	for range int(c.HighestSlot()) + 2 { // cycles through every slot
		alive(t, c, "truncated SEQUENCE")
	}
}

func TestUnknownOps(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	for _, op := range []uint32{0, 1, 2, 76, 9999, 10044, 0xffffffff} {
		err := c.Compound(ctx, func(e *xdr.Encoder) int {
			e.Uint32(op)
			return 1
		}, func(r *client.Reply) error { return r.Op(op) })
		var se *client.StatusError
		if !errors.As(err, &se) || se.Status != nfs4.ErrOpIllegal || se.Op != nfs4.OpIllegal {
			t.Errorf("op %d: %v, want ILLEGAL: NFS4ERR_OP_ILLEGAL", op, err)
		}
		alive(t, c, "unknown op")
	}
	// OPEN_CONFIRM does not exist in 4.1.
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutrootfh(e)
		e.Uint32(nfs4.OpOpenConfirm)
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutrootfh); err != nil {
			return err
		}
		return r.Op(nfs4.OpOpenConfirm)
	})
	if !client.IsStatus(err, nfs4.ErrNotsupp) {
		t.Errorf("OPEN_CONFIRM in 4.1: %v, want NFS4ERR_NOTSUPP", err)
	}
	alive(t, c, "OPEN_CONFIRM")
}

func TestForgedHandles(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	real, err := c.LookupPath(ctx, "data.bin")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var forged [][]byte
	for _, n := range []int{1, 8, 16, 32, 64, 128} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		forged = append(forged, b)
	}
	for i := range min(len(real), 12) { // header and fileid
		b := bytes.Clone(real)
		b[i] ^= 0x55
		forged = append(forged, b)
	}
	for _, fh := range forged {
		_, err := c.Getattr(ctx, fh, client.StandardAttrs)
		if !client.IsStatus(err, nfs4.ErrBadhandle) && !client.IsStatus(err, nfs4.ErrStale) {
			t.Errorf("GETATTR with forged handle %x: %v, want NFS4ERR_BADHANDLE or NFS4ERR_STALE", fh, err)
		}
	}
	// Empty and over-long handles.
	for _, fh := range [][]byte{{}, make([]byte, nfs4.FHSize+1)} {
		_, err := c.Getattr(ctx, fh, client.StandardAttrs)
		if !client.IsStatus(err, nfs4.ErrBadhandle) && !client.IsStatus(err, nfs4.ErrBadXDR) && !client.IsStatus(err, nfs4.ErrStale) {
			t.Errorf("GETATTR with a %d-byte handle: %v, want NFS4ERR_BADHANDLE or NFS4ERR_BADXDR", len(fh), err)
		}
	}
	alive(t, c, "forged handles")
	// Operations needing a current handle without one.
	err = c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodeGetattr(e, client.StandardAttrs)
		return 1
	}, func(r *client.Reply) error { return r.Op(nfs4.OpGetattr) })
	if !client.IsStatus(err, nfs4.ErrNofilehandle) {
		t.Errorf("GETATTR without a handle: %v, want NFS4ERR_NOFILEHANDLE", err)
	}
}

// TestForgedHandleTail alters the part of a handle after the header and
// fileid (the kernel handle) and its length. The server advertises
// unique_handles, so no handle it did not issue may name a file.
func TestForgedHandleTail(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	real, err := c.LookupPath(ctx, "data.bin")
	if err != nil {
		t.Fatal(err)
	}
	forged := [][]byte{append(bytes.Clone(real), 0), real[:len(real)-1], real[:16]}
	for i := 12; i < len(real); i++ {
		b := bytes.Clone(real)
		b[i] ^= 0x55
		forged = append(forged, b)
	}
	for _, fh := range forged {
		_, err := c.Getattr(ctx, fh, client.StandardAttrs)
		if !client.IsStatus(err, nfs4.ErrBadhandle) && !client.IsStatus(err, nfs4.ErrStale) {
			t.Errorf("GETATTR with handle %x (issued %x): %v, want NFS4ERR_BADHANDLE or NFS4ERR_STALE", fh, real, err)
		}
	}
}

func TestMinorVersions(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	for _, minor := range []uint32{3, 100} {
		r, err := c.RawCompound(ctxT(t), minor, func(e *xdr.Encoder) int {
			client.EncodePutrootfh(e)
			return 1
		})
		if err != nil || r.Status != nfs4.ErrMinorVersMismatch || r.N != 0 {
			t.Errorf("minor version %d: %+v %v, want NFS4ERR_MINOR_VERS_MISMATCH with no results", minor, r, err)
		}
	}
	alive(t, c, "minor version mismatch")
}

// seqCall sends SEQUENCE(seq, slot) + PUTROOTFH + GETATTR by hand.
func seqCall(t *testing.T, c *client.Client, sid [16]byte, seq, slot uint32, cache bool) *client.Reply {
	t.Helper()
	r, err := c.RawCompound(ctxT(t), 2, func(e *xdr.Encoder) int {
		client.EncodeSequence(e, sid, seq, slot, c.HighestSlot(), cache)
		client.EncodePutrootfh(e)
		client.EncodeGetattr(e, client.StandardAttrs)
		return 3
	})
	if err != nil {
		t.Fatalf("SEQUENCE seq %d slot %d: %v", seq, slot, err)
	}
	return r
}

func TestSequenceReplayAndMisorder(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	slot, seq, err := c.AcquireSlot(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	sid := c.SessionID()
	first := seqCall(t, c, sid, seq, slot, true)
	if first.Status != nfs4.OK {
		t.Fatalf("first call: status %s", client.StatusName(first.Status))
	}
	replay := seqCall(t, c, sid, seq, slot, true)
	if !bytes.Equal(first.Raw[4:], replay.Raw[4:]) {
		t.Errorf("replay of slot %d seq %d: reply differs\nfirst  %x\nreplay %x", slot, seq, first.Raw[4:], replay.Raw[4:])
	}
	for _, bad := range []uint32{seq + 2, seq + 100, seq - 1} {
		r := seqCall(t, c, sid, bad, slot, false)
		if r.Status != nfs4.ErrSeqMisordered || r.Op(nfs4.OpSequence) == nil {
			t.Errorf("slot %d seq %d after %d: status %s, want NFS4ERR_SEQ_MISORDERED", slot, bad, seq, client.StatusName(r.Status))
		}
	}
	c.ReleaseSlot(slot, seq+1)
	for range int(c.HighestSlot()) + 2 {
		alive(t, c, "replay and misordered")
	}
}

func TestSessionErrors(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	tests := []struct {
		name  string
		build client.BuildFunc
		want  nfs4.Status
	}{
		{"unknown session", func(e *xdr.Encoder) int {
			client.EncodeSequence(e, [16]byte{1, 2, 3}, 1, 0, 0, false)
			return 1
		}, nfs4.ErrBadsession},
		{"slot past highest", func(e *xdr.Encoder) int {
			client.EncodeSequence(e, c.SessionID(), 1, c.HighestSlot()+1, c.HighestSlot()+1, false)
			return 1
		}, nfs4.ErrBadslot},
		{"no SEQUENCE", func(e *xdr.Encoder) int {
			client.EncodePutrootfh(e)
			return 1
		}, nfs4.ErrOpNotInSession},
		{"SEQUENCE not first", func(e *xdr.Encoder) int {
			client.EncodePutrootfh(e)
			client.EncodeSequence(e, c.SessionID(), 1, 0, 0, false)
			return 2
		}, nfs4.ErrOpNotInSession},
	}
	for _, tc := range tests {
		r, err := c.RawCompound(ctxT(t), 2, tc.build)
		if err != nil || r.Status != tc.want {
			var st nfs4.Status
			if r != nil {
				st = r.Status
			}
			t.Errorf("%s: status %s err %v, want %s", tc.name, client.StatusName(st), err, client.StatusName(tc.want))
		}
	}
	alive(t, c, "session errors")
}
