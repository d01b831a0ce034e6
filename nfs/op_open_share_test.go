package nfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// openShare opens name in the root (no create) as root for owner with
// access and deny, and returns the OPEN's status and stateid.
func (h *harness) openShare(name, owner string, access, deny uint32) (nfs4.Status, nfs4.Stateid) {
	h.t.Helper()
	return h.openIn(asRoot, h.rootFH(), name, owner, access, deny)
}

// downgradeTo sends PUTFH fh + OPEN_DOWNGRADE of sid and returns the status
// and the new stateid.
func (h *harness) downgradeTo(fh []byte, sid nfs4.Stateid, access, deny uint32) (nfs4.Status, nfs4.Stateid) {
	h.t.Helper()
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpOpenDowngrade)
		sid.Encode(e)
		e.Uint32(0)
		e.Uint32(access)
		e.Uint32(deny)
	})
	if st != nfs4.OK {
		return st, nfs4.Stateid{}
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpOpenDowngrade, nfs4.OK)
	return st, nfs4.DecodeStateid(d)
}

// TestOpenOwnShareDeny: an owner's OPEN is checked against the deny of
// its own open of the file too (RFC 7530 section 16.16.5, knfsd's
// nfs4_file_get_access; pynfs OPEN21, OPEN25), unless it asks for an
// access value the open already holds; its deny is checked against its
// own access always (OPEN30).
func TestOpenOwnShareDeny(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("r", []byte("x"))
	h.write("w", []byte("x"))
	h.write("b", []byte("x"))
	steps := []struct {
		name         string
		access, deny uint32
		want         nfs4.Status
		what         string
	}{
		{"r", nfs4.ShareAccessBoth, nfs4.ShareDenyRead, nfs4.OK, "first open"},
		{"r", nfs4.ShareAccessRead, nfs4.ShareDenyNone, nfs4.ErrShareDenied, "READ on own DENY_READ"},
		{"r", nfs4.ShareAccessBoth, nfs4.ShareDenyNone, nfs4.OK, "BOTH again: held"},
		{"r", nfs4.ShareAccessBoth, nfs4.ShareDenyWrite, nfs4.ErrShareDenied, "DENY_WRITE on own WRITE"},
		{"w", nfs4.ShareAccessBoth, nfs4.ShareDenyWrite, nfs4.OK, "first open"},
		{"w", nfs4.ShareAccessWrite, nfs4.ShareDenyNone, nfs4.ErrShareDenied, "WRITE on own DENY_WRITE"},
		{"w", nfs4.ShareAccessRead, nfs4.ShareDenyNone, nfs4.OK, "READ on own DENY_WRITE"},
		{"b", nfs4.ShareAccessRead, nfs4.ShareDenyBoth, nfs4.OK, "first open"},
		{"b", nfs4.ShareAccessRead, nfs4.ShareDenyBoth, nfs4.ErrShareDenied, "DENY_BOTH on own READ"},
	}
	for _, s := range steps {
		if st, _ := h.openShare(s.name, "o", s.access, s.deny); st != s.want {
			t.Fatalf("%s: %s: %d, want %d", s.name, s.what, st, s.want)
		}
	}
	// Other owners are refused as before.
	if st, _ := h.openShare("r", "p", nfs4.ShareAccessRead, nfs4.ShareDenyNone); st != nfs4.ErrShareDenied {
		t.Fatalf("another owner's READ on DENY_READ: %d", st)
	}
	// An owner with only DENY_NONE opens (the Linux client) upgrades freely.
	h.write("l", []byte("x"))
	for _, acc := range []uint32{nfs4.ShareAccessRead, nfs4.ShareAccessWrite, nfs4.ShareAccessBoth, nfs4.ShareAccessRead} {
		if st, _ := h.openShare("l", "linux", acc, nfs4.ShareDenyNone); st != nfs4.OK {
			t.Fatalf("DENY_NONE open %d: %d", acc, st)
		}
	}
}

// TestOpenDowngradeModes: OPEN_DOWNGRADE goes only to access and deny
// values an OPEN of the stateid granted (pynfs OPDG2, OPDG3; knfsd's
// st_access_bmap and st_deny_bmap), and a downgrade forgets the values
// it gave up.
func TestOpenDowngradeModes(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("x"))
	fh := h.lookupFH("f")
	st, sid := h.openShare("f", "o", nfs4.ShareAccessBoth, nfs4.ShareDenyNone)
	if st != nfs4.OK {
		t.Fatal(st)
	}
	if st, _ := h.downgradeTo(fh, sid, nfs4.ShareAccessRead, nfs4.ShareDenyNone); st != nfs4.ErrInval {
		t.Fatalf("to READ after BOTH only: %d, want INVAL", st)
	}
	if st, _ := h.openShare("f", "o", nfs4.ShareAccessWrite, nfs4.ShareDenyNone); st != nfs4.OK {
		t.Fatal(st)
	}
	st, sid = h.openShare("f", "o", nfs4.ShareAccessRead, nfs4.ShareDenyNone)
	if st != nfs4.OK {
		t.Fatal(st)
	}
	if st, _ := h.downgradeTo(fh, sid, nfs4.ShareAccessRead, nfs4.ShareDenyRead); st != nfs4.ErrInval {
		t.Fatalf("to a deny never held: %d, want INVAL", st)
	}
	if st, sid = h.downgradeTo(fh, sid, nfs4.ShareAccessRead, nfs4.ShareDenyNone); st != nfs4.OK {
		t.Fatalf("to READ: %d", st)
	}
	// WRITE and BOTH went with the downgrade.
	for _, acc := range []uint32{nfs4.ShareAccessWrite, nfs4.ShareAccessBoth} {
		if st, _ := h.downgradeTo(fh, sid, acc, nfs4.ShareDenyNone); st != nfs4.ErrInval {
			t.Fatalf("to %d after a downgrade to READ: %d, want INVAL", acc, st)
		}
	}
	if st, sid = h.downgradeTo(fh, sid, nfs4.ShareAccessRead, nfs4.ShareDenyNone); st != nfs4.OK {
		t.Fatalf("to READ again: %d", st)
	}
	// A deny opened with and no DENY_NONE: only that deny.
	h.write("g", []byte("x"))
	gfh := h.lookupFH("g")
	st, gsid := h.openShare("g", "o", nfs4.ShareAccessRead, nfs4.ShareDenyWrite)
	if st != nfs4.OK {
		t.Fatal(st)
	}
	if st, _ := h.downgradeTo(gfh, gsid, nfs4.ShareAccessRead, nfs4.ShareDenyNone); st != nfs4.ErrInval {
		t.Fatalf("to DENY_NONE never opened with: %d, want INVAL", st)
	}
	if st, _ := h.downgradeTo(gfh, gsid, nfs4.ShareAccessRead, nfs4.ShareDenyWrite); st != nfs4.OK {
		t.Fatalf("to the same modes: %d", st)
	}
}

// createUnchecked sends an UNCHECKED OPEN create of name with size and
// mode and returns the status.
func (h *harness) createUnchecked(name string, size uint64, mode uint32) nfs4.Status {
	h.t.Helper()
	_, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessBoth)
		e.Uint32(nfs4.ShareDenyNone)
		e.Uint64(h.clientID())
		e.String("creator")
		e.Uint32(nfs4.OpenCreate)
		e.Uint32(nfs4.CreateUnchecked)
		nfs4.BitmapOf(nfs4.AttrSize, nfs4.AttrMode).Encode(e)
		e.Uint32(12)
		e.Uint64(size)
		e.Uint32(mode)
		e.Uint32(nfs4.ClaimNull)
		e.String(name)
	})
	return st
}

// TestOpenUncheckedExisting: an UNCHECKED create of a file that exists
// ignores the attributes but a size of 0, which truncates (pynfs OPEN2;
// knfsd's nfsd4_create_file).
func TestOpenUncheckedExisting(t *testing.T) {
	h := newHarness(t)
	h.session()
	path := filepath.Join(h.dir, "f")
	check := func(what string, size int64, mode os.FileMode) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != size || fi.Mode().Perm() != mode {
			t.Fatalf("%s: size %d mode %o, want %d %o", what, fi.Size(), fi.Mode().Perm(), size, mode)
		}
	}
	if st := h.createUnchecked("f", 32, 0o644); st != nfs4.OK {
		t.Fatal(st)
	}
	check("created", 32, 0o644)
	if st := h.createUnchecked("f", 16, 0o600); st != nfs4.OK {
		t.Fatal(st)
	}
	check("again", 32, 0o644)
	if st := h.createUnchecked("f", 0, 0o600); st != nfs4.OK {
		t.Fatal(st)
	}
	check("size 0", 0, 0o644)
	// An empty file that exists is no new file either.
	if st := h.createUnchecked("f", 0, 0o600); st != nfs4.OK {
		t.Fatal(st)
	}
	check("empty", 0, 0o644)
}

// lockt sends PUTFH fh + LOCKT of a write lock over [off, off+length)
// for another owner and returns the status and, when DENIED, the
// conflicting lock's offset and length.
func (h *harness) lockt(fh []byte, off, length uint64) (nfs4.Status, uint64, uint64) {
	h.t.Helper()
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLockt)
		e.Uint32(writeLT)
		e.Uint64(off)
		e.Uint64(length)
		e.Uint64(h.clientID())
		e.String("tester")
	})
	if st != nfs4.ErrDenied {
		return st, 0, 0
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpLockt, nfs4.ErrDenied)
	return st, d.Uint64(), d.Uint64()
}

// TestLockMerge: an owner's overlapping and adjacent locks of one type
// merge, as POSIX locks do (pynfs LOCKMRG): LOCKT reports [25, 125) after
// [25, 75) and [50, 125). An unlock in the middle still splits it, a
// relock joins it again, and the client's range count follows.
func TestLockMerge(t *testing.T) {
	h := newHarness(t)
	h.session()
	st, open := h.openFile("f", "o", nfs4.ShareAccessBoth)
	if st != nfs4.OK {
		t.Fatal(st)
	}
	fh := h.lookupFH("f")
	st, lsid := h.lock(fh, open, nfs4.Stateid{}, 25, 50)
	if st != nfs4.OK {
		t.Fatal(st)
	}
	if st, lsid = h.lock(fh, open, lsid, 50, 75); st != nfs4.OK {
		t.Fatal(st)
	}
	ranges := func() int {
		h.s.state.mu.Lock()
		defer h.s.state.mu.Unlock()
		return h.s.state.clients[h.clientID()].lockRanges
	}
	if st, off, n := h.lockt(fh, 0, u64max); st != nfs4.ErrDenied || off != 25 || n != 100 {
		t.Fatalf("LOCKT: %d [%d, %d], want DENIED [25, 100]", st, off, n)
	}
	if r := ranges(); r != 1 {
		t.Fatalf("ranges %d, want 1", r)
	}
	_, st = h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLocku)
		e.Uint32(writeLT)
		e.Uint32(0)
		lsid.Encode(e)
		e.Uint64(50)
		e.Uint64(10)
	})
	if st != nfs4.OK {
		t.Fatalf("LOCKU: %d", st)
	}
	if st, off, n := h.lockt(fh, 0, 55); st != nfs4.ErrDenied || off != 25 || n != 25 {
		t.Fatalf("LOCKT after split: %d [%d, %d], want DENIED [25, 25]", st, off, n)
	}
	if st, _, _ := h.lockt(fh, 50, 10); st != nfs4.OK {
		t.Fatalf("LOCKT of the hole: %d", st)
	}
	if r := ranges(); r != 2 {
		t.Fatalf("ranges after split %d, want 2", r)
	}
	lsid.Seqid = 0 // the current one (RFC 8881 section 8.2.2)
	if st, _ = h.lock(fh, open, lsid, 50, 10); st != nfs4.OK {
		t.Fatal(st)
	}
	if st, off, n := h.lockt(fh, 0, u64max); st != nfs4.ErrDenied || off != 25 || n != 100 {
		t.Fatalf("LOCKT after relock: %d [%d, %d], want DENIED [25, 100]", st, off, n)
	}
	if r := ranges(); r != 1 {
		t.Fatalf("ranges after relock %d, want 1", r)
	}
}

// TestAddLock: addLock merges only the owner's ranges of the same type
// that overlap or touch the new one; other types are cut, not merged,
// and other owners' ranges stay.
func TestAddLock(t *testing.T) {
	a, b := &openState{}, &openState{}
	locks := []lockRange{{0, 10, false, a}, {20, 30, true, a}, {30, 40, false, a}, {10, 20, true, b}}
	got := addLock(locks, a, 10, 20, false)
	want := map[lockRange]bool{{0, 20, false, a}: true, {20, 30, true, a}: true, {30, 40, false, a}: true, {10, 20, true, b}: true}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for _, l := range got {
		if !want[l] {
			t.Fatalf("got %v", got)
		}
	}
	got = addLock(got, a, 15, 35, false)
	want = map[lockRange]bool{{0, 40, false, a}: true, {10, 20, true, b}: true}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for _, l := range got {
		if !want[l] {
			t.Fatalf("got %v", got)
		}
	}
	got = addLock(got, a, 5, u64max, true)
	if len(got) != 3 || got[2] != (lockRange{5, u64max, true, a}) {
		t.Fatalf("got %v", got)
	}
}
