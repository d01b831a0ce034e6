package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// TestXattrs: the in-repo client sets, reads, lists (page by page) and
// removes user xattrs through the engine; the export shows each change
// under "user.", and uid 1000 may read but not change root's 0644 file.
func TestXattrs(t *testing.T) {
	f := startServer(t)
	p := filepath.Join(f.dir, "xattrs.txt")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.probe", []byte("x"), 0); err != nil {
		t.Skipf("no user xattrs on %s: %v", f.dir, err)
	}
	// The largest value the filesystem takes here (ext4 keeps values
	// within a block unless ea_inode is on), up to XATTR_SIZE_MAX.
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	for unix.Setxattr(p, "user.probe", big, 0) != nil && len(big) > 64 {
		big = big[:len(big)/2]
	}
	if err := unix.Removexattr(p, "user.probe"); err != nil {
		t.Fatal(err)
	}
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "xattrs.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Setxattr(ctx, fh, nfs4.SetxattrCreate, "big", big); err != nil {
		t.Fatalf("SETXATTR of %d bytes: %v", len(big), err)
	}
	for i, n := range []string{"a", "b", "c", "d", "e"} {
		if _, err := c.Setxattr(ctx, fh, nfs4.SetxattrEither, n, []byte{byte('0' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := c.Getxattr(ctx, fh, "big"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("GETXATTR big: %d bytes, %v; want %d bytes", len(got), err, len(big))
	}
	buf := make([]byte, len(big))
	if n, err := unix.Getxattr(p, "user.big", buf); err != nil || !bytes.Equal(buf[:n], big) {
		t.Fatalf("on disk user.big: %d bytes, %v", n, err)
	}
	names, err := c.Listxattrs(ctx, fh, 16+2*8) // two short names a page
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"a", "b", "big", "c", "d", "e"}) {
		t.Fatalf("LISTXATTRS: %v %v", names, err)
	}
	ci, err := c.Removexattr(ctx, fh, "c")
	if err != nil || ci.Atomic {
		t.Fatalf("REMOVEXATTR: %+v %v", ci, err)
	}
	if _, err := c.Getxattr(ctx, fh, "c"); !client.IsStatus(err, nfs4.ErrNoxattr) {
		t.Fatalf("GETXATTR of a removed xattr: %v", err)
	}
	if _, err := unix.Getxattr(p, "user.c", nil); err != unix.ENODATA {
		t.Fatalf("user.c on disk after REMOVEXATTR: %v", err)
	}

	if os.Geteuid() != 0 {
		return
	}
	u, err := client.Dial(ctx, f.addr, client.Options{UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if got, err := u.Getxattr(ctx, fh, "a"); err != nil || string(got) != "0" {
		t.Fatalf("uid 1000 GETXATTR: %q %v", got, err)
	}
	if _, err := u.Setxattr(ctx, fh, nfs4.SetxattrEither, "a", []byte("1000")); !client.IsStatus(err, nfs4.ErrAccess) {
		t.Fatalf("uid 1000 SETXATTR on root's 0644 file: %v, want NFS4ERR_ACCESS", err)
	}
	if _, err := u.Removexattr(ctx, fh, "a"); !client.IsStatus(err, nfs4.ErrAccess) {
		t.Fatalf("uid 1000 REMOVEXATTR on root's 0644 file: %v, want NFS4ERR_ACCESS", err)
	}
	if n, err := unix.Getxattr(p, "user.a", buf); err != nil || string(buf[:n]) != "0" {
		t.Fatalf("user.a on disk after refused calls: %q %v", buf[:max(n, 0)], err)
	}
}
