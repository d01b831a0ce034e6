package engine

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// TestWriteClearsSetuid: a WRITE (or ALLOCATE) by a caller other than root
// clears set-user-ID, and set-group-ID where the kernel would (group
// execute set, or the caller outside the file's group), though the server
// writes as root; root's writes keep them. Both engines.
func TestWriteClearsSetuid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as other users")
	}
	const suid, sgid = unix.S_ISUID, unix.S_ISGID
	cases := []struct {
		name     string
		mode     uint32
		uid, gid uint32
		op       uint32
		want     uint32
	}{
		{"setuid+setgid, g+x, other user", suid | sgid | 0o777, 1000, 1000, nfs4.OpWrite, 0o777},
		{"setgid without g+x, caller outside the group", sgid | 0o767, 1000, 1000, nfs4.OpWrite, 0o767},
		{"setgid without g+x, caller in the group", sgid | 0o767, 1000, 0, nfs4.OpWrite, sgid | 0o767},
		{"setuid, ALLOCATE by other user", suid | 0o777, 1000, 1000, nfs4.OpAllocate, 0o777},
		{"setuid+setgid, root writes", suid | sgid | 0o777, 0, 0, nfs4.OpWrite, suid | sgid | 0o777},
		{"no bits", 0o666, 1000, 1000, nfs4.OpWrite, 0o666},
	}
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			if name == "uring" {
				if err := ring.Available(); err != nil {
					t.Skipf("io_uring: %v", err)
				}
			}
			fx := &fixture{dir: t.TempDir(), data: map[string][]byte{}}
			if err := os.Chmod(fx.dir, 0o777); err != nil {
				t.Fatal(err)
			}
			fx.serve(t, variant{name: name, opts: Options{FileIO: NewFileIO(IODirect)}})
			for _, tc := range cases {
				p := filepath.Join(fx.dir, "f")
				if err := os.WriteFile(p, []byte("0123456789"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := unix.Chmod(p, tc.mode); err != nil {
					t.Fatal(err)
				}
				c := fx.dial(t, client.Options{UID: tc.uid, GID: tc.gid})
				ctx := ctxT(t)
				root, err := c.RootFH(ctx)
				if err != nil {
					t.Fatal(err)
				}
				f, err := c.Open(ctx, root, "f", nfs4.ShareAccessBoth)
				if err != nil {
					t.Fatalf("%s: OPEN: %v", tc.name, err)
				}
				if tc.op == nfs4.OpWrite {
					_, err = c.Write(ctx, f.FH, f.Stateid, 2, nfs4.Unstable4, []byte("ab"))
				} else if st := fallocate(t, c, f, nfs4.OpAllocate, 0, 4096); st != nfs4.OK {
					t.Fatalf("%s: ALLOCATE: %s", tc.name, client.StatusName(st))
				}
				if err != nil {
					t.Fatalf("%s: WRITE: %v", tc.name, err)
				}
				var st unix.Stat_t
				if err := unix.Stat(p, &st); err != nil {
					t.Fatal(err)
				}
				if got := st.Mode & 0o7777; got != tc.want {
					t.Errorf("%s: mode %o after the write, want %o", tc.name, got, tc.want)
				}
				c.CloseFile(ctx, f.FH, f.Stateid)
				os.Remove(p)
			}
		})
	}
}
