package nfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func TestInline(t *testing.T) {
	h := newHarness(t)
	rec := func(build func(e *xdr.Encoder), nops int) []byte { return compoundRecord(nops, build) }
	read := rec(func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(make([]byte, 20))
		e.Uint32(nfs4.OpRead)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(4096)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
	}, 4)
	lookup := rec(func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("x")
	}, 3)
	if !h.s.Inline(read) {
		t.Error("SEQUENCE+PUTFH+READ+GETATTR not inline")
	}
	if h.s.Inline(lookup) {
		t.Error("LOOKUP inline")
	}
	if h.s.Inline(read[:len(read)-3]) || h.s.Inline(nil) || h.s.Inline([]byte{1, 2, 3}) {
		t.Error("truncated or garbage record inline")
	}
}

// A PUTFH of a handle the node table does not hold (it would be found
// with open_by_handle_at, which may wait on the disk) is not inline.
func TestInlineUnknownHandle(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("data"))
	fh := h.lookupFH("f")
	rec := func() []byte {
		e := xdr.NewEncoder(256)
		callHeader(e, 1, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
		e.String("")
		e.Uint32(2)
		e.Uint32(2)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpRead)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(4096)
		return e.AppendTo(nil)
	}
	if st := h.readWith(fh, nfs4.AnonStateid); st != nfs4.OK { // opens f's descriptor
		t.Fatalf("READ: %d", st)
	}
	if !h.s.Inline(rec()) {
		t.Fatal("PUTFH of a known handle + READ not inline")
	}
	h.s.files.drop(h.nodeAt("f"))
	if h.s.Inline(rec()) {
		t.Fatal("PUTFH of a handle the table forgot is inline")
	}
	if st := h.readWith(fh, nfs4.AnonStateid); st != nfs4.OK {
		t.Fatalf("READ through the forgotten handle: %d", st)
	}
	if !h.s.Inline(rec()) {
		t.Fatal("handle found again, still not inline")
	}
}

func TestWriteAlign(t *testing.T) {
	h := newHarness(t)
	e := xdr.NewEncoder(256)
	callHeader(e, 1, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
	e.String("")
	e.Uint32(2)
	e.Uint32(3)
	h.sequence(e)
	e.Uint32(nfs4.OpPutfh)
	e.Opaque(make([]byte, 24))
	e.Uint32(nfs4.OpWrite)
	nfs4.AnonStateid.Encode(e)
	e.Uint64(1 << 20)
	e.Uint32(nfs4.Unstable4)
	e.Uint32(8)
	at := e.Pos()
	e.Fixed([]byte("payload!"))
	rec := e.AppendTo(nil)
	off, fileOff, ok := WriteAlign(rec[:at])
	if !ok || off != at || fileOff != 1<<20 {
		t.Fatalf("WriteAlign = %d %d %v, want %d", off, fileOff, ok, at)
	}
	if _, _, ok := WriteAlign(rec[:at-6]); ok {
		t.Fatal("short head accepted")
	}
}

// CLOSE is the one modifying op that runs on the event loop: a COMPOUND
// of SEQUENCE, PUTFH and CLOSE is inline, and handled that way it closes
// the open once (the stateid is gone after it).
func TestInlineClose(t *testing.T) {
	h := newHarness(t)
	h.session()
	f := &openReq{name: "f", owner: "o", access: nfs4.ShareAccessRead}
	if st := h.openReq(f); st != nfs4.OK {
		t.Fatalf("OPEN: %d", st)
	}
	rec := compoundRecord(3, func(e *xdr.Encoder) {
		h.sequenceAt(e, h.seq+1)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(f.gotFH)
		e.Uint32(nfs4.OpClose)
		e.Uint32(0)
		f.gotStateid.Encode(e)
	})
	if !h.s.Inline(rec) {
		t.Fatal("SEQUENCE+PUTFH+CLOSE not inline")
	}
	if st := h.closeOpen(f.gotFH, f.gotStateid); st != nfs4.OK {
		t.Fatalf("CLOSE: %d", st)
	}
	if st := h.closeOpen(f.gotFH, f.gotStateid); st != nfs4.ErrBadStateid {
		t.Fatalf("second CLOSE: %d, want NFS4ERR_BAD_STATEID", st)
	}
}

// A LOOKUP right after the PUTFH of a known directory is inline when the
// dentry cache answers it: the directory's descriptor is open and the name
// resolves without the filesystem (or is malformed, refused without a
// system call). A second LOOKUP in the same COMPOUND, and a LOOKUP from
// the pseudo-filesystem root, go to a worker.
func TestInlineLookupCached(t *testing.T) {
	h := newHarness(t)
	h.session()
	if err := os.Mkdir(filepath.Join(h.dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("d/f", []byte("x"))
	dfh := h.lookupFH("d")
	rec := func(names ...string) []byte {
		return compoundRecord(4+len(names), func(e *xdr.Encoder) {
			h.sequenceAt(e, h.seq+1)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(dfh)
			for _, n := range names {
				e.Uint32(nfs4.OpLookup)
				e.String(n)
			}
			e.Uint32(nfs4.OpGetfh)
			e.Uint32(nfs4.OpGetattr)
			nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
		})
	}
	// A LOOKUP through a worker opens d's descriptor and caches d/f.
	if _, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(dfh)
		e.Uint32(nfs4.OpLookup)
		e.String("f")
	}); st != nfs4.OK {
		t.Fatalf("LOOKUP d/f: %d", st)
	}
	if !h.s.Inline(rec("f")) {
		t.Error("PUTFH d; LOOKUP f (cached) not inline")
	}
	if !h.s.Inline(rec("a/b")) {
		t.Error("LOOKUP of a malformed name not inline")
	}
	if h.s.Inline(rec("f", "g")) {
		t.Error("two LOOKUPs inline")
	}
}

// compoundRecord is an NFSv4.1 COMPOUND call record of nops operations
// (empty tag) whose operations build writes.
func compoundRecord(nops int, build func(e *xdr.Encoder)) []byte {
	e := xdr.NewEncoder(512)
	callHeader(e, 1, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
	e.String("")
	e.Uint32(2)
	e.Uint32(uint32(nops))
	build(e)
	return e.AppendTo(nil)
}

// A LOOKUP that runs on the event loop checks the caller's permission as
// on a worker: uid 1000 may not search "private" (0700, root's) even once
// root's own LOOKUP has put private/inner in the dentry cache and made the
// request inline.
func TestInlineLookupAsAnotherUser(t *testing.T) {
	h := permTree(t)
	if st := h.lookupAs(asRoot, "private", "inner"); st != nfs4.OK {
		t.Fatalf("root: LOOKUP private/inner: %d", st)
	}
	pfh := h.lookupFH("private")
	body := func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(pfh)
		e.Uint32(nfs4.OpLookup)
		e.String("inner")
	}
	e := xdr.NewEncoder(512)
	callHeaderCred(e, 99, as1000)
	e.String("tag")
	e.Uint32(2)
	e.Uint32(3)
	h.sequenceAt(e, h.seq+1)
	body(e)
	if !h.s.Inline(e.AppendTo(nil)) {
		t.Fatal("PUTFH private; LOOKUP inner (cached) not inline")
	}
	if _, st := h.opsAs(as1000, 2, body); st != nfs4.ErrAccess {
		t.Fatalf("uid 1000: LOOKUP inner in private: %d, want NFS4ERR_ACCESS", st)
	}
}

// An op that would open its file by path first (the node is known but the
// fd cache closed its descriptors, or it was never read) goes to a
// worker: the walk from the export root may wait on the disk. The
// worker's open is kept, and the next request is inline again. SAVEFH and
// RESTOREFH carry the node along.
func TestInlineNeedsOpenDescriptor(t *testing.T) {
	h := newHarness(t)
	h.session()
	if err := os.Mkdir(filepath.Join(h.dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("f", []byte("data"))
	ffh, dfh := h.lookupFH("f"), h.lookupFH("d")
	withFH := func(fh []byte, op uint32) []byte {
		return compoundRecord(3, func(e *xdr.Encoder) {
			h.sequenceAt(e, h.seq+1)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(op)
			switch op {
			case nfs4.OpGetattr:
				nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
			case nfs4.OpAccess:
				e.Uint32(nfs4.AccessRead)
			case nfs4.OpRead:
				nfs4.AnonStateid.Encode(e)
				e.Uint64(0)
				e.Uint32(4096)
			}
		})
	}
	restored := compoundRecord(6, func(e *xdr.Encoder) {
		h.sequenceAt(e, h.seq+1)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(ffh)
		e.Uint32(nfs4.OpSavefh)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpRestorefh)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
	})
	for _, rel := range []string{"f", "d"} {
		h.nodeAt(rel).tryClose()
	}
	for _, op := range []uint32{nfs4.OpGetattr, nfs4.OpAccess, nfs4.OpRead} {
		if h.s.Inline(withFH(ffh, op)) {
			t.Errorf("op %d of a file with no descriptor open is inline", op)
		}
	}
	if h.s.Inline(withFH(dfh, nfs4.OpGetattr)) {
		t.Error("GETATTR of a directory with no descriptor open is inline")
	}
	if h.s.Inline(restored) {
		t.Error("RESTOREFH of a file with no descriptor open, then GETATTR, is inline")
	}
	if !h.s.Inline(withFH(ffh, nfs4.OpGetfh)) {
		t.Error("GETFH (no open needed) not inline")
	}

	// A worker's READ and GETATTR open the descriptors and keep them.
	if st := h.readWith(ffh, nfs4.AnonStateid); st != nfs4.OK {
		t.Fatalf("READ: %d", st)
	}
	if st := h.opStatus(dfh, nfs4.OpGetattr, func(e *xdr.Encoder) { nfs4.BitmapOf(nfs4.AttrSize).Encode(e) }); st != nfs4.OK {
		t.Fatalf("GETATTR d: %d", st)
	}
	for _, op := range []uint32{nfs4.OpGetattr, nfs4.OpAccess, nfs4.OpRead} {
		if !h.s.Inline(withFH(ffh, op)) {
			t.Errorf("op %d of a file with its descriptor open not inline", op)
		}
	}
	if !h.s.Inline(withFH(dfh, nfs4.OpGetattr)) {
		t.Error("GETATTR of a directory with its descriptor open not inline")
	}
	if !h.s.Inline(restored) {
		t.Error("RESTOREFH of an open file, then GETATTR, not inline")
	}
}

// The ACL checks use a descriptor the node keeps open when it has one (no
// path walk on the event loop), else one of their own, closed after.
func TestAnyFD(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("data"))
	fh := h.lookupFH("f")
	n := h.nodeAt("f")
	n.tryClose()
	fd, done, err := n.anyFD()
	if err != nil {
		t.Fatal(err)
	}
	if n.hasOpenFD() {
		t.Error("anyFD of a node with no descriptor cached one")
	}
	done()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Ino == n.ino {
		t.Error("anyFD's own descriptor still open after done")
	}
	if st := h.readWith(fh, nfs4.AnonStateid); st != nfs4.OK {
		t.Fatalf("READ: %d", st)
	}
	read, _ := n.pub.read.get()
	fd, done, err = n.anyFD()
	if err != nil || fd != read {
		t.Fatalf("anyFD of an open node: fd %d, err %v; want its read descriptor %d", fd, err, read)
	}
	if n.pins.Load() != 1 {
		t.Errorf("pins while in use: %d, want 1", n.pins.Load())
	}
	done()
	if n.pins.Load() != 0 {
		t.Errorf("pins after done: %d, want 0", n.pins.Load())
	}
}
