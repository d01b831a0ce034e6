package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// xattrHarness is a harness with a session whose export takes user
// xattrs; the test is skipped where the filesystem has none.
func xattrHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	p := filepath.Join(h.dir, ".probe")
	mustWrite(t, p, "")
	if err := unix.Setxattr(p, "user.probe", []byte("x"), 0); err != nil {
		t.Skipf("no user xattrs on %s: %v", h.dir, err)
	}
	os.Remove(p)
	h.session()
	return h
}

// xattrCall sends PUTFH fh plus op (arguments from args) as cr and returns
// op's status, with the decoder at its result body.
func (h *harness) xattrCall(cr testCred, fh []byte, op uint32, args func(e *xdr.Encoder)) (nfs4.Status, *xdr.Decoder) {
	h.t.Helper()
	d, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(op)
		args(e)
	})
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, op, st)
	return st, d
}

func (h *harness) getxattr(cr testCred, fh []byte, name string) (nfs4.Status, []byte) {
	h.t.Helper()
	st, d := h.xattrCall(cr, fh, nfs4.OpGetxattr, func(e *xdr.Encoder) { e.String(name) })
	if st != nfs4.OK {
		return st, nil
	}
	return st, bytes.Clone(d.Opaque(xattrSizeMax))
}

// setxattr returns the status and, on success, the change_info4.
func (h *harness) setxattr(cr testCred, fh []byte, option uint32, name, value string) (nfs4.Status, changeInfo) {
	h.t.Helper()
	st, d := h.xattrCall(cr, fh, nfs4.OpSetxattr, func(e *xdr.Encoder) {
		e.Uint32(option)
		e.String(name)
		e.String(value)
	})
	return st, decodeChangeInfo(h.t, st, d)
}

func (h *harness) removexattr(cr testCred, fh []byte, name string) (nfs4.Status, changeInfo) {
	h.t.Helper()
	st, d := h.xattrCall(cr, fh, nfs4.OpRemovexattr, func(e *xdr.Encoder) { e.String(name) })
	return st, decodeChangeInfo(h.t, st, d)
}

func decodeChangeInfo(t *testing.T, st nfs4.Status, d *xdr.Decoder) changeInfo {
	t.Helper()
	if st != nfs4.OK {
		return changeInfo{}
	}
	if d.Bool() {
		t.Fatal("change_info4 claims to be atomic")
	}
	return changeInfo{d.Uint64(), d.Uint64()}
}

// xattrList is a LISTXATTRS4resok.
type xattrList struct {
	cookie uint64
	names  []string
	eof    bool
}

func (h *harness) listxattrs(cr testCred, fh []byte, cookie uint64, maxcount uint32) (nfs4.Status, xattrList) {
	h.t.Helper()
	st, d := h.xattrCall(cr, fh, nfs4.OpListxattrs, func(e *xdr.Encoder) {
		e.Uint64(cookie)
		e.Uint32(maxcount)
	})
	var l xattrList
	if st != nfs4.OK {
		return st, l
	}
	l.cookie = d.Uint64()
	n := d.ArrayLen(1<<16, 4)
	for range n {
		l.names = append(l.names, string(d.Opaque(nfs4.OpaqueLimit)))
	}
	l.eof = d.Bool()
	if d.Err() != nil || d.Remaining() != 0 {
		h.t.Fatalf("LISTXATTRS result: err %v, %d bytes left", d.Err(), d.Remaining())
	}
	return st, l
}

// onDisk reads the xattr name of the file at p straight from the
// filesystem ("" and false when it has none).
func onDisk(t *testing.T, p, name string) (string, bool) {
	t.Helper()
	buf := make([]byte, xattrSizeMax)
	n, err := unix.Getxattr(p, name, buf)
	if err == unix.ENODATA {
		return "", false
	}
	if err != nil {
		t.Fatalf("getxattr %s %s: %v", p, name, err)
	}
	return string(buf[:n]), true
}

// TestXattrRoundTrip: SETXATTR's three modes, GETXATTR, LISTXATTRS and
// REMOVEXATTR on a file, as pynfs XATT2-11 check, with the wire name "a"
// stored as "user.a" on disk and change_info4 moving with each change.
func TestXattrRoundTrip(t *testing.T) {
	h := xattrHarness(t)
	h.write("f", []byte("data"))
	p := filepath.Join(h.dir, "f")
	fh := h.lookupFH("f")

	if st, _ := h.getxattr(asRoot, fh, "a"); st != nfs4.ErrNoxattr {
		t.Fatalf("GETXATTR of a missing xattr: %d, want NOXATTR", st)
	}
	st, ci := h.setxattr(asRoot, fh, nfs4.SetxattrCreate, "a", "one")
	if st != nfs4.OK {
		t.Fatalf("SETXATTR CREATE: %d", st)
	}
	if v, ok := onDisk(t, p, "user.a"); !ok || v != "one" {
		t.Fatalf("on disk user.a = %q, %v; want \"one\"", v, ok)
	}
	var st2 unix.Stat_t
	if err := unix.Stat(p, &st2); err != nil {
		t.Fatal(err)
	}
	if ci.after != changeAttr(&st2) || ci.before > ci.after {
		t.Fatalf("change_info %+v, file's change now %d", ci, changeAttr(&st2))
	}
	if st, v := h.getxattr(asRoot, fh, "a"); st != nfs4.OK || string(v) != "one" {
		t.Fatalf("GETXATTR: %d %q", st, v)
	}
	if st, _ := h.setxattr(asRoot, fh, nfs4.SetxattrCreate, "a", "two"); st != nfs4.ErrExist {
		t.Fatalf("SETXATTR CREATE of an existing xattr: %d, want EXIST", st)
	}
	if st, _ := h.setxattr(asRoot, fh, nfs4.SetxattrReplace, "b", "two"); st != nfs4.ErrNoxattr {
		t.Fatalf("SETXATTR REPLACE of a missing xattr: %d, want NOXATTR", st)
	}
	if _, ok := onDisk(t, p, "user.b"); ok {
		t.Fatal("a refused REPLACE created user.b")
	}
	if st, _ := h.setxattr(asRoot, fh, nfs4.SetxattrReplace, "a", "two"); st != nfs4.OK {
		t.Fatalf("SETXATTR REPLACE: %d", st)
	}
	if st, _ := h.setxattr(asRoot, fh, nfs4.SetxattrEither, "b", ""); st != nfs4.OK {
		t.Fatalf("SETXATTR EITHER of an empty value: %d", st)
	}
	if st, v := h.getxattr(asRoot, fh, "b"); st != nfs4.OK || len(v) != 0 {
		t.Fatalf("GETXATTR of an empty value: %d %q", st, v)
	}
	st, l := h.listxattrs(asRoot, fh, 0, 8192)
	slices.Sort(l.names)
	if st != nfs4.OK || !slices.Equal(l.names, []string{"a", "b"}) || !l.eof || l.cookie != 2 {
		t.Fatalf("LISTXATTRS: %d %+v", st, l)
	}
	if st, _ := h.removexattr(asRoot, fh, "a"); st != nfs4.OK {
		t.Fatalf("REMOVEXATTR: %d", st)
	}
	if _, ok := onDisk(t, p, "user.a"); ok {
		t.Fatal("user.a still on disk")
	}
	if st, _ := h.removexattr(asRoot, fh, "a"); st != nfs4.ErrNoxattr {
		t.Fatalf("REMOVEXATTR of a missing xattr: %d, want NOXATTR", st)
	}
	if st, v := h.getxattr(asRoot, fh, "b"); st != nfs4.OK || len(v) != 0 {
		t.Fatalf("GETXATTR b after removing a: %d %q", st, v)
	}
}

// TestXattrUserNamespaceOnly: only user.* is reachable. A wire name that
// looks like another namespace is a user name ("trusted.t" is stored as
// "user.trusted.t"), and listings leave other namespaces out.
func TestXattrUserNamespaceOnly(t *testing.T) {
	h := xattrHarness(t)
	h.write("f", []byte("data"))
	p := filepath.Join(h.dir, "f")
	if err := unix.Setxattr(p, "trusted.t", []byte("root only"), 0); err != nil {
		t.Skipf("no trusted xattrs here: %v", err)
	}
	if err := unix.Setxattr(p, "user.u", []byte("mine"), 0); err != nil {
		t.Fatal(err)
	}
	fh := h.lookupFH("f")
	if st, _ := h.getxattr(asRoot, fh, "trusted.t"); st != nfs4.ErrNoxattr {
		t.Fatalf("GETXATTR trusted.t: %d, want NOXATTR (it is user.trusted.t)", st)
	}
	if st, _ := h.setxattr(asRoot, fh, nfs4.SetxattrEither, "trusted.t", "x"); st != nfs4.OK {
		t.Fatalf("SETXATTR trusted.t: %d", st)
	}
	if v, _ := onDisk(t, p, "trusted.t"); v != "root only" {
		t.Fatalf("trusted.t changed to %q", v)
	}
	if v, _ := onDisk(t, p, "user.trusted.t"); v != "x" {
		t.Fatalf("user.trusted.t = %q", v)
	}
	st, l := h.listxattrs(asRoot, fh, 0, 8192)
	slices.Sort(l.names)
	if st != nfs4.OK || !slices.Equal(l.names, []string{"trusted.t", "u"}) {
		t.Fatalf("LISTXATTRS: %d %+v, want the user names only", st, l)
	}
}

// TestXattrBadArguments: names the kernel cannot take, an unknown
// SETXATTR option and values over XATTR_SIZE_MAX get clear errors (as
// knfsd's decoders) and change nothing.
func TestXattrBadArguments(t *testing.T) {
	h := xattrHarness(t)
	h.write("f", []byte("data"))
	p := filepath.Join(h.dir, "f")
	fh := h.lookupFH("f")
	long := strings.Repeat("n", 251) // "user." + 251 > XATTR_NAME_MAX
	cases := []struct {
		what   string
		option uint32
		name   string
		value  string
		want   nfs4.Status
	}{
		{"name of 251 bytes", nfs4.SetxattrEither, long, "v", nfs4.ErrNametoolong},
		{"empty name", nfs4.SetxattrEither, "", "v", nfs4.ErrBadXDR},
		{"name with a NUL", nfs4.SetxattrEither, "a\x00b", "v", nfs4.ErrBadXDR},
		{"option 3", 3, "a", "v", nfs4.ErrInval},
		{"value over 64 KiB", nfs4.SetxattrEither, "a", strings.Repeat("v", xattrSizeMax+1), nfs4.ErrXattr2big},
	}
	for _, c := range cases {
		if st, _ := h.setxattr(asRoot, fh, c.option, c.name, c.value); st != c.want {
			t.Errorf("SETXATTR with %s: %d, want %d", c.what, st, c.want)
		}
	}
	if st, _ := h.getxattr(asRoot, fh, long); st != nfs4.ErrNametoolong {
		t.Errorf("GETXATTR of a 251-byte name: %d", st)
	}
	if st, _ := h.removexattr(asRoot, fh, ""); st != nfs4.ErrBadXDR {
		t.Errorf("REMOVEXATTR of an empty name: %d", st)
	}
	if n, err := unix.Listxattr(p, make([]byte, 1024)); err != nil || n != 0 {
		t.Fatalf("xattrs on disk after refused calls: %d bytes, %v", n, err)
	}
	// The longest name that fits is taken.
	if st, _ := h.setxattr(asRoot, fh, nfs4.SetxattrEither, long[:250], "v"); st != nfs4.OK {
		t.Fatalf("SETXATTR of a 250-byte name: %d", st)
	}
	// A value length longer than the record is BADXDR, not a crash.
	st, _ := h.xattrCall(asRoot, fh, nfs4.OpSetxattr, func(e *xdr.Encoder) {
		e.Uint32(nfs4.SetxattrEither)
		e.String("a")
		e.Uint32(1000)
	})
	if st != nfs4.ErrBadXDR {
		t.Fatalf("SETXATTR with a truncated value: %d", st)
	}
	// No current filehandle.
	_, st = h.opsAs(asRoot, 1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpGetxattr)
		e.String("a")
	})
	if st != nfs4.ErrNofilehandle {
		t.Fatalf("GETXATTR without a filehandle: %d", st)
	}
}

// TestXattrPermission: reading and listing need read permission, setting
// and removing write permission (knfsd's NFSD_MAY_READ / NFSD_MAY_WRITE,
// no owner override), and the calls run as the caller: in a sticky
// directory the kernel refuses a non-owner's change (EPERM), which a
// server acting as root would have made.
func TestXattrPermission(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: files of several owners")
	}
	h := xattrHarness(t)
	if err := os.Chmod(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := func(name string, uid int, mode os.FileMode) string {
		p := filepath.Join(h.dir, name)
		mustWrite(t, p, "x")
		if err := unix.Setxattr(p, "user.k", []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pub := file("pub", 0, 0o644)
	file("secret", 0, 0o600)
	file("ro-mine", 1000, 0o444)
	mine := file("mine", 1000, 0o644)
	sticky := filepath.Join(h.dir, "sticky")
	if err := os.Mkdir(sticky, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Chmod(sticky, 0o1777); err != nil { // os.Chmod takes ModeSticky, not 0o1000
		t.Fatal(err)
	}

	fh := func(name string) []byte { return h.pathFH(name) }
	// Reads: pub is readable by uid 1000, secret is not.
	if st, v := h.getxattr(as1000, fh("pub"), "k"); st != nfs4.OK || string(v) != "v" {
		t.Errorf("uid 1000 GETXATTR on pub: %d %q", st, v)
	}
	if st, _ := h.listxattrs(as1000, fh("pub"), 0, 8192); st != nfs4.OK {
		t.Errorf("uid 1000 LISTXATTRS on pub: %d", st)
	}
	if st, _ := h.getxattr(as1000, fh("secret"), "k"); st != nfs4.ErrAccess {
		t.Errorf("uid 1000 GETXATTR on secret: %d, want ACCESS", st)
	}
	if st, _ := h.listxattrs(as1000, fh("secret"), 0, 8192); st != nfs4.ErrAccess {
		t.Errorf("uid 1000 LISTXATTRS on secret: %d, want ACCESS", st)
	}
	// Writes: refused on root's 0644 file and on the caller's own 0444 one.
	for _, name := range []string{"pub", "ro-mine"} {
		if st, _ := h.setxattr(as1000, fh(name), nfs4.SetxattrEither, "k", "changed"); st != nfs4.ErrAccess {
			t.Errorf("uid 1000 SETXATTR on %s: %d, want ACCESS", name, st)
		}
		if st, _ := h.removexattr(as1000, fh(name), "k"); st != nfs4.ErrAccess {
			t.Errorf("uid 1000 REMOVEXATTR on %s: %d, want ACCESS", name, st)
		}
	}
	if v, _ := onDisk(t, pub, "user.k"); v != "v" {
		t.Errorf("pub's user.k is %q after refused calls", v)
	}
	// Controls: the owner with write permission, and root.
	if st, _ := h.setxattr(as1000, fh("mine"), nfs4.SetxattrEither, "k", "by 1000"); st != nfs4.OK {
		t.Errorf("uid 1000 SETXATTR on its own file: %d", st)
	}
	if v, _ := onDisk(t, mine, "user.k"); v != "by 1000" {
		t.Errorf("mine's user.k = %q", v)
	}
	if st, _ := h.removexattr(asRoot, fh("secret"), "k"); st != nfs4.OK {
		t.Errorf("root REMOVEXATTR on secret: %d", st)
	}
	// The sticky directory: mode 1777 grants write, the kernel refuses
	// user xattrs on it to anyone but its owner.
	if st, _ := h.setxattr(as1000, fh("sticky"), nfs4.SetxattrEither, "d", "x"); st != nfs4.ErrPerm {
		t.Errorf("uid 1000 SETXATTR on a sticky root-owned directory: %d, want PERM", st)
	}
	if _, ok := onDisk(t, sticky, "user.d"); ok {
		t.Error("the refused SETXATTR set user.d on the sticky directory")
	}
	if st, _ := h.setxattr(asRoot, fh("sticky"), nfs4.SetxattrEither, "d", "x"); st != nfs4.OK {
		t.Errorf("root SETXATTR on the sticky directory: %d", st)
	}
}

// TestXattrOtherTypes: symlinks, FIFOs and the pseudo-root answer as the
// kernel does for user xattrs on such files (no such xattr; EPERM to
// change), and nothing is followed: the symlink's target is untouched.
func TestXattrOtherTypes(t *testing.T) {
	h := xattrHarness(t)
	h.write("target", []byte("data"))
	target := filepath.Join(h.dir, "target")
	if err := unix.Setxattr(target, "user.t", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", filepath.Join(h.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(h.dir, "fifo"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"link", "fifo"} {
		fh := h.lookupFH(name)
		if st, _ := h.getxattr(asRoot, fh, "t"); st != nfs4.ErrNoxattr {
			t.Errorf("GETXATTR on %s: %d, want NOXATTR", name, st)
		}
		if st, _ := h.setxattr(asRoot, fh, nfs4.SetxattrEither, "n", "x"); st != nfs4.ErrPerm {
			t.Errorf("SETXATTR on %s: %d, want PERM", name, st)
		}
		if st, _ := h.removexattr(asRoot, fh, "t"); st != nfs4.ErrPerm {
			t.Errorf("REMOVEXATTR on %s: %d, want PERM", name, st)
		}
		if st, l := h.listxattrs(asRoot, fh, 0, 8192); st != nfs4.OK || len(l.names) != 0 || !l.eof {
			t.Errorf("LISTXATTRS on %s: %d %+v, want an empty list", name, st, l)
		}
	}
	if v, _ := onDisk(t, target, "user.t"); v != "v" {
		t.Fatalf("the symlink's target lost user.t: %q", v)
	}
	if _, ok := onDisk(t, target, "user.n"); ok {
		t.Fatal("SETXATTR on the symlink reached its target")
	}
}

// TestXattrListPaging: LISTXATTRS returns what fits in lxa_maxcount (the
// whole LISTXATTRS4resok: 16 bytes plus the names), a cookie that resumes
// after them, eof at the end; a cookie past the list is BADCOOKIE and a
// maxcount too small for one name TOOSMALL.
func TestXattrListPaging(t *testing.T) {
	h := xattrHarness(t)
	h.write("f", []byte("data"))
	h.write("empty", []byte("data"))
	p := filepath.Join(h.dir, "f")
	var want []string
	for _, n := range []string{"attr1", "attr2", "attr3", "attr4", "attr5", "attr6"} {
		if err := unix.Setxattr(p, "user."+n, []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	fh := h.lookupFH("f")
	// Each name takes 4 + 8 bytes: 16 + 2*12 fits two.
	var got []string
	cookie := uint64(0)
	for calls := 0; ; calls++ {
		st, l := h.listxattrs(asRoot, fh, cookie, 16+2*12)
		if st != nfs4.OK || calls > 5 {
			t.Fatalf("LISTXATTRS cookie %d: %d %+v", cookie, st, l)
		}
		if len(l.names) != 2 || l.cookie != cookie+2 {
			t.Fatalf("page at cookie %d: %+v, want two names", cookie, l)
		}
		got = append(got, l.names...)
		cookie = l.cookie
		if l.eof {
			break
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("paged names %v, want %v", got, want)
	}
	if st, _ := h.listxattrs(asRoot, fh, 7, 8192); st != nfs4.ErrBadCookie {
		t.Errorf("cookie past the list: %d, want BAD_COOKIE", st)
	}
	if st, l := h.listxattrs(asRoot, fh, 6, 8192); st != nfs4.OK || len(l.names) != 0 || !l.eof {
		t.Errorf("cookie at the end: %d %+v, want an empty final page", st, l)
	}
	if st, _ := h.listxattrs(asRoot, fh, 0, 16+11); st != nfs4.ErrToosmall {
		t.Errorf("maxcount too small for one name: %d, want TOOSMALL", st)
	}
	if st, _ := h.listxattrs(asRoot, fh, 0, 0); st != nfs4.ErrToosmall {
		t.Errorf("maxcount 0: %d, want TOOSMALL", st)
	}
	if st, l := h.listxattrs(asRoot, h.lookupFH("empty"), 0, 16); st != nfs4.OK || len(l.names) != 0 || !l.eof {
		t.Errorf("no xattrs, maxcount 16: %d %+v", st, l)
	}
}

// TestXattrAccessBits: ACCESS reports XAREAD, XALIST (read) and XAWRITE
// (write) on NFSv4.2, and leaves them out on 4.1, as knfsd.
func TestXattrAccessBits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a file of another owner")
	}
	h := newHarness(t)
	h.session()
	h.write("f", []byte("data")) // root's, 0644
	fh := h.lookupFH("f")
	all := uint32(nfs4.AccessXaread | nfs4.AccessXawrite | nfs4.AccessXalist | nfs4.AccessRead)
	sup, got := h.accessAs(as1000, fh, all)
	if sup != all || got != nfs4.AccessXaread|nfs4.AccessXalist|nfs4.AccessRead {
		t.Fatalf("uid 1000 on a 0644 file: supported %#x granted %#x", sup, got)
	}
	if sup, got := h.accessAs(asRoot, fh, all); sup != all || got != all {
		t.Fatalf("root: supported %#x granted %#x", sup, got)
	}
	d, st, _ := h.compoundMinor(1, 3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpAccess)
		e.Uint32(all)
	})
	if st != nfs4.OK {
		t.Fatalf("ACCESS on 4.1: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpAccess, nfs4.OK)
	if sup, got := d.Uint32(), d.Uint32(); sup != nfs4.AccessRead || got != nfs4.AccessRead {
		t.Fatalf("4.1: supported %#x granted %#x, want READ only", sup, got)
	}
}

// TestXattrSupportAttr: xattr_support (attribute 82) is supported and
// true (pynfs XATT1).
func TestXattrSupportAttr(t *testing.T) {
	h := newHarness(t)
	h.session()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrSupportedAttrs, nfs4.AttrXattrSupport).Encode(e)
	})
	if st != nfs4.OK {
		t.Fatal(st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpGetattr, nfs4.OK)
	if got := nfs4.DecodeBitmap(d); !got.Has(nfs4.AttrSupportedAttrs) || !got.Has(nfs4.AttrXattrSupport) {
		t.Fatalf("attributes returned: %v", got)
	}
	d.Uint32() // attrlist length
	if supp := nfs4.DecodeBitmap(d); !supp.Has(nfs4.AttrXattrSupport) {
		t.Fatalf("supported_attrs %v lacks xattr_support", supp)
	}
	if !d.Bool() || d.Err() != nil {
		t.Fatalf("xattr_support is not true (%v)", d.Err())
	}
}

// FuzzXattrArgs: the four decoders never panic, and what they accept is
// within the kernel's limits: a "user." name of at most 255 bytes with no
// NUL, a value of at most XATTR_SIZE_MAX, a known SETXATTR option.
func FuzzXattrArgs(f *testing.F) {
	seed := func(build func(e *xdr.Encoder)) {
		e := xdr.NewEncoder(64)
		build(e)
		f.Add(e.AppendTo(nil))
	}
	seed(func(e *xdr.Encoder) { e.String("attr1") })
	seed(func(e *xdr.Encoder) { e.Uint32(nfs4.SetxattrCreate); e.String("a"); e.String("value") })
	seed(func(e *xdr.Encoder) { e.Uint64(3); e.Uint32(8192) })
	seed(func(e *xdr.Encoder) { e.Uint32(2); e.String(strings.Repeat("n", 250)); e.Uint32(xattrSizeMax) })
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkName := func(name string, st nfs4.Status) {
			if st != nfs4.OK {
				return
			}
			if !strings.HasPrefix(name, xattrUserPrefix) || len(name) > 255 ||
				len(name) == len(xattrUserPrefix) || strings.IndexByte(name, 0) >= 0 {
				t.Fatalf("accepted name %q", name)
			}
		}
		g, st := decodeGetxattr(xdr.NewDecoder(b))
		checkName(g.name, st)
		r, st := decodeRemovexattr(xdr.NewDecoder(b))
		checkName(r.name, st)
		s, st := decodeSetxattr(xdr.NewDecoder(b))
		checkName(s.name, st)
		if st == nfs4.OK && (len(s.value) > xattrSizeMax || s.option > nfs4.SetxattrReplace) {
			t.Fatalf("accepted option %d, value of %d bytes", s.option, len(s.value))
		}
		decodeListxattrs(xdr.NewDecoder(b))
	})
}

// FuzzXattrOps runs each xattr operation with fuzzed argument bytes on a
// file that has user xattrs: no panic, a well-formed reply, and nothing
// outside the user namespace changes.
func FuzzXattrOps(f *testing.F) {
	f.Add(byte(0), []byte{0, 0, 0, 1, 'a', 0, 0, 0})
	f.Add(byte(1), []byte{0, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 2, 'v', 'v', 0, 0})
	f.Add(byte(2), []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 40})
	f.Add(byte(3), []byte{0, 0, 0, 1, 'k', 0, 0, 0})
	f.Fuzz(func(t *testing.T, which byte, args []byte) {
		h := xattrHarness(t)
		h.write("f", []byte("data"))
		p := filepath.Join(h.dir, "f")
		for _, n := range []string{"user.k", "user.a"} {
			if err := unix.Setxattr(p, n, []byte("v"), 0); err != nil {
				t.Fatal(err)
			}
		}
		before := otherXattrs(t, p)
		fh := h.lookupFH("f")
		op := nfs4.OpGetxattr + uint32(which%4)
		h.opsAs(asRoot, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(op)
			e.Fixed(args[:len(args)&^3])
		})
		if after := otherXattrs(t, p); !slices.Equal(before, after) {
			t.Fatalf("xattrs outside user. changed: %q, were %q", after, before)
		}
	})
}

// otherXattrs lists the xattr names of p outside the user namespace.
func otherXattrs(t *testing.T, p string) []string {
	t.Helper()
	buf := make([]byte, xattrListMax)
	n, err := unix.Listxattr(p, buf)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if name != "" && !strings.HasPrefix(name, xattrUserPrefix) {
			out = append(out, name)
		}
	}
	return out
}
