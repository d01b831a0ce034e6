package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Exports files, over the wire: clients from 127.0.0.1, .2 and .3 (all
// loopback on Linux) get what their client specs give them.

// countingIO counts the fsyncs a sync export makes.
type countingIO struct {
	nfs.PlainIO
	syncs atomic.Int64
}

func (c *countingIO) Sync(fd int, dataOnly bool) error {
	c.syncs.Add(1)
	return c.PlainIO.Sync(fd, dataOnly)
}

// parseExports parses an exports file whose lines are PATH=NAME SPEC...:
// the export of directory PATH appears as NAME under the pseudo-root.
func parseExports(t *testing.T, lines ...string) []nfs.Export {
	t.Helper()
	var text strings.Builder
	var names []string
	for _, l := range lines {
		pn, rest, _ := strings.Cut(l, " ")
		p, name, _ := strings.Cut(pn, "=")
		names = append(names, name)
		fmt.Fprintf(&text, "%s %s\n", p, rest)
	}
	list, err := exports.ParseExports(strings.NewReader(text.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range list {
		list[i].Name = names[i]
	}
	return list
}

// serveExports serves list until the test ends.
func serveExports(t *testing.T, list []nfs.Export, io nfs.FileIO) (string, *nfs.Server) {
	t.Helper()
	return serve(t, testEngine(), nfs.Config{Exports: list, IO: io}, engine.Options{})
}

// dialFrom connects from local address local (IP, or IP:port) as uid.
func dialFrom(t *testing.T, addr, local string, uid uint32) *client.Client {
	t.Helper()
	if !strings.Contains(local, ":") {
		local += ":0"
	}
	c, err := client.Dial(ctxT(t), addr, client.Options{LocalAddr: local, UID: uid, GID: uid})
	if err != nil {
		t.Fatalf("dial from %s: %v", local, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// status is the NFS status of err (OK for nil, 0xffffffff for a non-NFS
// error).
func status(err error) nfs4.Status {
	var se *client.StatusError
	switch {
	case err == nil:
		return nfs4.OK
	case errors.As(err, &se):
		return se.Status
	}
	return 0xffffffff
}

func wantStatus(t *testing.T, what string, err error, want nfs4.Status) {
	t.Helper()
	if got := status(err); got != want {
		t.Errorf("%s: %v (status %d), want status %d", what, err, got, want)
	}
}

func names(t *testing.T, c *client.Client, fh []byte) []string {
	t.Helper()
	ents, err := c.Readdir(ctxT(t), fh)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

// getattr is PUTFH + GETATTR(type).
func getattr(ctx context.Context, c *client.Client, fh []byte) error {
	_, err := c.Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrType))
	return err
}

func TestExportsClientSpecs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "f"), []byte("a"), 0o644)
	addr, _ := serveExports(t, parseExports(t,
		a+"=/srv/a 127.0.0.2(rw,insecure)",
		b+"=/srv/b *(ro,insecure)"), nil)
	ctx := ctxT(t)
	in := dialFrom(t, addr, "127.0.0.2", 0)
	out := dialFrom(t, addr, "127.0.0.1", 0)

	root, err := in.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, in, root); !slices.Equal(got, []string{"srv"}) {
		t.Fatalf("root lists %v", got)
	}
	srv, err := in.LookupPath(ctx, "/srv")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, in, srv); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("/srv lists %v for an admitted client", got)
	}
	aFH, err := in.LookupPath(ctx, "/srv/a")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, in, aFH); !slices.Equal(got, []string{"f"}) {
		t.Fatalf("/srv/a lists %v", got)
	}
	fFH, err := in.Lookup(ctx, aFH, "f")
	if err != nil {
		t.Fatal(err)
	}
	// LOOKUPP from the export's root climbs the pseudo-filesystem.
	var up []byte
	err = in.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, aFH)
		e.Uint32(nfs4.OpLookupp)
		client.EncodeGetfh(e)
		return 3
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpLookupp); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpGetfh); err != nil {
			return err
		}
		up = r.D.Opaque(128)
		return r.D.Err()
	})
	if err != nil || string(up) != string(srv) {
		t.Fatalf("LOOKUPP from /srv/a: %v, %x want %x", err, up, srv)
	}

	// The refused address never sees /srv/a, by name or by handle.
	if got := names(t, out, srv); !slices.Equal(got, []string{"b"}) {
		t.Errorf("/srv lists %v for a refused client", got)
	}
	_, err = out.LookupPath(ctx, "/srv/a")
	wantStatus(t, "LOOKUP /srv/a from 127.0.0.1", err, nfs4.ErrNoent)
	wantStatus(t, "PUTFH of /srv/a from 127.0.0.1", getattr(ctx, out, aFH), nfs4.ErrAccess)
	wantStatus(t, "PUTFH of /srv/a/f from 127.0.0.1", getattr(ctx, out, fFH), nfs4.ErrAccess)
	if _, err := out.LookupPath(ctx, "/srv/b"); err != nil {
		t.Errorf("LOOKUP /srv/b (*) from 127.0.0.1: %v", err)
	}
}

// lowPortDial dials from 127.0.0.1 with a source port below 1024.
func lowPortDial(t *testing.T, addr string) *client.Client {
	t.Helper()
	var err error
	for port := 1023; port > 600; port-- {
		var c *client.Client
		c, err = client.Dial(ctxT(t), addr, client.Options{LocalAddr: fmt.Sprintf("127.0.0.1:%d", port)})
		if err == nil {
			t.Cleanup(func() { c.Close() })
			return c
		}
		// Taken (by another test, or in TIME_WAIT): try the next one.
	}
	t.Fatalf("no usable port below 1024: %v", err)
	return nil
}

func TestExportsSecurePort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("binding a port below 1024 needs root")
	}
	dir := t.TempDir()
	addr, _ := serveExports(t, parseExports(t, dir+"=/data 127.0.0.1(rw)"), nil)
	ctx := ctxT(t)
	high := dialFrom(t, addr, "127.0.0.1", 0)
	_, err := high.LookupPath(ctx, "/data")
	wantStatus(t, "LOOKUP from a port >= 1024 (secure)", err, nfs4.ErrPerm)
	low := lowPortDial(t, addr)
	fh, err := low.LookupPath(ctx, "/data")
	if err != nil {
		t.Fatalf("LOOKUP from a port < 1024: %v", err)
	}
	wantStatus(t, "PUTFH from a port >= 1024 (secure)", getattr(ctx, high, fh), nfs4.ErrPerm)
}

func TestExportsReadOnly(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o666)
	os.Chmod(filepath.Join(dir, "f"), 0o666)
	addr, _ := serveExports(t, parseExports(t, dir+"=/data 127.0.0.1(ro,insecure,no_root_squash) 127.0.0.2(rw,insecure,no_root_squash)"), nil)
	ctx := ctxT(t)
	ro := dialFrom(t, addr, "127.0.0.1", 0)
	fh, err := ro.LookupPath(ctx, "/data")
	if err != nil {
		t.Fatal(err)
	}
	fFH, err := ro.Lookup(ctx, fh, "f")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ro.OpenCreate(ctx, fh, "new", 0o644)
	wantStatus(t, "OPEN create", err, nfs4.ErrRofs)
	_, err = ro.Open(ctx, fh, "f", nfs4.ShareAccessWrite)
	wantStatus(t, "OPEN for write", err, nfs4.ErrRofs)
	_, err = ro.Mkdir(ctx, fh, "newdir", 0o755)
	wantStatus(t, "CREATE", err, nfs4.ErrRofs)
	wantStatus(t, "REMOVE", ro.Remove(ctx, fh, "f"), nfs4.ErrRofs)
	_, err = ro.Setattr(ctx, fFH, nfs4.Stateid{}, &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: 0o600})
	wantStatus(t, "SETATTR", err, nfs4.ErrRofs)
	_, err = ro.Write(ctx, fFH, nfs4.Stateid{}, 0, nfs4.FileSync4, []byte("x"))
	wantStatus(t, "WRITE (anonymous stateid)", err, nfs4.ErrRofs)
	wantStatus(t, "RENAME", rawTwoFH(ctx, ro, fh, fh, nfs4.OpRename, func(e *xdr.Encoder) { e.String("f"); e.String("g") }), nfs4.ErrRofs)
	wantStatus(t, "LINK", rawTwoFH(ctx, ro, fFH, fh, nfs4.OpLink, func(e *xdr.Encoder) { e.String("g") }), nfs4.ErrRofs)
	wantStatus(t, "ALLOCATE", rawOneFH(ctx, ro, fFH, nfs4.OpAllocate, func(e *xdr.Encoder) {
		nfs4.Stateid{}.Encode(e)
		e.Uint64(0)
		e.Uint64(4096)
	}), nfs4.ErrRofs)
	// Reading still works, and ACCESS grants no change.
	if data, err := ro.ReadFile(ctx, "/data/f", 4096); err != nil || string(data) != "data" {
		t.Errorf("read on a ro export: %q, %v", data, err)
	}
	_, acc, err := ro.Access(ctx, fFH, nfs4.AccessRead|nfs4.AccessModify|nfs4.AccessExtend)
	if err != nil || acc != nfs4.AccessRead {
		t.Errorf("ACCESS on a ro export: %#x, %v; want read only", acc, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "f")); st == nil || st.Mode().Perm() != 0o666 {
		t.Errorf("the file changed: %v", st)
	}
	// Control: the rw client changes the same export.
	rw := dialFrom(t, addr, "127.0.0.2", 0)
	if _, err := rw.OpenCreate(ctx, fh, "new", 0o644); err != nil {
		t.Errorf("OPEN create from the rw client: %v", err)
	}
}

// rawOneFH sends PUTFH fh, op(args) and returns op's error.
func rawOneFH(ctx context.Context, c *client.Client, fh []byte, op uint32, args func(e *xdr.Encoder)) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, fh)
		e.Uint32(op)
		args(e)
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		return r.Op(op)
	})
}

// rawTwoFH sends PUTFH saved, SAVEFH, PUTFH cur, op(args).
func rawTwoFH(ctx context.Context, c *client.Client, saved, cur []byte, op uint32, args func(e *xdr.Encoder)) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, saved)
		e.Uint32(nfs4.OpSavefh)
		client.EncodePutfh(e, cur)
		e.Uint32(op)
		args(e)
		return 4
	}, func(r *client.Reply) error {
		for _, o := range []uint32{nfs4.OpPutfh, nfs4.OpSavefh, nfs4.OpPutfh} {
			if err := r.Op(o); err != nil {
				return err
			}
		}
		return r.Op(op)
	})
}

func ownerOf(t *testing.T, p string) (uint32, uint32) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sys().(*syscall.Stat_t)
	return s.Uid, s.Gid
}

func TestExportsSquash(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as the caller needs root")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("root only"), 0o644)
	addr, _ := serveExports(t, parseExports(t, dir+"=/data "+
		"127.0.0.1(rw,insecure) 127.0.0.2(rw,insecure,no_root_squash) 127.0.0.3(rw,insecure,all_squash,anonuid=1234,anongid=4321)"), nil)
	ctx := ctxT(t)
	cases := []struct {
		from     string
		uid      uint32
		name     string
		wantUID  uint32
		wantGID  uint32
		mayWrite bool // the root-owned 0644 file
	}{
		{"127.0.0.1", 0, "squashed-root", 65534, 65534, false},
		{"127.0.0.2", 0, "root", 0, 0, true},
		{"127.0.0.3", 1000, "all-squashed", 1234, 4321, false},
	}
	for _, tc := range cases {
		c := dialFrom(t, addr, tc.from, tc.uid)
		fh, err := c.LookupPath(ctx, "/data")
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.OpenCreate(ctx, fh, tc.name, 0o644)
		if err != nil {
			t.Errorf("%s: create: %v", tc.from, err)
			continue
		}
		c.CloseFile(ctx, f.FH, f.Stateid)
		if _, err := c.Mkdir(ctx, fh, tc.name+".d", 0o755); err != nil {
			t.Errorf("%s: mkdir: %v", tc.from, err)
		}
		for _, n := range []string{tc.name, tc.name + ".d"} {
			if uid, gid := ownerOf(t, filepath.Join(dir, n)); uid != tc.wantUID || gid != tc.wantGID {
				t.Errorf("%s as uid %d made %s owned by %d:%d, want %d:%d", tc.from, tc.uid, n, uid, gid, tc.wantUID, tc.wantGID)
			}
		}
		sFH, err := c.Lookup(ctx, fh, "secret")
		if err != nil {
			t.Fatal(err)
		}
		want := nfs4.ErrAccess
		if tc.mayWrite {
			want = nfs4.OK
		}
		_, err = c.Open(ctx, fh, "secret", nfs4.ShareAccessWrite)
		wantStatus(t, tc.from+": OPEN for write of a root-owned 0644 file", err, want)
		_, err = c.Write(ctx, sFH, nfs4.Stateid{}, 0, nfs4.FileSync4, []byte("x"))
		wantStatus(t, tc.from+": anonymous WRITE of a root-owned 0644 file", err, want)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "secret")); string(data) != "xoot only" {
		t.Errorf("secret is %q: only the no_root_squash client should have written", data)
	}
}

// COPY from a root_squash export into a no_root_squash one reads the
// source as the source's export squashes the caller: root, squashed there,
// may not copy out a root-only file.
func TestExportsCopyReadsSourceSquashed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as the caller needs root")
	}
	sq, open := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(sq, "secret"), []byte("root only"), 0o600)
	os.WriteFile(filepath.Join(sq, "public"), []byte("anyone"), 0o644)
	addr, _ := serveExports(t, parseExports(t,
		sq+"=/sq 127.0.0.1(rw,insecure)",
		open+"=/open 127.0.0.1(rw,insecure,no_root_squash)"), nil)
	ctx := ctxT(t)
	c := dialFrom(t, addr, "127.0.0.1", 0)
	sqFH, err := c.LookupPath(ctx, "/sq")
	if err != nil {
		t.Fatal(err)
	}
	openFH, err := c.LookupPath(ctx, "/open")
	if err != nil {
		t.Fatal(err)
	}
	dst, err := c.OpenCreate(ctx, openFH, "copy", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	copyFrom := func(name string) error {
		src, err := c.Lookup(ctx, sqFH, name)
		if err != nil {
			return err
		}
		return rawTwoFH(ctx, c, src, dst.FH, nfs4.OpCopy, func(e *xdr.Encoder) {
			nfs4.Stateid{}.Encode(e) // anonymous: access checked as the caller
			dst.Stateid.Encode(e)
			e.Uint64(0)
			e.Uint64(0)
			e.Uint64(0) // to the end
			e.Bool(true)
			e.Bool(true)
			e.Uint32(0)
		})
	}
	wantStatus(t, "COPY of a root-only file out of a root_squash export", copyFrom("secret"), nfs4.ErrAccess)
	if data, _ := os.ReadFile(filepath.Join(open, "copy")); len(data) != 0 {
		t.Fatalf("the copy holds %q", data)
	}
	if err := copyFrom("public"); err != nil {
		t.Fatalf("COPY of a world-readable file: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(open, "copy")); string(data) != "anyone" {
		t.Fatalf("the copy holds %q", data)
	}
}

func TestExportsSyncCommitsMetadata(t *testing.T) {
	syncDir, asyncDir := t.TempDir(), t.TempDir()
	io := &countingIO{}
	addr, _ := serveExports(t, parseExports(t,
		syncDir+"=/sync *(rw,insecure,no_root_squash)",
		asyncDir+"=/async *(rw,insecure,no_root_squash,async)"), io)
	ctx := ctxT(t)
	c := dialFrom(t, addr, "127.0.0.1", 0)
	ops := []struct {
		what string
		do   func(fh []byte) error
	}{
		{"OPEN create", func(fh []byte) error {
			f, err := c.OpenCreate(ctx, fh, "f", 0o644)
			if err == nil {
				c.CloseFile(ctx, f.FH, f.Stateid)
			}
			return err
		}},
		{"CREATE", func(fh []byte) error { _, err := c.Mkdir(ctx, fh, "d", 0o755); return err }},
		{"SETATTR", func(fh []byte) error {
			f, err := c.Lookup(ctx, fh, "f")
			if err == nil {
				_, err = c.Setattr(ctx, f, nfs4.Stateid{}, &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: 0o600})
			}
			return err
		}},
		{"RENAME", func(fh []byte) error {
			return rawTwoFH(ctx, c, fh, fh, nfs4.OpRename, func(e *xdr.Encoder) { e.String("f"); e.String("g") })
		}},
		{"LINK", func(fh []byte) error {
			g, err := c.Lookup(ctx, fh, "g")
			if err == nil {
				err = rawTwoFH(ctx, c, g, fh, nfs4.OpLink, func(e *xdr.Encoder) { e.String("h") })
			}
			return err
		}},
		{"REMOVE", func(fh []byte) error { return c.Remove(ctx, fh, "g") }},
	}
	for _, name := range []string{"/async", "/sync"} {
		fh, err := c.LookupPath(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			before := io.syncs.Load()
			if err := op.do(fh); err != nil {
				t.Fatalf("%s %s: %v", name, op.what, err)
			}
			n := io.syncs.Load() - before
			if name == "/sync" && n == 0 {
				t.Errorf("%s on a sync export: no fsync before the reply", op.what)
			}
			if name == "/async" && n != 0 {
				t.Errorf("%s on an async export: %d fsyncs", op.what, n)
			}
		}
	}
}

// failingIO's fsyncs fail, as on a disk that lost power.
type failingIO struct{ nfs.PlainIO }

func (failingIO) Sync(int, bool) error { return syscall.EIO }

// A sync export answers a change whose metadata could not be committed
// with an error, never NFS4_OK; an async one does not sync at all.
func TestExportsSyncFailureFailsTheOperation(t *testing.T) {
	syncDir, asyncDir := t.TempDir(), t.TempDir()
	addr, _ := serveExports(t, parseExports(t,
		syncDir+"=/sync *(rw,insecure,no_root_squash)",
		asyncDir+"=/async *(rw,insecure,no_root_squash,async)"), failingIO{})
	ctx := ctxT(t)
	c := dialFrom(t, addr, "127.0.0.1", 0)
	for name, want := range map[string]nfs4.Status{"/sync": nfs4.ErrIO, "/async": nfs4.OK} {
		fh, err := c.LookupPath(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Mkdir(ctx, fh, "d", 0o755)
		wantStatus(t, name+": CREATE with failing fsyncs", err, want)
		wantStatus(t, name+": REMOVE with failing fsyncs", c.Remove(ctx, fh, "d"), want)
	}
}

func TestExportsReload(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	addr, srv := serveExports(t, parseExports(t, a+"=/a *(rw,insecure,no_root_squash)", b+"=/b *(rw,insecure)"), nil)
	ctx := ctxT(t)
	c := dialFrom(t, addr, "127.0.0.1", 0)
	fh, err := c.LookupPath(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mkdir(ctx, fh, "one", 0o755); err != nil {
		t.Fatal(err)
	}
	// Now read-only, on the same connection and session.
	if err := srv.Reload(parseExports(t, a+"=/a *(ro,insecure)", b+"=/b *(rw,insecure)")); err != nil {
		t.Fatal(err)
	}
	_, err = c.Mkdir(ctx, fh, "two", 0o755)
	wantStatus(t, "CREATE after reload to ro", err, nfs4.ErrRofs)
	// A reload that fails leaves the table in force.
	bad := parseExports(t, a+"=/a *(rw,insecure)")
	bad[0].Path = filepath.Join(a, "missing")
	if err := srv.Reload(bad); err == nil {
		t.Fatal("reload of a missing directory succeeded")
	}
	_, err = c.Mkdir(ctx, fh, "two", 0o755)
	wantStatus(t, "CREATE after a failed reload", err, nfs4.ErrRofs)
	// Dropping the export: its handles go stale, its name away.
	if err := srv.Reload(parseExports(t, b+"=/b *(rw,insecure)")); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "PUTFH of a dropped export", getattr(ctx, c, fh), nfs4.ErrStale)
	// Back again (rw): the old handle works once more.
	if err := srv.Reload(parseExports(t, a+"=/a *(rw,insecure,no_root_squash)", b+"=/b *(rw,insecure)")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mkdir(ctx, fh, "three", 0o755); err != nil {
		t.Errorf("CREATE after the export came back: %v", err)
	}
}
