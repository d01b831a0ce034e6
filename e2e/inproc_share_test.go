package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// One file reached through two exports (a=DIR, b=DIR/sub) has one set of
// share reservations: a DENY_BOTH taken through a refuses an OPEN and
// anonymous I/O through b, until it is closed. Issue 21 finding 7.
func TestShareReservationsAcrossExports(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "f"), []byte("0123456789"), 0o666); err != nil {
		t.Fatal(err)
	}
	addr, _ := serveExports(t, parseExports(t,
		dir+"=/a *(rw,insecure,no_root_squash)",
		sub+"=/b *(rw,insecure,no_root_squash)"), nil)
	ctx := ctxT(t)
	a, b := dialFrom(t, addr, "127.0.0.1", 0), dialFrom(t, addr, "127.0.0.1", 0)
	dirA, err := a.LookupPath(ctx, "/a/sub")
	if err != nil {
		t.Fatal(err)
	}
	dirB, err := b.LookupPath(ctx, "/b")
	if err != nil {
		t.Fatal(err)
	}
	fB, err := b.Lookup(ctx, dirB, "f")
	if err != nil {
		t.Fatal(err)
	}
	held, err := a.OpenWith(ctx, dirA, &client.OpenArgs{Access: nfs4.ShareAccessBoth, Deny: nfs4.ShareDenyBoth, Name: "f"})
	if err != nil {
		t.Fatalf("OPEN /a/sub/f DENY_BOTH: %v", err)
	}
	_, err = b.Open(ctx, dirB, "f", nfs4.ShareAccessRead)
	wantStatus(t, "OPEN /b/f under DENY_BOTH through /a", err, nfs4.ErrShareDenied)
	_, _, err = b.Read(ctx, fB, nfs4.Stateid{}, 0, 10)
	wantStatus(t, "anonymous READ of /b/f under DENY_BOTH", err, nfs4.ErrLocked)
	_, err = b.Write(ctx, fB, nfs4.Stateid{}, 0, nfs4.FileSync4, []byte("x"))
	wantStatus(t, "anonymous WRITE of /b/f under DENY_BOTH", err, nfs4.ErrLocked)
	if err := a.CloseFile(ctx, held.FH, held.Stateid); err != nil {
		t.Fatal(err)
	}
	f, err := b.Open(ctx, dirB, "f", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatalf("OPEN /b/f after the CLOSE: %v", err)
	}
	data, _, err := b.Read(ctx, f.FH, f.Stateid, 0, 10)
	if err != nil || !bytes.Equal(data, []byte("0123456789")) {
		t.Errorf("READ /b/f after the CLOSE: %q, %v", data, err)
	}
}

// An open stateid reads and writes only while its user may: after the
// owner's chmod 0600, another user's READ, WRITE and truncate with its old
// open stateid answer NFS4ERR_ACCESS. Issue 21 finding 6.
func TestOpenStateidAfterChmod(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the file's owner and another user")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), 64<<10), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	addr, _ := serveExports(t, parseExports(t, dir+"=/d *(rw,insecure,no_root_squash)"), nil)
	ctx := ctxT(t)
	owner, user := dialFrom(t, addr, "127.0.0.1", 0), dialFrom(t, addr, "127.0.0.1", 1000)
	d, err := user.LookupPath(ctx, "/d")
	if err != nil {
		t.Fatal(err)
	}
	f, err := user.Open(ctx, d, "f", nfs4.ShareAccessBoth)
	if err != nil {
		t.Fatalf("OPEN as uid 1000: %v", err)
	}
	for range 2 { // the second READ may skip its fstat
		if _, _, err := user.Read(ctx, f.FH, f.Stateid, 0, 4096); err != nil {
			t.Fatalf("READ before the chmod: %v", err)
		}
	}
	if _, err := owner.Setattr(ctx, f.FH, nfs4.Stateid{}, &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: 0o600}); err != nil {
		t.Fatalf("chmod 0600 by the owner: %v", err)
	}
	_, _, err = user.Read(ctx, f.FH, f.Stateid, 0, 4096)
	wantStatus(t, "READ with the old open stateid after chmod 0600", err, nfs4.ErrAccess)
	_, err = user.Write(ctx, f.FH, f.Stateid, 0, nfs4.FileSync4, []byte("y"))
	wantStatus(t, "WRITE with the old open stateid after chmod 0600", err, nfs4.ErrAccess)
	err = user.Truncate(ctx, f, 0)
	wantStatus(t, "truncate with the old open stateid after chmod 0600", err, nfs4.ErrAccess)
	if fi, _ := os.Stat(p); fi.Size() != 64<<10 {
		t.Errorf("size %d after the refused truncate", fi.Size())
	}
}

// A delegation belongs to the file too: a read delegation granted through
// /a is recalled by another client's write open through /b.
func TestDelegationRecallAcrossExports(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "f"), []byte("data"), 0o666); err != nil {
		t.Fatal(err)
	}
	list := parseExports(t, dir+"=/a *(rw,insecure,no_root_squash)", sub+"=/b *(rw,insecure,no_root_squash)")
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: list, Delegations: true}, engine.Options{})
	ctx := ctxT(t)
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	b := dialDeleg(t, addr, client.Options{})
	dirA, err := a.LookupPath(ctx, "/a/sub")
	if err != nil {
		t.Fatal(err)
	}
	dirB, err := b.LookupPath(ctx, "/b")
	if err != nil {
		t.Fatal(err)
	}
	fa, err := a.Open(ctx, dirA, "f", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("read open through /a: delegation type %d, want read", fa.Open.Deleg)
	}
	fw, err := b.Open(ctx, dirB, "f", nfs4.ShareAccessWrite)
	if err != nil {
		t.Fatalf("write open through /b: %v", err)
	}
	if a.Recalls() != 1 || a.DelegReturns() != 1 {
		t.Errorf("write open through /b: recalls %d, returns %d; want 1, 1", a.Recalls(), a.DelegReturns())
	}
	b.CloseFile(ctx, fw.FH, fw.Stateid)
	a.CloseFile(ctx, fa.FH, fa.Stateid)
}
