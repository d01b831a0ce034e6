package ring

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSparseBuffers: a sparse buffer table filled slot by slot serves
// fixed reads (also O_DIRECT ones) from the slot named; an empty slot is
// refused.
func TestSparseBuffers(t *testing.T) {
	r := newRing(t, Options{})
	if err := r.RegisterBuffersSparse(8); err != nil {
		t.Skipf("sparse buffer table: %v", err)
	}
	want := pattern(64 << 10)
	fd, path := tempFile(t, want, 0)
	a, err := AllocBuffers(4, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := AllocBuffers(1, 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if n, err := r.UpdateBuffers(3, [][]byte{a.Mem(), b.Mem()}); err != nil || n != 2 {
		t.Fatalf("UpdateBuffers: %d, %v", n, err)
	}
	mustRes(t, do(t, r, func(s *SQE) { s.PrepReadFixed(fd, a.Buf(2), 4096, 3) }), 4096)
	if !bytes.Equal(a.Buf(2), want[4096:8192]) {
		t.Fatal("fixed read into slot 3 differs")
	}
	if dfd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT, 0); err == nil {
		defer unix.Close(dfd)
		mustRes(t, do(t, r, func(s *SQE) { s.PrepReadFixed(dfd, b.Buf(0), 8192, 4) }), 32<<10)
		if !bytes.Equal(b.Buf(0), want[8192:8192+32<<10]) {
			t.Fatal("O_DIRECT fixed read into slot 4 differs")
		}
	}
	if c := do(t, r, func(s *SQE) { s.PrepReadFixed(fd, a.Buf(0), 0, 0) }); c.Res >= 0 {
		t.Fatalf("read into the empty slot 0 succeeded: %d", c.Res)
	}
}
