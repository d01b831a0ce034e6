package nfs

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// v40OnlyOps are NFSv4.0's own ops: NFS4ERR_NOTSUPP in 4.1 and 4.2.
var v40OnlyOps = []uint32{nfs4.OpOpenConfirm, nfs4.OpRenew, nfs4.OpSetclientid,
	nfs4.OpSetclientidConfirm, nfs4.OpReleaseLockowner}

// c40 sends a COMPOUND of minor version 0.
func (h *harness) c40(nops int, build func(e *xdr.Encoder)) (*xdr.Decoder, nfs4.Status, int) {
	h.t.Helper()
	return h.compoundMinor(0, nops, build)
}

// setclientid sends SETCLIENTID and returns its status, client id and
// confirm verifier.
func (h *harness) setclientid(owner string, verf byte) (nfs4.Status, uint64, [8]byte) {
	h.t.Helper()
	d, st, _ := h.c40(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpSetclientid)
		e.Fixed(bytes.Repeat([]byte{verf}, 8))
		e.String(owner)
		e.Uint32(0x40000000)
		e.String("tcp")
		e.String("127.0.0.1.0.1")
		e.Uint32(7)
	})
	var cv [8]byte
	d.Uint32()
	d.Uint32()
	if st != nfs4.OK {
		return st, 0, cv
	}
	id := d.Uint64()
	copy(cv[:], d.Fixed(8))
	return st, id, cv
}

func (h *harness) confirm40(id uint64, cv [8]byte) nfs4.Status {
	h.t.Helper()
	_, st, _ := h.c40(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpSetclientidConfirm)
		e.Uint64(id)
		e.Fixed(cv[:])
	})
	return st
}

// client40 makes and confirms a 4.0 client.
func (h *harness) client40(owner string) uint64 {
	h.t.Helper()
	st, id, cv := h.setclientid(owner, 1)
	if st != nfs4.OK {
		h.t.Fatalf("SETCLIENTID: %d", st)
	}
	if st := h.confirm40(id, cv); st != nfs4.OK {
		h.t.Fatalf("SETCLIENTID_CONFIRM: %d", st)
	}
	return id
}

func (h *harness) renew40(id uint64) nfs4.Status {
	h.t.Helper()
	_, st, _ := h.c40(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpRenew)
		e.Uint64(id)
	})
	return st
}

// open40 opens (creating) name in the root as open-owner owner with
// seqid; it returns the status, stateid, rflags and the file's handle.
func (h *harness) open40(id uint64, owner string, seqid uint32, name string) (nfs4.Status, nfs4.Stateid, uint32, []byte) {
	h.t.Helper()
	d, st, _ := h.c40(3, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(seqid)
		e.Uint32(nfs4.ShareAccessBoth)
		e.Uint32(0)
		e.Uint64(id)
		e.String(owner)
		e.Uint32(nfs4.OpenCreate)
		e.Uint32(nfs4.CreateUnchecked)
		e.Uint32(0) // empty bitmap
		e.Uint32(0) // no attributes
		e.Uint32(nfs4.ClaimNull)
		e.String(name)
		e.Uint32(nfs4.OpGetfh)
	})
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	if st != nfs4.OK {
		return st, nfs4.Stateid{}, 0, nil
	}
	d.Uint32()
	d.Uint32()
	sid := nfs4.DecodeStateid(d)
	d.Skip(changeInfoLen)
	rflags := d.Uint32()
	nfs4.DecodeBitmap(d)
	d.Uint32() // no delegation
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	return st, sid, rflags, bytes.Clone(d.Opaque(128))
}

// seqOp40 sends PUTFH fh and one op whose arguments args writes; it
// returns the op's status and its result body's first stateid (when OK).
func (h *harness) seqOp40(fh []byte, op uint32, args func(e *xdr.Encoder)) (nfs4.Status, nfs4.Stateid, []byte) {
	h.t.Helper()
	d, st, _ := h.c40(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(op)
		args(e)
	})
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	d.Uint32()
	d.Uint32()
	rest := bytes.Clone(d.Rest())
	var sid nfs4.Stateid
	if st == nfs4.OK && len(rest) >= 16 {
		sid = nfs4.DecodeStateid(d)
	}
	return st, sid, rest
}

// write40 writes one byte at offset 0 of fh (FILE_SYNC) with sid.
func (h *harness) write40(fh []byte, sid nfs4.Stateid) nfs4.Status {
	h.t.Helper()
	st, _, _ := h.seqOp40(fh, nfs4.OpWrite, func(e *xdr.Encoder) {
		sid.Encode(e)
		e.Uint64(0)
		e.Uint32(2) // FILE_SYNC
		e.Opaque([]byte("x"))
	})
	return st
}

func openConfirm40(sid nfs4.Stateid, seqid uint32) func(e *xdr.Encoder) {
	return func(e *xdr.Encoder) {
		sid.Encode(e)
		e.Uint32(seqid)
	}
}

func closeArgs40(sid nfs4.Stateid, seqid uint32) func(e *xdr.Encoder) {
	return func(e *xdr.Encoder) {
		e.Uint32(seqid)
		sid.Encode(e)
	}
}

func TestV40PlainCompound(t *testing.T) {
	h := newHarness(t)
	d, st, n := h.c40(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK || n != 2 {
		t.Fatalf("PUTROOTFH, GETFH: %d, %d results", st, n)
	}
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	// 4.1's ops are illegal in 4.0 (RFC 7530 section 15.2: ops past
	// RELEASE_LOCKOWNER do not exist).
	for _, op := range []uint32{nfs4.OpSequence, nfs4.OpExchangeID, nfs4.OpCreateSession, nfs4.OpReadPlus, 9999} {
		d, st, n := h.c40(1, func(e *xdr.Encoder) { e.Uint32(op) })
		if st != nfs4.ErrOpIllegal || n != 1 {
			t.Fatalf("op %d in 4.0: %d, %d results", op, st, n)
		}
		opResult(t, d, nfs4.OpIllegal, nfs4.ErrOpIllegal)
	}
	// And 4.0's are NFS4ERR_NOTSUPP in 4.1.
	h.session()
	for _, op := range v40OnlyOps {
		d, st, _ := h.compoundMinor(1, 2, func(e *xdr.Encoder) {
			h.sequence(e)
			e.Uint32(op)
		})
		skipSequence(t, d)
		if st != nfs4.ErrNotsupp {
			t.Errorf("%s in 4.1: %d", OpName(op), st)
		}
	}
}

// TestV40SetclientidCases walks RFC 7530 section 16.33.5's cases.
func TestV40SetclientidCases(t *testing.T) {
	h := newHarness(t)
	// A new client: unconfirmed until SETCLIENTID_CONFIRM.
	st, id, cv := h.setclientid("c1", 1)
	if st != nfs4.OK {
		t.Fatalf("SETCLIENTID: %d", st)
	}
	if st := h.renew40(id); st != nfs4.ErrStaleClientid {
		t.Fatalf("RENEW of an unconfirmed client: %d", st)
	}
	if st := h.confirm40(id, [8]byte{9}); st != nfs4.ErrStaleClientid {
		t.Fatalf("confirm with a wrong verifier: %d", st)
	}
	if st := h.confirm40(id, cv); st != nfs4.OK {
		t.Fatalf("confirm: %d", st)
	}
	// A retransmitted confirm is fine.
	if st := h.confirm40(id, cv); st != nfs4.OK {
		t.Fatalf("confirm again: %d", st)
	}
	if st := h.renew40(id); st != nfs4.OK {
		t.Fatalf("RENEW: %d", st)
	}
	// The same verifier: a callback update keeps the client id.
	st, id2, cv2 := h.setclientid("c1", 1)
	if st != nfs4.OK || id2 != id || cv2 == cv {
		t.Fatalf("callback update: %d, id %x (was %x)", st, id2, id)
	}
	if st := h.confirm40(id2, cv2); st != nfs4.OK {
		t.Fatalf("confirm the update: %d", st)
	}
	// State, then another principal: NFS4ERR_CLID_INUSE.
	if st, _, _, _ := h.open40(id, "oo", 1, "f"); st != nfs4.OK {
		t.Fatalf("OPEN: %d", st)
	}
	h.uid = 1000
	if st, _, _ := h.setclientid("c1", 1); st != nfs4.ErrClidInuse {
		t.Fatalf("another principal: %d", st)
	}
	h.uid = 0
	// A rebooted client (another verifier): a new client id; the old
	// one goes with its state at the confirm.
	st, id3, cv3 := h.setclientid("c1", 2)
	if st != nfs4.OK || id3 == id {
		t.Fatalf("rebooted client: %d, id %x", st, id3)
	}
	if st := h.renew40(id); st != nfs4.OK {
		t.Fatalf("the old record before the confirm: %d", st)
	}
	if st := h.confirm40(id3, cv3); st != nfs4.OK {
		t.Fatalf("confirm the new record: %d", st)
	}
	// Gone with its lease: this boot's id, so expired, not stale
	// (knfsd's set_client; pynfs RENEW3).
	if st := h.renew40(id); st != nfs4.ErrExpired {
		t.Fatalf("the old record after the confirm: %d", st)
	}
	if n := h.s.state.opens.len(); n != 0 {
		t.Fatalf("%d stateids left", n)
	}
	// A client id this server never gave.
	if st := h.renew40(12345); st != nfs4.ErrStaleClientid {
		t.Fatalf("RENEW of an unknown client: %d", st)
	}
}

// TestV40OpenConfirmSeqid: a new open-owner confirms; the owner's seqid
// orders its requests; a retransmission gets the last reply again; any
// other seqid is NFS4ERR_BAD_SEQID.
func TestV40OpenConfirmSeqid(t *testing.T) {
	h := newHarness(t)
	id := h.client40("c1")
	st, sid, rflags, fh := h.open40(id, "oo", 10, "f")
	if st != nfs4.OK || rflags&openResultConfirm == 0 {
		t.Fatalf("OPEN: %d, rflags %#x", st, rflags)
	}
	// Unconfirmed: CLOSE refuses the stateid.
	if st, _, _ := h.seqOp40(fh, nfs4.OpClose, closeArgs40(sid, 11)); st != nfs4.ErrBadStateid {
		t.Fatalf("CLOSE before OPEN_CONFIRM: %d", st)
	}
	st, csid, body := h.seqOp40(fh, nfs4.OpOpenConfirm, openConfirm40(sid, 11))
	if st != nfs4.OK || csid.Other != sid.Other || csid.Seqid != sid.Seqid+1 {
		t.Fatalf("OPEN_CONFIRM: %d %+v", st, csid)
	}
	// The retransmission: the same reply, the stateid unchanged.
	st, again, body2 := h.seqOp40(fh, nfs4.OpOpenConfirm, openConfirm40(sid, 11))
	if st != nfs4.OK || again != csid || !bytes.Equal(body, body2) {
		t.Fatalf("OPEN_CONFIRM replayed: %d %+v", st, again)
	}
	// A confirmed owner's OPEN: no confirm asked; the seqid goes on.
	st, _, rflags, _ = h.open40(id, "oo", 12, "f")
	if st != nfs4.OK || rflags&openResultConfirm != 0 {
		t.Fatalf("second OPEN: %d, rflags %#x", st, rflags)
	}
	for _, bad := range []uint32{12, 14, 0, 1 << 31} {
		if st, _, _, _ := h.open40(id, "oo", bad, "f"); st != nfs4.ErrBadSeqid && !(bad == 12 && st == nfs4.OK) {
			t.Fatalf("OPEN with seqid %d: %d", bad, st)
		}
	}
	// A failing op uses its seqid too (RFC 7530 section 9.1.7)...
	cur := h.s.state.opens.get(sid.Other)
	if st, _, _ := h.seqOp40(fh, nfs4.OpOpenDowngrade, func(e *xdr.Encoder) {
		nfs4.Stateid{Seqid: cur.seq.Load(), Other: sid.Other}.Encode(e)
		e.Uint32(13)
		e.Uint32(0) // no access: NFS4ERR_INVAL
		e.Uint32(0)
	}); st != nfs4.ErrInval {
		t.Fatalf("OPEN_DOWNGRADE: %d", st)
	}
	// ...but not a bad stateid.
	if st, _, _ := h.seqOp40(fh, nfs4.OpClose, closeArgs40(nfs4.Stateid{Other: [12]byte{1}}, 14)); st != nfs4.ErrBadStateid && st != nfs4.ErrStaleStateid {
		t.Fatalf("CLOSE of a bad stateid: %d", st)
	}
	cs := nfs4.Stateid{Seqid: cur.seq.Load(), Other: sid.Other}
	st, _, body = h.seqOp40(fh, nfs4.OpClose, closeArgs40(cs, 14))
	if st != nfs4.OK {
		t.Fatalf("CLOSE: %d", st)
	}
	// CLOSE's retransmission gets CLOSE's reply, though the state is gone.
	st, _, body2 = h.seqOp40(fh, nfs4.OpClose, closeArgs40(cs, 14))
	if st != nfs4.OK || !bytes.Equal(body, body2) {
		t.Fatalf("CLOSE replayed: %d", st)
	}
}

func lockNewArgs(id uint64, openSid nfs4.Stateid, openSeq uint32, owner string, off, n uint64) func(e *xdr.Encoder) {
	return func(e *xdr.Encoder) {
		e.Uint32(writeLT)
		e.Bool(false)
		e.Uint64(off)
		e.Uint64(n)
		e.Bool(true)
		e.Uint32(openSeq)
		openSid.Encode(e)
		e.Uint32(0) // lock_seqid
		e.Uint64(id)
		e.String(owner)
	}
}

func releaseLockowner(h *harness, id uint64, owner string) nfs4.Status {
	_, st, _ := h.c40(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpReleaseLockowner)
		e.Uint64(id)
		e.String(owner)
	})
	return st
}

// TestV40Locks: open_to_lock_owner makes a lock-owner whose seqid starts
// at lock_seqid; RELEASE_LOCKOWNER refuses while it holds locks.
func TestV40Locks(t *testing.T) {
	h := newHarness(t)
	id := h.client40("c1")
	_, sid, _, fh := h.open40(id, "oo", 1, "f")
	_, osid, _ := h.seqOp40(fh, nfs4.OpOpenConfirm, openConfirm40(sid, 2))
	st, lsid, _ := h.seqOp40(fh, nfs4.OpLock, lockNewArgs(id, osid, 3, "lo", 0, 10))
	if st != nfs4.OK {
		t.Fatalf("LOCK: %d", st)
	}
	if st := releaseLockowner(h, id, "lo"); st != nfs4.ErrLocksHeld {
		t.Fatalf("RELEASE_LOCKOWNER with a lock held: %d", st)
	}
	locku := func(seqid uint32, sid nfs4.Stateid) func(e *xdr.Encoder) {
		return func(e *xdr.Encoder) {
			e.Uint32(writeLT)
			e.Uint32(seqid)
			sid.Encode(e)
			e.Uint64(0)
			e.Uint64(10)
		}
	}
	if st, _, _ := h.seqOp40(fh, nfs4.OpLocku, locku(5, lsid)); st != nfs4.ErrBadSeqid {
		t.Fatalf("LOCKU with a skipped seqid: %d", st)
	}
	st, usid, _ := h.seqOp40(fh, nfs4.OpLocku, locku(1, lsid))
	if st != nfs4.OK {
		t.Fatalf("LOCKU: %d", st)
	}
	if st, again, _ := h.seqOp40(fh, nfs4.OpLocku, locku(1, lsid)); st != nfs4.OK || again != usid {
		t.Fatalf("LOCKU replayed: %d", st)
	}
	if st := releaseLockowner(h, id, "lo"); st != nfs4.OK {
		t.Fatalf("RELEASE_LOCKOWNER: %d", st)
	}
	if st, _, _ := h.seqOp40(fh, nfs4.OpLocku, locku(2, usid)); st != nfs4.ErrBadStateid {
		t.Fatalf("LOCKU of a released owner: %d", st)
	}
	if st := releaseLockowner(h, 999, "lo"); st != nfs4.ErrStaleClientid {
		t.Fatalf("RELEASE_LOCKOWNER of an unknown client: %d", st)
	}
}

// TestV40Lease: RENEW and any op naming the client renew its lease.
func TestV40Lease(t *testing.T) {
	h := newHarness(t)
	id := h.client40("c1")
	h.s.state.mu.Lock()
	cl := h.s.state.clients[id]
	h.s.state.mu.Unlock()
	old := time.Now().Add(-time.Hour).UnixNano()
	cl.renewed.Store(old)
	if st := h.renew40(id); st != nfs4.OK || cl.renewed.Load() == old {
		t.Fatalf("RENEW: %d", st)
	}
	cl.renewed.Store(old)
	if st, _, _, _ := h.open40(id, "oo", 1, "f"); st != nfs4.OK || cl.renewed.Load() == old {
		t.Fatalf("OPEN: %d", st)
	}
}

// FuzzV40 feeds COMPOUNDs of minor version 0 to a server with a 4.0
// client: any bytes give a reply, never a panic.
func FuzzV40(f *testing.F) {
	seed := func(ops ...func(e *xdr.Encoder)) []byte {
		e := xdr.NewEncoder(256)
		for _, op := range ops {
			op(e)
		}
		return append([]byte(nil), e.Header()...)
	}
	f.Add(uint32(1), seed(func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpSetclientid)
		e.Fixed(make([]byte, 8))
		e.String("x")
		e.Uint32(1)
		e.String("tcp")
		e.String("127.0.0.1.0.1")
		e.Uint32(1)
	}))
	f.Add(uint32(2), seed(func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpOpen)
		e.Uint32(1)
		e.Uint32(3)
		e.Uint32(0)
		e.Uint64(0)
		e.String("o")
		e.Uint32(0)
		e.Uint32(0)
		e.String("f")
	}))
	f.Add(uint32(1), seed(func(e *xdr.Encoder) { e.Uint32(nfs4.OpRenew); e.Uint64(1) }))
	f.Add(uint32(2), seed(putrootfh40, mkdir40("d")))
	f.Add(uint32(1), seed(func(e *xdr.Encoder) { e.Uint32(nfs4.OpReleaseLockowner); e.Uint64(1); e.String("l") }))
	f.Add(uint32(2), seed(func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpLock)
		e.Uint32(2)
		e.Bool(false)
		e.Uint64(0)
		e.Uint64(1)
		e.Bool(true)
		e.Uint32(1)
		nfs4.Stateid{}.Encode(e)
		e.Uint32(0)
		e.Uint64(1)
		e.String("l")
	}))
	s, err := NewServer(Config{Exports: []Export{{Path: f.TempDir()}}, StateDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	h := &harness{s: s, conn: NewConn("fuzz")}
	f.Fuzz(func(t *testing.T, nops uint32, body []byte) {
		h.t = t
		h.xid++
		e := xdr.NewEncoder(256)
		callHeader(e, h.xid, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
		e.String("")
		e.Uint32(0)
		e.Uint32(nops % 64)
		e.Fixed(body)
		rec := e.AppendTo(nil)
		h.record(rec)
		h.record(rec) // a retransmit: the duplicate request cache (v40_drc.go)
	})
}

// TestV40CloseNotInline: a 4.0 CLOSE may wait for another op of its
// client (the seqid), so it never runs on the event loop.
func TestV40CloseNotInline(t *testing.T) {
	h := newHarness(t)
	for _, minor := range []uint32{0, 1} {
		e := xdr.NewEncoder(256)
		callHeader(e, 1, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
		e.String("")
		e.Uint32(minor)
		e.Uint32(1)
		e.Uint32(nfs4.OpClose)
		e.Uint32(0)
		nfs4.Stateid{}.Encode(e)
		if got := h.s.Inline(e.AppendTo(nil)); got != (minor == 1) {
			t.Errorf("minor %d: Inline %v", minor, got)
		}
	}
}

func TestV40LongCompound(t *testing.T) {
	h := newHarness(t)
	_, st, n := h.c40(maxOps40+1, func(e *xdr.Encoder) {
		for i := 0; i <= maxOps40; i++ {
			e.Uint32(nfs4.OpPutrootfh)
		}
	})
	if st != nfs4.ErrResource || n != 0 {
		t.Fatalf("%d ops: %d, %d results", maxOps40+1, st, n)
	}
	if _, st, n := h.c40(maxOps40, func(e *xdr.Encoder) {
		for i := 0; i < maxOps40; i++ {
			e.Uint32(nfs4.OpPutrootfh)
		}
	}); st != nfs4.OK || n != maxOps40 {
		t.Fatalf("%d ops: %d, %d results", maxOps40, st, n)
	}
}

// TestV40SpecialStateid: ops with a special stateid name no client, and
// run as anonymous (the Linux client's chmod is SETATTR with the
// all-zeros stateid).
func TestV40SpecialStateid(t *testing.T) {
	h := newHarness(t)
	h.client40("c1")
	_, _, _, fh := h.open40(h.client40("c2"), "oo", 1, "f")
	for _, sid := range []nfs4.Stateid{{}, {Seqid: ^uint32(0), Other: [12]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}} {
		st, _, _ := h.seqOp40(fh, nfs4.OpSetattr, func(e *xdr.Encoder) {
			sid.Encode(e)
			nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
			e.Uint32(4)
			e.Uint32(0o600)
		})
		if st != nfs4.OK {
			t.Errorf("SETATTR with stateid %+v: %d", sid, st)
		}
	}
}

// TestV40WriteDuringUpgrade: WRITEs carrying the newest open stateid the
// client has while its own OPENs of the file run beside them (the Linux
// 4.0 client's I/O and its OPEN upgrades, on one connection) are all
// taken: an OPEN moving the seqid on between the WRITE's check of the
// client and its handler's check of the stateid answered
// NFS4ERR_OLD_STATEID (seen once in CI's kernel e2e). Run with -race.
func TestV40WriteDuringUpgrade(t *testing.T) {
	h := newHarness(t)
	id := h.client40("c1")
	_, sid, _, fh := h.open40(id, "oo", 1, "f")
	_, csid, _ := h.seqOp40(fh, nfs4.OpOpenConfirm, openConfirm40(sid, 2))
	var newest atomic.Pointer[nfs4.Stateid]
	newest.Store(&csid)
	const upgrades = 300
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		o := h.peer(0, "opener")
		for seq := uint32(3); seq < 3+upgrades; seq++ {
			st, sid, _, _ := o.open40(id, "oo", seq, "f")
			if st != nfs4.OK {
				t.Errorf("OPEN seqid %d: %d", seq, st)
				return
			}
			newest.Store(&sid)
		}
	}()
	w := h.peer(0, "writer")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	defer func() { <-done }() // the opener uses the server the test's cleanup removes
	for n := 0; ; n++ {
		select {
		case <-done:
			if n == 0 {
				t.Error("no WRITE ran beside the OPENs")
			}
			return
		default:
		}
		sid := *newest.Load()
		if st := w.write40(fh, sid); st != nfs4.OK {
			t.Errorf("WRITE %d with seqid %d: %d", n, sid.Seqid, st)
			return
		}
	}
}

// TestV40OldSeqidIO: a WRITE with an open stateid of an earlier seqid
// (the client's own OPEN moved it on meanwhile) is taken; CLOSE with one
// is NFS4ERR_OLD_STATEID.
func TestV40OldSeqidIO(t *testing.T) {
	h := newHarness(t)
	id := h.client40("c1")
	_, sid, _, fh := h.open40(id, "oo", 1, "f")
	_, csid, _ := h.seqOp40(fh, nfs4.OpOpenConfirm, openConfirm40(sid, 2))
	if st, _, _, _ := h.open40(id, "oo", 3, "f"); st != nfs4.OK {
		t.Fatalf("second OPEN: %d", st)
	}
	if st := h.write40(fh, csid); st != nfs4.OK {
		t.Fatalf("WRITE with the earlier seqid: %d", st)
	}
	if st, _, _ := h.seqOp40(fh, nfs4.OpClose, closeArgs40(csid, 4)); st != nfs4.ErrOldStateid {
		t.Fatalf("CLOSE with the earlier seqid: %d", st)
	}
}
