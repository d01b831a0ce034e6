package nfs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// testCred is the AUTH_SYS identity a test call carries.
type testCred struct {
	uid, gid uint32
	gids     []uint32
}

var (
	asRoot  = testCred{0, 0, nil}
	as1000  = testCred{1000, 1000, nil}
	as2000  = testCred{2000, 2000, []uint32{3000}} // in group 3000 by a supplementary gid
	asNoone = testCred{0xFFFFFFFF, 0xFFFFFFFF, nil}
)

// callHeaderCred writes an RPC call header with cr's AUTH_SYS credentials.
func callHeaderCred(e *xdr.Encoder, xid uint32, cr testCred) {
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(2)
	e.Uint32(nfs4.ProgramNFS)
	e.Uint32(4)
	e.Uint32(nfs4.ProcCompound)
	e.Uint32(nfs4.AuthSys)
	body := xdr.NewEncoder(64)
	body.Uint32(0)
	body.String("test")
	body.Uint32(cr.uid)
	body.Uint32(cr.gid)
	body.Uint32(uint32(len(cr.gids)))
	for _, g := range cr.gids {
		body.Uint32(g)
	}
	e.Opaque(body.Header())
	e.Uint32(nfs4.AuthNone)
	e.Uint32(0)
}

// opsAs sends SEQUENCE plus n ops as cr and returns the decoder at the
// SEQUENCE result and the COMPOUND status.
func (h *harness) opsAs(cr testCred, n int, build func(e *xdr.Encoder)) (*xdr.Decoder, nfs4.Status) {
	h.t.Helper()
	h.xid++
	e := xdr.NewEncoder(256)
	callHeaderCred(e, h.xid, cr)
	e.String("tag")
	e.Uint32(2)
	e.Uint32(uint32(n + 1))
	h.sequence(e)
	build(e)
	d := xdr.NewDecoder(h.record(e.AppendTo(nil)))
	h.acceptedHeader(d, h.xid, nfs4.AcceptSuccess)
	status := nfs4.Status(d.Uint32())
	d.Opaque(1024)
	d.Uint32()
	return d, status
}

// permTree builds an export (root 0755) holding files and directories of
// several owners and modes, and returns its harness with a session.
//
//	secret   root:root 0600    pub      root:root 0644
//	grp      root:3000 0640    mine     1000:1000 0000
//	exec     root:root 0711    private/ root:root 0700 (inner 0644)
//	grpdir/  root:3000 0750 (inner 0644)    wonly/ root:root 0722
func permTree(t *testing.T) *harness {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: files of several owners")
	}
	h := newHarness(t)
	if err := os.Chmod(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := func(name string, uid, gid int, mode os.FileMode) {
		p := filepath.Join(h.dir, name)
		if err := os.WriteFile(p, []byte("data of "+name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	dir := func(name string, gid int, mode os.FileMode) {
		p := filepath.Join(h.dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		file(name+"/inner", 0, 0, 0o644)
		if err := os.Chown(p, 0, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	file("secret", 0, 0, 0o600)
	file("pub", 0, 0, 0o644)
	file("grp", 0, 3000, 0o640)
	file("mine", 1000, 1000, 0)
	file("exec", 0, 0, 0o711)
	dir("private", 0, 0o700)
	dir("grpdir", 3000, 0o750)
	dir("wonly", 0, 0o722)
	h.session()
	return h
}

// readAs sends PUTFH+READ (or READ_PLUS) with sid as cr and returns the
// status.
func (h *harness) readAs(cr testCred, fh []byte, op uint32, sid nfs4.Stateid) nfs4.Status {
	h.t.Helper()
	_, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(op)
		sid.Encode(e)
		e.Uint64(0)
		e.Uint32(100)
	})
	return st
}

func TestReadPermission(t *testing.T) {
	h := permTree(t)
	cases := []struct {
		name string
		cr   testCred
		want nfs4.Status
	}{
		{"secret", as1000, nfs4.ErrAccess},
		{"secret", asNoone, nfs4.ErrAccess},
		{"secret", asRoot, nfs4.OK},
		{"pub", as1000, nfs4.OK},         // other read
		{"grp", as1000, nfs4.ErrAccess},  // not in the group
		{"grp", as2000, nfs4.OK},         // group read through a supplementary gid
		{"mine", as1000, nfs4.OK},        // the owner reads even a mode 0 file
		{"mine", as2000, nfs4.ErrAccess}, // others do not
		{"exec", as1000, nfs4.OK},        // executable only: a client reads it to run it
		{"private/inner", as1000, nfs4.OK},
	}
	fhs := map[string][]byte{}
	for _, c := range cases {
		if fhs[c.name] == nil {
			fhs[c.name] = h.pathFH(c.name)
		}
		for _, op := range []uint32{nfs4.OpRead, nfs4.OpReadPlus} {
			for _, sid := range []nfs4.Stateid{nfs4.AnonStateid, nfs4.BypassStateid} {
				if got := h.readAs(c.cr, fhs[c.name], op, sid); got != c.want {
					t.Errorf("op %d of %s as uid %d with %v: %d, want %d", op, c.name, c.cr.uid, sid.Other[0], got, c.want)
				}
			}
		}
	}
}

// pathFH returns the handle of a slash-separated path from the root,
// looked up as root.
func (h *harness) pathFH(path string) []byte {
	h.t.Helper()
	names := strings.Split(path, "/")
	d, st := h.opsAs(asRoot, 2+len(names), func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		for _, n := range names {
			e.Uint32(nfs4.OpLookup)
			e.String(n)
		}
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		h.t.Fatalf("lookup %s: %d", path, st)
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	for range names {
		opResult(h.t, d, nfs4.OpLookup, nfs4.OK)
	}
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	return append([]byte(nil), d.Opaque(128)...)
}

// lookupAs walks names from the root as cr and returns the status.
func (h *harness) lookupAs(cr testCred, names ...string) nfs4.Status {
	h.t.Helper()
	_, st := h.opsAs(cr, 1+len(names), func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		for _, n := range names {
			e.Uint32(nfs4.OpLookup)
			e.String(n)
		}
	})
	return st
}

func TestLookupNeedsSearchPermission(t *testing.T) {
	h := permTree(t)
	cases := []struct {
		cr    testCred
		names []string
		want  nfs4.Status
	}{
		{as1000, []string{"private"}, nfs4.OK},
		{as1000, []string{"private", "inner"}, nfs4.ErrAccess},
		{asNoone, []string{"private", "inner"}, nfs4.ErrAccess},
		{asRoot, []string{"private", "inner"}, nfs4.OK},
		{as1000, []string{"grpdir", "inner"}, nfs4.ErrAccess},
		{as2000, []string{"grpdir", "inner"}, nfs4.OK},
		{as1000, []string{"private", "missing"}, nfs4.ErrAccess}, // no probing for names either
	}
	for _, c := range cases {
		if got := h.lookupAs(c.cr, c.names...); got != c.want {
			t.Errorf("LOOKUP %v as uid %d: %d, want %d", c.names, c.cr.uid, got, c.want)
		}
	}
	// OPEN by name looks the name up: a file in a directory the caller
	// cannot search is not opened (its stateid would skip READ's check).
	for _, cr := range []testCred{as1000, asRoot} {
		want := nfs4.ErrAccess
		if cr.uid == 0 {
			want = nfs4.OK
		}
		_, st := h.opsAs(cr, 3, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpLookup)
			e.String("private")
			e.Uint32(nfs4.OpOpen)
			e.Uint32(0)
			e.Uint32(nfs4.ShareAccessRead)
			e.Uint32(nfs4.ShareDenyNone)
			e.Uint64(h.clientID())
			e.String("owner")
			e.Uint32(nfs4.OpenNoCreate)
			e.Uint32(nfs4.ClaimNull)
			e.String("inner")
		})
		if st != want {
			t.Errorf("OPEN private/inner as uid %d: %d, want %d", cr.uid, st, want)
		}
	}
	// LOOKUPP and SECINFO search the current directory too.
	private := h.pathFH("private")
	for _, cr := range []testCred{as1000, asRoot} {
		want := nfs4.ErrAccess
		if cr.uid == 0 {
			want = nfs4.OK
		}
		_, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(private)
			e.Uint32(nfs4.OpLookupp)
		})
		if st != want {
			t.Errorf("LOOKUPP from private as uid %d: %d, want %d", cr.uid, st, want)
		}
		_, st = h.opsAs(cr, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(private)
			e.Uint32(nfs4.OpSecinfo)
			e.String("inner")
		})
		if st != want {
			t.Errorf("SECINFO in private as uid %d: %d, want %d", cr.uid, st, want)
		}
	}
}

func TestReaddirNeedsReadPermission(t *testing.T) {
	h := permTree(t)
	cases := []struct {
		dir  string
		cr   testCred
		want nfs4.Status
	}{
		{"private", as1000, nfs4.ErrAccess},
		{"private", asNoone, nfs4.ErrAccess},
		{"private", asRoot, nfs4.OK},
		{"grpdir", as1000, nfs4.ErrAccess},
		{"grpdir", as2000, nfs4.OK},
	}
	for _, c := range cases {
		fh := h.pathFH(c.dir)
		_, st := h.opsAs(c.cr, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpReaddir)
			e.Uint64(0)
			e.Fixed(make([]byte, 8))
			e.Uint32(4096)
			e.Uint32(8192)
			nfs4.BitmapOf(nfs4.AttrType).Encode(e)
		})
		if st != c.want {
			t.Errorf("READDIR %s as uid %d: %d, want %d", c.dir, c.cr.uid, st, c.want)
		}
	}
	// The root (0755) lists for anyone.
	_, st := h.opsAs(as1000, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpReaddir)
		e.Uint64(0)
		e.Fixed(make([]byte, 8))
		e.Uint32(4096)
		e.Uint32(8192)
		nfs4.Bitmap{}.Encode(e)
	})
	if st != nfs4.OK {
		t.Errorf("READDIR of the root as uid 1000: %d", st)
	}
}

func TestCopySourceNeedsReadPermission(t *testing.T) {
	h := permTree(t)
	dstPath := filepath.Join(h.dir, "dst")
	if err := os.WriteFile(dstPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dstPath, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	dst := h.pathFH("dst")
	copyFrom := func(src []byte) nfs4.Status {
		_, st := h.opsAs(as1000, 4, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(src)
			e.Uint32(nfs4.OpSavefh)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(dst)
			e.Uint32(nfs4.OpCopy)
			nfs4.AnonStateid.Encode(e)
			nfs4.AnonStateid.Encode(e)
			e.Uint64(0)
			e.Uint64(0)
			e.Uint64(0)
			e.Bool(true)
			e.Bool(true)
			e.Uint32(0)
		})
		return st
	}
	if st := copyFrom(h.pathFH("secret")); st != nfs4.ErrAccess {
		t.Errorf("COPY from secret as uid 1000: %d", st)
	}
	if got, _ := os.ReadFile(dstPath); len(got) != 0 {
		t.Fatalf("secret copied: %q", got)
	}
	if st := copyFrom(h.pathFH("pub")); st != nfs4.OK {
		t.Errorf("COPY from pub as uid 1000: %d", st)
	}
	if got, _ := os.ReadFile(dstPath); string(got) != "data of pub" {
		t.Fatalf("copied %q", got)
	}
}

// accessAs sends ACCESS for want on fh as cr and returns supported and
// granted.
func (h *harness) accessAs(cr testCred, fh []byte, want uint32) (uint32, uint32) {
	h.t.Helper()
	d, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpAccess)
		e.Uint32(want)
	})
	if st != nfs4.OK {
		h.t.Fatalf("ACCESS: %d", st)
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpAccess, nfs4.OK)
	return d.Uint32(), d.Uint32()
}

func TestAccessAnswersForTheCaller(t *testing.T) {
	h := permTree(t)
	const (
		r, l, m, x, d = nfs4.AccessRead, nfs4.AccessLookup, nfs4.AccessModify, nfs4.AccessExecute, nfs4.AccessDelete
		ext           = nfs4.AccessExtend
	)
	cases := []struct {
		name string
		cr   testCred
		want uint32
	}{
		{"secret", as1000, 0},
		{"secret", asNoone, 0},
		{"secret", asRoot, r | m | ext}, // root executes only files with an x bit
		{"exec", asRoot, r | m | ext | x},
		{"exec", as1000, x},
		{"pub", as1000, r},
		{"grp", as2000, r},
		{"mine", as1000, 0}, // ACCESS has no owner override
		{"private", as1000, 0},
		{"private", asRoot, r | l | m | ext | d},
		{"grpdir", as2000, r | l},
		{"wonly", as1000, 0}, // changing entries needs search (x) as well as w
	}
	for _, c := range cases {
		fh := h.pathFH(c.name)
		all := uint32(r | l | m | ext | d | x)
		sup, got := h.accessAs(c.cr, fh, all)
		if got != c.want {
			t.Errorf("ACCESS %s as uid %d: %#x, want %#x", c.name, c.cr.uid, got, c.want)
		}
		if got&^sup != 0 {
			t.Errorf("ACCESS %s: granted %#x outside supported %#x", c.name, got, sup)
		}
	}
}

// TestDenyReadNeedsWritePermission: DENY_READ keeps others from reading,
// so knfsd's do_open_permission asks MAY_WRITE for it: a user who may
// only read a file cannot take DENY_READ (or DENY_BOTH) and lock its
// owner out, while DENY_WRITE needs nothing more. Issue 21 finding 5.
func TestDenyReadNeedsWritePermission(t *testing.T) {
	h := permTree(t)
	root := h.rootFH()
	for _, deny := range []uint32{nfs4.ShareDenyRead, nfs4.ShareDenyBoth} {
		if st, _ := h.openIn(as1000, root, "pub", "reader", nfs4.ShareAccessRead, deny); st != nfs4.ErrAccess {
			t.Errorf("OPEN pub (0644 root) deny %d as uid 1000: %d, want NFS4ERR_ACCESS", deny, st)
		}
	}
	if got := h.readAs(asRoot, h.pathFH("pub"), nfs4.OpRead, nfs4.AnonStateid); got != nfs4.OK {
		t.Errorf("the owner's READ after the refused DENY_READ: %d", got)
	}
	if st, _ := h.openIn(as1000, root, "pub", "reader", nfs4.ShareAccessRead, nfs4.ShareDenyWrite); st != nfs4.OK {
		t.Errorf("OPEN pub deny WRITE as uid 1000: %d, want OK", st)
	}
	if st, _ := h.openIn(asRoot, root, "secret", "owner", nfs4.ShareAccessRead, nfs4.ShareDenyBoth); st != nfs4.OK {
		t.Errorf("OPEN secret deny BOTH as root: %d, want OK", st)
	}
}

// TestDenyReadOnReadOnlyExport: on a read-only export DENY_READ is
// refused with NFS4ERR_ROFS (knfsd: MAY_WRITE on a read-only export),
// even for root; a plain read open still works.
func TestDenyReadOnReadOnlyExport(t *testing.T) {
	ro := ClientOptions{ReadOnly: true, Squash: NoRootSquash, AnonUID: defaultAnonID, AnonGID: defaultAnonID, Insecure: true}
	h := newHarnessCfg(t, func(cfg *Config) {
		cfg.Exports[0].Clients = []ClientRule{{Spec: "*", Any: true, Options: ro}}
		cfg.StateDir = t.TempDir()
	})
	h.write("f", []byte("data"))
	h.session()
	root := h.rootFH()
	for _, deny := range []uint32{nfs4.ShareDenyRead, nfs4.ShareDenyBoth} {
		if st, _ := h.openIn(asRoot, root, "f", "o", nfs4.ShareAccessRead, deny); st != nfs4.ErrRofs {
			t.Errorf("OPEN deny %d on a ro export: %d, want NFS4ERR_ROFS", deny, st)
		}
	}
	if st, _ := h.openIn(asRoot, root, "f", "o", nfs4.ShareAccessRead, nfs4.ShareDenyWrite); st != nfs4.OK {
		t.Errorf("OPEN deny WRITE on a ro export: %d, want OK", st)
	}
}

// posixACL encodes a system.posix_acl_access value: owner rwx, one named
// user with perm, owning group none, the mask, others with other.
func posixACL(uid, perm, mask, other uint32) []byte {
	const undefined = 0xFFFFFFFF
	entries := [][3]uint32{
		{0x01, 7, undefined},     // ACL_USER_OBJ
		{0x02, perm, uid},        // ACL_USER
		{0x04, 0, undefined},     // ACL_GROUP_OBJ
		{0x10, mask, undefined},  // ACL_MASK: the mode's group bits
		{0x20, other, undefined}, // ACL_OTHER
	}
	b := binary.LittleEndian.AppendUint32(nil, 2) // POSIX_ACL_XATTR_VERSION
	for _, e := range entries {
		b = binary.LittleEndian.AppendUint16(b, uint16(e[0]))
		b = binary.LittleEndian.AppendUint16(b, uint16(e[1]))
		b = binary.LittleEndian.AppendUint32(b, e[2])
	}
	return b
}

// TestReadWithPOSIXACL: an ACL can grant what the mode bits do not (a
// named user on a 0600 file), and the kernel's answer is taken.
func TestReadWithPOSIXACL(t *testing.T) {
	h := permTree(t)
	p := filepath.Join(h.dir, "acl")
	if err := os.WriteFile(p, []byte("acl data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "system.posix_acl_access", posixACL(1000, 4, 4, 0), 0); err != nil {
		t.Skipf("no POSIX ACLs here: %v", err)
	}
	fh := h.pathFH("acl")
	if got := h.readAs(as1000, fh, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.OK {
		t.Errorf("READ by the ACL's named user: %d", got)
	}
	if got := h.readAs(as2000, fh, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.ErrAccess {
		t.Errorf("READ by someone the ACL does not name: %d", got)
	}
	if _, got := h.accessAs(as1000, fh, nfs4.AccessRead|nfs4.AccessModify); got != nfs4.AccessRead {
		t.Errorf("ACCESS by the named user: %#x", got)
	}
	// And it can refuse what they would allow: others may read, the
	// named user may not. (With a mask of 0 the kernel ignores the ACL
	// and goes by the mode bits: the mask here is r.)
	deny := filepath.Join(h.dir, "acldeny")
	if err := os.WriteFile(deny, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(deny, "system.posix_acl_access", posixACL(1000, 0, 4, 4), 0); err != nil {
		t.Fatal(err)
	}
	denyFH := h.pathFH("acldeny")
	if got := h.readAs(as1000, denyFH, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.ErrAccess {
		t.Errorf("READ by the user the ACL shuts out: %d", got)
	}
	if got := h.readAs(as2000, denyFH, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.OK {
		t.Errorf("READ by others the ACL lets read: %d", got)
	}
	// Directories: search granted by a named-user entry on a 0700 dir.
	if err := unix.Setxattr(filepath.Join(h.dir, "private"), "system.posix_acl_access", posixACL(1000, 1, 1, 0), 0); err != nil {
		t.Fatal(err)
	}
	if st := h.lookupAs(as1000, "private", "inner"); st != nfs4.OK {
		t.Errorf("LOOKUP in a directory the ACL lets uid 1000 search: %d", st)
	}
	if st := h.lookupAs(as2000, "private", "inner"); st != nfs4.ErrAccess {
		t.Errorf("LOOKUP in it by another user: %d", st)
	}
	// Dropping the ACL (a new ctime) is seen at once.
	if err := unix.Removexattr(p, "system.posix_acl_access"); err != nil {
		t.Fatal(err)
	}
	if got := h.readAs(as1000, fh, nfs4.OpRead, nfs4.AnonStateid); got != nfs4.ErrAccess {
		t.Errorf("READ after the ACL is gone: %d", got)
	}
}

// BenchmarkHandleRead4KAsUser is BenchmarkHandleRead4K for uid 1000 (not
// root, not the owner) reading a 0644 file with the anonymous stateid: the
// permission check runs from the READ's own fstat, with no system call.
func BenchmarkHandleRead4KAsUser(b *testing.B) {
	t := &testing.T{}
	h := newHarness(t)
	h.t = t
	h.session()
	h.sparse("f", 4<<20, [][2]int64{{0, 1 << 20}})
	fh := h.lookupFH("f")
	e := xdr.NewEncoder(256)
	callHeaderCred(e, 1, as1000)
	e.String("")
	e.Uint32(2)
	e.Uint32(3)
	e.Uint32(nfs4.OpSequence)
	e.Fixed(h.sess[:])
	seqPos := e.Pos()
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(0)
	e.Bool(false)
	e.Uint32(nfs4.OpPutfh)
	e.Opaque(fh)
	e.Uint32(nfs4.OpRead)
	nfs4.AnonStateid.Encode(e)
	e.Uint64(8192)
	e.Uint32(4096)
	rec := e.AppendTo(nil)
	rep := NewReply()
	conn := NewConn("bench")
	buf := make([]byte, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint32(rec[seqPos:], h.seq+uint32(i)+1) // past the seqids the setup used
		rep.Reset()
		h.s.Handle(conn, rec, rep)
		if len(rep.Reads) != 1 {
			b.Fatalf("READ as uid 1000 planned %d reads", len(rep.Reads))
		}
		rep.CompleteRead(0, buf[:rep.Reads[0].Len])
		h.s.Complete(rep)
		rep.Iovecs()
	}
}

// TestReaddirWithoutSearchPermission: a directory the caller may read but
// not search (r without x) lists names, but no entry's attributes or
// handle: rdattr_error ACCESS where asked for, else the READDIR fails.
func TestReaddirWithoutSearchPermission(t *testing.T) {
	h := permTree(t)
	p := filepath.Join(h.dir, "ronly")
	if err := os.Mkdir(p, 0o744); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fh := h.pathFH("ronly")
	readdir := func(req nfs4.Bitmap) (*xdr.Decoder, nfs4.Status) {
		return h.opsAs(as1000, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpReaddir)
			e.Uint64(0)
			e.Fixed(make([]byte, 8))
			e.Uint32(4096)
			e.Uint32(8192)
			req.Encode(e)
		})
	}
	if _, st := readdir(nfs4.BitmapOf(nfs4.AttrType, nfs4.AttrFilehandle)); st != nfs4.ErrAccess {
		t.Fatalf("READDIR without x, no rdattr_error asked: %d, want ACCESS", st)
	}
	d, st := readdir(nfs4.BitmapOf(nfs4.AttrRdattrError, nfs4.AttrFilehandle))
	if st != nfs4.OK {
		t.Fatalf("READDIR without x, rdattr_error asked: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpReaddir, nfs4.OK)
	d.Fixed(8)
	if !d.Bool() {
		t.Fatal("no entry")
	}
	d.Uint64()
	if name := d.Opaque(255); string(name) != "f" {
		t.Fatalf("entry %q", name)
	}
	got := nfs4.DecodeBitmap(d)
	if got.Has(nfs4.AttrFilehandle) || !got.Has(nfs4.AttrRdattrError) {
		t.Fatalf("entry attributes %v: a handle without search permission", got)
	}
	d.Uint32()
	if e := nfs4.Status(d.Uint32()); e != nfs4.ErrAccess {
		t.Fatalf("rdattr_error %d, want ACCESS", e)
	}
}

// RENAME runs as the caller: uid 1000 cannot move a file out of the
// export root it may not write, nor into a directory it may not enter,
// and the server's node of the file stays where the file is.
func TestRenameAsAnotherUser(t *testing.T) {
	h := permTree(t)
	h.pathFH("pub")
	n := h.nodeAt("pub")
	private := h.pathFH("private")
	rename := func(cr testCred, to []byte, from, name string) nfs4.Status {
		_, st := h.opsAs(cr, 4, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpSavefh)
			if to == nil {
				e.Uint32(nfs4.OpPutrootfh)
			} else {
				e.Uint32(nfs4.OpPutfh)
				e.Opaque(to)
			}
			e.Uint32(nfs4.OpRename)
			e.String(from)
			e.String(name)
		})
		return st
	}
	if st := rename(as1000, nil, "pub", "stolen"); st != nfs4.ErrAccess {
		t.Errorf("RENAME pub -> stolen as uid 1000: %d, want ACCESS", st)
	}
	if st := rename(as1000, private, "pub", "hidden"); st != nfs4.ErrAccess {
		t.Errorf("RENAME pub -> private/hidden as uid 1000: %d, want ACCESS", st)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "pub")); err != nil || n.path() != "pub" {
		t.Fatalf("after refused renames: %v, node at %q", err, n.path())
	}
	if st := rename(asRoot, private, "pub", "moved"); st != nfs4.OK {
		t.Fatalf("RENAME pub -> private/moved as root: %d", st)
	}
	if got := n.path(); got != "private/moved" {
		t.Errorf("node at %q after the rename, want private/moved", got)
	}
}

// SETATTR works through a descriptor the node keeps open when it has one
// (anyFD), opened by an earlier READ of root's: the kernel still checks
// the change against the caller, so uid 1000 may neither chmod nor set
// the times of root's file, and the owner may chmod its own.
func TestSetattrThroughOpenDescriptorAsAnotherUser(t *testing.T) {
	h := permTree(t)
	setattr := func(cr testCred, fh []byte, attrs func(e *xdr.Encoder)) nfs4.Status {
		t.Helper()
		_, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpSetattr)
			nfs4.AnonStateid.Encode(e)
			attrs(e)
		})
		return st
	}
	chmod := func(mode uint32) func(e *xdr.Encoder) {
		return func(e *xdr.Encoder) {
			nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
			e.Uint32(4)
			e.Uint32(mode)
		}
	}
	mtime := func(e *xdr.Encoder) {
		nfs4.BitmapOf(nfs4.AttrTimeModifySet).Encode(e)
		e.Uint32(16)
		e.Uint32(1) // SET_TO_CLIENT_TIME4
		e.Uint64(12345)
		e.Uint32(0)
	}
	modeOf := func(name string) uint32 {
		var sb unix.Stat_t
		if err := unix.Stat(filepath.Join(h.dir, name), &sb); err != nil {
			t.Fatal(err)
		}
		return sb.Mode & 0o7777
	}
	pub, mine := h.pathFH("pub"), h.pathFH("mine")
	for _, fh := range [][]byte{pub, mine} {
		if st := h.readAs(asRoot, fh, nfs4.OpRead, nfs4.AnonStateid); st != nfs4.OK {
			t.Fatalf("root's READ: %d", st)
		}
	}
	for _, name := range []string{"pub", "mine"} {
		if !h.nodeAt(name).hasOpenFD() {
			t.Fatalf("%s: no descriptor open after a READ", name)
		}
	}
	if st := setattr(as1000, pub, chmod(0o666)); st != nfs4.ErrPerm || modeOf("pub") != 0o644 {
		t.Errorf("uid 1000 chmod of root's file: %d, mode now %o", st, modeOf("pub"))
	}
	if st := setattr(as1000, pub, mtime); st != nfs4.ErrPerm {
		t.Errorf("uid 1000 setting the mtime of root's file: %d, want NFS4ERR_PERM", st)
	}
	if st := setattr(as1000, mine, chmod(0o640)); st != nfs4.OK || modeOf("mine") != 0o640 {
		t.Errorf("owner's chmod of its file: %d, mode now %o", st, modeOf("mine"))
	}
	if st := setattr(asRoot, pub, chmod(0o600)); st != nfs4.OK || modeOf("pub") != 0o600 {
		t.Errorf("root's chmod: %d, mode now %o", st, modeOf("pub"))
	}
}

// TestCachedReadOKTakingTurns: two callers reading one file in turn use
// the cached verdict without allocating (a new verdict used to be stored
// at every change of caller).
func TestCachedReadOKTakingTurns(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	h := newHarness(t)
	h.session()
	h.write("f", []byte("data"))
	h.lookupFH("f")
	n := h.nodeAt("f")
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(h.dir, "f"), &st); err != nil {
		t.Fatal(err)
	}
	a := &compound{s: h.s, cred: Cred{UID: 1000, GID: 1000}}
	b := &compound{s: h.s, cred: Cred{UID: 1001, GID: 1001}}
	a.ioRights(n, &st)
	if !a.cachedReadOK(n) || !b.cachedReadOK(n) {
		t.Fatal("a file of mode 0644 is readable by both")
	}
	if allocs := testing.AllocsPerRun(100, func() { a.cachedReadOK(n); b.cachedReadOK(n) }); allocs != 0 {
		t.Errorf("%.1f allocations per pair of reads, want 0", allocs)
	}
}
