package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

func TestPlanWrite(t *testing.T) {
	const K = 1024
	cases := []struct {
		name    string
		mode    IOMode
		nosplit bool
		off     int64
		n       int
		align   int
		want    []writePart
	}{
		{"buffered mode", IOBuffered, false, 0, 1 << 20, 4096, []writePart{{wBuffered, 0, 1 << 20}}},
		{"dontcache mode", IODontcache, false, 0, 1 << 20, 4096, []writePart{{wDontcache, 0, 1 << 20}}},
		{"aligned large", IODirect, false, 1 << 20, 1 << 20, 4096, []writePart{{wDirect, 0, 1 << 20}}},
		{"small aligned", IODirect, false, 8 * K, 4 * K, 4096, []writePart{{wBuffered, 0, 4 * K}}},
		{"small misaligned", IODirect, false, 100, 4 * K, 4096, []writePart{{wBuffered, 0, 4 * K}}},
		{"no O_DIRECT", IODirect, false, 0, 1 << 20, 0, []writePart{{wDontcache, 0, 1 << 20}}},
		// WriteAt looks no alignment up for small writes: they still go
		// buffered, not RWF_DONTCACHE.
		{"small, no alignment known", IODirect, false, 8 * K, 4 * K, 0, []writePart{{wBuffered, 0, 4 * K}}},
		{"32 KiB aligned", IODirect, false, 32 * K, 32 * K, 4096, []writePart{{wDirect, 0, 32 * K}}},
		// ior-hard: 47008-byte writes at multiples of 47008: under splitMin.
		{"ior-hard", IODirect, false, 47008, 47008, 4096, []writePart{{wBuffered, 0, 47008}}},
		{"large misaligned", IODirect, false, 100, 1 << 20, 4096,
			[]writePart{{wBuffered, 0, 3996}, {wDirect, 3996, 1048476}, {wBuffered, 1048476, 1 << 20}}},
		{"aligned start, ragged end", IODirect, false, 0, 300000, 4096,
			[]writePart{{wDirect, 0, 299008}, {wBuffered, 299008, 300000}}},
		{"no split", IODirect, true, 300001, 300001, 4096, []writePart{{wDontcache, 0, 300001}}},
		{"no split, aligned", IODirect, true, 0, 1 << 20, 4096, []writePart{{wDirect, 0, 1 << 20}}},
	}
	for _, tc := range cases {
		got := planWrite(tc.mode, !tc.nosplit, tc.off, tc.n, tc.align)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// Every mode writes the same bytes, whatever the split, with plain
// syscalls and through the rings; sync and allocate work too.
func TestFileIOWrites(t *testing.T) {
	rio, err := newRingIO(2)
	if err != nil {
		t.Log("io_uring unavailable, plain syscalls only:", err)
	} else {
		defer rio.close()
	}
	for _, mode := range []IOMode{IODirect, IODontcache, IOBuffered} {
		t.Run(mode.String(), func(t *testing.T) { checkWrites(t, NewFileIO(mode)) })
		if rio != nil {
			t.Run(mode.String()+"-ring", func(t *testing.T) {
				io := NewFileIO(mode)
				io.useRings(rio)
				checkWrites(t, io)
			})
		}
	}
}

// checkWrites writes ten 300001-byte chunks (misaligned in file and in
// memory), syncs and extends the file, and checks what is on disk.
func checkWrites(t *testing.T, io *FileIO) {
	p := filepath.Join(t.TempDir(), "f")
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CREAT, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	dfd, err := unix.Open(p, unix.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		dfd = -1
	} else {
		defer unix.Close(dfd)
	}
	const size = 300001
	want := make([]byte, 10*size)
	for i := 0; i < 10; i++ {
		chunk := bytes.Repeat([]byte{byte(i + 1)}, size)
		copy(want[i*size:], chunk)
		buf := append([]byte{0}, chunk...)[1:] // odd address: misaligned for O_DIRECT
		if n, err := io.WriteAt(nfs.NewFile(fd, dfd), buf, int64(i*size)); err != nil || n != len(chunk) {
			t.Fatalf("write %d: %d %v", i, n, err)
		}
	}
	if err := io.Sync(fd, true); err != nil {
		t.Fatal(err)
	}
	if err := io.Fallocate(fd, 0, 0, 4<<20); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got[:len(want)], want) || len(got) != 4<<20 {
		t.Fatalf("file content differs (len %d)", len(got))
	}
}

// TestWritebackAfter: past WritebackAfter bytes written through the page
// cache, the file's dirty pages are handed to writeback (cachestat(2) sees
// them leave the dirty state) instead of waiting for the COMMIT.
func TestWritebackAfter(t *testing.T) {
	dirtyAfter := func(after int64) uint64 {
		p := filepath.Join(t.TempDir(), "f")
		fd, err := unix.Open(p, unix.O_RDWR|unix.O_CREAT, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		io := NewFileIO(IOBuffered)
		io.WritebackAfter = after
		chunk := bytes.Repeat([]byte{7}, 64<<10)
		for off := 0; off < 4<<20; off += len(chunk) {
			if n, err := io.WriteAt(nfs.NewFile(fd, -1), chunk, int64(off)); err != nil || n != len(chunk) {
				t.Fatalf("write at %d: %d %v", off, n, err)
			}
		}
		var cs unix.Cachestat_t
		if err := unix.Cachestat(uint(fd), &unix.CachestatRange{Len: 4 << 20}, &cs, 0); err != nil {
			t.Skip("no cachestat(2):", err)
		}
		return cs.Dirty
	}
	const pages = (4 << 20) / pageSize
	if d := dirtyAfter(0); d < pages/2 {
		t.Skipf("the kernel wrote back %d of %d pages by itself: nothing to compare", pages-d, pages)
	}
	if d := dirtyAfter(1 << 20); d > pages/4 {
		t.Errorf("%d of %d pages still dirty with writeback started every MiB", d, pages)
	}
}
