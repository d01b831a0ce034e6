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

// newSweepHarness is newHarness with the unlinked-file sweep every
// interval.
func newSweepHarness(t *testing.T, every time.Duration) *harness {
	t.Helper()
	dir, state := t.TempDir(), t.TempDir()
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: state, UnlinkSweep: every})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &harness{t: t, s: s, conn: NewConn("test"), dir: dir, state: state}
}

// deletedFDs counts this process's descriptors of a deleted file named
// name (the server's cached ones: the test runs it in process).
func deletedFDs(t *testing.T, name string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasSuffix(l, "/"+name+" (deleted)") {
			n++
		}
	}
	return n
}

// getattrStatus sends PUTFH, GETATTR(size) and returns the status.
func (h *harness) getattrStatus(fh []byte) nfs4.Status {
	h.t.Helper()
	_, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
	})
	return st
}

// useFile reads and writes fh (anonymous stateid, FILE_SYNC) so the
// server keeps its read and read-write descriptors.
func (h *harness) useFile(fh []byte) {
	h.t.Helper()
	if _, _, st := h.readAt(fh, nfs4.Stateid{}, 0, 4096); st != nfs4.OK {
		h.t.Fatalf("READ: %d", st)
	}
	if st, _, _, _ := h.writeOp(fh, nfs4.Stateid{}, 0, nfs4.FileSync4, []byte("x")); st != nfs4.OK {
		h.t.Fatalf("WRITE: %d", st)
	}
}

// staleEverywhere checks that GETATTR, READ and WRITE of fh answer STALE.
func (h *harness) staleEverywhere(fh []byte) {
	h.t.Helper()
	if st := h.getattrStatus(fh); st != nfs4.ErrStale {
		h.t.Errorf("GETATTR: %d, want STALE", st)
	}
	if _, _, st := h.readAt(fh, nfs4.Stateid{}, 0, 4096); st != nfs4.ErrStale {
		h.t.Errorf("READ: %d, want STALE", st)
	}
	if st, _, _, _ := h.writeOp(fh, nfs4.Stateid{}, 0, nfs4.FileSync4, []byte("y")); st != nfs4.ErrStale {
		h.t.Errorf("WRITE: %d, want STALE", st)
	}
}

// TestUnlinkedFileGoesStale (issue 21 finding 9): a file removed on the
// host that no client has open loses its cached descriptors within a
// sweep, so its space is freed, and its handle answers NFS4ERR_STALE to
// GETATTR, READ and WRITE, as knfsd's does (exportfs_decode_fh fails for
// the freed inode).
func TestUnlinkedFileGoesStale(t *testing.T) {
	h := newSweepHarness(t, 20*time.Millisecond)
	h.session()
	h.write("gone", make([]byte, 1<<20))
	fh := h.lookupFH("gone")
	h.useFile(fh)
	if err := os.Remove(filepath.Join(h.dir, "gone")); err != nil {
		t.Fatal(err)
	}
	if deletedFDs(t, "gone") == 0 {
		t.Fatal("no descriptor of the removed file was cached: the test tests nothing")
	}
	// No request touches the file: the sweep alone must close them.
	deadline := time.Now().Add(5 * time.Second)
	for deletedFDs(t, "gone") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors of the removed file still open after 5s", deletedFDs(t, "gone"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.staleEverywhere(fh)
}

// TestUnlinkedFileStaleAtOnce: with the sweep far off, GETATTR (and a
// WRITE, whose attribute check is the same) of a removed file that nobody
// holds answers STALE at once and closes its descriptors.
func TestUnlinkedFileStaleAtOnce(t *testing.T) {
	h := newSweepHarness(t, time.Hour)
	h.session()
	h.write("gone", make([]byte, 64<<10))
	fh := h.lookupFH("gone")
	h.useFile(fh)
	if err := os.Remove(filepath.Join(h.dir, "gone")); err != nil {
		t.Fatal(err)
	}
	if st := h.getattrStatus(fh); st != nfs4.ErrStale {
		t.Fatalf("GETATTR: %d, want STALE", st)
	}
	if n := deletedFDs(t, "gone"); n != 0 {
		t.Fatalf("%d descriptors of the removed file still open", n)
	}
	h.staleEverywhere(fh)
}

// TestUnlinkedOpenFileStaysUntilClose: a file removed on the host while a
// client has it open stays readable and writable through its handle
// (POSIX unlink-while-open, and knfsd: the open holds the inode); after
// the CLOSE, the next sweep closes its descriptors and the handle is
// stale.
func TestUnlinkedOpenFileStaysUntilClose(t *testing.T) {
	h := newSweepHarness(t, 20*time.Millisecond)
	h.session()
	h.write("held", []byte("still here"))
	fh := h.lookupFH("held")
	sid, st := h.open("held", nfs4.ShareDenyNone)
	if st != nfs4.OK {
		t.Fatalf("OPEN: %d", st)
	}
	h.useFile(fh)
	if err := os.Remove(filepath.Join(h.dir, "held")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // several sweeps
	if st := h.getattrStatus(fh); st != nfs4.OK {
		t.Fatalf("GETATTR while open: %d", st)
	}
	if _, data, st := h.readAt(fh, sid, 0, 100); st != nfs4.OK || string(data) != "xtill here" {
		t.Fatalf("READ while open: %d %q", st, data)
	}
	if st := h.closeOpen(fh, sid); st != nfs4.OK {
		t.Fatalf("CLOSE: %d", st)
	}
	deadline := time.Now().Add(5 * time.Second)
	for deletedFDs(t, "held") > 0 {
		if time.Now().After(deadline) {
			t.Fatal("descriptors of the closed, removed file still open after 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.staleEverywhere(fh)
}

// TestRemovedUncachedFileStale: a file the server looked up but never
// opened (no descriptor to keep its inode), removed on the host, answers
// STALE to READ and WRITE too, not NOENT: its path and its kernel handle
// both find nothing.
func TestRemovedUncachedFileStale(t *testing.T) {
	h := newSweepHarness(t, time.Hour)
	h.session()
	h.write("gone", make([]byte, 64<<10))
	fh := h.lookupFH("gone")
	if err := os.Remove(filepath.Join(h.dir, "gone")); err != nil {
		t.Fatal(err)
	}
	h.staleEverywhere(fh)
}
