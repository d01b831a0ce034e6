package nfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// openIn sends PUTFH dir + OPEN of name (no create) as cr for owner, with
// access and deny, and returns the OPEN's status and stateid.
func (h *harness) openIn(cr testCred, dir []byte, name, owner string, access, deny uint32) (nfs4.Status, nfs4.Stateid) {
	h.t.Helper()
	d, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(dir)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(access)
		e.Uint32(deny)
		e.Uint64(h.clientID())
		e.String(owner)
		e.Uint32(nfs4.OpenNoCreate)
		e.Uint32(nfs4.ClaimNull)
		e.String(name)
	})
	if st != nfs4.OK {
		return st, nfs4.Stateid{}
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpOpen, nfs4.OK)
	return st, nfs4.DecodeStateid(d)
}

// writeAs sends PUTFH fh + WRITE of 4 bytes at off with sid as cr and
// returns the status.
func (h *harness) writeAs(cr testCred, fh []byte, sid nfs4.Stateid, off uint64) nfs4.Status {
	h.t.Helper()
	_, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpWrite)
		sid.Encode(e)
		e.Uint64(off)
		e.Uint32(nfs4.Unstable4)
		e.Opaque([]byte("abcd"))
	})
	return st
}

// setattrAs sends PUTFH fh + SETATTR with sid as cr, of size (when mode
// is negative) or of mode, and returns the status.
func (h *harness) setattrAs(cr testCred, fh []byte, sid nfs4.Stateid, size uint64, mode int) nfs4.Status {
	h.t.Helper()
	_, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpSetattr)
		sid.Encode(e)
		v := xdr.NewEncoder(8)
		if mode < 0 {
			nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
			v.Uint64(size)
		} else {
			nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
			v.Uint32(uint32(mode))
		}
		e.Opaque(v.AppendTo(nil))
	})
	return st
}

// truncateAs is setattrAs of size.
func (h *harness) truncateAs(cr testCred, fh []byte, sid nfs4.Stateid, size uint64) nfs4.Status {
	return h.setattrAs(cr, fh, sid, size, -1)
}

// TestSpecialStateidHonoursShareReservations: I/O with the anonymous
// stateid stands for no open, and every open's share reservation holds
// against it (RFC 8881 section 9.1.4.3; knfsd's check_special_stateids
// answers NFS4ERR_LOCKED): WRITE and SETATTR(size) under another
// client's DENY_WRITE, READ under DENY_READ. The bypass stateid may READ
// past DENY_READ, as in knfsd. Issue 21 finding 7.
func TestSpecialStateidHonoursShareReservations(t *testing.T) {
	h := newHarness(t)
	h.write("f", []byte("0123456789"))
	h.write("g", []byte("0123456789"))
	h.session()
	p := h.peer(0, "owner-2")
	p.session()
	root := h.rootFH()
	f, g := h.lookupFH("f"), h.lookupFH("g")
	if st, _ := p.openIn(asRoot, root, "f", "p", nfs4.ShareAccessRead, nfs4.ShareDenyWrite); st != nfs4.OK {
		t.Fatalf("peer OPEN f DENY_WRITE: %d", st)
	}
	if got := h.writeAs(asRoot, f, nfs4.AnonStateid, 0); got != nfs4.ErrLocked {
		t.Errorf("anonymous WRITE under DENY_WRITE: %d, want NFS4ERR_LOCKED", got)
	}
	if got := h.truncateAs(asRoot, f, nfs4.AnonStateid, 0); got != nfs4.ErrLocked {
		t.Errorf("anonymous SETATTR(size) under DENY_WRITE: %d, want NFS4ERR_LOCKED", got)
	}
	if got := h.readAs(asRoot, f, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.OK {
		t.Errorf("anonymous READ under DENY_WRITE: %d, want OK", got)
	}
	if st, _ := p.openIn(asRoot, root, "g", "p", nfs4.ShareAccessRead, nfs4.ShareDenyRead); st != nfs4.OK {
		t.Fatalf("peer OPEN g DENY_READ: %d", st)
	}
	for _, op := range []uint32{nfs4.OpRead, nfs4.OpReadPlus} {
		if got := h.readAs(asRoot, g, op, nfs4.AnonStateid); got != nfs4.ErrLocked {
			t.Errorf("anonymous op %d under DENY_READ: %d, want NFS4ERR_LOCKED", op, got)
		}
		if got := h.readAs(asRoot, g, op, nfs4.BypassStateid); got != nfs4.OK {
			t.Errorf("bypass op %d under DENY_READ: %d, want OK", op, got)
		}
	}
	if got := h.writeAs(asRoot, g, nfs4.AnonStateid, 0); got != nfs4.OK {
		t.Errorf("anonymous WRITE under DENY_READ: %d, want OK", got)
	}
	if data, _ := os.ReadFile(filepath.Join(h.dir, "f")); string(data) != "0123456789" {
		t.Errorf("f changed under DENY_WRITE: %q", data)
	}
}

// newTwoExports returns a harness whose server exports dir as "a" and
// dir/sub as "b": the files below sub are reached through both.
func newTwoExports(t *testing.T) *harness {
	t.Helper()
	var sub string
	h := newHarnessCfg(t, func(cfg *Config) {
		dir := cfg.Exports[0].Path
		sub = filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "f"), []byte("0123456789"), 0o666); err != nil {
			t.Fatal(err)
		}
		cfg.Exports = []Export{{Name: "a", Path: dir}, {Name: "b", Path: sub}}
		cfg.StateDir = t.TempDir()
	})
	h.session()
	return h
}

// TestShareReservationsAcrossExports: one file reached through two
// exports is one file: a DENY_BOTH or a lock taken through one holds
// through the other (knfsd keeps them on the inode's nfs4_file). Issue
// 21 finding 7.
func TestShareReservationsAcrossExports(t *testing.T) {
	h := newTwoExports(t)
	p := h.peer(0, "owner-2")
	p.session()
	dirA, dirB := h.pathFH("a/sub"), h.pathFH("b")
	fA, fB := h.pathFH("a/sub/f"), h.pathFH("b/f")
	st, sid := h.openIn(asRoot, dirA, "f", "h", nfs4.ShareAccessBoth, nfs4.ShareDenyBoth)
	if st != nfs4.OK {
		t.Fatalf("OPEN a/sub/f DENY_BOTH: %d", st)
	}
	if got, _ := p.openIn(asRoot, dirB, "f", "p", nfs4.ShareAccessRead, nfs4.ShareDenyNone); got != nfs4.ErrShareDenied {
		t.Errorf("peer OPEN b/f for READ under DENY_BOTH through a: %d, want NFS4ERR_SHARE_DENIED", got)
	}
	if got := p.readAs(asRoot, fB, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.ErrLocked {
		t.Errorf("anonymous READ of b/f under DENY_BOTH through a: %d, want NFS4ERR_LOCKED", got)
	}
	if got := p.writeAs(asRoot, fB, nfs4.AnonStateid, 0); got != nfs4.ErrLocked {
		t.Errorf("anonymous WRITE of b/f under DENY_BOTH through a: %d, want NFS4ERR_LOCKED", got)
	}
	// The same open owner of the same client, through the other export,
	// is the same open: it may open again with the access it holds, but
	// its own DENY_BOTH refuses it READ alone (knfsd's one stateid per
	// owner and file; RFC 7530 section 16.16.5).
	if got, _ := h.openIn(asRoot, dirB, "f", "h", nfs4.ShareAccessBoth, nfs4.ShareDenyNone); got != nfs4.OK {
		t.Errorf("same owner OPEN b/f BOTH: %d, want OK", got)
	}
	if got, _ := h.openIn(asRoot, dirB, "f", "h", nfs4.ShareAccessRead, nfs4.ShareDenyNone); got != nfs4.ErrShareDenied {
		t.Errorf("same owner OPEN b/f READ: %d, want NFS4ERR_SHARE_DENIED", got)
	}

	// A lock taken through a stops a conflicting one tested through b.
	if st, _ := h.lock(fA, sid, nfs4.Stateid{}, 0, 10); st != nfs4.OK {
		t.Fatalf("LOCK a/sub/f: %d", st)
	}
	if got := p.locktReq(fB, "other", 0, 10); got != nfs4.ErrDenied {
		t.Errorf("peer LOCKT b/f under a lock through a: %d, want NFS4ERR_DENIED", got)
	}
	if got := p.locktReq(fB, "other", 10, 10); got != nfs4.OK {
		t.Errorf("peer LOCKT of a free range of b/f: %d, want OK", got)
	}

	// The state is per file: one entry while held, none once released.
	h.s.state.mu.Lock()
	files := len(h.s.state.files)
	h.s.state.mu.Unlock()
	if files != 1 {
		t.Errorf("%d files with state, want 1", files)
	}
}

// TestReusedInodeStartsWithoutState: a file made with the inode number of
// a removed one that clients still hold state on (a delegation not yet
// returned: nfsbench ior-easy --back-channel --repeat 3 recalled it with
// the removed file's handle, DELEGRETURN got NFS4ERR_STALE and the new
// file's OPENs NFS4ERR_DELAY until the retries ran out) gets a state of
// its own; two exports' nodes of one file still share theirs.
func TestReusedInodeStartsWithoutState(t *testing.T) {
	handle := func(export byte, kernel string) []byte {
		h := make([]byte, fhHeader-4, fhHeader-4+len(kernel)+fhMACLen)
		h[4] = export
		h = append(h, kernel...)
		return append(h, make([]byte, fhMACLen)...)
	}
	old := &node{dev: 7, ino: 42, handle: handle(1, "\x01\x00\x00\x00ino42gen1")}
	reused := &node{dev: 7, ino: 42, handle: handle(1, "\x01\x00\x00\x00ino42gen2")}
	otherExport := &node{dev: 7, ino: 42, handle: handle(2, "\x01\x00\x00\x00ino42gen1")}
	if old.fileID() == reused.fileID() {
		t.Fatal("a reused inode number names the removed file's state")
	}
	if old.fileID() != otherExport.fileID() {
		t.Fatal("one file through two exports has two states")
	}
	tb := &stateTable{files: map[fileID]*fileState{}}
	tb.fileLocked(old).delegs = append(tb.fileLocked(old).delegs, &openState{})
	if !tb.peekFileLocked(reused).empty() {
		t.Fatal("the new file inherits the removed file's delegation")
	}
	if held := tb.heldInodes(); !held[fileID{dev: 7, ino: 42}] {
		t.Fatal("heldInodes misses the removed file's state (its orphaned data files would go)")
	}
}
