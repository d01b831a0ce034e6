package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// v3conn is a minimal NFSv3 and MOUNT client over one TCP connection: one
// call at a time, AUTH_SYS as uid.
type v3conn struct {
	t    testing.TB
	c    net.Conn
	mu   sync.Mutex
	xid  uint32
	uid  uint32
	rbuf []byte
	gss  *client.GSS // RPCSEC_GSS instead of AUTH_SYS uid (dialV3Krb5)
}

const (
	progMount = 100005
	v3Getattr = 1
	v3Setattr = 2
	v3Lookup  = 3
	v3Read    = 6
	v3Write   = 7
	v3Create  = 8
	v3Mkdir   = 9
	v3Remove  = 12
	v3Readdir = 16
	mntMnt    = 1

	nfs3OK      = 0
	nfs3Acces   = 13
	nfs3Notdir  = 20
	nfs3Inval   = 22
	nfs3Rofs    = 30
	nfs3Badhdl  = 10001
	mnt3Acces   = 13
	mnt3Noent   = 2
	nfs3FileSyn = 2
)

func dialV3(t testing.TB, addr string) *v3conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &v3conn{t: t, c: c}
}

// call sends one call and returns its result body (after an accepted
// SUCCESS header), or fails the test.
func (v *v3conn) call(prog, vers, proc uint32, build func(e *xdr.Encoder)) *xdr.Decoder {
	v.t.Helper()
	d, stat := v.callStat(prog, vers, proc, build)
	if stat != 0 {
		v.t.Fatalf("prog %d proc %d: accept status %d", prog, proc, stat)
	}
	return d
}

func (v *v3conn) callStat(prog, vers, proc uint32, build func(e *xdr.Encoder)) (*xdr.Decoder, uint32) {
	v.t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.xid++
	if v.gss != nil {
		rep := v.exchange(v.gss.Call(v.xid, prog, vers, proc, func(e *xdr.Encoder) {
			if build != nil {
				build(e)
			}
		}))
		d, err := v.gss.Reply(rep, v.xid)
		var re *client.RPCError
		switch {
		case errors.As(err, &re) && !re.Denied:
			return nil, re.Stat
		case err != nil:
			v.t.Fatalf("prog %d proc %d: %v", prog, proc, err)
		}
		return d, 0
	}
	rec := client.SysCall(v.xid, prog, vers, proc, &client.Cred{Machine: "e2e", UID: v.uid, GID: v.uid}, build)
	d := xdr.NewDecoder(v.exchange(rec))
	if xid := d.Uint32(); xid != v.xid || d.Uint32() != 1 || d.Uint32() != 0 {
		v.t.Fatalf("bad reply header")
	}
	d.Uint32()
	d.Opaque(400)
	return d, d.Uint32()
}

// exchange sends rec (record mark included) and returns the reply
// record, valid until the next call.
func (v *v3conn) exchange(rec []byte) []byte {
	v.t.Helper()
	v.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := v.c.Write(rec); err != nil {
		v.t.Fatal(err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(v.c, hdr[:]); err != nil {
		v.t.Fatal(err)
	}
	_, n := xdr.ParseMark(binary.BigEndian.Uint32(hdr[:]))
	if cap(v.rbuf) < n {
		v.rbuf = make([]byte, n)
	}
	buf := v.rbuf[:n]
	if _, err := io.ReadFull(v.c, buf); err != nil {
		v.t.Fatal(err)
	}
	return buf
}

func (v *v3conn) mount(p string) (uint32, []byte) {
	v.t.Helper()
	d := v.call(progMount, 3, mntMnt, func(e *xdr.Encoder) { e.String(p) })
	st := d.Uint32()
	if st != 0 {
		return st, nil
	}
	return st, bytes.Clone(d.Opaque(64))
}

func (v *v3conn) nfs(proc uint32, build func(e *xdr.Encoder)) (uint32, *xdr.Decoder) {
	v.t.Helper()
	d := v.call(nfs4.ProgramNFS, 3, proc, build)
	return d.Uint32(), d
}

func skipPostOp(d *xdr.Decoder) (typ, uid uint32, size uint64) {
	if !d.Bool() {
		return 0, 0, 0
	}
	typ = d.Uint32()
	d.Uint32()
	d.Uint32()
	uid = d.Uint32()
	d.Uint32()
	size = d.Uint64()
	d.Fixed(8 + 8 + 8 + 8 + 24)
	return typ, uid, size
}

func skipWcc3(d *xdr.Decoder) {
	if d.Bool() {
		d.Fixed(24)
	}
	skipPostOp(d)
}

func (v *v3conn) lookup(dir []byte, name string) (uint32, []byte) {
	v.t.Helper()
	st, d := v.nfs(v3Lookup, func(e *xdr.Encoder) { e.Opaque(dir); e.String(name) })
	if st != nfs3OK {
		return st, nil
	}
	return st, bytes.Clone(d.Opaque(64))
}

func unset(e *xdr.Encoder) {
	for range 4 {
		e.Bool(false)
	}
	e.Uint32(0)
	e.Uint32(0)
}

func (v *v3conn) create(dir []byte, name string) (uint32, []byte) {
	v.t.Helper()
	st, d := v.nfs(v3Create, func(e *xdr.Encoder) {
		e.Opaque(dir)
		e.String(name)
		e.Uint32(0) // UNCHECKED
		unset(e)
	})
	if st != nfs3OK {
		return st, nil
	}
	d.Bool()
	return st, bytes.Clone(d.Opaque(64))
}

func (v *v3conn) write(fh []byte, off uint64, data []byte) uint32 {
	v.t.Helper()
	st, _ := v.nfs(v3Write, func(e *xdr.Encoder) {
		e.Opaque(fh)
		e.Uint64(off)
		e.Uint32(uint32(len(data)))
		e.Uint32(nfs3FileSyn)
		e.Opaque(data)
	})
	return st
}

func (v *v3conn) read(fh []byte, off uint64, n uint32) (uint32, []byte, bool) {
	v.t.Helper()
	st, d := v.nfs(v3Read, func(e *xdr.Encoder) { e.Opaque(fh); e.Uint64(off); e.Uint32(n) })
	skipPostOp(d)
	if st != nfs3OK {
		return st, nil, false
	}
	d.Uint32()
	eof := d.Bool()
	return st, bytes.Clone(d.Opaque(int(n))), eof
}

// TestNFS3OneFileBothVersions: a file written over NFSv3 is the same file,
// by the same handle, to an NFSv4.2 client, and the other way round.
func TestNFS3OneFileBothVersions(t *testing.T) {
	f := startServer(t)
	v := dialV3(t, f.addr)
	st, root := v.mount("/")
	if st != 0 {
		t.Fatalf("MNT: %d", st)
	}
	st, fh := v.create(root, "both.txt")
	if st != nfs3OK {
		t.Fatalf("CREATE: %d", st)
	}
	data := bytes.Repeat([]byte("v3 wrote this. "), 5000)
	if st := v.write(fh, 0, data); st != nfs3OK {
		t.Fatalf("WRITE: %d", st)
	}
	c := dial(t, f)
	v4fh, err := c.LookupPath(ctxT(t), "/both.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v4fh, fh) {
		t.Fatal("NFSv4 handle differs from NFSv3's")
	}
	got, err := c.ReadFile(ctxT(t), "/both.txt", 1<<20)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("v4 read of v3's file: %v, %d bytes", err, len(got))
	}
	// v4's file through v3: data.bin, in 1 MiB READs.
	st, dfh := v.lookup(root, "data.bin")
	if st != nfs3OK {
		t.Fatalf("LOOKUP data.bin: %d", st)
	}
	var all []byte
	for off := uint64(0); ; {
		st, b, eof := v.read(dfh, off, 1<<20)
		if st != nfs3OK {
			t.Fatalf("READ: %d", st)
		}
		all = append(all, b...)
		off += uint64(len(b))
		if eof {
			break
		}
	}
	want, _ := os.ReadFile(filepath.Join(f.dir, "data.bin"))
	if !bytes.Equal(all, want) {
		t.Fatalf("v3 READ of data.bin: %d bytes, want %d", len(all), len(want))
	}
}

// TestNFS3Exports: MOUNT and every v3 call obey the exports' client
// specs: a client no spec names gets no handle and no access by a handle
// it learned elsewhere; an unprivileged port is refused where secure.
func TestNFS3Exports(t *testing.T) {
	open := nfs.ShorthandOptions()
	secure := open
	secure.Insecure = false
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	os.WriteFile(filepath.Join(dirs[1], "f"), []byte("x"), 0o644)
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{
		{Name: "open", Path: dirs[0], Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: open}}},
		{Name: "other", Path: dirs[1], Clients: []nfs.ClientRule{{Spec: "10.0.0.0/8", Options: open}}},
		{Name: "secure", Path: dirs[2], Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: secure}}},
	}}, engine.Options{})
	v := dialV3(t, addr)
	if st, _ := v.mount("/open"); st != 0 {
		t.Fatalf("MNT /open: %d", st)
	}
	if st, _ := v.mount(dirs[0]); st != 0 {
		t.Fatalf("MNT by directory: %d", st)
	}
	if st, _ := v.mount("/other"); st != mnt3Acces {
		t.Fatalf("MNT of an export for 10.0.0.0/8 from 127.0.0.1: %d", st)
	}
	if st, _ := v.mount("/nothing"); st != mnt3Noent {
		t.Fatalf("MNT of no export: %d", st)
	}
	if os.Getuid() != 0 {
		return
	}
	// From an unprivileged port (the dialer's): secure refuses.
	if st, _ := v.mount("/secure"); st != mnt3Acces {
		t.Fatalf("MNT of a secure export from port >= 1024: %d", st)
	}
}

// TestNFS3Confinement: forged handles, ".." and symlinks never leave the
// export over v3.
func TestNFS3Confinement(t *testing.T) {
	f := startServer(t)
	if err := os.Symlink("/etc", filepath.Join(f.dir, "escape")); err != nil {
		t.Fatal(err)
	}
	v := dialV3(t, f.addr)
	_, root := v.mount("/")
	_, fh := v.lookup(root, "small.txt")
	for i := range fh {
		bad := bytes.Clone(fh)
		bad[i] ^= 0x40
		if st, _ := v.nfs(v3Getattr, func(e *xdr.Encoder) { e.Opaque(bad) }); st == nfs3OK {
			t.Fatalf("handle with byte %d flipped accepted", i)
		}
	}
	if st, up := v.lookup(root, ".."); st != nfs3OK || !bytes.Equal(up, root) {
		t.Fatalf("LOOKUP .. of the root: %d, root %v", st, bytes.Equal(up, root))
	}
	_, sub := v.lookup(root, "sub")
	if st, up := v.lookup(sub, ".."); st != nfs3OK || !bytes.Equal(up, root) {
		t.Fatalf("LOOKUP .. of sub: %d", st)
	}
	if st, _ := v.lookup(root, "../../etc"); st != nfs3Inval {
		t.Fatalf("LOOKUP ../../etc: %d", st)
	}
	st, esc := v.lookup(root, "escape")
	if st != nfs3OK {
		t.Fatalf("LOOKUP escape: %d", st)
	}
	if st, _ := v.lookup(esc, "passwd"); st != nfs3Notdir {
		t.Fatalf("LOOKUP through a symlink: %d", st)
	}
	if st, _, _ := v.read(esc, 0, 100); st == nfs3OK {
		t.Fatal("READ of a symlink to /etc succeeded")
	}
	if st, _ := v.nfs(v3Readdir, func(e *xdr.Encoder) { e.Opaque(esc); e.Uint64(0); e.Fixed(make([]byte, 8)); e.Uint32(4096) }); st != nfs3Notdir {
		t.Fatalf("READDIR of a symlink: %d", st)
	}
}

// TestNFS3Permissions: squashing and read-only exports apply to v3 as to
// v4, and file permissions are the caller's.
func TestNFS3Permissions(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root (the server acts as its callers)")
	}
	sq := nfs.ShorthandOptions()
	sq.Squash = nfs.RootSquash
	sq.AnonUID, sq.AnonGID = 65534, 65534
	ro := sq
	ro.ReadOnly = true
	rw, rodir := t.TempDir(), t.TempDir()
	os.Chmod(rw, 0o777)
	os.WriteFile(filepath.Join(rw, "secret"), []byte("s"), 0o600)
	os.WriteFile(filepath.Join(rodir, "f"), []byte("ro"), 0o666)
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{
		{Name: "rw", Path: rw, Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: sq}}},
		{Name: "ro", Path: rodir, Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: ro}}},
	}}, engine.Options{})
	v := dialV3(t, addr)
	_, root := v.mount("/rw")
	st, fh := v.create(root, "mine")
	if st != nfs3OK {
		t.Fatalf("CREATE: %d", st)
	}
	var sst syscall.Stat_t
	if err := syscall.Stat(filepath.Join(rw, "mine"), &sst); err != nil || sst.Uid != 65534 || fh == nil {
		t.Fatalf("root_squash: created by uid %d (%v)", sst.Uid, err)
	}
	_, sfh := v.lookup(root, "secret")
	if st, _, _ := v.read(sfh, 0, 1); st != nfs3Acces {
		t.Fatalf("squashed root READ of a 0600 root file: %d", st)
	}
	v.uid = 1000
	if st := v.write(sfh, 0, []byte("x")); st != nfs3Acces {
		t.Fatalf("uid 1000 WRITE of a 0600 root file: %d", st)
	}
	v.uid = 0
	_, rroot := v.mount("/ro")
	_, rf := v.lookup(rroot, "f")
	if st := v.write(rf, 0, []byte("x")); st != nfs3Rofs {
		t.Fatalf("WRITE in a read-only export: %d", st)
	}
	if st, _ := v.create(rroot, "new"); st != nfs3Rofs {
		t.Fatalf("CREATE in a read-only export: %d", st)
	}
	if st, _, _ := v.read(rf, 0, 10); st != nfs3OK {
		t.Fatalf("READ in a read-only export: %d", st)
	}
}

// TestNFS3ReadRecallsWriteDelegation: an NFSv3 READ of a file another
// client holds a write delegation on recalls it first (the holder's
// cached writes come back before the data is read), as a WRITE does.
func TestNFS3ReadRecallsWriteDelegation(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	root4 := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root4, "f", nfs4.ShareAccessBoth)
	if err != nil || fa.Open.Deleg != nfs4.DelegateWrite {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	v := dialV3(t, addr)
	_, root := v.mount("/")
	_, fh := v.lookup(root, "f")
	for end := time.Now().Add(10 * time.Second); ; {
		st, _, _ := v.read(fh, 0, 10)
		if st == nfs3OK {
			break
		}
		if st != 10008 || time.Now().After(end) { // NFS3ERR_JUKEBOX while it is recalled
			t.Fatalf("READ: %d", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitRecalls(t, a, 1)
}
