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

// getattrSize decodes a GETATTR result asking only size.
func getattrSize(t *testing.T, d *xdr.Decoder) uint64 {
	t.Helper()
	opResult(t, d, nfs4.OpGetattr, nfs4.OK)
	if set := nfs4.DecodeBitmap(d); !set.Has(nfs4.AttrSize) {
		t.Fatalf("GETATTR returned %v", set)
	}
	d.Uint32() // attribute bytes
	return d.Uint64()
}

// LOOKUP's attributes answer the GETATTR right after it, but any change in
// between (here SETATTR of the size) makes GETATTR read the file again.
func TestLookupAttrsForgottenAfterChange(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", bytes.Repeat([]byte("x"), 100))
	d, st := h.ops(7, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("f")
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
		e.Uint32(nfs4.OpSetattr)
		nfs4.AnonStateid.Encode(e)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
		e.Uint32(8)
		e.Uint64(10)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
		e.Uint32(nfs4.OpAccess)
		e.Uint32(nfs4.AccessRead)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
	})
	if st != nfs4.OK {
		t.Fatalf("compound: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpLookup, nfs4.OK)
	if got := getattrSize(t, d); got != 100 {
		t.Fatalf("size after LOOKUP %d, want 100", got)
	}
	opResult(t, d, nfs4.OpSetattr, nfs4.OK)
	nfs4.DecodeBitmap(d)
	if got := getattrSize(t, d); got != 10 {
		t.Fatalf("size after SETATTR %d, want 10", got)
	}
	opResult(t, d, nfs4.OpAccess, nfs4.OK)
	d.Uint32()
	d.Uint32()
	if got := getattrSize(t, d); got != 10 {
		t.Fatalf("size after ACCESS %d, want 10", got)
	}
}

// A directory's kept descriptor follows the directory, not its path: after
// a local rename, its handle still looks names up in it.
func TestDirDescriptorFollowsRename(t *testing.T) {
	h := newHarness(t)
	h.session()
	if err := os.Mkdir(filepath.Join(h.dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	fh := h.lookupFH("d")
	lookup := func() nfs4.Status {
		return h.opStatus(fh, nfs4.OpLookup, func(e *xdr.Encoder) { e.String("x") })
	}
	if st := lookup(); st != nfs4.ErrNoent {
		t.Fatalf("LOOKUP x before it exists: %d", st)
	}
	if err := os.Rename(filepath.Join(h.dir, "d"), filepath.Join(h.dir, "d2")); err != nil {
		t.Fatal(err)
	}
	h.write("d2/x", []byte("x"))
	if st := lookup(); st != nfs4.OK {
		t.Fatalf("LOOKUP x in the renamed directory: %d", st)
	}
}

// A directory removed behind the server's back is stale through its
// handle, though the server still holds a descriptor of it; so is one
// replaced by a new directory of the same name.
func TestRemovedDirIsStale(t *testing.T) {
	for _, replace := range []bool{false, true} {
		h := newHarness(t)
		h.session()
		dir := filepath.Join(h.dir, "d")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fh := h.lookupFH("d")
		getattr := func() nfs4.Status {
			return h.opStatus(fh, nfs4.OpGetattr, func(e *xdr.Encoder) { nfs4.BitmapOf(nfs4.AttrSize).Encode(e) })
		}
		if st := getattr(); st != nfs4.OK {
			t.Fatalf("GETATTR: %d", st)
		}
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		if replace {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if st := getattr(); st != nfs4.ErrStale {
			t.Fatalf("GETATTR of a removed directory (replaced %v): %d, want STALE", replace, st)
		}
		st := h.opStatus(fh, nfs4.OpLookup, func(e *xdr.Encoder) { e.String("x") })
		if st != nfs4.ErrStale {
			t.Fatalf("LOOKUP in a removed directory (replaced %v): %d, want STALE", replace, st)
		}
	}
}

// nodeAt returns the server's node for the file at rel.
func (h *harness) nodeAt(rel string) *node {
	h.t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(h.dir, rel), &st); err != nil {
		h.t.Fatal(err)
	}
	return h.nodeOf(st.Ino)
}

// RENAME of a file repoints its node alone (no walk of the node table);
// of a directory, the nodes under it too.
func TestRenameRepointsNodes(t *testing.T) {
	h := newHarness(t)
	h.session()
	if err := os.Mkdir(filepath.Join(h.dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("f", []byte("f"))
	h.write("other", []byte("o"))
	h.write("d/x", []byte("x"))
	for _, rel := range []string{"f", "other", "d"} {
		h.lookupFH(rel)
	}
	if st := h.opStatus(h.lookupFH("d"), nfs4.OpLookup, func(e *xdr.Encoder) { e.String("x") }); st != nfs4.OK {
		t.Fatalf("LOOKUP d/x: %d", st)
	}
	f, other, x := h.nodeAt("f"), h.nodeAt("other"), h.nodeAt("d/x")
	rename := func(from, to string) {
		_, st := h.ops(4, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpSavefh)
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpRename)
			e.String(from)
			e.String(to)
		})
		if st != nfs4.OK {
			t.Fatalf("RENAME %s %s: %d", from, to, st)
		}
	}
	rename("f", "g")
	if got := f.path(); got != "g" {
		t.Errorf("renamed file's node at %q, want g", got)
	}
	if got := other.path(); got != "other" {
		t.Errorf("other file's node moved to %q", got)
	}
	rename("d", "e")
	if got := x.path(); got != "e/x" {
		t.Errorf("node under the renamed directory at %q, want e/x", got)
	}
}
