// In-process integration tests: the server (nfs + portable engine) on
// 127.0.0.1 over a temporary directory, driven by the in-repo client.
package e2e

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// testFile is one file of the export and its expected content.
type testFile struct {
	name string
	data []byte
}

type fixture struct {
	dir   string
	addr  string
	files []testFile
}

const (
	k4  = 4 << 10
	k32 = 32 << 10
)

// testEngine is the engine the in-process tests run on: NFSD_ENGINE
// (uring or portable; make test runs the suite once with each).
func testEngine() string {
	if e := os.Getenv("NFSD_ENGINE"); e != "" {
		return e
	}
	return "portable"
}

// startServer builds the export and serves it until the test ends.
func startServer(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	f.makeFiles(t)
	f.addr, _ = serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: f.dir}}}, engine.Options{})
	return f
}

// serve runs a server made from cfg on engine name (skipping the test
// when io_uring is not available for "uring") on 127.0.0.1 until the test
// ends, and returns its address.
func serve(t *testing.T, name string, cfg nfs.Config, opts engine.Options) (string, *nfs.Server) {
	t.Helper()
	srv, err := nfs.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(name, srv, opts)
	if err != nil {
		srv.Close()
		if name == "uring" {
			t.Skipf("io_uring: %v", err)
		}
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	t.Cleanup(func() {
		eng.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	return ln.Addr().String(), srv
}

func (f *fixture) makeFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32() | 1) // never 0: data is not mistaken for a hole
		}
		return b
	}
	f.add(t, "data.bin", random(3<<20+123), nil)
	f.add(t, "hole.bin", make([]byte, 5<<20), nil)
	f.add(t, "empty", nil, nil)
	f.add(t, "small.txt", []byte("hello, world\n"), nil)
	f.add(t, "alt4k32k.bin", nil, alternate(random, k4, k32, 40))
	f.add(t, "alt32k4k.bin", nil, alternate(random, k32, k4, 40))
	// Ends in data, starts with a hole.
	f.add(t, "holefirst.bin", nil, append([]extent{{off: 0, hole: 100 << 10}}, extent{off: 100 << 10, data: random(10000)}))
	if err := os.Mkdir(filepath.Join(f.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.add(t, "sub/nested.txt", []byte("nested\n"), nil)
	if err := os.Symlink("data.bin", filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
}

// extent is a piece of a sparse file: data written at off, or a hole of
// the given length.
type extent struct {
	off  int64
	data []byte
	hole int64
}

func alternate(random func(int) []byte, data, hole, n int) []extent {
	var out []extent
	off := int64(0)
	for range n {
		out = append(out, extent{off: off, data: random(data)})
		off += int64(data)
		out = append(out, extent{off: off, hole: int64(hole)})
		off += int64(hole)
	}
	return out
}

// add writes a file, either plain data or sparse from extents (holes by
// truncation), and records its expected content.
func (f *fixture) add(t *testing.T, name string, data []byte, exts []extent) {
	p := filepath.Join(f.dir, name)
	fd, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if exts == nil {
		if _, err := fd.Write(data); err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && bytes.Count(data, []byte{0}) == len(data) {
			fd.Truncate(0)
			fd.Truncate(int64(len(data)))
		}
		f.files = append(f.files, testFile{name, data})
		return
	}
	var size int64
	for _, e := range exts {
		if e.data != nil {
			if _, err := fd.WriteAt(e.data, e.off); err != nil {
				t.Fatal(err)
			}
		}
		size = max(size, e.off+int64(len(e.data))+e.hole)
	}
	if err := fd.Truncate(size); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, size)
	for _, e := range exts {
		copy(want[e.off:], e.data)
	}
	f.files = append(f.files, testFile{name, want})
}

func (f *fixture) file(name string) []byte {
	for _, tf := range f.files {
		if tf.name == name {
			return tf.data
		}
	}
	panic(name)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, f *fixture) *client.Client {
	t.Helper()
	c, err := client.Dial(ctxT(t), f.addr, client.Options{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func TestNamespace(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bm := client.StandardAttrs
	bm.Set(nfs4.AttrSupportedAttrs)
	a, err := c.Getattr(ctx, root, bm)
	if err != nil {
		t.Fatal(err)
	}
	if a.Type != nfs4.NF4DIR || !a.Supported.Has(nfs4.AttrSize) || !a.Mask.Has(nfs4.AttrFileid) {
		t.Errorf("root attrs %+v", a)
	}
	ents, err := c.Readdir(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]client.DirEntry{}
	for _, e := range ents {
		got[e.Name] = e
	}
	osEnts, _ := os.ReadDir(f.dir)
	if len(got) != len(osEnts) || len(ents) != len(osEnts) {
		t.Errorf("READDIR: %d entries, directory has %d", len(ents), len(osEnts))
	}
	for _, oe := range osEnts {
		e, ok := got[oe.Name()]
		info, _ := os.Lstat(filepath.Join(f.dir, oe.Name()))
		ino := info.Sys().(*syscall.Stat_t).Ino
		wantType := uint32(nfs4.NF4REG)
		switch {
		case oe.IsDir():
			wantType = nfs4.NF4DIR
		case oe.Type()&os.ModeSymlink != 0:
			wantType = nfs4.NF4LNK
		}
		if !ok || e.Type != wantType || e.Fileid != ino || e.Attrs.Size != uint64(info.Size()) {
			t.Errorf("entry %s: %+v, want type %d fileid %d size %d", oe.Name(), e, wantType, ino, info.Size())
		}
	}

	fh, err := c.LookupPath(ctx, "sub/nested.txt")
	if err != nil {
		t.Fatal(err)
	}
	a, err = c.Getattr(ctx, fh, client.StandardAttrs)
	if err != nil || a.Size != 7 || a.Type != nfs4.NF4REG || a.Mode&0o777 != 0o644&^uint32(syscall.Umask(0o22)) {
		t.Errorf("nested attrs %+v err %v", a, err)
	}
	if _, err := c.Lookup(ctx, root, "missing"); !client.IsStatus(err, nfs4.ErrNoent) {
		t.Errorf("LOOKUP missing: %v, want NFS4ERR_NOENT", err)
	}
	if _, err := c.Lookup(ctx, fh, "x"); !client.IsStatus(err, nfs4.ErrNotdir) {
		t.Errorf("LOOKUP in a file: %v, want NFS4ERR_NOTDIR", err)
	}
	link, err := c.Lookup(ctx, root, "link")
	if err != nil {
		t.Fatal(err)
	}
	if target, err := c.Readlink(ctx, link); err != nil || target != "data.bin" {
		t.Errorf("READLINK %q %v", target, err)
	}
	sup, acc, err := c.Access(ctx, fh, nfs4.AccessRead|nfs4.AccessLookup)
	if err != nil || acc&nfs4.AccessRead == 0 || sup&nfs4.AccessRead == 0 {
		t.Errorf("ACCESS supported %#x access %#x err %v", sup, acc, err)
	}
}

func TestReadWholeFiles(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	for _, tf := range f.files {
		for _, chunk := range []uint32{1 << 20, 64 << 10, 4097} {
			got, err := c.ReadFile(ctx, tf.name, chunk)
			if err != nil || !bytes.Equal(got, tf.data) {
				t.Errorf("READ %s chunk %d: %d bytes (want %d), err %v, first diff %d", tf.name, chunk, len(got), len(tf.data), err, firstDiff(got, tf.data))
			}
			got, err = c.ReadFilePlus(ctx, tf.name, chunk)
			if err != nil || !bytes.Equal(got, tf.data) {
				t.Errorf("READ_PLUS %s chunk %d: %d bytes (want %d), err %v, first diff %d", tf.name, chunk, len(got), len(tf.data), err, firstDiff(got, tf.data))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// openFile opens name for reading and closes it when the test ends.
func openFile(t *testing.T, c *client.Client, name string) *client.File {
	t.Helper()
	ctx := ctxT(t)
	file, err := c.OpenPath(ctx, name)
	if err != nil {
		t.Fatalf("OPEN %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := c.CloseFile(ctx, file.FH, file.Stateid); err != nil {
			t.Errorf("CLOSE %s: %v", name, err)
		}
	})
	return file
}

// checkRange reads [off, off+count) with READ and READ_PLUS and compares
// with want, the whole file.
func checkRange(t *testing.T, c *client.Client, file *client.File, name string, want []byte, off uint64, count uint32) []client.Segment {
	t.Helper()
	ctx := ctxT(t)
	size := uint64(len(want))
	exp := []byte{}
	if off < size {
		exp = want[off:min(size, off+uint64(count))]
	}
	wantEOF := off+uint64(len(exp)) >= size
	data, eof, err := c.Read(ctx, file.FH, file.Stateid, off, count)
	if err != nil || !bytes.Equal(data, exp) || eof != wantEOF {
		t.Errorf("%s READ %d+%d: %d bytes eof=%v err=%v; want %d bytes eof=%v (first diff %d)",
			name, off, count, len(data), eof, err, len(exp), wantEOF, firstDiff(data, exp))
	}
	dst := bytes.Repeat([]byte{0xa5}, int(count))
	n, eof, segs, err := c.ReadPlus(ctx, file.FH, file.Stateid, off, count, dst)
	if err != nil || !bytes.Equal(dst[:n], exp) || eof != wantEOF {
		t.Errorf("%s READ_PLUS %d+%d: %d bytes eof=%v err=%v segs=%v; want %d bytes eof=%v (first diff %d)",
			name, off, count, n, eof, err, segs, len(exp), wantEOF, firstDiff(dst[:n], exp))
	}
	return segs
}

func TestReadRanges(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	for _, name := range []string{"data.bin", "alt4k32k.bin", "alt32k4k.bin", "hole.bin", "holefirst.bin", "small.txt", "empty"} {
		want := f.file(name)
		file := openFile(t, c, name)
		size := uint64(len(want))
		ranges := [][2]uint64{
			{0, 1}, {1, 1}, {3, 5}, {4095, 2}, {4096, 4096}, {4097, 8191}, {5000, 40000},
			{k4 + k32 - 1, 3}, {k32 - 7, 100}, {12345, 1 << 20}, {1, 1<<20 - 1},
			{size - 1, 10}, {size, 10}, {size + 1, 10}, {size + 1<<20, 4096}, {size / 2, 1 << 20},
		}
		for _, r := range ranges {
			if r[0] > size+1<<21 { // size-1 wrapped for the empty file
				continue
			}
			checkRange(t, c, file, name, want, r[0], uint32(r[1]))
		}
	}
}

// TestReadPlusSegments checks segment kinds where the layout is known: a
// READ_PLUS starting in a hole, and one starting in data.
func TestReadPlusSegments(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	name := "alt4k32k.bin"
	want := f.file(name)
	file := openFile(t, c, name)
	if !fsReportsHoles(t, filepath.Join(f.dir, name)) {
		t.Skip("file system does not report holes")
	}
	// Starts 100 bytes into the first hole.
	segs := checkRange(t, c, file, name, want, k4+100, 64<<10)
	if len(segs) == 0 || segs[0].Type != nfs4.ContentHole {
		t.Errorf("READ_PLUS from a hole: segments %v, want a HOLE first", segs)
	}
	// Starts in the second data block.
	segs = checkRange(t, c, file, name, want, k4+k32+10, 64<<10)
	if len(segs) == 0 || segs[0].Type != nfs4.ContentData {
		t.Errorf("READ_PLUS from data: segments %v, want DATA first", segs)
	}
	hasHole := false
	for _, s := range segs {
		hasHole = hasHole || s.Type == nfs4.ContentHole
	}
	if !hasHole {
		t.Errorf("READ_PLUS over 64K of a 4K/32K file: no HOLE in %v", segs)
	}
	// An all-hole file should cost far less on the wire than it delivers.
	hole := openFile(t, c, "hole.bin")
	before := c.Stats()
	buf := make([]byte, 1<<20)
	n, _, segs, err := c.ReadPlus(ctxT(t), hole.FH, hole.Stateid, 0, 1<<20, buf)
	after := c.Stats()
	if err != nil || n != 1<<20 {
		t.Fatalf("READ_PLUS hole.bin: n=%d err=%v", n, err)
	}
	if wire := after.BytesReceived - before.BytesReceived; wire > 4096 {
		t.Errorf("READ_PLUS of 1 MiB of hole took %d bytes on the wire (segments %v)", wire, segs)
	}
}

func fsReportsHoles(t *testing.T, p string) bool {
	fd, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	off, err := fd.Seek(0, 4) // SEEK_HOLE
	return err == nil && off == k4
}

func TestSeek(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	for _, name := range []string{"alt4k32k.bin", "alt32k4k.bin", "hole.bin", "holefirst.bin", "data.bin", "empty"} {
		p := filepath.Join(f.dir, name)
		size := uint64(len(f.file(name)))
		file := openFile(t, c, name)
		local, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, off := range []uint64{0, 1, k4 - 1, k4, k4 + 1, k32, k4 + k32, 100 << 10, size / 2, size - 1, size, size + 1} {
			if off > size+1 {
				continue
			}
			for _, what := range []uint32{nfs4.ContentData, nfs4.ContentHole} {
				whence := 3 // SEEK_DATA
				if what == nfs4.ContentHole {
					whence = 4
				}
				wantPos, lerr := local.Seek(int64(off), whence)
				eof, pos, err := c.Seek(ctx, file.FH, file.Stateid, off, what)
				switch {
				case lerr != nil: // ENXIO: nothing at or after off
					if err == nil && !eof {
						t.Errorf("%s SEEK(%d, what=%d): pos %d eof=%v, lseek says ENXIO: want NFS4ERR_NXIO or eof", name, off, what, pos, eof)
					} else if err != nil && !client.IsStatus(err, nfs4.ErrNxio) {
						t.Errorf("%s SEEK(%d, what=%d): %v, want NFS4ERR_NXIO", name, off, what, err)
					}
				case err != nil || pos != uint64(wantPos) || eof != (pos >= size):
					t.Errorf("%s SEEK(%d, what=%d): pos %d eof=%v err %v, want pos %d eof=%v", name, off, what, pos, eof, err, wantPos, uint64(wantPos) >= size)
				}
			}
		}
		local.Close()
	}
}

func TestConcurrentReads(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	names := []string{"data.bin", "alt4k32k.bin", "alt32k4k.bin", "hole.bin"}
	files := map[string]*client.File{}
	for _, n := range names {
		files[n] = openFile(t, c, n)
	}
	ctx := ctxT(t)
	errs := make(chan string, 1000)
	done := make(chan struct{})
	for g := range 16 {
		go func() {
			defer func() { done <- struct{}{} }()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			buf := make([]byte, 256<<10)
			for range 40 {
				name := names[rng.IntN(len(names))]
				want := f.file(name)
				off := rng.Uint64N(uint64(len(want)))
				count := 1 + rng.Uint32N(uint32(len(buf)))
				exp := want[off:min(uint64(len(want)), off+uint64(count))]
				file := files[name]
				if g%2 == 0 {
					data, _, err := c.Read(ctx, file.FH, file.Stateid, off, count)
					if err != nil || !bytes.Equal(data, exp) {
						errs <- name + " READ mismatch"
					}
					continue
				}
				n, _, _, err := c.ReadPlus(ctx, file.FH, file.Stateid, off, count, buf)
				if err != nil || !bytes.Equal(buf[:n], exp) {
					errs <- name + " READ_PLUS mismatch"
				}
			}
		}()
	}
	for range 16 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestStateids(t *testing.T) {
	f := startServer(t)
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "small.txt")
	if err != nil {
		t.Fatal(err)
	}
	file, err := c.OpenFH(ctx, fh, nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file.FH, fh) {
		t.Errorf("OPEN CLAIM_FH returned another handle")
	}
	codes, err := c.TestStateid(ctx, file.Stateid, nfs4.Stateid{Seqid: 1, Other: [12]byte{9, 9, 9}})
	if err != nil || len(codes) != 2 || codes[0] != nfs4.OK || codes[1] == nfs4.OK {
		t.Errorf("TEST_STATEID %v %v", codes, err)
	}
	data, _, err := c.Read(ctx, file.FH, file.Stateid, 0, 100)
	if err != nil || string(data) != "hello, world\n" {
		t.Errorf("READ %q %v", data, err)
	}
	if err := c.CloseFile(ctx, file.FH, file.Stateid); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx, file.FH, file.Stateid, 0, 100); err == nil {
		t.Errorf("READ with a closed stateid succeeded")
	}
	if err := c.FreeStateid(ctx, nfs4.Stateid{Seqid: 1, Other: [12]byte{1, 2, 3}}); err == nil {
		t.Errorf("FREE_STATEID of an unknown stateid succeeded")
	}
}
