package engine

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/ring"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// smallFS mounts a filesystem of a few MiB for a test: "ext4" (an image on
// a loop device, 4 KiB blocks: files end at 2^44 - 4 KiB) or "tmpfs". It
// skips the test when not root or a tool is missing.
func smallFS(t *testing.T, kind string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	tmp := t.TempDir()
	mnt := filepath.Join(tmp, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	var mount *exec.Cmd
	switch kind {
	case "ext4":
		mkfs, err := exec.LookPath("mkfs.ext4")
		if err != nil {
			t.Skip("mkfs.ext4 missing (apt-get install e2fsprogs)")
		}
		img := filepath.Join(tmp, "fs.img")
		if out, err := exec.Command(mkfs, "-q", "-F", "-b", "4096", img, "8M").CombinedOutput(); err != nil {
			t.Skipf("mkfs.ext4: %v %s", err, out)
		}
		mount = exec.Command("mount", "-o", "loop", img, mnt)
	case "tmpfs":
		mount = exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt)
	}
	if out, err := mount.CombinedOutput(); err != nil {
		t.Skipf("mount %s: %v %s", kind, err, out)
	}
	// Registered after TempDir's cleanup, so it runs first.
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	return mnt
}

// forEachWriteMode runs f per engine and --io-mode, serving a temp dir on
// a filesystem of the kind smallFS makes ("": the default temp dir).
func forEachWriteMode(t *testing.T, kind string, f func(t *testing.T, fx *fixture, c *client.Client)) {
	for _, name := range Names {
		for _, mode := range []IOMode{IODirect, IODontcache, IOBuffered} {
			t.Run(name+"-"+mode.String(), func(t *testing.T) {
				if name == "uring" {
					if err := ring.Available(); err != nil {
						t.Skipf("io_uring: %v", err)
					}
				}
				dir := t.TempDir()
				if kind != "" {
					dir = smallFS(t, kind)
				}
				fx := &fixture{dir: dir, data: map[string][]byte{}}
				fx.serve(t, variant{name: name, opts: Options{FileIO: NewFileIO(mode)}})
				f(t, fx, fx.dial(t, client.Options{}))
			})
		}
	}
}

// writeSizes are a small write, an aligned large one (O_DIRECT in direct
// mode) and a misaligned large one (split in direct mode).
var writeSizes = []int{4096, 256 << 10, 300001}

// TestWriteFullFilesystem fills a small filesystem with WRITEs of each
// size: every reply is either a count within the request (and what it
// counts is on disk) or NFS4ERR_NOSPC, never NFS4_OK with a wrapped count;
// then COMMIT, ALLOCATE and COPY there answer NOSPC too, or succeed.
func TestWriteFullFilesystem(t *testing.T) {
	for _, kind := range []string{"ext4", "tmpfs"} {
		t.Run(kind, func(t *testing.T) {
			forEachWriteMode(t, kind, func(t *testing.T, fx *fixture, c *client.Client) {
				ctx := ctxT(t)
				root, err := c.RootFH(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, size := range writeSizes {
					fillUntilFull(t, c, fx, root, size)
				}
				file, err := c.OpenCreate(ctx, root, "more", 0o644)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Commit(ctx, file.FH, 0, 0); err != nil {
					t.Fatalf("COMMIT: %v", err)
				}
				if st := fallocate(t, c, file, nfs4.OpAllocate, 0, 64<<20); st != nfs4.ErrNospc {
					t.Fatalf("ALLOCATE of 64 MiB on a full filesystem: %s", client.StatusName(st))
				}
				src, err := c.OpenPath(ctx, "fill-4096")
				if err != nil {
					t.Fatal(err)
				}
				n, st := copyRange(t, c, src, file, 0, 0, 0)
				if st != nfs4.ErrNospc && !(st == nfs4.OK && n < 8<<20) {
					t.Fatalf("COPY to a full filesystem: %s, %d bytes", client.StatusName(st), n)
				}
			})
		})
	}
}

// fillUntilFull writes size-byte chunks to a new file until the
// filesystem says NOSPC and checks the file holds what the replies
// counted.
func fillUntilFull(t *testing.T, c *client.Client, fx *fixture, root []byte, size int) {
	t.Helper()
	ctx := ctxT(t)
	name := "fill-" + strconv.Itoa(size)
	file, err := c.OpenCreate(ctx, root, name, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	chunk := bytes.Repeat([]byte{0x5a}, size)
	for i := 0; ; i++ {
		if i > 2*(8<<20)/size+8 {
			t.Fatalf("%d-byte writes: no NOSPC after %d bytes", size, len(want))
		}
		res, err := c.Write(ctx, file.FH, file.Stateid, uint64(len(want)), nfs4.Unstable4, chunk)
		if client.IsStatus(err, nfs4.ErrNospc) {
			break
		}
		if err != nil {
			t.Fatalf("%d-byte write at %d: %v", size, len(want), err)
		}
		if res.Count == 0 {
			t.Fatalf("%d-byte write at %d: NFS4_OK, count 0", size, len(want))
		}
		want = append(want, chunk[:res.Count]...)
	}
	got, err := os.ReadFile(filepath.Join(fx.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("%d-byte writes: file has %d bytes, replies counted %d", size, len(got), len(want))
	}
}

// TestWritePastMaxFileSize: WRITE, ALLOCATE and SETATTR size at 2^44 on
// ext4 (past its largest file) answer NFS4ERR_FBIG in every mode and for
// every write size.
func TestWritePastMaxFileSize(t *testing.T) {
	forEachWriteMode(t, "ext4", func(t *testing.T, fx *fixture, c *client.Client) {
		ctx := ctxT(t)
		root, err := c.RootFH(ctx)
		if err != nil {
			t.Fatal(err)
		}
		file, err := c.OpenCreate(ctx, root, "big", 0o644)
		if err != nil {
			t.Fatal(err)
		}
		const off = 1 << 44
		for _, size := range writeSizes {
			res, err := c.Write(ctx, file.FH, file.Stateid, off, nfs4.Unstable4, make([]byte, size))
			if !client.IsStatus(err, nfs4.ErrFbig) {
				t.Fatalf("%d-byte WRITE at 2^44: %+v %v, want NFS4ERR_FBIG", size, res, err)
			}
		}
		if st := fallocate(t, c, file, nfs4.OpAllocate, off, 4096); st != nfs4.ErrFbig {
			t.Fatalf("ALLOCATE at 2^44: %s", client.StatusName(st))
		}
		if err := c.Truncate(ctx, file, off+1); !client.IsStatus(err, nfs4.ErrFbig) {
			t.Fatalf("SETATTR size 2^44+1: %v", err)
		}
		if res, err := c.Write(ctx, file.FH, file.Stateid, 0, nfs4.FileSync4, []byte("ok")); err != nil || res.Count != 2 {
			t.Fatalf("control WRITE: %+v %v", res, err)
		}
	})
}

// fallocate sends ALLOCATE or DEALLOCATE and returns the status.
func fallocate(t *testing.T, c *client.Client, f *client.File, op uint32, off, length uint64) nfs4.Status {
	t.Helper()
	return opStatus(t, c, f.FH, op, func(e *xdr.Encoder) {
		e.Uint32(op)
		f.Stateid.Encode(e)
		e.Uint64(off)
		e.Uint64(length)
	}, nil)
}

// copyRange sends a COPY from src to dst and returns the bytes
// copied and the status.
func copyRange(t *testing.T, c *client.Client, src, dst *client.File, srcOff, dstOff, count uint64) (uint64, nfs4.Status) {
	t.Helper()
	var n uint64
	var st nfs4.Status
	err := c.Compound(ctxT(t), func(e *xdr.Encoder) int {
		client.EncodePutfh(e, src.FH)
		e.Uint32(nfs4.OpSavefh)
		client.EncodePutfh(e, dst.FH)
		e.Uint32(nfs4.OpCopy)
		src.Stateid.Encode(e)
		dst.Stateid.Encode(e)
		e.Uint64(srcOff)
		e.Uint64(dstOff)
		e.Uint64(count)
		e.Bool(true)
		e.Bool(true)
		e.Uint32(0)
		return 4
	}, func(r *client.Reply) error {
		for _, op := range []uint32{nfs4.OpPutfh, nfs4.OpSavefh, nfs4.OpPutfh} {
			if err := r.Op(op); err != nil {
				return err
			}
		}
		err := r.Op(nfs4.OpCopy)
		if err != nil {
			return err
		}
		r.D.Uint32() // callback ids
		n = r.D.Uint64()
		return r.D.Err()
	})
	st = statusOf(t, err)
	return n, st
}

// opStatus sends PUTFH fh and one operation built by build, decodes its
// result body with parse (when OK and parse is set) and returns its status.
func opStatus(t *testing.T, c *client.Client, fh []byte, op uint32, build func(e *xdr.Encoder), parse func(d *xdr.Decoder)) nfs4.Status {
	t.Helper()
	err := c.Compound(ctxT(t), func(e *xdr.Encoder) int {
		client.EncodePutfh(e, fh)
		build(e)
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(op); err != nil {
			return err
		}
		if parse != nil {
			parse(r.D)
		}
		return r.D.Err()
	})
	return statusOf(t, err)
}

func statusOf(t *testing.T, err error) nfs4.Status {
	t.Helper()
	var se *client.StatusError
	switch {
	case err == nil:
		return nfs4.OK
	case errors.As(err, &se):
		return se.Status
	}
	t.Fatal(err)
	return 0
}

// TestWriteAtMaxOffset: two 2-byte WRITEs at 2^64-1 (an offset io_uring
// would read as "the current position") are NFS4ERR_FBIG and leave the
// start of the file alone, on every engine and io-mode.
func TestWriteAtMaxOffset(t *testing.T) {
	forEachWriteMode(t, "", func(t *testing.T, fx *fixture, c *client.Client) {
		ctx := ctxT(t)
		root, err := c.RootFH(ctx)
		if err != nil {
			t.Fatal(err)
		}
		file, err := c.OpenCreate(ctx, root, "f", 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(ctx, file.FH, file.Stateid, 0, nfs4.FileSync4, []byte("start")); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			res, err := c.Write(ctx, file.FH, file.Stateid, ^uint64(0), nfs4.Unstable4, []byte("XY"))
			if !client.IsStatus(err, nfs4.ErrFbig) {
				t.Fatalf("WRITE at 2^64-1: %+v %v", res, err)
			}
		}
		if got, _ := os.ReadFile(filepath.Join(fx.dir, "f")); string(got) != "start" {
			t.Fatalf("file %q after WRITEs at 2^64-1", got)
		}
	})
}
