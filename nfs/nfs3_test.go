package nfs

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// call3 sends a call of program prog version vers, procedure proc, whose
// arguments build writes, as uid h.uid, and returns a decoder at the
// result body (after the accepted header, which must say SUCCESS).
func (h *harness) call3(prog, vers, proc uint32, build func(e *xdr.Encoder)) *xdr.Decoder {
	h.t.Helper()
	h.xid++
	e := xdr.NewEncoder(256)
	callHeaderAs(e, h.xid, prog, vers, proc, h.uid)
	if build != nil {
		build(e)
	}
	d := xdr.NewDecoder(h.record(e.AppendTo(nil)))
	h.acceptedHeader(d, h.xid, nfs4.AcceptSuccess)
	return d
}

// nfs3 sends an NFSv3 call and returns its nfsstat3 and the rest.
func (h *harness) nfs3(proc uint32, build func(e *xdr.Encoder)) (uint32, *xdr.Decoder) {
	h.t.Helper()
	d := h.call3(nfs4.ProgramNFS, 3, proc, build)
	return d.Uint32(), d
}

// mount3 mounts p with MOUNT v3 and returns the handle.
func (h *harness) mount3(p string) (uint32, []byte) {
	h.t.Helper()
	d := h.call3(progMount, 3, mountMnt, func(e *xdr.Encoder) { e.String(p) })
	st := d.Uint32()
	if st != mnt3OK {
		return st, nil
	}
	fh := bytes.Clone(d.Opaque(64))
	if n := d.Uint32(); n != 2 || d.Uint32() != nfs4.AuthSys || d.Uint32() != nfs4.AuthNone {
		h.t.Fatalf("MNT flavors: %d", n)
	}
	return st, fh
}

// fattr3 reads a fattr3 and returns type, mode, size and fileid.
type fattr3 struct {
	typ, mode, nlink, uid, gid uint32
	size, fileid               uint64
	ctime                      [2]uint32
}

func readFattr3(d *xdr.Decoder) fattr3 {
	var a fattr3
	a.typ, a.mode, a.nlink, a.uid, a.gid = d.Uint32(), d.Uint32(), d.Uint32(), d.Uint32(), d.Uint32()
	a.size = d.Uint64()
	d.Uint64()            // used
	d.Uint32()            // rdev
	d.Uint32()            //
	d.Uint64()            // fsid
	a.fileid = d.Uint64() //
	d.Uint64()            // atime
	d.Uint64()            // mtime
	a.ctime = [2]uint32{d.Uint32(), d.Uint32()}
	return a
}

func postOp3(t *testing.T, d *xdr.Decoder) (fattr3, bool) {
	t.Helper()
	if !d.Bool() {
		return fattr3{}, false
	}
	return readFattr3(d), true
}

func skipWcc(d *xdr.Decoder) {
	if d.Bool() {
		d.Uint64()
		d.Uint64()
		d.Uint64()
	}
	if d.Bool() {
		readFattr3(d)
	}
}

func (h *harness) lookup3(dir []byte, name string) (uint32, []byte, fattr3) {
	h.t.Helper()
	st, d := h.nfs3(nfs3Lookup, func(e *xdr.Encoder) { e.Opaque(dir); e.String(name) })
	if st != nfs3OK {
		return st, nil, fattr3{}
	}
	fh := bytes.Clone(d.Opaque(64))
	a, _ := postOp3(h.t, d)
	postOp3(h.t, d)
	if d.Err() != nil {
		h.t.Fatal(d.Err())
	}
	return st, fh, a
}

// created3 reads a CREATE/MKDIR/SYMLINK/MKNOD result.
func created3(t *testing.T, st uint32, d *xdr.Decoder) []byte {
	t.Helper()
	if st != nfs3OK {
		t.Fatalf("create: status %d", st)
	}
	if !d.Bool() {
		t.Fatal("no handle")
	}
	fh := bytes.Clone(d.Opaque(64))
	postOp3(t, d)
	skipWcc(d)
	if d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("create result: %v, %d bytes left", d.Err(), d.Remaining())
	}
	return fh
}

func noSattr(e *xdr.Encoder) {
	for range 4 {
		e.Bool(false)
	}
	e.Uint32(dontChange)
	e.Uint32(dontChange)
}

func modeSattr(e *xdr.Encoder, mode uint32) {
	e.Bool(true)
	e.Uint32(mode)
	for range 3 {
		e.Bool(false)
	}
	e.Uint32(dontChange)
	e.Uint32(dontChange)
}

func TestMountMnt(t *testing.T) {
	h := newHarness(t)
	st, fh := h.mount3("/")
	if st != mnt3OK {
		t.Fatalf("MNT /: %d", st)
	}
	if st, fh2 := h.mount3(h.dir); st != mnt3OK || !bytes.Equal(fh, fh2) {
		t.Fatalf("MNT %s: %d, same handle %v", h.dir, st, bytes.Equal(fh, fh2))
	}
	h.session()
	d, s, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpGetfh)
	})
	if s != nfs4.OK {
		t.Fatal(s)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpGetfh, nfs4.OK)
	if v4 := d.Opaque(128); !bytes.Equal(v4, fh) {
		t.Fatalf("MOUNT's root handle differs from NFSv4's")
	}
	if st, _ := h.mount3("/nonexistent"); st != mnt3ErrNoent {
		t.Fatalf("MNT of a missing directory: %d", st)
	}
	os.Mkdir(filepath.Join(h.dir, "sub"), 0o755)
	h.write("file", []byte("x"))
	if st, sub := h.mount3(filepath.Join(h.dir, "sub")); st != mnt3OK || bytes.Equal(sub, fh) {
		t.Fatalf("MNT of a subdirectory: %d", st)
	}
	if st, _ := h.mount3(filepath.Join(h.dir, "file")); st != mnt3ErrNotdir {
		t.Fatalf("MNT of a file: %d", st)
	}
	if st, _ := h.mount3(filepath.Join(h.dir, "../..")); st != mnt3ErrNoent && st != mnt3ErrAcces {
		t.Fatalf("MNT above the export: %d", st)
	}
	// DUMP lists the mounts; UMNTALL forgets them.
	d = h.call3(progMount, 3, mountDump, nil)
	n := 0
	for d.Bool() {
		d.String(255)
		d.String(1024)
		n++
	}
	if n == 0 || d.Err() != nil {
		t.Fatalf("DUMP: %d entries, %v", n, d.Err())
	}
	h.call3(progMount, 3, mountUmntall, nil)
	if d = h.call3(progMount, 3, mountDump, nil); d.Bool() {
		t.Fatal("DUMP after UMNTALL not empty")
	}
	d = h.call3(progMount, 3, mountExport, nil)
	if !d.Bool() || d.Err() != nil {
		t.Fatal("EXPORT lists nothing")
	}
	if name := d.String(1024); len(name) == 0 {
		t.Fatal("EXPORT: empty name")
	}
	// Other versions of MOUNT: PROG_MISMATCH 3..3.
	h.xid++
	e := xdr.NewEncoder(64)
	callHeader(e, h.xid, progMount, 1, mountNull)
	d = xdr.NewDecoder(h.record(e.AppendTo(nil)))
	h.acceptedHeader(d, h.xid, nfs4.AcceptProgMismatch)
	if lo, hi := d.Uint32(), d.Uint32(); lo != 3 || hi != 3 {
		t.Fatalf("mismatch %d..%d", lo, hi)
	}
}

func TestMountClientRules(t *testing.T) {
	h := newHarnessCfg(t, func(c *Config) {
		o := ShorthandOptions()
		c.Exports[0].Clients = []ClientRule{{Spec: "10.0.0.0/8", Options: o}}
	})
	h.conn = NewConn("192.0.2.1:700")
	if st, _ := h.mount3("/"); st != mnt3ErrAcces {
		t.Fatalf("MNT from a client no spec names: %d", st)
	}
	// The same client's forged use of a handle: NFS3ERR_ACCES.
	h2 := newHarness(t)
	_, fh := h2.mount3("/")
	h.conn = NewConn("192.0.2.1:700")
	if st, _ := h.nfs3(nfs3Getattr, func(e *xdr.Encoder) { e.Opaque(fh) }); st != nfs3ErrStale && st != nfs3ErrBadhdl {
		t.Fatalf("another server's handle: %d", st)
	}
}

func TestNFS3Procedures(t *testing.T) {
	h := newHarness(t)
	_, root := h.mount3("/")
	h.write("hello", []byte("hello, world"))

	// GETATTR, LOOKUP, ACCESS.
	st, d := h.nfs3(nfs3Getattr, func(e *xdr.Encoder) { e.Opaque(root) })
	if a := readFattr3(d); st != nfs3OK || a.typ != nfs4.NF4DIR {
		t.Fatalf("GETATTR root: %d %+v", st, a)
	}
	st, fh, a := h.lookup3(root, "hello")
	if st != nfs3OK || a.size != 12 || a.typ != nfs4.NF4REG {
		t.Fatalf("LOOKUP hello: %d %+v", st, a)
	}
	if st, _, _ := h.lookup3(root, "missing"); st != nfs3ErrNoent {
		t.Fatalf("LOOKUP missing: %d", st)
	}
	if st, dot, _ := h.lookup3(root, ".."); st != nfs3OK || !bytes.Equal(dot, root) {
		t.Fatalf("LOOKUP .. of the root: %d", st)
	}
	st, d = h.nfs3(nfs3Access, func(e *xdr.Encoder) { e.Opaque(fh); e.Uint32(0x3f) })
	postOp3(t, d)
	if got := d.Uint32(); st != nfs3OK || got&nfs4.AccessRead == 0 || got&nfs4.AccessModify == 0 {
		t.Fatalf("ACCESS: %d %#x", st, got)
	}

	// READ: the data through the reply plan.
	st, d = h.nfs3(nfs3Read, func(e *xdr.Encoder) { e.Opaque(fh); e.Uint64(7); e.Uint32(100) })
	postOp3(t, d)
	if n, eof, data := d.Uint32(), d.Bool(), d.Opaque(100); st != nfs3OK || n != 5 || !eof || string(data) != "world" {
		t.Fatalf("READ: %d %d %v %q", st, n, eof, data)
	}
	if !h.lastReads {
		t.Fatal("READ's data was not left to the engine")
	}
	// The file is open now: the next READ may run on an event loop.
	h.nfs3(nfs3Read, func(e *xdr.Encoder) { e.Opaque(fh); e.Uint64(0); e.Uint32(1) })
	if !h.inlineSaid {
		t.Fatal("READ of an open file not inline")
	}
	h.nfs3(nfs3Lookup, func(e *xdr.Encoder) { e.Opaque(root); e.String("hello") })
	if h.inlineSaid {
		t.Fatal("LOOKUP inline")
	}

	// WRITE (unstable), COMMIT: the verifier is NFSv4's.
	st, d = h.nfs3(nfs3Write, func(e *xdr.Encoder) {
		e.Opaque(fh)
		e.Uint64(0)
		e.Uint32(5)
		e.Uint32(nfs4.Unstable4)
		e.Opaque([]byte("HELLO"))
	})
	skipWcc(d)
	if n, how, verf := d.Uint32(), d.Uint32(), d.Fixed(8); st != nfs3OK || n != 5 || how != nfs4.Unstable4 || !bytes.Equal(verf, h.s.bootVer[:]) {
		t.Fatalf("WRITE: %d %d %d", st, n, how)
	}
	st, d = h.nfs3(nfs3Commit, func(e *xdr.Encoder) { e.Opaque(fh); e.Uint64(0); e.Uint32(0) })
	skipWcc(d)
	if verf := d.Fixed(8); st != nfs3OK || !bytes.Equal(verf, h.s.bootVer[:]) {
		t.Fatalf("COMMIT: %d", st)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "hello")); string(b) != "HELLO, world" {
		t.Fatalf("file after WRITE: %q", b)
	}

	// SETATTR: size, then a guard that does not match.
	st, d = h.nfs3(nfs3Setattr, func(e *xdr.Encoder) {
		e.Opaque(fh)
		e.Bool(false)
		e.Bool(false)
		e.Bool(false)
		e.Bool(true)
		e.Uint64(3)
		e.Uint32(dontChange)
		e.Uint32(setToServerTime)
		e.Bool(false)
	})
	if st != nfs3OK {
		t.Fatalf("SETATTR size: %d", st)
	}
	if fi, _ := os.Stat(filepath.Join(h.dir, "hello")); fi.Size() != 3 {
		t.Fatalf("size after SETATTR: %d", fi.Size())
	}
	st, _ = h.nfs3(nfs3Setattr, func(e *xdr.Encoder) {
		e.Opaque(fh)
		modeSattr(e, 0o600)
		e.Bool(true)
		e.Uint32(1)
		e.Uint32(2)
	})
	if st != nfs3ErrNotSync {
		t.Fatalf("SETATTR with a stale guard: %d", st)
	}

	// CREATE (guarded, exclusive), MKDIR, SYMLINK, READLINK, MKNOD.
	st, d = h.nfs3(nfs3Create, func(e *xdr.Encoder) {
		e.Opaque(root)
		e.String("new")
		e.Uint32(nfs3CreateGuarded)
		modeSattr(e, 0o640)
	})
	nfh := created3(t, st, d)
	if fi, err := os.Stat(filepath.Join(h.dir, "new")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("created file: %v %v", fi, err)
	}
	if st, _ = h.nfs3(nfs3Create, func(e *xdr.Encoder) {
		e.Opaque(root)
		e.String("new")
		e.Uint32(nfs3CreateGuarded)
		noSattr(e)
	}); st != nfs3ErrExist {
		t.Fatalf("GUARDED CREATE of an existing file: %d", st)
	}
	excl := func() (uint32, *xdr.Decoder) {
		return h.nfs3(nfs3Create, func(e *xdr.Encoder) {
			e.Opaque(root)
			e.String("excl")
			e.Uint32(nfs3CreateExcl)
			e.Fixed([]byte("verifier"))
		})
	}
	st, d = excl()
	xfh := created3(t, st, d)
	st, d = excl() // a retransmit
	if again := created3(t, st, d); !bytes.Equal(again, xfh) {
		t.Fatal("EXCLUSIVE CREATE retransmit: another handle")
	}
	st, d = h.nfs3(nfs3Mkdir, func(e *xdr.Encoder) { e.Opaque(root); e.String("dir"); modeSattr(e, 0o750) })
	dfh := created3(t, st, d)
	st, d = h.nfs3(nfs3Symlink, func(e *xdr.Encoder) {
		e.Opaque(dfh)
		e.String("link")
		noSattr(e)
		e.String("../hello")
	})
	lfh := created3(t, st, d)
	st, d = h.nfs3(nfs3Readlink, func(e *xdr.Encoder) { e.Opaque(lfh) })
	postOp3(t, d)
	if target := d.String(1024); st != nfs3OK || string(target) != "../hello" {
		t.Fatalf("READLINK: %d %q", st, target)
	}
	st, d = h.nfs3(nfs3Mknod, func(e *xdr.Encoder) {
		e.Opaque(dfh)
		e.String("fifo")
		e.Uint32(nfs4.NF4FIFO)
		noSattr(e)
	})
	created3(t, st, d)
	if st, _ = h.nfs3(nfs3Mknod, func(e *xdr.Encoder) {
		e.Opaque(dfh)
		e.String("reg")
		e.Uint32(nfs4.NF4REG)
	}); st != nfs3ErrBadtype {
		t.Fatalf("MKNOD of a regular file: %d", st)
	}

	// READ of a directory, and of a FIFO (never opened).
	_, ffh, _ := h.lookup3(dfh, "fifo")
	for _, x := range [][]byte{dfh, ffh} {
		st, _ = h.nfs3(nfs3Read, func(e *xdr.Encoder) { e.Opaque(x); e.Uint64(0); e.Uint32(10) })
		if st == nfs3OK {
			t.Fatalf("READ of a non-file: OK")
		}
	}

	// LINK, RENAME, REMOVE, RMDIR.
	st, d = h.nfs3(nfs3Link, func(e *xdr.Encoder) { e.Opaque(nfh); e.Opaque(dfh); e.String("hard") })
	if postOp3(t, d); st != nfs3OK {
		t.Fatalf("LINK: %d", st)
	}
	st, d = h.nfs3(nfs3Rename, func(e *xdr.Encoder) {
		e.Opaque(root)
		e.String("new")
		e.Opaque(dfh)
		e.String("moved")
	})
	skipWcc(d)
	skipWcc(d)
	if st != nfs3OK || d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("RENAME: %d", st)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "dir", "moved")); err != nil {
		t.Fatal(err)
	}
	if st, _ = h.nfs3(nfs3Remove, func(e *xdr.Encoder) { e.Opaque(root); e.String("dir") }); st != nfs3ErrIsdir {
		t.Fatalf("REMOVE of a directory: %d", st)
	}
	if st, _ = h.nfs3(nfs3Rmdir, func(e *xdr.Encoder) { e.Opaque(root); e.String("hello") }); st != nfs3ErrNotdir {
		t.Fatalf("RMDIR of a file: %d", st)
	}
	if st, _ = h.nfs3(nfs3Rmdir, func(e *xdr.Encoder) { e.Opaque(root); e.String("dir") }); st != 66 {
		t.Fatalf("RMDIR of a full directory: %d", st)
	}
	for _, n := range []string{"moved", "hard", "link", "fifo"} {
		if st, _ = h.nfs3(nfs3Remove, func(e *xdr.Encoder) { e.Opaque(dfh); e.String(n) }); st != nfs3OK {
			t.Fatalf("REMOVE %s: %d", n, st)
		}
	}
	if st, _ = h.nfs3(nfs3Rmdir, func(e *xdr.Encoder) { e.Opaque(root); e.String("dir") }); st != nfs3OK {
		t.Fatalf("RMDIR: %d", st)
	}

	// READDIR and READDIRPLUS, in pages.
	for i := range 50 {
		h.write("f"+string(rune('a'+i%26))+string(rune('a'+i/26)), nil)
	}
	want := map[string]bool{}
	ents, _ := os.ReadDir(h.dir)
	for _, e := range ents {
		want[e.Name()] = true
	}
	for _, plus := range []bool{false, true} {
		got := map[string]bool{}
		cookie := uint64(0)
		for round := 0; ; round++ {
			proc := uint32(nfs3Readdir)
			if plus {
				proc = nfs3Readdirplus
			}
			st, d = h.nfs3(proc, func(e *xdr.Encoder) {
				e.Opaque(root)
				e.Uint64(cookie)
				e.Fixed(make([]byte, 8))
				e.Uint32(600)
				if plus {
					e.Uint32(1200)
				}
			})
			if st != nfs3OK {
				t.Fatalf("READDIR plus=%v: %d", plus, st)
			}
			postOp3(t, d)
			d.Fixed(8)
			for d.Bool() {
				ino := d.Uint64()
				name := string(d.String(255))
				cookie = d.Uint64()
				if plus {
					a, ok := postOp3(t, d)
					if !ok || a.fileid != ino {
						t.Fatalf("READDIRPLUS %s: attrs %v fileid %d vs %d", name, ok, a.fileid, ino)
					}
					if !d.Bool() {
						t.Fatalf("READDIRPLUS %s: no handle", name)
					}
					if efh := d.Opaque(64); name == "excl" && !bytes.Equal(efh, xfh) {
						t.Fatal("READDIRPLUS handle differs from LOOKUP's")
					}
				}
				got[name] = true
			}
			eof := d.Bool()
			if d.Err() != nil {
				t.Fatal(d.Err())
			}
			if eof {
				break
			}
			if round > 100 {
				t.Fatal("READDIR does not end")
			}
		}
		if len(got) != len(want) {
			t.Fatalf("READDIR plus=%v: %d entries, want %d", plus, len(got), len(want))
		}
	}

	// FSSTAT, FSINFO, PATHCONF.
	for _, p := range []uint32{nfs3Fsstat, nfs3Fsinfo, nfs3Pathconf} {
		st, d = h.nfs3(p, func(e *xdr.Encoder) { e.Opaque(root) })
		if _, ok := postOp3(t, d); st != nfs3OK || !ok {
			t.Fatalf("proc %d: %d", p, st)
		}
	}
	if st, _ = h.nfs3(nfs3Null, nil); st != 0 {
		t.Fatal("NULL")
	}
	// The counts the metrics see.
	var ok bool
	for _, p := range h.s.stats.ProcCounts() {
		if p.Prog == nfs4.ProgramNFS && p.Vers == 3 && p.Proc == nfs3Read && p.Status == "NFS3_OK" && p.N > 0 {
			ok = true
		}
	}
	if !ok {
		t.Fatalf("no READ counted: %v", h.s.stats.ProcCounts())
	}
}

// TestNFS3OneFile: a v3 and a v4 client see one file as one file: the same
// handle, usable by either.
func TestNFS3OneFile(t *testing.T) {
	h := newHarness(t)
	h.write("f", []byte("data"))
	h.session()
	v4 := h.lookupFH("f")
	_, root := h.mount3("/")
	_, v3, _ := h.lookup3(root, "f")
	if !bytes.Equal(v3, v4) {
		t.Fatal("v3 and v4 handles of one file differ")
	}
}

func TestNFS3Confinement(t *testing.T) {
	h := newHarness(t)
	_, root := h.mount3("/")
	h.write("f", []byte("data"))
	_, fh, _ := h.lookup3(root, "f")
	// A forged (bit-flipped) handle: refused before any filesystem work.
	bad := bytes.Clone(fh)
	bad[22] ^= 1
	if st, _ := h.nfs3(nfs3Getattr, func(e *xdr.Encoder) { e.Opaque(bad) }); st != nfs3ErrBadhdl {
		t.Fatalf("forged handle: %d", st)
	}
	// The pseudo-root's public handle is NFSv4's only.
	if st, _ := h.nfs3(nfs3Getattr, func(e *xdr.Encoder) { e.Opaque(pseudoHandle) }); st != nfs3ErrBadhdl {
		t.Fatalf("pseudo handle: %d", st)
	}
	// Names with a slash, and symlinks out of the export.
	if st, _, _ := h.lookup3(root, "../etc"); st != nfs3ErrInval {
		t.Fatalf("LOOKUP ../etc: %d", st)
	}
	if err := os.Symlink("/etc", filepath.Join(h.dir, "out")); err != nil {
		t.Fatal(err)
	}
	_, lfh, a := h.lookup3(root, "out")
	if a.typ != nfs4.NF4LNK {
		t.Fatalf("symlink seen as type %d", a.typ)
	}
	if st, _, _ := h.lookup3(lfh, "passwd"); st != nfs3ErrNotdir && st != nfs3ErrInval {
		t.Fatalf("LOOKUP through a symlink: %d", st)
	}
	if st, _ := h.nfs3(nfs3Read, func(e *xdr.Encoder) { e.Opaque(lfh); e.Uint64(0); e.Uint32(10) }); st == nfs3OK {
		t.Fatal("READ of a symlink out of the export: OK")
	}
	// A handle too long for v3: garbage.
	h.xid++
	e := xdr.NewEncoder(256)
	callHeader(e, h.xid, nfs4.ProgramNFS, 3, nfs3Getattr)
	e.Opaque(make([]byte, 65))
	d := xdr.NewDecoder(h.record(e.AppendTo(nil)))
	h.acceptedHeader(d, h.xid, nfs4.AcceptGarbageArgs)
}

func TestNFS3Permissions(t *testing.T) {
	if !canSwitch {
		t.Skip("needs root")
	}
	h := newHarnessCfg(t, func(c *Config) {
		o := ShorthandOptions()
		o.Squash = RootSquash
		ro := o
		ro.ReadOnly = true
		c.Exports = append(c.Exports, Export{Name: "ro", Path: t.TempDir(), Clients: []ClientRule{{Spec: "*", Any: true, Options: ro}}})
		c.Exports[0].Name = "rw"
		c.Exports[0].Clients = []ClientRule{{Spec: "*", Any: true, Options: o}}
	})
	os.Chmod(h.dir, 0o777)
	_, root := h.mount3("/rw")
	if root == nil {
		t.Fatal("MNT /rw")
	}
	// root is squashed: the file is nobody's.
	st, d := h.nfs3(nfs3Create, func(e *xdr.Encoder) {
		e.Opaque(root)
		e.String("sq")
		e.Uint32(nfs3CreateUncheck)
		noSattr(e)
	})
	created3(t, st, d)
	var sst unix.Stat_t
	if err := unix.Stat(filepath.Join(h.dir, "sq"), &sst); err != nil || sst.Uid != defaultAnonID {
		t.Fatalf("squashed create: uid %d %v", sst.Uid, err)
	}
	// A file only root may read: squashed root may not.
	h.write("secret", []byte("s"))
	os.Chmod(filepath.Join(h.dir, "secret"), 0o600)
	_, sfh, _ := h.lookup3(root, "secret")
	if st, _ := h.nfs3(nfs3Read, func(e *xdr.Encoder) { e.Opaque(sfh); e.Uint64(0); e.Uint32(1) }); st != nfs3ErrAcces {
		t.Fatalf("READ of root's file by squashed root: %d", st)
	}
	// uid 1000 may not write it either.
	h.uid = 1000
	st, _ = h.nfs3(nfs3Write, func(e *xdr.Encoder) {
		e.Opaque(sfh)
		e.Uint64(0)
		e.Uint32(1)
		e.Uint32(nfs4.FileSync4)
		e.Opaque([]byte("x"))
	})
	if st != nfs3ErrAcces {
		t.Fatalf("WRITE by another user: %d", st)
	}
	h.uid = 0
	// The read-only export: every change is NFS3ERR_ROFS.
	_, ro := h.mount3("/ro")
	if ro == nil {
		t.Fatal("MNT /ro")
	}
	if st, _ := h.nfs3(nfs3Mkdir, func(e *xdr.Encoder) { e.Opaque(ro); e.String("d"); noSattr(e) }); st != nfs3ErrRofs {
		t.Fatalf("MKDIR in a read-only export: %d", st)
	}
	if st, _ := h.nfs3(nfs3Create, func(e *xdr.Encoder) {
		e.Opaque(ro)
		e.String("f")
		e.Uint32(nfs3CreateUncheck)
		noSattr(e)
	}); st != nfs3ErrRofs {
		t.Fatalf("CREATE in a read-only export: %d", st)
	}
}

// fhMagic in a fuzzed record stands for the root's handle (as nfs_fh3,
// length included): the handle key is new for every server, so seeds
// cannot carry a valid handle themselves.
var fhMagic = []byte("ROOT-HANDLE-HERE")

func fuzzCall(prog, vers, proc uint32, build func(e *xdr.Encoder)) []byte {
	e := xdr.NewEncoder(256)
	callHeader(e, 1, prog, vers, proc)
	build(e)
	return e.AppendTo(nil)
}

// fuzzV3 returns the fuzz function: each record goes to one server (made
// once, holding a file, a directory and a symlink) with fhMagic replaced by
// its root handle; it must not panic, and any reply must be a well-formed
// record (harness.record checks the mark).
func fuzzV3(f *testing.F) func(t *testing.T, rec []byte) {
	dir := f.TempDir()
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	return func(t *testing.T, rec []byte) {
		h := &harness{t: t, s: s, conn: NewConn("192.0.2.7:600"), dir: dir}
		h.write("f", []byte("hello"))
		os.Mkdir(filepath.Join(dir, "d"), 0o755)
		os.Symlink("f", filepath.Join(dir, "l"))
		_, root := h.mount3("/")
		e := xdr.NewEncoder(80)
		e.Opaque(root)
		h.record(bytes.ReplaceAll(rec, fhMagic, e.AppendTo(nil)))
	}
}

func FuzzNFS3(f *testing.F) {
	for p := uint32(0); p <= nfs3NumProcs; p++ {
		for _, name := range []string{"f", "d", "l", "..", "new"} {
			f.Add(fuzzCall(nfs4.ProgramNFS, 3, p, func(e *xdr.Encoder) {
				e.Fixed(fhMagic)
				e.String(name)
				e.Uint32(0)
				noSattr(e)
				e.Uint32(16)
				e.Uint32(0)
				e.Uint32(4)
				e.String("data")
			}))
		}
		f.Add(fuzzCall(nfs4.ProgramNFS, 3, p, func(e *xdr.Encoder) {
			e.Fixed(fhMagic)
			e.Uint64(0)
			e.Uint32(4096)
			e.Uint32(4096)
		}))
	}
	f.Fuzz(fuzzV3(f))
}

func FuzzMount(f *testing.F) {
	for p := uint32(0); p <= mountNumProcs; p++ {
		for _, dir := range []string{"/", "/d", "/../..", ""} {
			f.Add(fuzzCall(progMount, 3, p, func(e *xdr.Encoder) { e.String(dir) }))
		}
	}
	f.Add(fuzzCall(progMount, 1, mountMnt, func(e *xdr.Encoder) { e.String("/") }))
	f.Fuzz(fuzzV3(f))
}

// TestNFS3DRC: a retransmitted REMOVE (same xid, same arguments) gets the
// first reply instead of running again; a new call with another xid runs.
func TestNFS3DRC(t *testing.T) {
	h := newHarness(t)
	_, root := h.mount3("/")
	h.write("gone", []byte("x"))
	e := xdr.NewEncoder(128)
	callHeader(e, 4242, nfs4.ProgramNFS, 3, nfs3Remove)
	e.Opaque(root)
	e.String("gone")
	rec := e.AppendTo(nil)
	first := h.record(rec)
	if st := binary.BigEndian.Uint32(first[24:]); st != nfs3OK {
		t.Fatalf("REMOVE: %d", st)
	}
	again := h.record(rec)
	if !bytes.Equal(first, again) {
		t.Fatalf("retransmit answered differently:\n%x\n%x", first, again)
	}
	if st, _ := h.nfs3(nfs3Remove, func(e *xdr.Encoder) { e.Opaque(root); e.String("gone") }); st != nfs3ErrNoent {
		t.Fatalf("REMOVE with a new xid: %d", st)
	}
	var replays uint64
	for _, p := range h.s.stats.ProcCounts() {
		if p.Status == "DRC_REPLAY" {
			replays += p.N
		}
	}
	if replays != 1 {
		t.Fatalf("DRC_REPLAY counted %d times", replays)
	}
	// A busy entry drops the retransmit.
	k := drcKeyOf(h.conn, &Cred{}, 7, nfs3Version, nfs3Rmdir, nil)
	h.s.v3.drc.start(k, time.Now())
	if _, running := h.s.v3.drc.start(k, time.Now()); !running {
		t.Fatal("entry not in progress")
	}
	// The ring bounds the cache.
	for i := range drcMax + 10 {
		h.s.v3.drc.start(drcKey{xid: uint32(i + 100)}, time.Now())
	}
	if n := len(h.s.v3.drc.m); n > drcMax {
		t.Fatalf("%d entries", n)
	}
}

// TestNFS3WriteAlign: the engine finds a v3 WRITE's payload, to place it
// for O_DIRECT as it does a v4 WRITE's.
func TestNFS3WriteAlign(t *testing.T) {
	e := xdr.NewEncoder(256)
	callHeader(e, 1, nfs4.ProgramNFS, 3, nfs3Write)
	e.Opaque(make([]byte, 56))
	e.Uint64(8192)
	e.Uint32(4096)
	e.Uint32(0)
	e.Uint32(4096)
	head := e.AppendTo(nil)
	off, foff, ok := WriteAlign(head)
	if !ok || off != len(head) || foff != 8192 {
		t.Fatalf("WriteAlign = %d, %d, %v; want %d, 8192, true", off, foff, ok, len(head))
	}
	e = xdr.NewEncoder(256)
	callHeader(e, 1, nfs4.ProgramNFS, 3, nfs3Read)
	e.Opaque(make([]byte, 56))
	if _, _, ok := WriteAlign(e.AppendTo(nil)); ok {
		t.Fatal("WriteAlign of a READ")
	}
}

// TestKrb5OnlyRefusesSys: an export whose client spec takes only Kerberos
// refuses NFSv3 AUTH_SYS calls of its handles with NFS3ERR_ACCES, as it
// refuses NFSv4 AUTH_SYS calls with WRONGSEC. MNT is answered whatever
// the flavour, listing the export's (a Linux client mounts with AUTH_SYS
// and then uses the flavour it picked from the list), and NLM is not
// checked against sec= (clients' lock managers use AUTH_SYS; knfsd skips
// the check for NFSD_MAY_LOCK). The same export with sys among its
// flavours serves them all.
func TestKrb5OnlyRefusesSys(t *testing.T) {
	h := newHarness(t)
	_, root := h.mount3("/")
	h.write("f", []byte("x"))
	_, fh, _ := h.lookup3(root, "f")
	for _, tc := range []struct {
		sec     exports.SecList
		want    bool
		flavors int
	}{
		{exports.SecList(exports.SecKrb5), false, 0}, // no keytab: no krb5 flavour to list
		{exports.SecList(exports.SecKrb5) | exports.SecList(exports.SecSys)<<4, true, 2},
	} {
		k := newHarnessCfg(t, func(c *Config) {
			o := ShorthandOptions()
			o.Sec = tc.sec
			c.Exports[0].Path = h.dir
			c.Exports[0].Clients = []ClientRule{{Spec: "*", Any: true, Options: o}}
			c.StateDir = h.state // the same handle key: h's handles are k's
		})
		k.conn = NewConn("127.0.0.1:700")
		d := k.call3(progMount, 3, mountMnt, func(e *xdr.Encoder) { e.String("/") })
		mnt := d.Uint32()
		d.Opaque(64)
		if n := d.Uint32(); mnt != mnt3OK || int(n) != tc.flavors {
			t.Errorf("sec=%v: MNT %d with %d flavours, want OK with %d", tc.sec, mnt, n, tc.flavors)
		}
		attr, _ := k.nfs3(nfs3Getattr, func(e *xdr.Encoder) { e.Opaque(fh) })
		lock := k.nlmPeer("127.0.0.1:700", "h").lock(fh, 1, 0, 1, false, true, false)
		// The second server starts in the grace period of the first's
		// NLM host: denied_grace_period, not a refusal.
		if tc.want != (attr == nfs3OK) || lock == nlmFailed {
			t.Errorf("sec=%v: GETATTR %d, NLM LOCK %d; want GETATTR served: %v, the lock not refused", tc.sec, attr, lock, tc.want)
		}
		if !tc.want && attr != nfs3ErrAcces {
			t.Errorf("sec=%v: GETATTR %d, want NFS3ERR_ACCES", tc.sec, attr)
		}
	}
}
