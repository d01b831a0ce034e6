package nfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// openReq is one OPEN: by name in the root (CLAIM_NULL, creating) or of
// the file fh (CLAIM_PREVIOUS when reclaim, else CLAIM_FH).
type openReq struct {
	name         string
	fh           []byte
	reclaim      bool
	owner        string
	access, deny uint32
	gotFH        []byte
	gotStateid   nfs4.Stateid
}

// openReq sends the OPEN and fills in its result.
func (h *harness) openReq(r *openReq) nfs4.Status {
	h.t.Helper()
	d, st, _ := h.compound(4, func(e *xdr.Encoder) {
		h.sequence(e)
		if r.fh != nil {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(r.fh)
		} else {
			e.Uint32(nfs4.OpPutrootfh)
		}
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(r.access)
		e.Uint32(r.deny)
		e.Uint64(h.clientID())
		e.String(r.owner)
		switch {
		case r.fh == nil:
			e.Uint32(nfs4.OpenCreate)
			e.Uint32(nfs4.CreateUnchecked)
			nfs4.Bitmap{}.Encode(e)
			e.Uint32(0)
			e.Uint32(nfs4.ClaimNull)
			e.String(r.name)
		case r.reclaim:
			e.Uint32(nfs4.OpenNoCreate)
			e.Uint32(nfs4.ClaimPrevious)
			e.Uint32(nfs4.DelegateNone)
		default:
			e.Uint32(nfs4.OpenNoCreate)
			e.Uint32(nfs4.ClaimFH)
		}
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		return st
	}
	skipSequence(h.t, d)
	d.Uint32()
	d.Uint32()
	opResult(h.t, d, nfs4.OpOpen, nfs4.OK)
	r.gotStateid = nfs4.DecodeStateid(d)
	d.Skip(8 + 8 + 4 + 4) // change_info4, rflags
	nfs4.DecodeBitmap(d)
	if dt := d.Uint32(); dt != nfs4.DelegateNone {
		h.t.Fatalf("delegation %d", dt)
	}
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	r.gotFH = append([]byte(nil), d.Opaque(nfs4.FHSize)...)
	return st
}

// lockReq sends LOCK of [off, off+length) for a new lock owner from open
// (write lock), with the reclaim flag, and returns status and stateid.
func (h *harness) lockReq(fh []byte, open nfs4.Stateid, owner string, reclaim bool, off, length uint64) (nfs4.Status, nfs4.Stateid) {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLock)
		e.Uint32(writeLT)
		e.Bool(reclaim)
		e.Uint64(off)
		e.Uint64(length)
		e.Bool(true)
		e.Uint32(0)
		open.Encode(e)
		e.Uint32(0)
		e.Uint64(h.clientID())
		e.String(owner)
	})
	if st != nfs4.OK {
		return st, nfs4.Stateid{}
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpLock, nfs4.OK)
	return st, nfs4.DecodeStateid(d)
}

// locktReq sends LOCKT (write) of [off, off+length) for owner.
func (h *harness) locktReq(fh []byte, owner string, off, length uint64) nfs4.Status {
	h.t.Helper()
	_, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLockt)
		e.Uint32(writeLT)
		e.Uint64(off)
		e.Uint64(length)
		e.Uint64(h.clientID())
		e.String(owner)
	})
	return st
}

// reclaimCompleteWire sends RECLAIM_COMPLETE(false).
func (h *harness) reclaimCompleteWire() nfs4.Status {
	h.t.Helper()
	_, st, _ := h.compound(2, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpReclaimComplete)
		e.Bool(false)
	})
	return st
}

// restart starts another server on h's export and state directory, as
// after a kill -9 (the first one is not shut down first), and returns a
// client of it with h's owner and uid, before its RECLAIM_COMPLETE.
func (h *harness) restart(set func(*Config)) *harness {
	h.t.Helper()
	cfg := Config{Exports: []Export{{Path: h.dir}}, StateDir: h.state}
	if set != nil {
		set(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(s.Close)
	n := &harness{t: h.t, s: s, conn: NewConn("after-restart"), dir: h.dir, state: h.state, uid: h.uid, owner: h.owner, xid: 5000}
	n.noReclaimComplete = true
	n.session()
	return n
}

// TestReclaimAfterRestart: a client's open and lock survive a server
// restart by reclaim in the grace period; during it nobody gets new state,
// a client the previous boot did not know cannot reclaim, and after the
// only previous client's RECLAIM_COMPLETE the grace period is over.
func TestReclaimAfterRestart(t *testing.T) {
	h := newHarness(t)
	h.session()
	f := &openReq{name: "f", owner: "oo", access: nfs4.ShareAccessBoth, deny: nfs4.ShareDenyWrite}
	if st := h.openReq(f); st != nfs4.OK {
		t.Fatalf("open: %d", st)
	}
	if st, _ := h.lockReq(f.gotFH, f.gotStateid, "lo", false, 0, 100); st != nfs4.OK {
		t.Fatalf("lock: %d", st)
	}
	// Before the restart, reclaims have no grace period to go in.
	if st := h.openReq(&openReq{fh: f.gotFH, reclaim: true, owner: "oo", access: nfs4.ShareAccessRead}); st != nfs4.ErrNoGrace {
		t.Fatalf("reclaim without a restart: %d, want NO_GRACE", st)
	}

	a := h.restart(nil)
	if !inGrace(a.s) {
		t.Fatal("no grace period after a restart with a recorded client")
	}
	// A stranger (not on the previous boot's list) during grace.
	b := a.peer(0, "stranger")
	b.noReclaimComplete = true
	b.session()
	if st := b.openReq(&openReq{fh: f.gotFH, reclaim: true, owner: "x", access: nfs4.ShareAccessRead}); st != nfs4.ErrReclaimBad {
		t.Fatalf("stranger's reclaim: %d, want RECLAIM_BAD", st)
	}
	if st := b.reclaimCompleteWire(); st != nfs4.OK {
		t.Fatalf("stranger's RECLAIM_COMPLETE: %d", st)
	}
	if st := b.openReq(&openReq{name: "g", owner: "x", access: nfs4.ShareAccessRead}); st != nfs4.ErrGrace {
		t.Fatalf("new open in grace: %d, want GRACE", st)
	}
	if st := b.locktReq(f.gotFH, "x", 0, 1); st != nfs4.ErrGrace {
		t.Fatalf("LOCKT in grace: %d, want GRACE", st)
	}

	// The old client reclaims its open and its lock.
	if st := a.openReq(&openReq{name: "g", owner: "oo", access: nfs4.ShareAccessRead}); st != nfs4.ErrGrace {
		t.Fatalf("old client's new open before RECLAIM_COMPLETE: %d, want GRACE", st)
	}
	r := &openReq{fh: f.gotFH, reclaim: true, owner: "oo", access: nfs4.ShareAccessBoth, deny: nfs4.ShareDenyWrite}
	if st := a.openReq(r); st != nfs4.OK {
		t.Fatalf("open reclaim: %d", st)
	}
	if st, _ := a.lockReq(f.gotFH, r.gotStateid, "lo2", false, 200, 1); st != nfs4.ErrGrace {
		t.Fatalf("new lock in grace: %d, want GRACE", st)
	}
	st, lsid := a.lockReq(f.gotFH, r.gotStateid, "lo", true, 0, 100)
	if st != nfs4.OK {
		t.Fatalf("lock reclaim: %d", st)
	}
	if st := a.reclaimCompleteWire(); st != nfs4.OK {
		t.Fatalf("RECLAIM_COMPLETE: %d", st)
	}
	if inGrace(a.s) {
		t.Fatal("grace period goes on after every previous client's RECLAIM_COMPLETE")
	}

	// After it: reclaims are refused, the reclaimed state holds.
	if st, _ := a.lockReq(f.gotFH, r.gotStateid, "lo3", true, 300, 1); st != nfs4.ErrNoGrace {
		t.Fatalf("lock reclaim after RECLAIM_COMPLETE: %d, want NO_GRACE", st)
	}
	if st := b.locktReq(f.gotFH, "x", 50, 1); st != nfs4.ErrDenied {
		t.Fatalf("LOCKT over the reclaimed lock: %d, want DENIED", st)
	}
	if st := b.openReq(&openReq{name: "f", owner: "x", access: nfs4.ShareAccessWrite}); st != nfs4.ErrShareDenied {
		t.Fatalf("write open over the reclaimed deny-write open: %d, want SHARE_DENIED", st)
	}
	if st := b.openReq(&openReq{name: "g", owner: "x", access: nfs4.ShareAccessRead}); st != nfs4.OK {
		t.Fatalf("new open after grace: %d", st)
	}
	if st := a.unlock(f.gotFH, lsid, 0, 100); st != nfs4.OK {
		t.Fatalf("unlock of the reclaimed lock: %d", st)
	}
	if st := b.locktReq(f.gotFH, "x", 50, 1); st != nfs4.OK {
		t.Fatalf("LOCKT after unlock: %d", st)
	}
}

// TestGraceEndsAndRecordsGo: a previous client that does not come back
// within the grace period cannot reclaim later, and the client list no
// longer names it (not even after another restart).
func TestGraceEndsAndRecordsGo(t *testing.T) {
	h := newHarness(t)
	h.owner = "gone"
	h.session()
	if !strings.Contains(clientsFile(t, h.state), hexOf("gone")) {
		t.Fatal("RECLAIM_COMPLETE did not record the client")
	}
	a := h.restart(nil)
	a.s.state.mu.Lock()
	a.s.state.grace.until = time.Now().Add(-time.Second) // as if it ran out
	a.s.state.mu.Unlock()
	a.s.state.expire(time.Now())
	a.s.state.syncRecords()
	if st := a.openReq(&openReq{fh: h.s.root().handle, reclaim: true, owner: "o", access: nfs4.ShareAccessRead}); st != nfs4.ErrNoGrace {
		t.Fatalf("reclaim after grace: %d, want NO_GRACE", st)
	}
	if strings.Contains(clientsFile(t, h.state), hexOf("gone")) {
		t.Fatal("client that missed the grace period is still recorded")
	}
	c := a.restart(nil)
	if inGrace(c.s) {
		t.Fatal("grace period with no client to reclaim")
	}
}

// TestRecordForgottenWithState: a client whose lease expired is removed
// from the list, so it cannot reclaim after a restart.
func TestRecordForgottenWithState(t *testing.T) {
	h := newHarness(t)
	h.owner = "leaving"
	h.session()
	h.s.state.expire(time.Now().Add(time.Hour)) // no open: the lease simply expires
	h.s.state.syncRecords()
	if strings.Contains(clientsFile(t, h.state), hexOf("leaving")) {
		t.Fatal("expired client still recorded")
	}
	a := h.restart(nil)
	if st := a.openReq(&openReq{fh: h.s.root().handle, reclaim: true, owner: "o", access: nfs4.ShareAccessRead}); st != nfs4.ErrNoGrace {
		t.Fatalf("reclaim by a forgotten client: %d, want NO_GRACE", st)
	}
}

func TestClientRecordsRoundTrip(t *testing.T) {
	in := []clientRecord{{"b\x00\n owner", 7}, {"a", 0}, {strings.Repeat("x", 1024), 1 << 31}}
	out, bad, err := parseClientRecords(formatClientRecords(append([]clientRecord(nil), in...)))
	if err != nil || len(bad) > 0 || len(out) != len(in) {
		t.Fatalf("%v %v %v", out, bad, err)
	}
	seen := map[clientRecord]bool{}
	for _, r := range out {
		seen[r] = true
	}
	for _, r := range in {
		if !seen[r] {
			t.Errorf("lost %q", r.owner)
		}
	}
}

func inGrace(s *Server) bool {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return s.state.inGraceLocked()
}

func clientsFile(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "clients"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(digits[s[i]>>4])
		b.WriteByte(digits[s[i]&15])
	}
	return b.String()
}
