package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/internal/testfs"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// reservedExport mounts a fresh 32 MiB ext4 with half its blocks reserved
// for root (mkfs.ext4 -m 50), writable by all, and returns it with the
// bytes free to users (f_bavail).
func reservedExport(t *testing.T) (dir string, userFree int64) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "mnt")
	testfs.Ext4(t, dir, 32, "-m", "50")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(dir, &sf); err != nil {
		t.Fatal(err)
	}
	return dir, int64(sf.Bavail) * sf.Bsize
}

// TestUserWritesStopAtRootReserve: on an ext4 with 50 % of its blocks
// reserved for root, a client's uid 1000 gets NFS4ERR_NOSPC where the
// users' share ends, from WRITE and from ALLOCATE, as the same uid would
// locally (the server wrote as root and filled the reserve), and root
// goes on into the reserve. The
// writes are 300 KiB at odd offsets, so the engine's direct mode splits
// them into a buffered head and tail around an O_DIRECT middle, submitted
// together through io_uring on the uring engine (NFSD_ENGINE=uring).
func TestUserWritesStopAtRootReserve(t *testing.T) {
	dir, userFree := reservedExport(t)
	fio := engine.NewFileIO(engine.IODirect)
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, IO: fio}, engine.Options{FileIO: fio})
	ctx := ctxT(t)
	user, err := client.Dial(ctx, addr, client.Options{UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	root, err := client.Dial(ctx, addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	chunk := make([]byte, 300<<10)
	for i := range chunk {
		chunk[i] = byte(i) | 1
	}
	// fill writes chunks to name as c until an error or limit bytes.
	fill := func(c *client.Client, name string, limit int64) (int64, error) {
		rootFH, err := c.RootFH(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.OpenCreate(ctx, rootFH, name, 0o644)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		defer c.CloseFile(ctx, f.FH, f.Stateid)
		off := int64(100)
		for off < limit {
			res, err := c.Write(ctx, f.FH, f.Stateid, uint64(off), nfs4.Unstable4, chunk)
			if err != nil {
				return off, err
			}
			off += int64(res.Count)
		}
		return off, nil
	}
	n, err := fill(user, "user", 2*userFree)
	var se *client.StatusError
	if !errors.As(err, &se) || se.Status != nfs4.ErrNospc {
		t.Fatalf("uid 1000 wrote %d bytes (%d free to users), then %v; want NFS4ERR_NOSPC", n, userFree, err)
	}
	if n > userFree+int64(len(chunk)) {
		t.Errorf("uid 1000 wrote %d bytes, %d free to users", n, userFree)
	}
	if m, err := fill(root, "root", userFree/2); err != nil {
		t.Errorf("root wrote %d bytes into the reserve, then %v", m, err)
	}

	// ALLOCATE (fallocate through io_uring on the uring engine, where it
	// runs in an io-wq thread with the credentials taken at submission).
	allocate := func(c *client.Client, name string, n uint64) error {
		rootFH, err := c.RootFH(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.OpenCreate(ctx, rootFH, name, 0o644)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		defer c.CloseFile(ctx, f.FH, f.Stateid)
		return c.Compound(ctx, func(e *xdr.Encoder) int {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(f.FH)
			e.Uint32(nfs4.OpAllocate)
			f.Stateid.Encode(e)
			e.Uint64(0)
			e.Uint64(n)
			return 2
		}, func(r *client.Reply) error {
			if err := r.Op(nfs4.OpPutfh); err != nil {
				return err
			}
			return r.Op(nfs4.OpAllocate)
		})
	}
	if err := allocate(user, "user-alloc", 1<<20); !errors.As(err, &se) || se.Status != nfs4.ErrNospc {
		t.Errorf("ALLOCATE of 1 MiB as uid 1000 with the users' share used: %v, want NFS4ERR_NOSPC", err)
	}
	if err := allocate(root, "root-alloc", 1<<20); err != nil {
		t.Errorf("ALLOCATE of 1 MiB as root: %v", err)
	}
}
