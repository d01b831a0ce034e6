package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Attacks on the confinement point (SECURITY.md): every one performs what a
// hostile client (and a local accomplice moving directories around) did
// against the old code, and checks nothing outside the export changed.

// lookupPath returns the handle of a slash-separated path from the root.
func (h *harness) lookupPath(p string) ([]byte, nfs4.Status) {
	h.t.Helper()
	parts := strings.Split(p, "/")
	d, st, _ := h.compound(3+len(parts), func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		for _, name := range parts {
			e.Uint32(nfs4.OpLookup)
			e.String(name)
		}
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		return nil, st
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	for range parts {
		opResult(h.t, d, nfs4.OpLookup, nfs4.OK)
	}
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	return bytes.Clone(d.Opaque(nfs4.FHSize)), nfs4.OK
}

// readData READs up to count bytes at 0 of fh with the anonymous stateid.
func (h *harness) readData(fh []byte, count uint32) ([]byte, nfs4.Status) {
	h.t.Helper()
	_, data, st := h.readAt(fh, nfs4.AnonStateid, 0, count)
	return data, st
}

// linkFH makes a hard link to src named name in directory dir.
func (h *harness) linkFH(src, dir []byte, name string) nfs4.Status {
	h.t.Helper()
	_, st := h.ops(4, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(src)
		e.Uint32(nfs4.OpSavefh)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(dir)
		e.Uint32(nfs4.OpLink)
		e.String(name)
	})
	return st
}

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return 0
	}
	return st.Ino
}

// outsideDir is a directory outside the export on the same filesystem, so
// a hard link into it would work if the server let one through.
func outsideDir(t *testing.T, h *harness) string {
	d := filepath.Join(filepath.Dir(h.dir), "outside-"+filepath.Base(h.dir))
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestLinkCannotEscape is issue 8.1: LINK used to follow the saved
// handle's stored path unconfined, so a directory on that path replaced by
// a symlink made LINK hard-link a file outside the export into it.
func TestLinkCannotEscape(t *testing.T) {
	h := newHarness(t)
	h.session()
	out := outsideDir(t, h)
	mustWrite(t, filepath.Join(out, "x"), "outside secret")
	mustWrite(t, filepath.Join(h.dir, "f"), "mine")
	if err := os.MkdirAll(filepath.Join(h.dir, "pub", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	fh := h.lookupFH("f")
	if _, st := h.readData(fh, 10); st != nfs4.OK { // descriptor cached
		t.Fatalf("read: %d", st)
	}
	// RENAME f -> pub/d/x through the server, so its stored path is pub/d/x.
	_, st := h.ops(5, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpSavefh)
		e.Uint32(nfs4.OpLookup)
		e.String("pub")
		e.Uint32(nfs4.OpLookup)
		e.String("d")
		e.Uint32(nfs4.OpRename)
		e.String("f")
		e.String("x")
	})
	if st != nfs4.OK {
		t.Fatalf("rename: %d", st)
	}
	root, _ := h.lookupPath("pub")
	if st := h.linkFH(fh, root, "back"); st != nfs4.OK {
		t.Fatalf("link back: %d", st)
	}
	// The accomplice: pub/d becomes a symlink to the outside directory.
	os.Remove(filepath.Join(h.dir, "pub", "d", "x"))
	os.Remove(filepath.Join(h.dir, "pub", "d"))
	if err := os.Symlink(out, filepath.Join(h.dir, "pub", "d")); err != nil {
		t.Fatal(err)
	}
	st = h.linkFH(fh, root, "stolen")
	stolen := filepath.Join(h.dir, "pub", "stolen")
	secret := inode(t, filepath.Join(out, "x"))
	if got := inode(t, stolen); got == secret {
		t.Fatalf("LINK (status %d) linked the file outside the export into it", st)
	}
	// The control: the link, if made, is of the client's own file.
	if st == nfs4.OK {
		if b, _ := os.ReadFile(stolen); string(b) != "mine" {
			t.Fatalf("LINK made %q, want the client's own file", b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "x")); string(b) != "outside secret" {
		t.Fatalf("outside file changed: %q", b)
	}
	// The handle still reads the client's own file (found again by its
	// kernel handle, at pub/back).
	if b, st := h.readData(fh, 10); st != nfs4.OK || string(b) != "mine" {
		t.Fatalf("read through the old handle: %d %q", st, b)
	}
}

// TestDirectDescriptorsAreChecked is issue 8.2: O_DIRECT descriptors were
// opened by the stored path as root without an inode check, so a parent
// directory swapped for a symlink let a WRITE land in another file.
func TestDirectDescriptorsAreChecked(t *testing.T) {
	for _, write := range []bool{false, true} {
		h := newHarness(t)
		h.session()
		mustWrite(t, filepath.Join(h.dir, "pub", "important.db"), "attacker's own")
		mustWrite(t, filepath.Join(h.dir, "victim", "important.db"), "root's data")
		fh, st := h.lookupPath("pub/important.db")
		if st != nfs4.OK {
			t.Fatal(st)
		}
		n, st := h.s.resolve(fh)
		if st != nfs4.OK {
			t.Fatal(st)
		}
		// LINK elsewhere, REMOVE the original, parent becomes a symlink.
		if err := os.Link(filepath.Join(h.dir, "pub", "important.db"), filepath.Join(h.dir, "kept")); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(h.dir, "pub"))
		if err := os.Symlink("victim", filepath.Join(h.dir, "pub")); err != nil {
			t.Fatal(err)
		}
		fd := n.directFD()
		if write {
			fd = n.directWriteFD()
		}
		victim := inode(t, filepath.Join(h.dir, "victim", "important.db"))
		if fd >= 0 {
			var st unix.Stat_t
			unix.Fstat(fd, &st)
			if st.Ino == victim {
				t.Fatalf("write=%v: O_DIRECT descriptor is the victim's file", write)
			}
			if st.Ino != inode(t, filepath.Join(h.dir, "kept")) {
				t.Fatalf("write=%v: O_DIRECT descriptor of inode %d, want the handle's", write, st.Ino)
			}
		}
	}
}

// TestReadOfFIFODoesNotBlock is issue 8.7: READ opened a FIFO O_RDONLY,
// which blocks until a writer appears — on the event loop.
func TestReadOfFIFODoesNotBlock(t *testing.T) {
	h := newHarness(t)
	h.session()
	if err := unix.Mkfifo(filepath.Join(h.dir, "fifo"), 0o666); err != nil {
		t.Fatal(err)
	}
	fh := h.lookupFH("fifo")
	done := make(chan nfs4.Status, 1)
	go func() {
		_, st := h.readData(fh, 10)
		done <- st
	}()
	select {
	case st := <-done:
		if st != nfs4.ErrWrongType {
			t.Fatalf("READ of a FIFO: %d, want WRONG_TYPE", st)
		}
	case <-time.After(10 * time.Second):
		// Unblock the server's open so the test can end.
		if f, err := os.OpenFile(filepath.Join(h.dir, "fifo"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("READ of a FIFO blocked")
	}
	// A regular file swapped for a FIFO under the same name is not opened
	// either: the handle's file is gone.
	mustWrite(t, filepath.Join(h.dir, "reg"), "data")
	rfh := h.lookupFH("reg")
	os.Remove(filepath.Join(h.dir, "reg"))
	unix.Mkfifo(filepath.Join(h.dir, "reg"), 0o666)
	go func() {
		_, st := h.readData(rfh, 10)
		done <- st
	}()
	select {
	case st := <-done:
		if st == nfs4.OK {
			t.Fatal("READ through a regular file's handle read a FIFO")
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(filepath.Join(h.dir, "reg"), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("READ of a swapped-in FIFO blocked")
	}
}

// TestHandlesIgnoreExportOrder is issue 12.5: export ids came from the
// position in the --export list, so reordering it made every handle stale.
func TestHandlesIgnoreExportOrder(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(a, "fa"), "in a")
	mustWrite(t, filepath.Join(b, "fb"), "in b")
	state := t.TempDir()
	start := func(exports ...Export) *harness {
		s, err := NewServer(Config{Exports: exports, StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		h := &harness{t: t, s: s, conn: NewConn("test"), state: state}
		h.session()
		return h
	}
	h := start(Export{Name: "a", Path: a}, Export{Name: "b", Path: b})
	fa, st := h.lookupPath("a/fa")
	fb, st2 := h.lookupPath("b/fb")
	if st != nfs4.OK || st2 != nfs4.OK {
		t.Fatal(st, st2)
	}
	h = start(Export{Name: "c", Path: t.TempDir()}, Export{Name: "b", Path: b}, Export{Name: "a", Path: a})
	for fh, want := range map[string]string{string(fa): "in a", string(fb): "in b"} {
		if got, st := h.readData([]byte(fh), 10); st != nfs4.OK || string(got) != want {
			t.Fatalf("after reordering: %d %q, want %q", st, got, want)
		}
	}
	// fsid= names the export whatever its path.
	c := t.TempDir()
	mustWrite(t, filepath.Join(c, "fc"), "in c")
	h = start(Export{Name: "c", Path: c, FSID: "7"}, Export{Name: "a", Path: a})
	fc, _ := h.lookupPath("c/fc")
	moved := t.TempDir()
	mustWrite(t, filepath.Join(moved, "fc"), "moved")
	h = start(Export{Name: "c", Path: moved, FSID: "7"}, Export{Name: "a", Path: a})
	if _, st := h.readData(fc, 10); st != nfs4.OK && st != nfs4.ErrStale {
		t.Fatalf("fsid= export moved: %d", st)
	}
	if _, err := NewServer(Config{Exports: []Export{{Name: "x", Path: a, FSID: "1"}, {Name: "y", Path: b, FSID: "1"}}, StateDir: state}); err == nil {
		t.Fatal("two exports with one fsid= accepted")
	}
}

// TestLinkAsUser is the control for TestLinkCannotEscape: the owner's
// legitimate LINK works when it runs as the caller (the /proc descriptor
// path must be usable under the caller's fsuid).
func TestLinkAsUser(t *testing.T) {
	h := permTree(t)
	d := filepath.Join(h.dir, "udir")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(d, "f"), "x")
	os.Chown(d, 1000, 1000)
	os.Chown(filepath.Join(d, "f"), 1000, 1000)
	fh, dfh := h.pathFH("udir/f"), h.pathFH("udir")
	link := func(cr testCred, name string) nfs4.Status {
		_, st := h.opsAs(cr, 4, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpSavefh)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(dfh)
			e.Uint32(nfs4.OpLink)
			e.String(name)
		})
		return st
	}
	if st := link(as1000, "g"); st != nfs4.OK {
		t.Fatalf("LINK as the owner: %d", st)
	}
	if inode(t, filepath.Join(d, "g")) != inode(t, filepath.Join(d, "f")) {
		t.Fatal("g is not a link to f")
	}
	if st := link(as2000, "h"); st != nfs4.ErrAccess && st != nfs4.ErrPerm {
		t.Fatalf("LINK into another's directory as uid 2000: %d", st)
	}
}

// TestReusedInodeIsAnotherFile: a directory removed and a file created
// that gets its inode number (ext4 reuses them at once) is another file:
// the old handle goes stale, the new name gets a new handle, and READ of
// it works (the old node, a directory, once made READ_PLUS answer ISDIR
// in the kernel e2e).
func TestReusedInodeIsAnotherFile(t *testing.T) {
	h := newHarness(t)
	h.session()
	for try := 0; try < 20; try++ {
		d := filepath.Join(h.dir, "d")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		old := h.lookupFH("d")
		ino := inode(t, d)
		_, st := h.ops(2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpRemove)
			e.String("d")
		})
		if st != nfs4.OK {
			t.Fatalf("remove: %d", st)
		}
		// Made by someone else, straight on the filesystem.
		mustWrite(t, filepath.Join(h.dir, "f"), "new file")
		if inode(t, filepath.Join(h.dir, "f")) != ino {
			os.Remove(filepath.Join(h.dir, "f"))
			continue
		}
		fh := h.lookupFH("f")
		if bytes.Equal(fh, old) {
			t.Fatal("the new file got the removed directory's handle")
		}
		if b, st := h.readData(fh, 100); st != nfs4.OK || string(b) != "new file" {
			t.Fatalf("READ of the new file: %d %q", st, b)
		}
		if _, st := h.readData(old, 100); st == nfs4.OK {
			t.Fatal("the removed directory's handle reads the new file")
		}
		return
	}
	t.Skip("the filesystem did not reuse an inode number")
}
