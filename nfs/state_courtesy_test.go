package nfs

import (
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// silence makes h's client look silent for d (its last renewal d ago),
// as if it had sent nothing since.
func (h *harness) silence(d time.Duration) {
	h.s.state.mu.Lock()
	defer h.s.state.mu.Unlock()
	h.s.state.clients[h.clid].renewed.Store(time.Now().Add(-d).UnixNano())
}

func (h *harness) hasClient() bool {
	h.s.state.mu.Lock()
	defer h.s.state.mu.Unlock()
	return h.s.state.clients[h.clid] != nil
}

// courtesySetup: client a holds a deny-write open of f and a lock on
// [0, 100); b is a second client.
func courtesySetup(t *testing.T) (a, b *harness, f *openReq) {
	a = newHarness(t)
	a.session()
	f = &openReq{name: "f", owner: "oo", access: nfs4.ShareAccessBoth, deny: nfs4.ShareDenyWrite}
	if st := a.openReq(f); st != nfs4.OK {
		t.Fatalf("open: %d", st)
	}
	if st, _ := a.lockReq(f.gotFH, f.gotStateid, "lo", false, 0, 100); st != nfs4.OK {
		t.Fatalf("lock: %d", st)
	}
	b = a.peer(0, "other")
	b.session()
	return a, b, f
}

// TestCourtesyShareConflict (pynfs COUR3): while a's lease runs, b's write
// open is refused; once it expired, the same open expires a (a courtesy
// client) and succeeds.
func TestCourtesyShareConflict(t *testing.T) {
	a, b, _ := courtesySetup(t)
	if st := b.openReq(&openReq{name: "f", owner: "x", access: nfs4.ShareAccessWrite}); st != nfs4.ErrShareDenied {
		t.Fatalf("write open over a live deny-write open: %d, want SHARE_DENIED", st)
	}
	a.silence(2 * time.Duration(a.s.cfg.LeaseTime) * time.Second)
	a.s.state.expire(time.Now()) // the reaper keeps a courtesy client's state
	if !a.hasClient() {
		t.Fatal("reaper dropped a courtesy client nobody conflicted with")
	}
	if st := b.openReq(&openReq{name: "f", owner: "x", access: nfs4.ShareAccessWrite}); st != nfs4.OK {
		t.Fatalf("write open over a courtesy client's open: %d", st)
	}
	if a.hasClient() {
		t.Fatal("courtesy client kept after its state conflicted")
	}
	_, st, _ := a.compound(1, func(e *xdr.Encoder) { a.sequence(e) })
	if st != nfs4.ErrBadsession {
		t.Fatalf("expired courtesy client's SEQUENCE: %d, want BADSESSION", st)
	}
}

// TestCourtesyLockConflict (pynfs COUR2): a lock of an expired client
// gives way to another client's LOCK and LOCKT.
func TestCourtesyLockConflict(t *testing.T) {
	a, b, f := courtesySetup(t)
	g := &openReq{fh: f.gotFH, owner: "x", access: nfs4.ShareAccessRead}
	if st := b.openReq(g); st != nfs4.OK {
		t.Fatalf("read open: %d", st)
	}
	if st := b.locktReq(f.gotFH, "x", 10, 1); st != nfs4.ErrDenied {
		t.Fatalf("LOCKT over a live lock: %d, want DENIED", st)
	}
	a.silence(2 * time.Duration(a.s.cfg.LeaseTime) * time.Second)
	if st := b.locktReq(f.gotFH, "x", 10, 1); st != nfs4.OK {
		t.Fatalf("LOCKT over a courtesy client's lock: %d", st)
	}
	if a.hasClient() {
		t.Fatal("courtesy client kept after LOCKT conflicted")
	}
}

// readLock sends LOCK READ_LT of [10, 11) for a new lock owner from open.
func (h *harness) readLock(fh []byte, open nfs4.Stateid) nfs4.Status {
	h.t.Helper()
	_, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLock)
		e.Uint32(readLT)
		e.Bool(false)
		e.Uint64(10)
		e.Uint64(1)
		e.Bool(true)
		e.Uint32(0)
		open.Encode(e)
		e.Uint32(0)
		e.Uint64(h.clientID())
		e.String("reader")
	})
	return st
}

// TestCourtesyLockGrant: LOCK itself expires the courtesy holder.
func TestCourtesyLockGrant(t *testing.T) {
	a, b, f := courtesySetup(t)
	// b opens without the write access a denies, then wants a read lock:
	// a write lock of a must give way.
	g := &openReq{fh: f.gotFH, owner: "x", access: nfs4.ShareAccessRead}
	if st := b.openReq(g); st != nfs4.OK {
		t.Fatalf("read open: %d", st)
	}
	if st := b.readLock(f.gotFH, g.gotStateid); st != nfs4.ErrDenied {
		t.Fatalf("read lock over a live write lock: %d, want DENIED", st)
	}
	a.silence(2 * time.Duration(a.s.cfg.LeaseTime) * time.Second)
	if st := b.readLock(f.gotFH, g.gotStateid); st != nfs4.OK {
		t.Fatalf("read lock over a courtesy client's write lock: %d", st)
	}
	if a.hasClient() {
		t.Fatal("courtesy client kept after LOCK conflicted")
	}
}

// TestCourtesyClientReturns: a courtesy client that renews before anyone
// conflicted keeps everything; the conflicting request then fails as
// with any live client.
func TestCourtesyClientReturns(t *testing.T) {
	a, b, f := courtesySetup(t)
	a.silence(2 * time.Duration(a.s.cfg.LeaseTime) * time.Second)
	a.s.state.expire(time.Now())
	if st := a.readWith(f.gotFH, f.gotStateid); st != nfs4.OK {
		t.Fatalf("courtesy client's READ with its open stateid: %d", st)
	}
	if st := b.openReq(&openReq{name: "f", owner: "x", access: nfs4.ShareAccessWrite}); st != nfs4.ErrShareDenied {
		t.Fatalf("write open over a returned client's open: %d, want SHARE_DENIED", st)
	}
	if st := b.locktReq(f.gotFH, "x", 10, 1); st != nfs4.ErrDenied {
		t.Fatalf("LOCKT over a returned client's lock: %d, want DENIED", st)
	}
}

// TestCourtesyBounds: courtesy clients go after courtesyMax, and at once
// when the client table is full.
func TestCourtesyBounds(t *testing.T) {
	a, _, _ := courtesySetup(t)
	a.s.state.expire(time.Now().Add(time.Hour))
	if !a.hasClient() {
		t.Fatal("courtesy client dropped after an hour")
	}
	a.s.state.expire(time.Now().Add(courtesyMax + time.Hour))
	if a.hasClient() {
		t.Fatal("courtesy client kept past courtesyMax")
	}

	c := newHarnessCfg(t, func(cfg *Config) { cfg.MaxClients = 1 })
	c.session()
	if st := c.openReq(&openReq{name: "f", owner: "oo", access: nfs4.ShareAccessRead}); st != nfs4.OK {
		t.Fatalf("open: %d", st)
	}
	d := c.peer(0, "newcomer")
	c.silence(2 * time.Duration(c.s.cfg.LeaseTime) * time.Second)
	d.session() // would be NFS4ERR_DELAY with the table full of live clients
	if c.hasClient() {
		t.Fatal("courtesy client kept when the client table was full")
	}
}
