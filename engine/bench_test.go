package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// BenchmarkEngines compares the engines in one process: the in-repo client
// drives a server on 127.0.0.1 over a page-cached 64 MiB file.
//
// cpu-us/op is process CPU time (user + system, getrusage RUSAGE_SELF)
// per operation, so it includes the client's work, which is the same for
// every engine: compare engines by the difference, not the absolute value.
func BenchmarkEngines(b *testing.B) {
	for _, v := range variants() {
		b.Run(v.label(), func(b *testing.B) {
			if v.name == "uring" && ring.Available() != nil {
				b.Skip("no io_uring")
			}
			f := benchServer(b, v)
			b.Run("seq1M", func(b *testing.B) { benchRead(b, f, 1, 1<<20, false) })
			b.Run("rand4K-qd16", func(b *testing.B) { benchRead(b, f, 16, 4<<10, true) })
		})
	}
}

const benchFile = 64 << 20

func benchServer(b *testing.B, v variant) *fixture {
	f := &fixture{dir: b.TempDir(), data: map[string][]byte{}}
	data := random(rand.New(rand.NewPCG(5, 6)), benchFile)
	if err := os.WriteFile(filepath.Join(f.dir, "big"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	os.ReadFile(filepath.Join(f.dir, "big")) // warm the page cache
	f.serve(b, v)
	return f
}

// benchRead keeps qd reads of size n in flight on one connection, at
// sequential or random (n-aligned) offsets.
func benchRead(b *testing.B, f *fixture, qd, n int, rnd bool) {
	c := f.dial(b, client.Options{})
	ctx := context.Background()
	file, err := c.OpenPath(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Bool
	b.SetBytes(int64(n))
	b.ResetTimer()
	before := cpuTime()
	start := time.Now()
	for g := range qd {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				off := (i * int64(n)) % benchFile
				if rnd {
					off = rng.Int64N(benchFile/int64(n)) * int64(n)
				}
				data, _, err := c.Read(ctx, file.FH, file.Stateid, uint64(off), uint32(n))
				if err != nil || len(data) != n {
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - before
	b.StopTimer()
	if failed.Load() {
		b.Fatal("read failed")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
