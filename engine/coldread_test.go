package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
)

func policyOf(e Engine) *readPolicy {
	switch e := e.(type) {
	case *Uring:
		return e.reads
	case *Portable:
		return e.reads
	}
	return nil
}

// evict drops a file from the page cache.
func evict(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// TestColdReadsGoDirect: with the default policy (auto) a READ of a file
// not in the page cache goes O_DIRECT, in both engines, and returns the
// file's bytes (also for odd ranges and READ_PLUS); once the file is in
// the page cache, READs are buffered again.
func TestColdReadsGoDirect(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		if v.opts.DirectIO != "" {
			t.Skip("auto policy only")
		}
		f := start(t, v)
		path := filepath.Join(f.dir, "data.bin")
		f.fsync(t, path)
		evict(t, path)
		if !uncached(fdOf(t, path), 0, 1<<20) {
			t.Skip("cannot evict here (tmpfs, or no cachestat)")
		}
		p := policyOf(f.eng)
		c := f.dial(t, client.Options{})
		ctx := ctxT(t)
		want := f.data["data.bin"]
		for _, chunk := range []uint32{1 << 20, 64 << 10, 4097} {
			evict(t, path)
			got, err := c.ReadFile(ctx, "data.bin", chunk)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("cold READ chunk %d: %d bytes (want %d), err %v", chunk, len(got), len(want), err)
			}
			evict(t, path)
			got, err = c.ReadFilePlus(ctx, "data.bin", chunk)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("cold READ_PLUS chunk %d: %d bytes, err %v", chunk, len(got), err)
			}
		}
		cold := p.stats()
		if cold.Direct == 0 {
			t.Fatalf("no O_DIRECT read of a cold file: %+v", cold)
		}
		if _, ok := f.eng.(*Uring); ok && cold.Fixed == 0 && os.Geteuid() == 0 {
			t.Fatalf("io_uring engine made no read into registered buffers: %+v", cold)
		}
		// Hot: read locally so the page cache has it all.
		if _, err := os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		if got, err := c.ReadFile(ctx, "data.bin", 1<<20); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("hot READ: %d bytes, err %v", len(got), err)
		}
		if hot := p.stats(); hot.Direct != cold.Direct || hot.Buffered == cold.Buffered {
			t.Fatalf("hot file read O_DIRECT: before %+v after %+v", cold, hot)
		}
	})
}

func (f *fixture) fsync(t *testing.T, path string) {
	t.Helper()
	fl, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if err := fl.Sync(); err != nil {
		t.Fatal(err)
	}
}

func fdOf(t *testing.T, path string) int {
	t.Helper()
	fl, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	return int(fl.Fd())
}

// TestColdSparseTailReadPlus: a cold file whose data ends in a hole past a
// short last block ("abc", then extended to 2 MiB + 5 bytes, as the kernel
// e2e's trunc-up.bin) reads back whole with READ_PLUS and READ at every
// chunk size.
func TestColdSparseTailReadPlus(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		path := filepath.Join(f.dir, "tail.bin")
		if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 2097157); err != nil {
			t.Fatal(err)
		}
		f.fsync(t, path)
		want, _ := os.ReadFile(path)
		c := f.dial(t, client.Options{})
		ctx := ctxT(t)
		for _, chunk := range []uint32{1 << 20, 64 << 10, 4097, 1<<20 + 5} {
			evict(t, path)
			got, err := c.ReadFilePlus(ctx, "tail.bin", chunk)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("cold READ_PLUS chunk %d: %d bytes (want %d), err %v", chunk, len(got), len(want), err)
			}
			evict(t, path)
			got, err = c.ReadFile(ctx, "tail.bin", chunk)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("cold READ chunk %d: %d bytes (want %d), err %v", chunk, len(got), len(want), err)
			}
		}
	})
}
