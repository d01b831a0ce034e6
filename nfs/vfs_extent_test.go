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

// coarseCtime makes the extent cache see one ctime for every file, as on
// a kernel without multigrain timestamps when changes fall in one tick.
func coarseCtime(t *testing.T) {
	old := fixedCtime
	fixedCtime = &unix.Timespec{Sec: 1}
	t.Cleanup(func() { fixedCtime = old })
}

// TestExtentCacheSeesWrites: with ctime not moving, every change this
// server makes to a file still drops its cached extents: WRITE into a
// hole, ALLOCATE, DEALLOCATE, COPY into a hole, and a SETATTR that shrinks
// and regrows the file to the same size. READ_PLUS after each returns the
// file's bytes, never a stale HOLE (or stale DATA).
func TestExtentCacheSeesWrites(t *testing.T) {
	coarseCtime(t)
	h := newHarness(t)
	h.session()
	const size = 4 << 20
	want := h.sparse("f", size, [][2]int64{{0, 64 << 10}})
	h.write("src", bytes.Repeat([]byte{7}, 64<<10))
	fh, src := h.lookupFH("f"), h.lookupFH("src")
	check := func(what string) {
		t.Helper()
		var got []byte
		for off := uint64(0); off < size; off += 1 << 20 {
			_, _, b := h.readPlus(fh, off, 1<<20)
			got = append(got, b...)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("after %s: READ_PLUS differs at byte %d", what, i)
		}
	}
	check("nothing") // caches [64K, 4M) as a hole

	data := bytes.Repeat([]byte{0xab}, 8192)
	if st, n, _, _ := h.writeOp(fh, nfs4.AnonStateid, 1<<20, nfs4.Unstable4, data); st != nfs4.OK || n != 8192 {
		t.Fatalf("WRITE: %d %d", st, n)
	}
	copy(want[1<<20:], data)
	check("WRITE into a hole")

	space := func(op uint32, off, n uint64) {
		t.Helper()
		if st := h.opStatus(fh, op, func(e *xdr.Encoder) {
			nfs4.AnonStateid.Encode(e)
			e.Uint64(off)
			e.Uint64(n)
		}); st != nfs4.OK {
			t.Fatalf("op %d: %d", op, st)
		}
	}
	space(nfs4.OpDeallocate, 1<<20, 8192)
	copy(want[1<<20:], make([]byte, 8192))
	check("DEALLOCATE")
	space(nfs4.OpAllocate, 2<<20, 64<<10) // zeros either way: still right
	check("ALLOCATE")

	_, st := h.ops(4, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(src)
		e.Uint32(nfs4.OpSavefh)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpCopy)
		nfs4.AnonStateid.Encode(e)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint64(3 << 20)
		e.Uint64(0)
		e.Bool(true)
		e.Bool(true)
		e.Uint32(0)
	})
	if st != nfs4.OK {
		t.Fatalf("COPY: %d", st)
	}
	copy(want[3<<20:], bytes.Repeat([]byte{7}, 64<<10))
	check("COPY into a hole")

	truncate := func(n uint64) {
		t.Helper()
		if st := h.opStatus(fh, nfs4.OpSetattr, func(e *xdr.Encoder) {
			nfs4.AnonStateid.Encode(e)
			nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
			e.Uint32(8)
			e.Uint64(n)
		}); st != nfs4.OK {
			t.Fatalf("SETATTR size %d: %d", n, st)
		}
	}
	truncate(32 << 10)
	truncate(size)
	want = append(want[:32<<10], make([]byte, size-32<<10)...)
	check("SETATTR size down and up")
}

// TestExtentWalkRacingWrite: a walk that ran while a write landed in its
// range is not kept: the next lookup walks again, though ctime and size
// did not move.
func TestExtentWalkRacingWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 1<<20); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(p, unix.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	var x extentCache
	old := seeker
	t.Cleanup(func() { seeker = old })
	seeker = func(fd int, off int64, whence int) (int64, error) {
		// A writer's data lands after the walk looked, then the writer
		// records its change, all while the walk goes on.
		seeker = old
		pos, err := old(fd, off, whence)
		if _, err := unix.Pwrite(fd, []byte("data"), 4096); err != nil {
			t.Fatal(err)
		}
		x.changed()
		return pos, err
	}
	x.extents(fd, &st, 0, 1<<20, nil) // stale: all hole; fine for this call
	runs := x.extents(fd, &st, 0, 1<<20, nil)
	if len(runs) == 0 || runs[0].off != 0 || !runs[0].hole || runs[0].end > 4096 || len(runs) < 2 || runs[1].hole {
		t.Fatalf("runs after a racing write: %+v", runs)
	}
}

func TestExtentCacheCachedData(t *testing.T) {
	x := &extentCache{runs: []extent{{0, 10, false}, {10, 20, false}, {30, 40, false}, {40, 50, true}}}
	cases := []struct {
		off, end int64
		want     bool
	}{
		{0, 20, true},   // two adjacent data runs
		{5, 15, true},   // inside them
		{15, 35, false}, // across a range nobody walked
		{30, 40, true},
		{35, 45, false}, // into a hole
		{45, 50, false}, // a hole
		{50, 60, false}, // past every run
		{3, 3, true},    // empty
	}
	for _, c := range cases {
		if got := x.cachedData(c.off, c.end); got != c.want {
			t.Errorf("cachedData(%d, %d) = %v, want %v", c.off, c.end, got, c.want)
		}
	}
}
