package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// TestRemovedOnHostFreesSpace (issue 21 finding 9): a file the client
// read, wrote and closed, then removed on the server's host, loses the
// server's cached descriptors within a few seconds (so its blocks are
// freed) and its handle answers NFS4ERR_STALE to GETATTR, READ and
// WRITE, as knfsd's does. Both engines.
func TestRemovedOnHostFreesSpace(t *testing.T) {
	f := &fixture{dir: t.TempDir()}
	const size = 32 << 20
	big := make([]byte, size)
	for i := range big {
		big[i] = byte(i | 1)
	}
	p := filepath.Join(f.dir, "big.bin")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	f.addr, _ = serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: f.dir}}, UnlinkSweep: 50 * time.Millisecond},
		engine.Options{})
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	file, err := c.OpenFH(ctx, fh, nfs4.ShareAccessBoth)
	if err != nil {
		t.Fatal(err)
	}
	for off := uint64(0); off < size; off += 1 << 20 {
		if _, _, err := c.Read(ctx, fh, file.Stateid, off, 1<<20); err != nil {
			t.Fatalf("READ at %d: %v", off, err)
		}
	}
	if _, err := c.Write(ctx, fh, file.Stateid, 0, nfs4.FileSync4, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseFile(ctx, fh, file.Stateid); err != nil {
		t.Fatal(err)
	}
	var before syscall.Statfs_t
	syscall.Statfs(f.dir, &before)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if serverFDs(t, "big.bin") == 0 {
		t.Fatal("the server kept no descriptor of the file: the test tests nothing")
	}
	start := time.Now()
	for serverFDs(t, "big.bin") > 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%d descriptors of the removed file still open after 5s", serverFDs(t, "big.bin"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	closed := time.Since(start)
	// The filesystem frees the blocks once the last descriptor is gone,
	// not always before close returns (ext4: about a second later here).
	// Other processes share the filesystem, so wait for half the file.
	for freed := int64(0); freed < size/2; {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("statfs: %d KiB freed 10s after the rm of a %d KiB file", freed>>10, size>>10)
		}
		time.Sleep(20 * time.Millisecond)
		var now syscall.Statfs_t
		syscall.Statfs(f.dir, &now)
		freed = (int64(now.Bavail) - int64(before.Bavail)) * now.Bsize
	}
	t.Logf("descriptors closed after %v, space freed after %v", closed.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))

	stale := func(what string, err error) {
		t.Helper()
		var se *client.StatusError
		if !errors.As(err, &se) || se.Status != nfs4.ErrStale {
			t.Errorf("%s of the removed file: %v, want NFS4ERR_STALE", what, err)
		}
	}
	_, err = c.Getattr(ctx, fh, client.StandardAttrs)
	stale("GETATTR", err)
	_, _, err = c.Read(ctx, fh, nfs4.Stateid{}, 0, 4096)
	stale("READ", err)
	_, err = c.Write(ctx, fh, nfs4.Stateid{}, 0, nfs4.FileSync4, []byte("y"))
	stale("WRITE", err)
}

// serverFDs counts this process's descriptors of a deleted file named
// name: the in-process server's.
func serverFDs(t *testing.T, name string) int {
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
