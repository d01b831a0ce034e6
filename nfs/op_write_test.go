package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// create opens name for writing with OPEN4_CREATE in mode how and returns
// the status, stateid and handle.
func (h *harness) create(name string, how uint32, verf string) (nfs4.Status, nfs4.Stateid, []byte) {
	h.t.Helper()
	d, st, _ := h.compound(4, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessBoth)
		e.Uint32(nfs4.ShareDenyNone)
		e.Uint64(h.clientID())
		e.String("writer")
		e.Uint32(nfs4.OpenCreate)
		e.Uint32(how)
		switch how {
		case nfs4.CreateUnchecked, nfs4.CreateGuarded:
			nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
			e.Uint32(4)
			e.Uint32(0o640)
		case nfs4.CreateExclusive41:
			e.Fixed([]byte(verf))
			nfs4.Bitmap{}.Encode(e)
			e.Uint32(0)
		}
		e.Uint32(nfs4.ClaimNull)
		e.String(name)
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		return st, nfs4.Stateid{}, nil
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpOpen, nfs4.OK)
	sid := nfs4.DecodeStateid(d)
	d.Skip(4 + 8 + 8 + 4)
	nfs4.DecodeBitmap(d)
	d.Uint32()
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	return st, sid, bytes.Clone(d.Opaque(128))
}

// writeOp sends WRITE and returns status, count, committed and verifier.
func (h *harness) writeOp(fh []byte, sid nfs4.Stateid, off uint64, stable uint32, data []byte) (nfs4.Status, uint32, uint32, []byte) {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpWrite)
		sid.Encode(e)
		e.Uint64(off)
		e.Uint32(stable)
		e.Opaque(data)
	})
	if st != nfs4.OK {
		return st, 0, 0, nil
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpWrite, nfs4.OK)
	return st, d.Uint32(), d.Uint32(), bytes.Clone(d.Fixed(8))
}

func TestCreateWriteCommit(t *testing.T) {
	h := newHarness(t)
	h.session()
	st, sid, fh := h.create("new", nfs4.CreateGuarded, "")
	if st != nfs4.OK {
		t.Fatalf("GUARDED create: %d", st)
	}
	if st, _, _ := h.create("new", nfs4.CreateGuarded, ""); st != nfs4.ErrExist {
		t.Fatalf("second GUARDED create: %d", st)
	}
	fi, err := os.Stat(filepath.Join(h.dir, "new"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("created file: %v %v", fi.Mode(), err)
	}
	var verf []byte
	for i, stable := range []uint32{nfs4.Unstable4, nfs4.DataSync4, nfs4.FileSync4} {
		st, n, committed, v := h.writeOp(fh, sid, uint64(i*5), stable, []byte("abcde"))
		if st != nfs4.OK || n != 5 || committed != stable {
			t.Fatalf("WRITE stable=%d: status %d count %d committed %d", stable, st, n, committed)
		}
		if verf != nil && !bytes.Equal(v, verf) {
			t.Fatal("write verifier changed within one server run")
		}
		verf = v
	}
	got, _ := os.ReadFile(filepath.Join(h.dir, "new"))
	if string(got) != "abcdeabcdeabcde" {
		t.Fatalf("file %q", got)
	}
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpCommit)
		e.Uint64(0)
		e.Uint32(0)
	})
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpCommit, nfs4.OK)
	if st != nfs4.OK || !bytes.Equal(d.Fixed(8), verf) {
		t.Fatal("COMMIT verifier differs from WRITE's")
	}
	// A restarted server has a new verifier: clients resend unstable data.
	s2, _ := NewServer(Config{Exports: []Export{{Path: h.dir}}})
	defer s2.Close()
	h.s = s2
	h.session()
	_, _, _, v2 := h.writeOp(fh, nfs4.AnonStateid, 0, nfs4.Unstable4, []byte("x"))
	if bytes.Equal(v2, verf) {
		t.Fatal("verifier unchanged across restart")
	}
}

func TestExclusiveCreateRetry(t *testing.T) {
	h := newHarness(t)
	h.session()
	if st, _, _ := h.create("x", nfs4.CreateExclusive41, "verf0001"); st != nfs4.OK {
		t.Fatalf("EXCLUSIVE4_1: %d", st)
	}
	if st, _, _ := h.create("x", nfs4.CreateExclusive41, "verf0001"); st != nfs4.OK {
		t.Fatalf("retransmitted EXCLUSIVE4_1: %d", st)
	}
	if st, _, _ := h.create("x", nfs4.CreateExclusive41, "verf0002"); st != nfs4.ErrExist {
		t.Fatalf("EXCLUSIVE4_1 with another verifier: %d", st)
	}
}

func TestReadOnlyOpenCannotWrite(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("data"))
	sid, _ := h.open("f", nfs4.ShareDenyNone)
	if st, _, _, _ := h.writeOp(h.lookupFH("f"), sid, 0, nfs4.Unstable4, []byte("x")); st != nfs4.ErrOpenmode {
		t.Fatalf("WRITE with a read-only open: %d", st)
	}
	// The bypass stateid writes as the anonymous one (RFC 8881 section
	// 8.2.3; pynfs WRT2): no open of the file denies writing.
	if st, _, _, _ := h.writeOp(h.lookupFH("f"), nfs4.BypassStateid, 0, nfs4.Unstable4, []byte("x")); st != nfs4.OK {
		t.Fatalf("WRITE with the bypass stateid: %d", st)
	}
}

// ops sends SEQUENCE plus the given ops and returns the COMPOUND status.
func (h *harness) ops(n int, build func(e *xdr.Encoder)) (*xdr.Decoder, nfs4.Status) {
	h.t.Helper()
	d, st, _ := h.compound(n+1, func(e *xdr.Encoder) {
		h.sequence(e)
		build(e)
	})
	return d, st
}

func TestNamespaceChanges(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("content"))
	mkdir := func(name string) nfs4.Status {
		_, st := h.ops(2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpCreate)
			e.Uint32(nfs4.NF4DIR)
			e.String(name)
			nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
			e.Uint32(4)
			e.Uint32(0o750)
		})
		return st
	}
	if st := mkdir("d"); st != nfs4.OK {
		t.Fatalf("mkdir: %d", st)
	}
	if st := mkdir("d"); st != nfs4.ErrExist {
		t.Fatalf("mkdir again: %d", st)
	}
	_, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpCreate)
		e.Uint32(nfs4.NF4LNK)
		e.String("f")
		e.String("sym")
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
	})
	if target, _ := os.Readlink(filepath.Join(h.dir, "sym")); st != nfs4.OK || target != "f" {
		t.Fatalf("symlink: %d %q", st, target)
	}
	fh := h.lookupFH("f")
	// RENAME f -> d/g, then LINK d/g as h, then REMOVE h.
	_, st = h.ops(5, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpSavefh)
		e.Uint32(nfs4.OpLookup)
		e.String("d")
		e.Uint32(nfs4.OpRename)
		e.String("f")
		e.String("g")
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		t.Fatalf("rename: %d", st)
	}
	// The old handle follows the file to its new name.
	if got := h.readWith(fh, nfs4.AnonStateid); got != nfs4.OK {
		t.Fatalf("READ through the handle after rename: %d", got)
	}
	_, st = h.ops(4, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpSavefh)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLink)
		e.String("h")
	})
	var sb unix.Stat_t
	unix.Stat(filepath.Join(h.dir, "h"), &sb)
	if st != nfs4.OK || sb.Nlink != 2 {
		t.Fatalf("link: %d nlink %d", st, sb.Nlink)
	}
	_, st = h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpRemove)
		e.String("h")
	})
	if _, err := os.Stat(filepath.Join(h.dir, "h")); st != nfs4.OK || err == nil {
		t.Fatalf("remove: %d %v", st, err)
	}
	_, st = h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpRemove)
		e.String("d")
	})
	if st != nfs4.ErrNotempty {
		t.Fatalf("remove of a non-empty dir: %d", st)
	}
}

func TestSetattr(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", bytes.Repeat([]byte("x"), 100))
	fh := h.lookupFH("f")
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpSetattr)
		nfs4.AnonStateid.Encode(e)
		nfs4.BitmapOf(nfs4.AttrSize, nfs4.AttrMode, nfs4.AttrTimeModifySet).Encode(e)
		e.Uint32(8 + 4 + 16)
		e.Uint64(10)
		e.Uint32(0o600)
		e.Uint32(nfs4.SetToClientTime)
		e.Int64(1000000000)
		e.Uint32(5)
	})
	if st != nfs4.OK {
		t.Fatalf("SETATTR: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpSetattr, nfs4.OK)
	if set := nfs4.DecodeBitmap(d); !set.Has(nfs4.AttrSize) || !set.Has(nfs4.AttrMode) || !set.Has(nfs4.AttrTimeModifySet) {
		t.Fatalf("attrsset %v", set)
	}
	var sb unix.Stat_t
	unix.Stat(filepath.Join(h.dir, "f"), &sb)
	if sb.Size != 10 || sb.Mode&0o777 != 0o600 || sb.Mtim.Sec != 1000000000 || sb.Mtim.Nsec != 5 {
		t.Fatalf("after SETATTR: size %d mode %o mtime %v", sb.Size, sb.Mode&0o777, sb.Mtim)
	}
	// An unsettable attribute is refused, with an empty attrsset.
	_, st = h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpSetattr)
		nfs4.AnonStateid.Encode(e)
		nfs4.BitmapOf(nfs4.AttrType).Encode(e)
		e.Uint32(4)
		e.Uint32(1)
	})
	if st != nfs4.ErrInval {
		t.Fatalf("SETATTR of type: %d", st)
	}
}

func TestLocks(t *testing.T) {
	h := newHarness(t)
	h.session()
	st, open, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	lock := func(typ uint32, off, n uint64, owner string, sid nfs4.Stateid, newOwner bool) (nfs4.Status, *xdr.Decoder) {
		d, st := h.ops(2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpLock)
			e.Uint32(typ)
			e.Bool(false)
			e.Uint64(off)
			e.Uint64(n)
			e.Bool(newOwner)
			if newOwner {
				e.Uint32(0)
				sid.Encode(e)
				e.Uint32(0)
				e.Uint64(h.clientID())
				e.String(owner)
			} else {
				sid.Encode(e)
				e.Uint32(0)
			}
		})
		return st, d
	}
	st, d := lock(writeLT, 0, 100, "A", open, true)
	if st != nfs4.OK {
		t.Fatalf("LOCK: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpLock, nfs4.OK)
	lockA := nfs4.DecodeStateid(d)
	st, d = lock(readLT, 50, 10, "B", open, true)
	if st != nfs4.ErrDenied {
		t.Fatalf("conflicting LOCK: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpLock, nfs4.ErrDenied)
	if off, n, typ := d.Uint64(), d.Uint64(), d.Uint32(); off != 0 || n != 100 || typ != writeLT {
		t.Fatalf("denied: %d %d %d", off, n, typ)
	}
	// Outside the range, B gets its lock.
	if st, _ := lock(readLT, 100, 10, "B", open, true); st != nfs4.OK {
		t.Fatalf("LOCK beside: %d", st)
	}
	// CLOSE with locks held is refused; LOCKU then frees the range.
	_, st = h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpLocku)
		e.Uint32(writeLT)
		e.Uint32(0)
		lockA.Encode(e)
		e.Uint64(0)
		e.Uint64(^uint64(0))
	})
	if st != nfs4.OK {
		t.Fatalf("LOCKU: %d", st)
	}
	if st, _ := lock(readLT, 50, 10, "B", open, true); st != nfs4.OK {
		t.Fatalf("LOCK after LOCKU: %d", st)
	}
}

func TestDeallocateMakesHole(t *testing.T) {
	h := newHarness(t)
	h.session()
	data := bytes.Repeat([]byte{9}, 1<<20)
	h.write("f", data)
	fh := h.lookupFH("f")
	_, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpDeallocate)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(256 << 10)
		e.Uint64(512 << 10)
	})
	if st != nfs4.OK {
		t.Fatalf("DEALLOCATE: %d", st)
	}
	copy(data[256<<10:768<<10], make([]byte, 512<<10))
	_, segs, got := h.readPlus(fh, 0, 1<<20)
	if !bytes.Equal(got, data) || len(segs) != 3 || !segs[1].hole {
		t.Fatalf("after DEALLOCATE: segs %v", segs)
	}
}

func TestCopy(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("src", []byte("0123456789"))
	_, _, dst := h.create("dst", nfs4.CreateUnchecked, "")
	src := h.lookupFH("src")
	d, st := h.ops(5, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(src)
		e.Uint32(nfs4.OpSavefh)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(dst)
		e.Uint32(nfs4.OpCopy)
		nfs4.AnonStateid.Encode(e)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(2)
		e.Uint64(0)
		e.Uint64(0) // to EOF
		e.Bool(true)
		e.Bool(true)
		e.Uint32(0)
		e.Uint32(nfs4.OpClone)
		nfs4.AnonStateid.Encode(e)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint64(0)
		e.Uint64(0)
	})
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpSavefh, nfs4.OK)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpCopy, nfs4.OK)
	d.Uint32()
	if n := d.Uint64(); n != 8 {
		t.Fatalf("COPY count %d", n)
	}
	got, _ := os.ReadFile(filepath.Join(h.dir, "dst"))
	if string(got) != "23456789" {
		t.Fatalf("copied %q", got)
	}
	// ext4 has no reflink: CLONE says NOTSUPP, not some I/O error.
	if st != nfs4.OK && st != nfs4.ErrNotsupp {
		t.Fatalf("CLONE: %d", st)
	}
}

// File.Dev gives the engine a file's device from the server's node, so
// that finding the filesystem's O_DIRECT alignment costs no fstat per
// WRITE; a File made by NewFile has none to give.
func TestFileDev(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("x"))
	h.lookupFH("f")
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(h.dir, "f"), &st); err != nil {
		t.Fatal(err)
	}
	if dev, ok := (File{FD: -1, node: h.nodeAt("f")}).Dev(); !ok || dev != st.Dev {
		t.Errorf("Dev() = %d, %v; want %d, true", dev, ok, st.Dev)
	}
	if _, ok := NewFile(-1, -1).Dev(); ok {
		t.Error("NewFile's Dev() ok")
	}
}
