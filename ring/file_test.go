package ring

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// tempFile creates a file holding data and returns its fd (closed at cleanup).
func tempFile(t testing.TB, data []byte, flags int) (int, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd, path
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

func TestReadWrite(t *testing.T) {
	r := newRing(t, Options{})
	fd, _ := tempFile(t, nil, 0)
	want := pattern(10000)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepWrite(fd, want, 0) }), int32(len(want)))
	got := make([]byte, len(want))
	mustRes(t, do(t, r, func(s *SQE) { s.PrepRead(fd, got, 0) }), int32(len(want)))
	if !bytes.Equal(got, want) {
		t.Fatal("read data differs from written data")
	}
	// Short read at EOF.
	mustRes(t, do(t, r, func(s *SQE) { s.PrepRead(fd, got, 9000) }), 1000)
}

func TestReadvWritev(t *testing.T) {
	r := newRing(t, Options{})
	fd, _ := tempFile(t, nil, 0)
	a, b := []byte("hello, "), []byte("vectored world")
	iovs := []unix.Iovec{iov(a), iov(b)}
	mustRes(t, do(t, r, func(s *SQE) { s.PrepWritev(fd, iovs, 100) }), int32(len(a)+len(b)))
	x, y := make([]byte, 5), make([]byte, 30)
	riovs := []unix.Iovec{iov(x), iov(y)}
	mustRes(t, do(t, r, func(s *SQE) { s.PrepReadv(fd, riovs, 100) }), int32(len(a)+len(b)))
	if got := string(x) + string(y[:16]); got != "hello, vectored world" {
		t.Fatalf("got %q", got)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size != 121 {
		t.Fatalf("size %d, %v", st.Size, err)
	}
}

func iov(b []byte) unix.Iovec {
	v := unix.Iovec{Base: &b[0]}
	v.SetLen(len(b))
	return v
}

func TestODirectRead(t *testing.T) {
	r := newRing(t, Options{})
	want := pattern(64 << 10)
	fd, path := tempFile(t, want, 0)
	if err := unix.Fsync(fd); err != nil {
		t.Fatal(err)
	}
	dfd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skip("O_DIRECT refused:", err)
	}
	defer unix.Close(dfd)
	bufs, err := AllocBuffers(2, 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	c := do(t, r, func(s *SQE) { s.PrepRead(dfd, bufs.Buf(1), 32<<10) })
	if errnoOf(c) == unix.EINVAL {
		t.Skip("filesystem refuses this O_DIRECT read")
	}
	mustRes(t, c, 32<<10)
	if !bytes.Equal(bufs.Buf(1), want[32<<10:]) {
		t.Fatal("O_DIRECT data differs")
	}
}

func TestAllocBuffersAligned(t *testing.T) {
	bufs, err := AllocBuffers(3, 5000)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	for i := range bufs.Count() {
		b := bufs.Buf(i)
		if len(b) != 5000 || cap(b) != 5000 {
			t.Fatalf("buf %d len %d cap %d", i, len(b), cap(b))
		}
		if addr := uintptrOf(b); addr%Align != 0 {
			t.Fatalf("buf %d at %#x not aligned", i, addr)
		}
		b[len(b)-1] = 1
	}
}

func TestFsyncFallocate(t *testing.T) {
	r := newRing(t, Options{})
	fd, _ := tempFile(t, []byte("data"), 0)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepFsync(fd, 0) }), 0)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepFsync(fd, FsyncDatasync) }), 0)
	c := do(t, r, func(s *SQE) { s.PrepFallocate(fd, 0, 0, 1<<20) })
	if errnoOf(c) == unix.EOPNOTSUPP {
		t.Skip("filesystem has no fallocate")
	}
	mustRes(t, c, 0)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size != 1<<20 {
		t.Fatalf("size after fallocate %d, %v", st.Size, err)
	}
	c = do(t, r, func(s *SQE) {
		s.PrepFallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 1<<20)
	})
	mustRes(t, c, 0)
}

func TestOpenatStatxClose(t *testing.T) {
	r := newRing(t, Options{})
	dir := t.TempDir()
	path, err := unix.BytePtrFromString(filepath.Join(dir, "new"))
	if err != nil {
		t.Fatal(err)
	}
	c := do(t, r, func(s *SQE) {
		s.PrepOpenat(unix.AT_FDCWD, path, unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	})
	mustRes(t, c, -1)
	fd := int(c.Res)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepWrite(fd, []byte("12345"), 0) }), 5)
	st := new(unix.Statx_t)
	empty, _ := unix.BytePtrFromString("")
	c = do(t, r, func(s *SQE) {
		s.PrepStatx(fd, empty, unix.AT_EMPTY_PATH, unix.STATX_BASIC_STATS, st)
	})
	mustRes(t, c, 0)
	if st.Size != 5 || st.Mode&0o777 != 0o600 {
		t.Fatalf("statx size %d mode %o", st.Size, st.Mode)
	}
	mustRes(t, do(t, r, func(s *SQE) { s.PrepClose(fd) }), 0)
	if err := unix.Close(fd); err != unix.EBADF {
		t.Fatalf("fd still open after PrepClose: %v", err)
	}
}

func TestPipe(t *testing.T) {
	r := newRing(t, Options{})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	// Read first: it parks in the kernel until the write lands.
	got := make([]byte, 64)
	s := r.GetSQE()
	s.PrepRead(p[0], got, ^uint64(0))
	s.UserData = 1
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	msg := []byte("through the pipe")
	s = r.GetSQE()
	s.PrepWrite(p[1], msg, ^uint64(0))
	s.UserData = 2
	if _, err := r.SubmitAndWait(2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c := reap(t, r)
		mustRes(t, c, int32(len(msg)))
	}
	if !bytes.Equal(got[:len(msg)], msg) {
		t.Fatalf("got %q", got)
	}
}

func TestRegisteredBuffers(t *testing.T) {
	r := newRing(t, Options{})
	want := pattern(16 << 10)
	fd, _ := tempFile(t, want, 0)
	bufs, err := AllocBuffers(4, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer bufs.Free()
	if err := r.RegisterBuffers([][]byte{bufs.Mem()}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		b := bufs.Buf(i)
		mustRes(t, do(t, r, func(s *SQE) { s.PrepReadFixed(fd, b, uint64(i*4096), 0) }), 4096)
		if !bytes.Equal(b, want[i*4096:(i+1)*4096]) {
			t.Fatalf("fixed read %d differs", i)
		}
	}
	copy(bufs.Buf(0), "fixed write")
	mustRes(t, do(t, r, func(s *SQE) { s.PrepWriteFixed(fd, bufs.Buf(0)[:11], 0, 0) }), 11)
	if err := r.UnregisterBuffers(); err != nil {
		t.Fatal(err)
	}
}

func TestRegisteredFiles(t *testing.T) {
	r := newRing(t, Options{})
	fd, _ := tempFile(t, []byte("registered file"), 0)
	if err := r.RegisterFiles([]int32{-1, int32(fd)}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 32)
	c := do(t, r, func(s *SQE) {
		s.PrepRead(1, got, 0)
		s.Flags |= SQEFixedFile
	})
	mustRes(t, c, 15)
	if string(got[:15]) != "registered file" {
		t.Fatalf("got %q", got[:15])
	}
	if err := r.UnregisterFiles(); err != nil {
		t.Fatal(err)
	}

	// Sparse table, filled by update.
	if err := r.RegisterFilesSparse(8); err != nil {
		t.Fatal(err)
	}
	if n, err := r.UpdateFiles(5, []int32{int32(fd)}); err != nil || n != 1 {
		t.Fatalf("UpdateFiles = %d, %v", n, err)
	}
	c = do(t, r, func(s *SQE) {
		s.PrepRead(5, got[:4], 11)
		s.Flags |= SQEFixedFile
	})
	mustRes(t, c, 4)
	if string(got[:4]) != "file" {
		t.Fatalf("got %q", got[:4])
	}
	c = do(t, r, func(s *SQE) {
		s.PrepRead(4, got, 0)
		s.Flags |= SQEFixedFile
	})
	if errnoOf(c) != unix.EBADF {
		t.Fatalf("read from empty slot: Res %d, want -EBADF", c.Res)
	}
	mustRes(t, do(t, r, func(s *SQE) { s.PrepCloseFixed(5) }), 0)
}

// TestSplice moves file bytes through a pipe to a socket with SPLICE, as
// the engine sends READ data: file -> pipe at an odd offset, pipe -> socket.
func TestSplice(t *testing.T) {
	r := newRing(t, Options{})
	want := pattern(200000)
	fd, _ := tempFile(t, want, 0)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sp[0])
	defer unix.Close(sp[1])
	const off, n = 1001, 30000
	mustRes(t, do(t, r, func(s *SQE) { s.PrepSplice(fd, off, p[1], -1, n, 0) }), n)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepSplice(p[0], -1, sp[0], -1, n, 0) }), n)
	got := make([]byte, n)
	for k := 0; k < n; {
		m, err := unix.Read(sp[1], got[k:])
		if err != nil || m == 0 {
			t.Fatalf("read socket: %d, %v", m, err)
		}
		k += m
	}
	if !bytes.Equal(got, want[off:off+n]) {
		t.Fatal("spliced bytes differ from the file's")
	}
	// At end of file a splice moves what is left, then 0.
	mustRes(t, do(t, r, func(s *SQE) { s.PrepSplice(fd, int64(len(want)-10), p[1], -1, n, 0) }), 10)
	mustRes(t, do(t, r, func(s *SQE) { s.PrepSplice(fd, int64(len(want)), p[1], -1, n, 0) }), 0)
}
