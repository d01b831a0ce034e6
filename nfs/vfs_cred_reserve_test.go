package nfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/internal/testfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// reservedFS mounts a fresh 32 MiB ext4 with half its blocks reserved for
// root (mkfs.ext4 -m 50) and returns its root, writable by all, with the
// free bytes an ordinary user and root may use.
func reservedFS(t *testing.T) (dir string, userFree, rootFree int64) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "mnt")
	testfs.Ext4(t, dir, 32, "-m", "50")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	userFree, rootFree = freeSpace(t, dir)
	if rootFree-userFree < 8<<20 {
		t.Skipf("reserve too small: %d bytes for users, %d for root", userFree, rootFree)
	}
	return dir, userFree, rootFree
}

// freeSpace returns the bytes free for users (f_bavail) and for root
// (f_bfree) once what was freed is committed.
func freeSpace(t *testing.T, dir string) (user, root int64) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	unix.Syncfs(fd)
	var sf unix.Statfs_t
	if err := unix.Fstatfs(fd, &sf); err != nil {
		t.Fatal(err)
	}
	return int64(sf.Bavail) * sf.Bsize, int64(sf.Bfree) * sf.Bsize
}

// emptyFile truncates path to nothing and waits until its blocks are free.
func emptyFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	freeSpace(t, filepath.Dir(path))
}

// TestUsersDoNotWriteIntoRootsReserve: the server kept CAP_SYS_RESOURCE
// while acting for every caller, so on an ext4 with 50 % reserved blocks a
// client's uid 1000 filled the reserve that stops the same uid locally
// (WRITE, ALLOCATE and COPY alike). Now an op for a caller other than root
// runs without it, as knfsd's nfsd_setuser drops it: uid 1000 gets
// NFS4ERR_NOSPC where the users' share ends, and root, who keeps it, goes
// on into the reserve.
func TestUsersDoNotWriteIntoRootsReserve(t *testing.T) {
	dir, userFree, rootFree := reservedFS(t)
	target := userFree + (rootFree-userFree)/2 // past the users' share, within root's
	h := startOn(t, t.TempDir(), Export{Path: dir})
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chown(users, 1000, 1000)
	fh := h.pathFH("users")

	allocate := func(cr testCred, n int64) nfs4.Status {
		_, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpAllocate)
			nfs4.AnonStateid.Encode(e)
			e.Uint64(0)
			e.Uint64(uint64(n))
		})
		return st
	}
	if st := allocate(as1000, target); st != nfs4.ErrNospc {
		t.Errorf("ALLOCATE of %d bytes as uid 1000 (%d free to users): %d, want NFS4ERR_NOSPC", target, userFree, st)
	}
	emptyFile(t, users)
	if st := allocate(asRoot, target); st != nfs4.OK {
		t.Errorf("ALLOCATE of %d bytes as root (%d free to root): %d", target, rootFree, st)
	}
	emptyFile(t, users)

	// writeAll writes up to n bytes in 1 MiB WRITEs and returns what was
	// written and the status that stopped it.
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i) | 1
	}
	writeAll := func(cr testCred, n int64) (int64, nfs4.Status) {
		var done int64
		for done < n {
			d, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutfh)
				e.Opaque(fh)
				e.Uint32(nfs4.OpWrite)
				nfs4.AnonStateid.Encode(e)
				e.Uint64(uint64(done))
				e.Uint32(nfs4.Unstable4)
				e.Opaque(chunk[:min(int64(len(chunk)), n-done)])
			})
			if st != nfs4.OK {
				return done, st
			}
			skipSequence(t, d)
			opResult(t, d, nfs4.OpPutfh, nfs4.OK)
			opResult(t, d, nfs4.OpWrite, nfs4.OK)
			done += int64(d.Uint32())
		}
		return done, nfs4.OK
	}
	if n, st := writeAll(as1000, target); st != nfs4.ErrNospc || n > userFree+1<<20 {
		t.Errorf("WRITE as uid 1000: %d bytes written then %d; want NFS4ERR_NOSPC by %d", n, st, userFree)
	}
	emptyFile(t, users)
	if n, st := writeAll(asRoot, target); st != nfs4.OK {
		t.Errorf("WRITE as root: %d bytes written then %d; want %d written", n, st, target)
	}
	emptyFile(t, users)

	// COPY: root's file takes 3/4 of the users' share; a copy of it as
	// uid 1000 does not fit in what is left to users, as root it does.
	src := filepath.Join(dir, "src")
	size := userFree * 3 / 4
	if err := os.WriteFile(src, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	freeSpace(t, dir)
	srcFH := h.pathFH("src")
	copyAs := func(cr testCred) (uint64, nfs4.Status) {
		d, st := h.opsAs(cr, 4, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(srcFH)
			e.Uint32(nfs4.OpSavefh)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpCopy)
			nfs4.AnonStateid.Encode(e)
			nfs4.AnonStateid.Encode(e)
			e.Uint64(0)
			e.Uint64(0)
			e.Uint64(uint64(size))
			e.Bool(true)
			e.Bool(true)
			e.Uint32(0)
		})
		if st != nfs4.OK {
			return 0, st
		}
		skipSequence(t, d)
		opResult(t, d, nfs4.OpPutfh, nfs4.OK)
		opResult(t, d, nfs4.OpSavefh, nfs4.OK)
		opResult(t, d, nfs4.OpPutfh, nfs4.OK)
		opResult(t, d, nfs4.OpCopy, nfs4.OK)
		d.Uint32() // no callback id
		return d.Uint64(), nfs4.OK
	}
	n, st := copyAs(as1000)
	t.Logf("COPY of %d bytes as uid 1000, %d left to users: status %d, %d copied", size, userFree-size, st, n)
	if st == nfs4.OK && n == uint64(size) {
		t.Errorf("COPY of %d bytes as uid 1000 with %d left to users: all copied", size, userFree-size)
	} else if st != nfs4.OK && st != nfs4.ErrNospc {
		t.Errorf("COPY as uid 1000: %d, want NFS4ERR_NOSPC or a short copy", st)
	}
	emptyFile(t, users)
	// A synchronous COPY copies at most syncCopyMax; root's is not short
	// of that.
	if n, st := copyAs(asRoot); st != nfs4.OK || n != min(uint64(size), syncCopyMax) {
		t.Errorf("COPY as root: %d, %d of %d bytes", st, n, size)
	}
}

// TestDirectDescriptorOpenedForTheServer: WRITE now runs as the caller
// (asCallerIO), and the O_DIRECT descriptor FileIO opens on first use is
// shared by every writer; it must still be opened as the server, or a file
// whose mode the writer's open stateid outlives (made 0444 by the OPEN
// that created it, as cp does) would be refused O_DIRECT for good.
func TestDirectDescriptorOpenedForTheServer(t *testing.T) {
	h := permTree(t)
	path := filepath.Join(h.dir, "readonly")
	if err := os.WriteFile(path, make([]byte, 8192), 0o444); err != nil {
		t.Fatal(err)
	}
	os.Chown(path, 1000, 1000)
	if fd, err := unix.Open(path, unix.O_WRONLY|unix.O_DIRECT, 0); err != nil {
		t.Skipf("no O_DIRECT here: %v", err)
	} else {
		unix.Close(fd)
	}
	h.pathFH("readonly")
	n := h.nodeAt("readonly")
	fd := -1
	if err := asCaller(Cred{UID: 1000, GID: 1000}, func() error {
		fd = File{FD: -1, node: n}.Direct()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fd < 0 {
		t.Error("O_DIRECT descriptor refused while writing as uid 1000")
	}
}
