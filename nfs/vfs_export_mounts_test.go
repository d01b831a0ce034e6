package nfs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// nestedFS builds the layout of issue 12.2: a fresh ext4 filesystem as the
// export (outer), holding a.txt, and a second fresh ext4 mounted at
// outer/proj holding b.txt — fresh filesystems give both files the same
// inode number. Before the mount, outer/proj gets hidden.txt: what a
// client must see there when the export does not cross mounts.
func nestedFS(t *testing.T) (outer string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (loop mounts)")
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("needs mkfs.ext4 (e2fsprogs)")
	}
	base := t.TempDir()
	mk := func(name string) string {
		img := filepath.Join(base, name+".img")
		if out, err := exec.Command("truncate", "-s", "16M", img).CombinedOutput(); err != nil {
			t.Fatalf("truncate: %v %s", err, out)
		}
		if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v %s", err, out)
		}
		return img
	}
	mount := func(img, dir string) {
		if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
			t.Skipf("loop mount unavailable: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	}
	outer = filepath.Join(base, "outer")
	os.Mkdir(outer, 0o755)
	mount(mk("outer"), outer)
	mustWrite(t, filepath.Join(outer, "a.txt"), "outer a")
	mustWrite(t, filepath.Join(outer, "proj", "hidden.txt"), "underneath the mount")
	mount(mk("inner"), filepath.Join(outer, "proj"))
	mustWrite(t, filepath.Join(outer, "proj", "b.txt"), "inner b, longer")
	if ia, ib := inode(t, filepath.Join(outer, "a.txt")), inode(t, filepath.Join(outer, "proj", "b.txt")); ia != ib {
		t.Logf("a.txt inode %d, b.txt inode %d: not equal, the test is weaker", ia, ib)
	}
	return outer
}

func startOn(t *testing.T, state string, exports ...Export) *harness {
	t.Helper()
	s, err := NewServer(Config{Exports: exports, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	h := &harness{t: t, s: s, conn: NewConn("test"), state: state}
	h.session()
	return h
}

// fsidOfFH returns the fsid attribute of fh.
func (h *harness) fsidOfFH(fh []byte) [2]uint64 {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrFsid).Encode(e)
	})
	if st != nfs4.OK {
		h.t.Fatalf("getattr: %d", st)
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpGetattr, nfs4.OK)
	nfs4.DecodeBitmap(d)
	d.Uint32()
	return [2]uint64{d.Uint64(), d.Uint64()}
}

// readdirNames lists directory fh (names only).
func (h *harness) readdirNames(fh []byte) []string {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpReaddir)
		e.Uint64(0)
		e.Fixed(make([]byte, 8))
		e.Uint32(8192)
		e.Uint32(32768)
		nfs4.BitmapOf(nfs4.AttrFileid).Encode(e)
	})
	if st != nfs4.OK {
		h.t.Fatalf("readdir: %d", st)
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpReaddir, nfs4.OK)
	d.Fixed(8)
	var names []string
	for d.Bool() {
		d.Uint64()
		names = append(names, string(d.Opaque(nfs4.OpaqueLimit)))
		nfs4.DecodeBitmap(d)
		d.Opaque(1 << 16)
	}
	return names
}

func has(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// TestMountInsideExportNotCrossed: without crossmnt the mount point shows
// the directory underneath (exports(5)), nothing on the inner filesystem is
// reachable, and the export root stays the root.
func TestMountInsideExportNotCrossed(t *testing.T) {
	outer := nestedFS(t)
	h := startOn(t, t.TempDir(), Export{Path: outer})
	root := h.s.root().handle
	proj, st := h.lookupPath("proj")
	if st != nfs4.OK {
		t.Fatalf("lookup proj: %d", st)
	}
	if bytes.Equal(proj, root) {
		t.Fatal("LOOKUP proj returned the export root's handle")
	}
	names := h.readdirNames(proj)
	if !has(names, "hidden.txt") || has(names, "b.txt") {
		t.Fatalf("proj lists %v, want the directory underneath (hidden.txt)", names)
	}
	h.readdirNames(root)
	if _, st := h.lookupPath("a.txt"); st != nfs4.OK {
		t.Fatalf("after READDIR the root lost a.txt: %d", st)
	}
	if _, st := h.lookupPath("proj/b.txt"); st != nfs4.ErrNoent {
		t.Fatalf("proj/b.txt through an uncrossed mount: %d, want NOENT", st)
	}
	hid, _ := h.lookupPath("proj/hidden.txt")
	if b, st := h.readData(hid, 100); st != nfs4.OK || string(b) != "underneath the mount" {
		t.Fatalf("hidden.txt: %d %q", st, b)
	}
	if h.fsidOfFH(proj) != h.fsidOfFH(root) {
		t.Fatal("the underlying directory has another fsid")
	}
}

// TestMountInsideExportCrossed: with crossmnt every filesystem has its own
// fsid and files with equal inode numbers on the two stay apart, across a
// restart too.
func TestMountInsideExportCrossed(t *testing.T) {
	outer := nestedFS(t)
	state := t.TempDir()
	h := startOn(t, state, Export{Path: outer, CrossMnt: true})
	root := h.s.root().handle
	proj, st := h.lookupPath("proj")
	if st != nfs4.OK {
		t.Fatalf("lookup proj: %d", st)
	}
	if bytes.Equal(proj, root) {
		t.Fatal("LOOKUP proj returned the export root's handle")
	}
	if h.fsidOfFH(proj) == h.fsidOfFH(root) {
		t.Fatal("the crossed filesystem shares the export's fsid")
	}
	names := h.readdirNames(proj)
	if !has(names, "b.txt") || has(names, "hidden.txt") {
		t.Fatalf("proj lists %v, want the inner filesystem", names)
	}
	h.readdirNames(root)
	fa, st := h.lookupPath("a.txt")
	if st != nfs4.OK {
		t.Fatalf("after READDIR the root lost a.txt: %d", st)
	}
	fb, _ := h.lookupPath("proj/b.txt")
	if bytes.Equal(fa, fb) {
		t.Fatal("b.txt got a.txt's handle")
	}
	if st, n, _, _ := h.writeOp(fb, nfs4.AnonStateid, 0, nfs4.FileSync4, []byte("INNER")); st != nfs4.OK || n != 5 {
		t.Fatalf("write b: %d %d", st, n)
	}
	if b, _ := os.ReadFile(filepath.Join(outer, "a.txt")); string(b) != "outer a" {
		t.Fatalf("WRITE through b.txt's handle changed a.txt: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(outer, "proj", "b.txt")); string(b) != "INNER b, longer" {
		t.Fatalf("b.txt: %q", b)
	}
	// After a restart, each handle still reads its own file.
	h = startOn(t, state, Export{Path: outer, CrossMnt: true})
	for fh, want := range map[string]string{string(fa): "outer a", string(fb): "INNER b, longer"} {
		if b, st := h.readData([]byte(fh), 100); st != nfs4.OK || string(b) != want {
			t.Fatalf("after restart: %d %q, want %q", st, b, want)
		}
	}
}
