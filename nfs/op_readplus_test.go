package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// sparse writes a file of size bytes with data at the given [off, end)
// ranges, filled with a byte derived from the offset.
func (h *harness) sparse(name string, size int64, data [][2]int64) []byte {
	h.t.Helper()
	f, err := os.Create(filepath.Join(h.dir, name))
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	want := make([]byte, size)
	for _, r := range data {
		b := make([]byte, r[1]-r[0])
		for i := range b {
			b[i] = byte((r[0]+int64(i))/512) | 1
		}
		copy(want[r[0]:], b)
		if _, err := f.WriteAt(b, r[0]); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		h.t.Fatal(err)
	}
	return want
}

type seg struct {
	hole bool
	off  uint64
	n    uint64
}

// readPlus sends READ_PLUS and returns eof, the segments, and the bytes
// they describe laid out from off (holes as zeros).
func (h *harness) readPlus(fh []byte, off uint64, count uint32) (bool, []seg, []byte) {
	h.t.Helper()
	return h.readPlusSid(fh, nfs4.AnonStateid, off, count)
}

// readPlusSid is readPlus with sid.
func (h *harness) readPlusSid(fh []byte, sid nfs4.Stateid, off uint64, count uint32) (bool, []seg, []byte) {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpReadPlus)
		sid.Encode(e)
		e.Uint64(off)
		e.Uint32(count)
	})
	if st != nfs4.OK {
		h.t.Fatalf("READ_PLUS: %d", st)
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpReadPlus, nfs4.OK)
	eof := d.Bool()
	n := int(d.Uint32())
	var segs []seg
	var out []byte
	for i := 0; i < n; i++ {
		switch d.Uint32() {
		case nfs4.ContentData:
			o := d.Uint64()
			b := d.Opaque(1 << 21)
			segs = append(segs, seg{false, o, uint64(len(b))})
			out = append(out, b...)
		case nfs4.ContentHole:
			o, l := d.Uint64(), d.Uint64()
			segs = append(segs, seg{true, o, l})
			out = append(out, make([]byte, l)...)
		default:
			h.t.Fatal("bad content type")
		}
	}
	if d.Err() != nil || d.Remaining() != 0 {
		h.t.Fatalf("decode: %v, %d left", d.Err(), d.Remaining())
	}
	return eof, segs, out
}

func TestReadPlusSegments(t *testing.T) {
	h := newHarness(t)
	h.session()
	const K = 1024
	want := h.sparse("f", 1024*K, [][2]int64{{0, 64 * K}, {512 * K, 576 * K}})
	fh := h.lookupFH("f")

	eof, segs, got := h.readPlus(fh, 0, 1024*K)
	wantSegs := []seg{{false, 0, 64 * K}, {true, 64 * K, 448 * K}, {false, 512 * K, 64 * K}, {true, 576 * K, 448 * K}}
	if !eof || !equalSegs(segs, wantSegs) || !bytes.Equal(got, want) {
		t.Fatalf("eof %v segs %v", eof, segs)
	}
	// Starting inside a hole, ending inside data, at odd offsets.
	eof, segs, got = h.readPlus(fh, 100*K+3, 450*K)
	if eof || segs[0] != (seg{true, 100*K + 3, 412*K - 3}) || !bytes.Equal(got, want[100*K+3:550*K+3]) {
		t.Fatalf("eof %v segs %v", eof, segs)
	}
	// Starting inside data.
	_, segs, got = h.readPlus(fh, 1000, 100*K)
	if segs[0].hole || !bytes.Equal(got, want[1000:1000+100*K]) {
		t.Fatalf("segs %v", segs)
	}
	// Past EOF.
	eof, segs, _ = h.readPlus(fh, 2048*K, 10)
	if !eof || len(segs) != 0 {
		t.Fatalf("past eof: %v %v", eof, segs)
	}
}

func TestReadPlusSmallHolesBecomeData(t *testing.T) {
	h := newHarness(t)
	h.session()
	const K = 1024
	var data [][2]int64
	for off := int64(0); off < 256*K; off += 8 * K {
		data = append(data, [2]int64{off, off + 4*K})
	}
	want := h.sparse("f", 256*K, data)
	fh := h.lookupFH("f")
	_, segs, got := h.readPlus(fh, 0, 256*K)
	if !bytes.Equal(got, want) {
		t.Fatal("data differs")
	}
	// 4 KiB holes are under minHole: one DATA segment, then the final
	// trailing hole (the file ends in one).
	if len(segs) > 2 || segs[0].hole {
		t.Fatalf("segs %v", segs)
	}
}

func TestReadPlusAllHole(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.sparse("h", 3<<20, nil)
	fh := h.lookupFH("h")
	eof, segs, got := h.readPlus(fh, 0, 1<<20)
	if eof || len(segs) != 1 || !segs[0].hole || len(got) != 1<<20 {
		t.Fatalf("eof %v segs %v", eof, segs)
	}
}

func TestMergeSegments(t *testing.T) {
	d := func(o, e int64) extent { return extent{o, e, false} }
	hole := func(o, e int64) extent { return extent{o, e, true} }
	cases := []struct {
		in, want []extent
	}{
		{[]extent{d(0, 10)}, []extent{d(0, 10)}},
		{[]extent{d(0, 4096), hole(4096, 8192), d(8192, 9000)}, []extent{d(0, 9000)}},
		{[]extent{hole(0, 4096), d(4096, 8192)}, []extent{hole(0, 4096), d(4096, 8192)}},
		{[]extent{d(0, 10), hole(10, 1<<20), d(1<<20, 2<<20)}, []extent{d(0, 10), hole(10, 1<<20), d(1<<20, 2<<20)}},
	}
	for _, tc := range cases {
		got := mergeSegments(append([]extent(nil), tc.in...))
		if len(got) != len(tc.want) {
			t.Fatalf("%v -> %v, want %v", tc.in, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%v -> %v, want %v", tc.in, got, tc.want)
			}
		}
	}
	// Past maxSegments the rest is data.
	var many []extent
	for i := int64(0); i < 1000; i++ {
		many = append(many, d(i*2<<20, i*2<<20+1<<20), hole(i*2<<20+1<<20, (i+1)*2<<20))
	}
	if got := mergeSegments(many); len(got) > maxSegments {
		t.Fatalf("%d segments", len(got))
	}
}

// When lseek misbehaves, READ_PLUS still returns the right bytes, as data.
func TestReadPlusSeekFailureFallsBackToData(t *testing.T) {
	h := newHarness(t)
	h.session()
	want := h.sparse("f", 1<<20, [][2]int64{{512 << 10, 600 << 10}})
	fh := h.lookupFH("f")
	seeker = func(fd int, off int64, whence int) (int64, error) { return 0, unix.EIO }
	defer func() { seeker = unix.Seek }()
	_, segs, got := h.readPlus(fh, 0, 1<<20)
	if len(segs) != 1 || segs[0].hole || !bytes.Equal(got, want) {
		t.Fatalf("segs %v", segs)
	}
}

func TestSeek(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.sparse("f", 1<<20, [][2]int64{{256 << 10, 260 << 10}})
	fh := h.lookupFH("f")
	seek := func(off uint64, what uint32) (nfs4.Status, bool, uint64) {
		d, st, _ := h.compound(3, func(e *xdr.Encoder) {
			h.sequence(e)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpSeek)
			nfs4.AnonStateid.Encode(e)
			e.Uint64(off)
			e.Uint32(what)
		})
		if st != nfs4.OK {
			return st, false, 0
		}
		skipSequence(t, d)
		opResult(t, d, nfs4.OpPutfh, nfs4.OK)
		opResult(t, d, nfs4.OpSeek, nfs4.OK)
		return st, d.Bool(), d.Uint64()
	}
	if st, eof, pos := seek(0, nfs4.ContentData); st != nfs4.OK || eof || pos != 256<<10 {
		t.Fatalf("SEEK DATA: %d %v %d", st, eof, pos)
	}
	if st, eof, pos := seek(256<<10, nfs4.ContentHole); st != nfs4.OK || eof || pos != 260<<10 {
		t.Fatalf("SEEK HOLE: %d %v %d", st, eof, pos)
	}
	if st, _, _ := seek(300<<10, nfs4.ContentData); st != nfs4.ErrNxio {
		t.Fatalf("SEEK DATA past last data: %d", st)
	}
}

func equalSegs(a, b []seg) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A finely fragmented file is walked with a bounded number of lseeks per
// window, and still reads back exactly.
func TestReadPlusFragmentedWalkIsBounded(t *testing.T) {
	h := newHarness(t)
	h.session()
	const K = 1024
	var data [][2]int64
	for off := int64(0); off < 8<<20; off += 8 * K {
		data = append(data, [2]int64{off, off + 4*K})
	}
	want := h.sparse("frag", 8<<20, data)
	fh := h.lookupFH("frag")
	calls := 0
	seeker = func(fd int, off int64, whence int) (int64, error) {
		calls++
		return unix.Seek(fd, off, whence)
	}
	defer func() { seeker = unix.Seek }()
	var got []byte
	for off := uint64(0); off < 8<<20; off += 1 << 20 {
		_, _, b := h.readPlus(fh, off, 1<<20)
		got = append(got, b...)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("data differs")
	}
	// 1024 data runs: a full walk would take over 2000 lseeks.
	if calls > 400 {
		t.Fatalf("%d lseeks for 8 MiB of 4 KiB extents", calls)
	}
}

// readAt READs count bytes at off of fh with sid and returns eof and the
// data.
func (h *harness) readAt(fh []byte, sid nfs4.Stateid, off uint64, count uint32) (bool, []byte, nfs4.Status) {
	h.t.Helper()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpRead)
		sid.Encode(e)
		e.Uint64(off)
		e.Uint32(count)
	})
	if st != nfs4.OK {
		return false, nil, st
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpRead, nfs4.OK)
	eof := d.Bool()
	return eof, bytes.Clone(d.Opaque(1 << 20)), nfs4.OK
}

// A READ with an open's stateid that ends before the size an earlier
// fstat saw skips its own fstat (sizeHint). Its answer stays right: a file
// shrunk behind the server's back reads short with eof; any change made
// through the server (SETATTR of size, WRITE) voids the hint, so a READ
// ending exactly at the new end says eof; a READ reaching the end is
// always checked; an anonymous READ always checks permission.
func TestReadSizeHint(t *testing.T) {
	h := newHarness(t)
	h.session()
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	h.write("f", data)
	fh := h.lookupFH("f")
	sid, st := h.open("f", 0)
	if st != nfs4.OK {
		t.Fatalf("OPEN: %d", st)
	}
	n := h.nodeAt("f")
	check := func(what string, off uint64, count uint32, wantEOF bool, want []byte) {
		t.Helper()
		eof, got, st := h.readAt(fh, sid, off, count)
		if st != nfs4.OK || eof != wantEOF || !bytes.Equal(got, want) {
			t.Fatalf("%s: READ %d@%d: status %d, eof %v, %d bytes; want eof %v, %d bytes", what, count, off, st, eof, len(got), wantEOF, len(want))
		}
	}
	check("first", 0, 4096, false, data[:4096])
	if h := n.size.Load(); h == nil || h.size != int64(len(data)) {
		t.Fatalf("size hint after the first READ: %+v", h)
	}
	if !n.within(4096, 4096) || n.within(60<<10, 4096) || n.within(1<<64-1, 2) {
		t.Fatal("within: wrong answer for a range inside, at the end, or wrapping")
	}
	check("to the end", 60<<10, 8192, true, data[60<<10:])

	// Shrunk by a local process: the hint still says 64 KiB, the read
	// comes back short and says so.
	if err := os.Truncate(filepath.Join(h.dir, "f"), 6000); err != nil {
		t.Fatal(err)
	}
	check("shrunk locally", 4096, 4096, true, data[4096:6000])

	// Through the server: SETATTR size 8192, then a READ ending at 8192.
	if st := h.opStatus(fh, nfs4.OpSetattr, func(e *xdr.Encoder) {
		nfs4.AnonStateid.Encode(e)
		nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
		e.Uint32(8)
		e.Uint64(8192)
	}); st != nfs4.OK {
		t.Fatalf("SETATTR size: %d", st)
	}
	want := append(bytes.Clone(data[:6000]), make([]byte, 8192-6000)...)
	check("after SETATTR", 4096, 4096, true, want[4096:])

	// A WRITE through the server past the end: the READ sees it.
	if st, _, _, _ := h.writeOp(fh, nfs4.AnonStateid, 8192, nfs4.FileSync4, []byte("tail")); st != nfs4.OK {
		t.Fatalf("WRITE: %d", st)
	}
	check("after WRITE", 8192, 100, true, []byte("tail"))

	// Anonymous READs check permission every time, hint or not.
	if err := os.Chmod(filepath.Join(h.dir, "f"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := h.readAs(as1000, fh, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.ErrAccess {
		t.Fatalf("anonymous READ of a 0600 file as uid 1000: %d, want NFS4ERR_ACCESS", got)
	}
}

// A READ_PLUS with an open's stateid of a range the extent cache has as
// data, ending before the size hint, skips its fstat and sends one DATA
// segment (compound.cachedData). The cache is not validated then, which
// is safe because DATA carries what the read finds: a range punched to a
// hole behind the server's back reads as zeros, a file shrunk behind its
// back reads short with eof. A range with a cached hole in it still takes
// the fstat, so data written into the hole locally is seen.
func TestReadPlusCachedDataSkipsFstat(t *testing.T) {
	h := newHarness(t)
	h.session()
	const K = 1024
	want := h.sparse("f", 1024*K, [][2]int64{{0, 256 * K}, {512 * K, 768 * K}})
	path := filepath.Join(h.dir, "f")
	fh := h.lookupFH("f")
	sid, st := h.open("f", 0)
	if st != nfs4.OK {
		t.Fatalf("OPEN: %d", st)
	}
	check := func(what string, off uint64, count uint32, wantEOF bool, wantSegs []seg, wantData []byte) {
		t.Helper()
		eof, segs, got := h.readPlusSid(fh, sid, off, count)
		if eof != wantEOF || !equalSegs(segs, wantSegs) || !bytes.Equal(got, wantData) {
			t.Fatalf("%s: READ_PLUS %d@%d: eof %v, segments %v, %d bytes; want eof %v, %v", what, count, off, eof, segs, len(got), wantEOF, wantSegs)
		}
	}
	// The first READ_PLUS walks the file and sets the size hint.
	check("first", 0, 64*K, false, []seg{{false, 0, 64 * K}}, want[:64*K])
	time.Sleep(20 * time.Millisecond) // local changes below get a later ctime

	// Punched locally: the cache still says data, and the DATA segment
	// carries the zeros the read finds.
	if err := punch(path, 64*K, 64*K); err != nil {
		t.Fatal(err)
	}
	check("punched locally", 64*K, 64*K, false, []seg{{false, 64 * K, 64 * K}}, make([]byte, 64*K))

	// Written locally into a cached hole: that range is checked, and the
	// new data is sent.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	tail := bytes.Repeat([]byte{7}, 4*K)
	if _, err := f.WriteAt(tail, 300*K); err != nil {
		t.Fatal(err)
	}
	f.Close()
	eof, segs, got := h.readPlusSid(fh, sid, 296*K, 12*K)
	if eof || !bytes.Equal(got[4*K:8*K], tail) || bytes.Count(got, []byte{0}) != 8*K {
		t.Fatalf("written into a hole locally: eof %v, segments %v", eof, segs)
	}

	// That fstat saw a new ctime and dropped the cache; read the range
	// below again to have it cached.
	check("walked again", 128*K, 64*K, false, []seg{{false, 128 * K, 64 * K}}, want[128*K:192*K])

	// Truncated locally to exactly the end of the next READ_PLUS: no fstat,
	// so eof says false (the next READ_PLUS gets none left and eof, as
	// with READ, see sizeHint); the data is right.
	if err := os.Truncate(path, 192*K); err != nil {
		t.Fatal(err)
	}
	check("truncated to the end", 160*K, 32*K, false, []seg{{false, 160 * K, 32 * K}}, want[160*K:192*K])
	// Truncated shorter: the read comes back short with eof.
	if err := os.Truncate(path, 170*K); err != nil {
		t.Fatal(err)
	}
	check("truncated shorter", 160*K, 32*K, true, []seg{{false, 160 * K, 10 * K}}, want[160*K:170*K])

	// Anonymous READ_PLUS checks permission every time, hint or not.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := h.readAs(as1000, fh, nfs4.OpReadPlus, nfs4.AnonStateid); got != nfs4.ErrAccess {
		t.Fatalf("anonymous READ_PLUS of a 0600 file as uid 1000: %d, want NFS4ERR_ACCESS", got)
	}
}

// punch makes [off, off+n) of the file at path a hole.
func punch(path string, off, n int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}
