package nfs

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// newHarnessCfg is newHarness with some Config fields set.
func newHarnessCfg(t *testing.T, set func(*Config)) *harness {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{Exports: []Export{{Path: dir}}}
	set(&cfg)
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &harness{t: t, s: s, conn: NewConn("test"), dir: dir}
}

// peer returns a second client of h's server: its own connection, uid
// and client owner.
func (h *harness) peer(uid uint32, owner string) *harness {
	return &harness{t: h.t, s: h.s, conn: NewConn("peer"), dir: h.dir, uid: uid, owner: owner, xid: 1000}
}

// sequenceSlot writes SEQUENCE on a slot with a sequence id and cachethis.
func (h *harness) sequenceSlot(e *xdr.Encoder, slot, seq uint32, cache bool) {
	e.Uint32(nfs4.OpSequence)
	e.Fixed(h.sess[:])
	e.Uint32(seq)
	e.Uint32(slot)
	e.Uint32(slot)
	e.Bool(cache)
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	return err == nil
}

// TestRetransmitDoesNotReexecute is issue 12.3: a reply that carried READ
// data used to be answered on a retransmit by running the whole request
// again, REMOVE included. The retransmit must get the original reply bytes
// (OK) and leave a re-created victim alone, however often it comes.
func TestRetransmitDoesNotReexecute(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("file data to read"))
	h.write("victim", []byte("v1"))
	seq := h.seq + 1
	build := func(e *xdr.Encoder) {
		h.sequenceSlot(e, 0, seq, false)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("f")
		e.Uint32(nfs4.OpRead)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(5)
		e.Uint32(100)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpRemove)
		e.String("victim")
	}
	d, st, _ := h.compound(6, build)
	if st != nfs4.OK {
		t.Fatalf("first: status %d", st)
	}
	first := bytes.Clone(d.Rest())
	victim := filepath.Join(h.dir, "victim")
	if exists(t, victim) {
		t.Fatal("REMOVE did not remove")
	}
	for i := range 2 {
		h.write("victim", []byte("v2"))
		d, st, _ := h.compound(6, build)
		if st != nfs4.OK || !bytes.Equal(d.Rest(), first) {
			t.Fatalf("retransmit %d: status %d, reply\n%x\nwant\n%x", i, st, d.Rest(), first)
		}
		if !exists(t, victim) {
			t.Fatalf("retransmit %d re-ran REMOVE: the re-created victim is gone", i)
		}
	}
	// The data is read again into pieces of the original lengths: a file
	// cut short meanwhile gives zeros, never a reply of another shape.
	if err := os.Truncate(filepath.Join(h.dir, "f"), 0); err != nil {
		t.Fatal(err)
	}
	d, _, _ = h.compound(6, build)
	got := d.Rest()
	if len(got) != len(first) {
		t.Fatalf("replay after truncate: %d bytes, want %d", len(got), len(first))
	}
	if !bytes.Contains(got, make([]byte, len("data to read"))) {
		t.Fatalf("replay after truncate: data not zero-filled:\n%x", got)
	}
}

// TestSlotKeepsNoRequest is issue 8.8: each slot used to keep a copy of a
// data-carrying request whatever its size (1 MiB of trailing junk per slot
// grew RSS by 400 MB). A slot keeps only the reply without its file data.
func TestSlotKeepsNoRequest(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", bytes.Repeat([]byte("x"), 64<<10))
	fh := h.lookupFH("f")
	junk := make([]byte, 1<<20)
	for slot := uint32(0); slot < 16; slot++ {
		_, st, _ := h.compound(3, func(e *xdr.Encoder) {
			h.sequenceSlot(e, slot, 1+boolU32(slot == 0)*h.seq, false)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpRead)
			nfs4.AnonStateid.Encode(e)
			e.Uint64(0)
			e.Uint32(64 << 10)
			e.Fixed(junk)
		})
		if st != nfs4.OK {
			t.Fatalf("slot %d: status %d", slot, st)
		}
	}
	sess := h.s.state.session(h.sess[:])
	for i := range sess.slots {
		c := &sess.slots[i].cache
		if n := cap(c.body); n > h.s.cfg.MaxCachedReply {
			t.Fatalf("slot %d keeps %d bytes", i, n)
		}
	}
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// TestCachedReplyLimits: a reply larger than ca_maxresponsesize_cached is
// refused with NFS4ERR_REP_TOO_BIG_TO_CACHE when the client asked for it
// to be cached, and not kept otherwise: its retransmit is answered
// NFS4ERR_RETRY_UNCACHED_REP, never by running it again.
func TestCachedReplyLimits(t *testing.T) {
	h := newHarnessCfg(t, func(c *Config) { c.MaxCachedReply = 256 })
	h.session()
	big := func(slot, seq uint32, cache bool) func(e *xdr.Encoder) {
		return func(e *xdr.Encoder) {
			h.sequenceSlot(e, slot, seq, cache)
			e.Uint32(nfs4.OpPutrootfh)
			for range 4 {
				e.Uint32(nfs4.OpGetattr)
				nfs4.BitmapOf(nfs4.AttrType, nfs4.AttrFileid, nfs4.AttrSize, nfs4.AttrMode, nfs4.AttrTimeModify).Encode(e)
			}
		}
	}
	d, st, n := h.compound(6, big(0, 1, true))
	if st != nfs4.ErrRepTooBigToCache || n < 3 {
		t.Fatalf("cachethis: status %d after %d results", st, n)
	}
	_ = d
	_, st, _ = h.compound(6, big(1, 1, false))
	if st != nfs4.OK {
		t.Fatalf("no cachethis: status %d", st)
	}
	d, st, _ = h.compound(6, big(1, 1, false))
	if st != nfs4.ErrRetryUncachedRep {
		t.Fatalf("retransmit of an uncached reply: status %d", st)
	}
	opResult(t, d, nfs4.OpSequence, nfs4.ErrRetryUncachedRep)
}

// TestTooManyOps is issue 8.13: a 10,000-op COMPOUND got an RPC-level
// GARBAGE_ARGS. SEQUENCE answers NFS4ERR_TOO_MANY_OPS (RFC 8881 section
// 2.10.6.4) and nothing else runs.
func TestTooManyOps(t *testing.T) {
	h := newHarness(t)
	h.session()
	d, st, n := h.compound(10000, func(e *xdr.Encoder) {
		h.sequence(e)
		for range 9999 {
			e.Uint32(nfs4.OpPutrootfh)
		}
	})
	if st != nfs4.ErrTooManyOps || n != 1 {
		t.Fatalf("status %d with %d results", st, n)
	}
	opResult(t, d, nfs4.OpSequence, nfs4.ErrTooManyOps)
	// Without a session the first op decides: not in a session.
	_, st, n = h.compound(10000, func(e *xdr.Encoder) {
		for range 10000 {
			e.Uint32(nfs4.OpPutrootfh)
		}
	})
	if st != nfs4.ErrOpNotInSession || n != 1 {
		t.Fatalf("sessionless: status %d with %d results", st, n)
	}
	// The session still works: the refused COMPOUND took no slot.
	h.seq--
	if _, st := h.ops(1, func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }); st != nfs4.OK {
		t.Fatalf("after: status %d", st)
	}
}

// createSession runs CREATE_SESSION for clientID with the given fore
// channel attributes and returns the status and session id.
func (h *harness) createSession(clientID uint64, seq uint32, fore [6]uint32) (nfs4.Status, [16]byte) {
	h.t.Helper()
	var id [16]byte
	d, st, _ := h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpCreateSession)
		e.Uint64(clientID)
		e.Uint32(seq)
		e.Uint32(0)
		for _, a := range [][6]uint32{fore, {0, 4096, 4096, 0, 2, 1}} {
			for _, v := range a {
				e.Uint32(v)
			}
			e.Uint32(0)
		}
		e.Uint32(0x40000000)
		e.Uint32(1)
		e.Uint32(nfs4.AuthNone)
	})
	if st == nfs4.OK {
		opResult(h.t, d, nfs4.OpCreateSession, nfs4.OK)
		copy(id[:], d.Fixed(16))
	}
	return st, id
}

var defaultFore = [6]uint32{0, 2 << 20, 2 << 20, 8192, 16, 64}

// TestReqTooBig: a request over the session's ca_maxrequestsize is refused
// with NFS4ERR_REQ_TOO_BIG before anything runs.
func TestReqTooBig(t *testing.T) {
	h := newHarness(t)
	h.session()
	fore := defaultFore
	fore[1] = 1024
	st, id := h.createSession(h.clid, 2, fore)
	if st != nfs4.OK {
		t.Fatalf("CREATE_SESSION: %d", st)
	}
	h.sess, h.seq = id, 0
	_, st, _ = h.compound(2, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Fixed(make([]byte, 2048))
	})
	if st != nfs4.ErrReqTooBig {
		t.Fatalf("status %d", st)
	}
}

// TestSessionAndClientCaps: sessions per client and clients are capped,
// with the RFC's errors; a full table drops an unconfirmed record at once,
// whatever its age, and makes room from clients whose lease ran out.
func TestSessionAndClientCaps(t *testing.T) {
	h := newHarnessCfg(t, func(c *Config) { c.MaxSessionsPerClient = 2; c.MaxClients = 2 })
	h.session()
	if st, _ := h.createSession(h.clid, 2, defaultFore); st != nfs4.OK {
		t.Fatalf("second session: %d", st)
	}
	if st, _ := h.createSession(h.clid, 3, defaultFore); st != nfs4.ErrNospc {
		t.Fatalf("third session: %d", st)
	}
	exchange := func(p *harness) (nfs4.Status, uint64) {
		d, st, _ := p.compound(1, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpExchangeID)
			e.Fixed([]byte("verifier"))
			e.String(p.owner)
			e.Uint32(0)
			e.Uint32(nfs4.SP4None)
			e.Uint32(0)
		})
		if st != nfs4.OK {
			return st, 0
		}
		opResult(t, d, nfs4.OpExchangeID, nfs4.OK)
		return st, d.Uint64()
	}
	if st, _ := exchange(h.peer(0, "second")); st != nfs4.OK {
		t.Fatalf("second client: %d", st)
	}
	// The table is full; the unconfirmed second client goes at once.
	third := h.peer(0, "third")
	st, id := exchange(third)
	if st != nfs4.OK {
		t.Fatalf("third client beside an unconfirmed one: %d", st)
	}
	if st, _ := third.createSession(id, 1, defaultFore); st != nfs4.OK {
		t.Fatalf("third client's CREATE_SESSION: %d", st)
	}
	// Two live confirmed clients: a fourth waits.
	if st, _ := exchange(h.peer(0, "fourth")); st != nfs4.ErrDelay {
		t.Fatalf("fourth client beside two live ones: %d", st)
	}
	// The third client's lease runs out: room again.
	h.s.state.mu.Lock()
	h.s.state.clients[id].renewed.Store(time.Now().Add(-2 * time.Duration(h.s.cfg.LeaseTime) * time.Second).UnixNano())
	h.s.state.mu.Unlock()
	if st, _ := exchange(h.peer(0, "fourth")); st != nfs4.OK {
		t.Fatalf("fourth client after the third one's lease ran out: %d", st)
	}
	// The periodic reaper drops unconfirmed clients too.
	h.s.state.expire(time.Now().Add(2 * unconfirmedTTL))
	if n := len(h.s.state.clients); n != 1 {
		t.Fatalf("%d clients after expiry, want the confirmed one", n)
	}
}

// openFile opens name (creating it) with access for owner and returns the
// status and stateid.
func (h *harness) openFile(name, owner string, access uint32) (nfs4.Status, nfs4.Stateid) {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(access)
		e.Uint32(nfs4.ShareDenyNone)
		e.Uint64(h.clientID())
		e.String(owner)
		e.Uint32(nfs4.OpenCreate)
		e.Uint32(nfs4.CreateUnchecked)
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
		e.Uint32(nfs4.ClaimNull)
		e.String(name)
	})
	if st != nfs4.OK {
		return st, nfs4.Stateid{}
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpOpen, nfs4.OK)
	return st, nfs4.DecodeStateid(d)
}

// lock sends LOCK (a new lock owner from open when lockSid is zero) and
// returns the status and lock stateid.
func (h *harness) lock(fh []byte, open, lockSid nfs4.Stateid, off, length uint64) (nfs4.Status, nfs4.Stateid) {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLock)
		e.Uint32(writeLT)
		e.Bool(false)
		e.Uint64(off)
		e.Uint64(length)
		if lockSid == (nfs4.Stateid{}) {
			e.Bool(true)
			e.Uint32(0)
			open.Encode(e)
			e.Uint32(0)
			e.Uint64(h.clientID())
			e.String("locker")
		} else {
			e.Bool(false)
			lockSid.Encode(e)
			e.Uint32(0)
		}
	})
	if st != nfs4.OK {
		return st, nfs4.Stateid{}
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpLock, nfs4.OK)
	return st, nfs4.DecodeStateid(d)
}

func (h *harness) unlock(fh []byte, sid nfs4.Stateid, off, length uint64) nfs4.Status {
	h.t.Helper()
	_, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLocku)
		e.Uint32(writeLT)
		e.Uint32(0)
		sid.Encode(e)
		e.Uint64(off)
		e.Uint64(length)
	})
	return st
}

// TestOpenAndLockCaps: opens and lock ranges per client are capped with
// NFS4ERR_RESOURCE; LOCKU splitting a range counts too.
func TestOpenAndLockCaps(t *testing.T) {
	h := newHarnessCfg(t, func(c *Config) { c.MaxOpensPerClient = 3; c.MaxLockRangesPerClient = 2 })
	h.session()
	st, open := h.openFile("a", "o", nfs4.ShareAccessBoth)
	if st != nfs4.OK {
		t.Fatalf("open a: %d", st)
	}
	if st, _ := h.openFile("b", "o", nfs4.ShareAccessBoth); st != nfs4.OK {
		t.Fatalf("open b: %d", st)
	}
	fh := h.lookupFH("a")
	st, lsid := h.lock(fh, open, nfs4.Stateid{}, 0, 10)
	if st != nfs4.OK {
		t.Fatalf("lock: %d", st)
	}
	if st, _ := h.openFile("c", "o", nfs4.ShareAccessBoth); st != nfs4.ErrResource {
		t.Fatalf("fourth stateid: %d", st)
	}
	if st := h.unlock(fh, lsid, 2, 1); st != nfs4.OK {
		t.Fatalf("first split: %d", st)
	}
	lsid.Seqid = 0
	if st := h.unlock(fh, lsid, 5, 1); st != nfs4.ErrResource {
		t.Fatalf("second split (3 ranges): %d", st)
	}
	if st, _ := h.lock(fh, open, lsid, 20, 1); st != nfs4.ErrResource {
		t.Fatalf("third range: %d", st)
	}
	if st := h.unlock(fh, lsid, 0, 2); st != nfs4.OK {
		t.Fatalf("unlock: %d", st)
	}
	if st, _ := h.lock(fh, open, lsid, 20, 1); st != nfs4.OK {
		t.Fatalf("range after unlock: %d", st)
	}
}

// TestStateBoundToClient is issue 8.6: another client's stateid let uid
// 2000 write and CLOSE a victim's open, and a guessed DESTROY_SESSION
// killed the victim's session. State is looked up within the caller's
// client; session and client operations check the caller's principal and
// connection.
func TestStateBoundToClient(t *testing.T) {
	victim := newHarness(t)
	victim.owner = "victim"
	victim.session()
	st, sid := victim.openFile("v", "vo", nfs4.ShareAccessBoth)
	if st != nfs4.OK {
		t.Fatalf("victim open: %d", st)
	}
	fh := victim.lookupFH("v")

	attacker := victim.peer(2000, "attacker")
	attacker.session()
	if st, _, _, _ := attacker.writeOp(fh, sid, 0, nfs4.FileSync4, []byte("pwned")); st != nfs4.ErrBadStateid {
		t.Fatalf("WRITE with the victim's stateid: %d", st)
	}
	if got := attacker.readWith(fh, sid); got != nfs4.ErrBadStateid {
		t.Fatalf("READ with the victim's stateid: %d", got)
	}
	_, st = attacker.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpClose)
		e.Uint32(0)
		sid.Encode(e)
	})
	if st != nfs4.ErrBadStateid {
		t.Fatalf("CLOSE of the victim's stateid: %d", st)
	}
	d, _ := attacker.ops(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpTestStateid)
		e.Uint32(1)
		sid.Encode(e)
	})
	skipSequence(t, d)
	opResult(t, d, nfs4.OpTestStateid, nfs4.OK)
	if d.Uint32() != 1 || nfs4.Status(d.Uint32()) != nfs4.ErrBadStateid {
		t.Fatal("TEST_STATEID of the victim's stateid is not BAD_STATEID")
	}
	sole := func(p *harness, build func(e *xdr.Encoder)) nfs4.Status {
		_, st, _ := p.compound(1, build)
		return st
	}
	if st := sole(attacker, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroySession)
		e.Fixed(victim.sess[:])
	}); st != nfs4.ErrConnNotBound {
		t.Fatalf("DESTROY_SESSION of the victim's session: %d", st)
	}
	if st := sole(attacker, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpBindConnToSession)
		e.Fixed(victim.sess[:])
		e.Uint32(nfs4.CDRFore)
		e.Bool(false)
	}); st != nfs4.ErrWrongCred {
		t.Fatalf("BIND_CONN_TO_SESSION to the victim's session: %d", st)
	}
	if st := sole(attacker, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroyClientid)
		e.Uint64(victim.clid)
	}); st != nfs4.ErrWrongCred {
		t.Fatalf("DESTROY_CLIENTID of the victim: %d", st)
	}
	// CREATE_SESSION on the victim's confirmed client id is allowed to
	// any principal with SP4_NONE (RFC 8881 section 18.36.4, pynfs
	// CSESS10); TestCreateSessionPrincipal covers the unconfirmed case.
	thief := victim.peer(2000, "victim")
	if st := sole(thief, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("newverif"))
		e.String("victim")
		e.Uint32(0)
		e.Uint32(nfs4.SP4None)
		e.Uint32(0)
	}); st != nfs4.ErrClidInuse {
		t.Fatalf("EXCHANGE_ID with the victim's owner from another uid: %d", st)
	}

	// The victim's state is intact and still its own to use and end.
	if st, n, _, _ := victim.writeOp(fh, sid, 0, nfs4.FileSync4, []byte("mine")); st != nfs4.OK || n != 4 {
		t.Fatalf("victim WRITE: %d", st)
	}
	if st := sole(victim, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroySession)
		e.Fixed(victim.sess[:])
	}); st != nfs4.OK {
		t.Fatalf("victim DESTROY_SESSION on its own connection: %d", st)
	}
}

// TestIDsUnguessable: stateids, session ids and client ids keep the boot
// epoch in front (so an old boot's read as stale) and are otherwise not a
// counter another client could step through.
func TestIDsUnguessable(t *testing.T) {
	h := newHarness(t)
	h.session()
	_, a := h.openFile("a", "o", nfs4.ShareAccessRead)
	_, b := h.openFile("b", "o", nfs4.ShareAccessRead)
	epoch := h.s.boot
	for _, sid := range []nfs4.Stateid{a, b} {
		if binary.BigEndian.Uint32(sid.Other[:4]) != epoch {
			t.Fatalf("stateid %x lacks the boot epoch", sid.Other)
		}
	}
	ca, cb := binary.BigEndian.Uint64(a.Other[4:]), binary.BigEndian.Uint64(b.Other[4:])
	if cb-ca < 1<<16 && ca-cb < 1<<16 {
		t.Fatalf("stateids %x and %x are close: guessable", a.Other, b.Other)
	}
	if binary.BigEndian.Uint32(h.sess[:4]) != epoch || binary.BigEndian.Uint64(h.sess[4:12]) == h.clid {
		t.Fatalf("session id %x", h.sess)
	}
	if uint32(h.clid>>32) != epoch {
		t.Fatalf("client id %x lacks the boot epoch", h.clid)
	}
}

// TestReplyCacheBudget: the reply caches of all sessions share one budget
// (knfsd's DRC memory): sessions get fewer slots as it runs low, one when
// it is spent (knfsd: "one slot is better than failure"; it used to be
// NFS4ERR_DELAY), and a destroyed session gives its share back.
func TestReplyCacheBudget(t *testing.T) {
	perSlot := slotsCost(1, 8192)
	h := newHarnessCfg(t, func(c *Config) { c.ReplyCacheMemory = 10 * perSlot })
	h.session()
	if n := len(h.s.state.session(h.sess[:]).slots); n != 10 {
		t.Fatalf("first session: %d slots, want 10", n)
	}
	st, one := h.createSession(h.clid, 2, defaultFore)
	if st != nfs4.OK || len(h.s.state.session(one[:]).slots) != 1 {
		t.Fatalf("second session with the budget spent: %d, want OK with one slot", st)
	}
	for _, id := range [][16]byte{h.sess, one} {
		_, st, _ := h.compound(1, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpDestroySession)
			e.Fixed(id[:])
		})
		if st != nfs4.OK {
			t.Fatalf("DESTROY_SESSION: %d", st)
		}
	}
	st, id := h.createSession(h.clid, 3, defaultFore)
	if st != nfs4.OK || len(h.s.state.session(id[:]).slots) != 10 {
		t.Fatalf("session after the first was destroyed: %d", st)
	}
}

// TestAbandonedReplyFreesSlot: an engine whose connection closed before a
// reply's reads were done Resets it without Complete; the slot must be
// free again, so the client's retransmit on a new connection is answered
// (RETRY_UNCACHED_REP) instead of NFS4ERR_DELAY for ever.
func TestAbandonedReplyFreesSlot(t *testing.T) {
	h := newHarness(t)
	h.session()
	build := func(e *xdr.Encoder) {
		e.Uint32(h.xid)
		e.Uint32(nfs4.MsgCall)
		e.Uint32(2)
		e.Uint32(nfs4.ProgramNFS)
		e.Uint32(4)
		e.Uint32(nfs4.ProcCompound)
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
		e.String("tag")
		e.Uint32(2)
		e.Uint32(1)
		h.sequenceAt(e, 1)
	}
	h.xid++
	e := xdr.NewEncoder(256)
	build(e)
	rep := NewReply()
	h.s.Handle(h.conn, e.AppendTo(nil), rep)
	rep.Reset() // given up: no Complete

	h.seq = 0
	_, st, _ := h.compound(1, func(e *xdr.Encoder) { h.sequenceAt(e, 1) })
	if st != nfs4.ErrRetryUncachedRep {
		t.Fatalf("retransmit after an abandoned reply: status %d, want RETRY_UNCACHED_REP (%d)", st, nfs4.ErrRetryUncachedRep)
	}
	h.seq = 1
	if _, st, _ := h.compound(1, func(e *xdr.Encoder) { h.sequence(e) }); st != nfs4.OK {
		t.Fatalf("next request on the slot: status %d", st)
	}
}
