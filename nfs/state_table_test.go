package nfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// open opens name in the root for reading and returns its stateid.
func (h *harness) open(name string, deny uint32) (nfs4.Stateid, nfs4.Status) {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessRead)
		e.Uint32(deny)
		e.Uint64(h.clientID())
		e.String("owner")
		e.Uint32(nfs4.OpenNoCreate)
		e.Uint32(nfs4.ClaimNull)
		e.String(name)
	})
	if st != nfs4.OK {
		return nfs4.Stateid{}, st
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpOpen, nfs4.OK)
	return nfs4.DecodeStateid(d), nfs4.OK
}

func (h *harness) clientID() uint64 {
	if h.clid != 0 {
		return h.clid
	}
	for _, c := range h.s.state.clients {
		return c.id
	}
	return 0
}

// readWith sends PUTFH+READ with sid and returns the READ status.
func (h *harness) readWith(fh []byte, sid nfs4.Stateid) nfs4.Status {
	_, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpRead)
		sid.Encode(e)
		e.Uint64(0)
		e.Uint32(10)
	})
	return st
}

func TestStateidValidation(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("hello"))
	h.write("g", []byte("other"))
	fh := h.lookupFH("f")
	sid, st := h.open("f", nfs4.ShareDenyNone)
	if st != nfs4.OK || sid.Seqid != 1 {
		t.Fatalf("open: %d %+v", st, sid)
	}
	again, _ := h.open("f", nfs4.ShareDenyNone)
	if again.Other != sid.Other || again.Seqid != 2 {
		t.Fatalf("reopen by the same owner: %+v", again)
	}
	stale := again
	stale.Other[0] ^= 0xff
	bad := again
	bad.Other[11] ^= 0xff
	cases := []struct {
		name string
		sid  nfs4.Stateid
		want nfs4.Status
	}{
		{"current", again, nfs4.OK},
		{"seqid 0", nfs4.Stateid{Other: again.Other}, nfs4.OK},
		{"old", sid, nfs4.ErrOldStateid},
		{"future", nfs4.Stateid{Seqid: 9, Other: again.Other}, nfs4.ErrBadStateid},
		{"stale", stale, nfs4.ErrStaleStateid},
		{"bad", bad, nfs4.ErrBadStateid},
		{"anonymous", nfs4.AnonStateid, nfs4.OK},
		{"bypass", nfs4.BypassStateid, nfs4.OK},
	}
	for _, tc := range cases {
		if got := h.readWith(fh, tc.sid); got != tc.want {
			t.Errorf("%s: READ status %d, want %d", tc.name, got, tc.want)
		}
	}
	// A stateid for one file does not read another.
	if got := h.readWith(h.lookupFH("g"), again); got != nfs4.ErrBadStateid {
		t.Errorf("other file: %d", got)
	}
	// Share reservations: another owner denying reads conflicts.
	if _, st := h.openAs("f", "owner2", nfs4.ShareDenyRead); st != nfs4.ErrShareDenied {
		t.Errorf("deny-read open over a reader: %d", st)
	}
	// CLOSE, then the stateid is gone.
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpClose)
		e.Uint32(0)
		again.Encode(e)
	})
	skipSequence(t, d)
	if st != nfs4.OK {
		t.Fatalf("close: %d", st)
	}
	if got := h.readWith(fh, again); got != nfs4.ErrBadStateid {
		t.Errorf("after close: %d", got)
	}
}

func (h *harness) openAs(name, owner string, deny uint32) (nfs4.Stateid, nfs4.Status) {
	_, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessRead)
		e.Uint32(deny)
		e.Uint64(h.clientID())
		e.String(owner)
		e.Uint32(nfs4.OpenNoCreate)
		e.Uint32(nfs4.ClaimNull)
		e.String(name)
	})
	return nfs4.Stateid{}, st
}

func TestHandlesSurviveRestart(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("persistent"))
	fh := h.lookupFH("f")
	s2, err := NewServer(Config{Exports: []Export{{Path: h.dir}}, StateDir: h.state})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	h.s = s2
	h.session()
	if got := h.readWith(fh, nfs4.AnonStateid); got != nfs4.OK {
		t.Fatalf("READ with a handle from before the restart: %d", got)
	}
	// Another state directory means another handle key: the old handle
	// is refused before any filesystem work.
	s3, err := NewServer(Config{Exports: []Export{{Path: h.dir}}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	h.s = s3
	h.session()
	if got := h.readWith(fh, nfs4.AnonStateid); got != nfs4.ErrBadhandle {
		t.Fatalf("READ with a handle signed by another key: %d, want BADHANDLE", got)
	}
}

func TestLeaseExpiry(t *testing.T) {
	h := newHarness(t)
	h.session()
	if len(h.s.state.clients) != 1 {
		t.Fatal("no client")
	}
	h.s.state.expire(time.Now().Add(time.Hour))
	if len(h.s.state.clients) != 0 || h.s.state.sessions.len() != 0 {
		t.Fatal("expired client kept")
	}
	_, st, _ := h.compound(1, func(e *xdr.Encoder) { h.sequence(e) })
	if st != nfs4.ErrBadsession {
		t.Fatalf("SEQUENCE after expiry: %d", st)
	}
}

func TestReaddirPaging(t *testing.T) {
	h := newHarness(t)
	h.session()
	want := map[string]bool{}
	for i := 0; i < 300; i++ {
		name := "file-" + itoa(i)
		h.write(name, nil)
		want[name] = true
	}
	cookie := uint64(0)
	seen := map[string]bool{}
	for calls := 0; ; calls++ {
		if calls > 100 {
			t.Fatal("READDIR never reached eof")
		}
		d, st, _ := h.compound(3, func(e *xdr.Encoder) {
			h.sequence(e)
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpReaddir)
			e.Uint64(cookie)
			e.Uint64(0)
			e.Uint32(512)
			e.Uint32(2048)
			nfs4.BitmapOf(nfs4.AttrType, nfs4.AttrFileid).Encode(e)
		})
		if st != nfs4.OK {
			t.Fatalf("READDIR: %d", st)
		}
		skipSequence(t, d)
		opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
		opResult(t, d, nfs4.OpReaddir, nfs4.OK)
		start := d.Remaining()
		d.Uint64()
		for d.Bool() {
			cookie = d.Uint64()
			name := string(d.Opaque(255))
			if seen[name] {
				t.Fatalf("%s listed twice", name)
			}
			seen[name] = true
			nfs4.DecodeBitmap(d)
			d.Opaque(1024)
		}
		eof := d.Bool()
		if used := start - d.Remaining(); used > 2048 {
			t.Fatalf("reply of %d bytes over maxcount", used)
		}
		if eof {
			break
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("listed %d of %d", len(seen), len(want))
	}
	// maxcount too small for one entry.
	_, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpReaddir)
		e.Uint64(0)
		e.Uint64(0)
		e.Uint32(10)
		e.Uint32(20)
		nfs4.BitmapOf(nfs4.AttrType).Encode(e)
	})
	if st != nfs4.ErrToosmall {
		t.Fatalf("tiny maxcount: %d", st)
	}
}

func TestPseudoRoot(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	s, err := NewServer(Config{Exports: []Export{{Name: "a", Path: a}, {Name: "b", Path: b}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := &harness{t: t, s: s, conn: NewConn("t"), dir: b}
	h.session()
	if err := os.Mkdir(filepath.Join(b, "in-b"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, st, _ := h.compound(6, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("b")
		e.Uint32(nfs4.OpLookup)
		e.String("in-b")
		e.Uint32(nfs4.OpLookupp)
		e.Uint32(nfs4.OpLookupp)
	})
	if st != nfs4.OK {
		t.Fatalf("walk through the pseudo-root: %d", st)
	}
	skipSequence(t, d)
	if _, err := NewServer(Config{Exports: []Export{{Name: "x", Path: a}, {Name: "x", Path: b}}}); err == nil {
		t.Fatal("duplicate export names accepted")
	}
}
