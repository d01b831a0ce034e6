package ring

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	benchFileSize = 16 << 20
	benchBlock    = 4096
)

// cachedFile creates a benchFileSize file and reads it once so that the
// benchmarks measure the I/O path, not the disk.
func cachedFile(b *testing.B) int {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench")
	if err := os.WriteFile(path, pattern(benchFileSize), 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := os.ReadFile(path); err != nil {
		b.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Close(fd) })
	return fd
}

// BenchmarkRingRead does 4 KiB reads of a cached file keeping qd in flight.
func BenchmarkRingRead(b *testing.B) {
	for _, qd := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("qd=%d", qd), func(b *testing.B) { benchRingRead(b, qd) })
	}
}

func benchRingRead(b *testing.B, qd int) {
	r := newRing(b, Options{Entries: uint32(qd)})
	fd := cachedFile(b)
	bufs, err := AllocBuffers(qd, benchBlock)
	if err != nil {
		b.Fatal(err)
	}
	defer bufs.Free()
	var off uint64
	issue := func(slot int) {
		s := r.GetSQE()
		s.PrepRead(fd, bufs.Buf(slot), off)
		s.UserData = uint64(slot)
		off = (off + benchBlock) % benchFileSize
	}
	cqes := make([]CQE, qd)
	b.SetBytes(benchBlock)
	b.ResetTimer()
	issued, done := 0, 0
	for ; issued < min(qd, b.N); issued++ {
		issue(issued)
	}
	for done < b.N {
		if _, err := r.SubmitAndWait(1); err != nil {
			b.Fatal(err)
		}
		n := r.PeekBatch(cqes)
		for _, c := range cqes[:n] {
			if c.Res != benchBlock {
				b.Fatalf("read Res %d", c.Res)
			}
			done++
			if issued < b.N {
				issue(int(c.UserData))
				issued++
			}
		}
		r.Advance(uint32(n))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkPread is the same reads with plain pread(2), for comparison.
func BenchmarkPread(b *testing.B) {
	fd := cachedFile(b)
	bufs, err := AllocBuffers(1, benchBlock)
	if err != nil {
		b.Fatal(err)
	}
	defer bufs.Free()
	buf := bufs.Buf(0)
	var off int64
	b.SetBytes(benchBlock)
	b.ResetTimer()
	for range b.N {
		if n, err := unix.Pread(fd, buf, off); n != benchBlock || err != nil {
			b.Fatalf("pread %d, %v", n, err)
		}
		off = (off + benchBlock) % benchFileSize
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
