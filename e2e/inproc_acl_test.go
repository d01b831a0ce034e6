package e2e

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// aclFixture is an export on a filesystem with POSIX ACLs (the test is
// skipped elsewhere), served with cfg's name mapping, and a file in it.
func aclFixture(t *testing.T, cfg nfs.Config) (*fixture, string) {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	if err := os.Chmod(f.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(f.dir, "acl.txt")
	if err := os.WriteFile(p, []byte("acl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Getxattr(p, "system.posix_acl_access", nil); err == unix.EOPNOTSUPP {
		t.Skipf("no POSIX ACLs on %s", f.dir)
	}
	cfg.Exports = []nfs.Export{{Path: f.dir}}
	f.addr, _ = serve(t, testEngine(), cfg, engine.Options{})
	return f, p
}

// aceStrings is aces as nfs4_getfacl prints them.
func aceStrings(aces []client.ACE) []string {
	out := make([]string, len(aces))
	for i, a := range aces {
		out[i] = a.String()
	}
	return out
}

// getfacl is the host's view of p's ACLs (getfacl from the acl package;
// "" when it is not installed).
func getfacl(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("getfacl"); err != nil {
		return ""
	}
	out, err := exec.Command("getfacl", append([]string{"-cnp"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("getfacl %v: %v %s", args, err, out)
	}
	return strings.Join(strings.Fields(string(out)), ",")
}

func parseACEs(t *testing.T, specs ...string) []client.ACE {
	t.Helper()
	var out []client.ACE
	for _, s := range specs {
		parts := strings.Split(s, ":")
		if len(parts) != 4 {
			t.Fatalf("bad ACE %q", s)
		}
		a := client.ACE{Who: parts[2]}
		a.Type = map[string]uint32{"A": client.ACEAllowed, "D": client.ACEDenied, "U": client.ACEAudit}[parts[0]]
		for _, c := range parts[1] {
			a.Flag |= map[rune]uint32{'f': client.ACEFileInherit, 'd': client.ACEDirectoryInherit,
				'n': client.ACENoPropagate, 'i': client.ACEInheritOnly, 'g': client.ACEIdentifierGroup}[c]
		}
		for _, c := range parts[3] {
			a.Mask |= map[rune]uint32{'r': client.ACEReadData, 'w': client.ACEWriteData, 'a': client.ACEAppendData,
				'x': client.ACEExecute, 'D': client.ACEDeleteChild, 't': client.ACEReadAttributes,
				'T': client.ACEWriteAttributes, 'c': client.ACEReadACL, 'C': client.ACEWriteACL,
				'y': client.ACESynchronize}[c]
		}
		out = append(out, a)
	}
	return out
}

// TestSetattrACLFile: GETATTR acl of a plain 0644 file is knfsd's three
// ACEs; SETATTR acl lands on disk as the POSIX ACL knfsd would set (host
// getfacl), mode included, and reads back; aclsupport is ALLOW|DENY.
func TestSetattrACLFile(t *testing.T) {
	f, p := aclFixture(t, nfs.Config{})
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "acl.txt")
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrSupportedAttrs, nfs4.AttrACL, nfs4.AttrACLSupport))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Supported.Has(nfs4.AttrACL) || !a.Supported.Has(nfs4.AttrACLSupport) ||
		a.ACLSupport != client.ACLSupportAllow|client.ACLSupportDeny {
		t.Fatalf("supported %v, aclsupport %#x", a.Supported, a.ACLSupport)
	}
	if got, want := aceStrings(a.ACL), []string{"A::OWNER@:rwatTcCy", "A::GROUP@:rtcy", "A::EVERYONE@:rtcy"}; !slices.Equal(got, want) {
		t.Fatalf("ACL of a 0644 file: %q, want %q", got, want)
	}
	set := parseACEs(t, "A::OWNER@:rwatTcCy", "A::1000:rxtcy", "D::GROUP@:w", "A::GROUP@:rtcy", "A::EVERYONE@:tcy")
	if err := c.SetACL(ctx, fh, set); err != nil {
		t.Fatal(err)
	}
	if got, want := getfacl(t, p), "user::rw-,user:1000:r-x,group::r--,mask::r-x,other::---"; got != "" && got != want {
		t.Fatalf("host getfacl: %s, want %s", got, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil || st.Mode&0o777 != 0o650 {
		t.Fatalf("mode after SETATTR acl: %o %v, want 650 (group bits are the mask)", st.Mode&0o777, err)
	}
	got, err := c.GetACL(ctx, fh)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"D::OWNER@:x", "A::OWNER@:rwatTcCy", "A::1000:rxtcy", "A::GROUP@:rtcy", "A::EVERYONE@:tcy"}; !slices.Equal(aceStrings(got), want) {
		t.Fatalf("ACL read back: %q, want %q", aceStrings(got), want)
	}
	// The ACL a mode says is kept as the mode, as setfacl does.
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::OWNER@:rwa", "A::GROUP@:r", "A::EVERYONE@:")); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Getxattr(p, "system.posix_acl_access", nil); err != unix.ENODATA {
		t.Fatalf("access ACL xattr after a mode-only ACL: %v", err)
	}
	if err := unix.Stat(p, &st); err != nil || st.Mode&0o777 != 0o640 {
		t.Fatalf("mode: %o %v, want 640", st.Mode&0o777, err)
	}
}

// TestSetattrACLDirectory: inheritable ACEs become the directory's
// default ACL, and new files created through NFS inherit it.
func TestSetattrACLDirectory(t *testing.T) {
	f, _ := aclFixture(t, nfs.Config{})
	dir := filepath.Join(f.dir, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	set := parseACEs(t, "A::OWNER@:rwaxDtTcCy", "A::GROUP@:rxtcy", "A::EVERYONE@:tcy",
		"A:fdi:OWNER@:rwaxDtTcCy", "A:fdi:1000:rwaxDtcy", "A:fdi:GROUP@:rxtcy", "A:fdi:EVERYONE@:tcy")
	if err := c.SetACL(ctx, fh, set); err != nil {
		t.Fatal(err)
	}
	if got, want := getfacl(t, "-d", dir), "user::rwx,user:1000:rwx,group::r-x,mask::rwx,other::---"; got != "" && got != want {
		t.Fatalf("host default ACL: %s, want %s", got, want)
	}
	got, err := c.GetACL(ctx, fh)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(aceStrings(got), aceStrings(set)) {
		t.Fatalf("ACL read back: %q, want %q", aceStrings(got), aceStrings(set))
	}
	nf, err := c.OpenCreate(ctx, fh, "child", 0o666)
	if err != nil {
		t.Fatal(err)
	}
	c.CloseFile(ctx, nf.FH, nf.Stateid)
	if got, want := getfacl(t, filepath.Join(dir, "child")), "user::rw-,user:1000:rwx,#effective:rw-,group::r-x,#effective:r--,mask::rw-,other::---"; got != "" && got != want {
		t.Fatalf("inherited ACL: %s, want %s", got, want)
	}
	// An ACL without inheritable ACEs removes the default ACL.
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::OWNER@:rwaxD", "A::EVERYONE@:rx")); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Getxattr(dir, "system.posix_acl_default", nil); err != unix.ENODATA {
		t.Fatalf("default ACL after an ACL without inheritable ACEs: %v", err)
	}
}

// TestSetattrACLRefused: an ACL POSIX cannot hold is refused
// (NFS4ERR_ATTRNOTSUPP, as knfsd) and the file keeps its ACL; a caller
// who does not own the file gets NFS4ERR_PERM.
func TestSetattrACLRefused(t *testing.T) {
	f, p := aclFixture(t, nfs.Config{})
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "acl.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, aces := range [][]string{
		{"U::EVERYONE@:r"},                  // audit
		{"A:fd:EVERYONE@:r"},                // inheritance on a file
		{"D::EVERYONE@:c", "A::OWNER@:rwa"}, // deny read_acl
		{"D::OWNER@:C"},                     // deny write_acl to the owner
	} {
		if err := c.SetACL(ctx, fh, parseACEs(t, aces...)); !client.IsStatus(err, nfs4.ErrAttrnotsupp) {
			t.Errorf("SETATTR acl %q: %v, want NFS4ERR_ATTRNOTSUPP", aces, err)
		}
	}
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::nosuchuser-acl@localdomain:r")); !client.IsStatus(err, nfs4.ErrBadowner) {
		t.Errorf("SETATTR acl with an unknown name: %v, want NFS4ERR_BADOWNER", err)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil || st.Mode&0o777 != 0o644 {
		t.Fatalf("mode after refused ACLs: %o %v", st.Mode&0o777, err)
	}
	if os.Geteuid() != 0 {
		return
	}
	u, err := client.Dial(ctx, f.addr, client.Options{UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if err := u.SetACL(ctx, fh, parseACEs(t, "A::EVERYONE@:rwa")); !client.IsStatus(err, nfs4.ErrPerm) {
		t.Fatalf("uid 1000 SETATTR acl on root's file: %v, want NFS4ERR_PERM", err)
	}
	if _, err := unix.Getxattr(p, "system.posix_acl_access", nil); err != unix.ENODATA {
		t.Fatalf("access ACL after a refused SETATTR: %v", err)
	}
}

// TestNoACLFilesystem: on a filesystem that keeps no POSIX ACLs (ramfs:
// no xattrs at all) the acl attribute is not in supported_attrs, aclsupport
// is 0 and GETATTR acl leaves it out, as knfsd (IS_POSIXACL); SETATTR acl
// is NFS4ERR_ATTRNOTSUPP. The export's other filesystem attributes stand.
func TestNoACLFilesystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting ramfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("ramfs", dir, "ramfs", 0, "mode=0755"); err != nil {
		t.Skipf("mount ramfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir}
	f.addr, _ = serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}}, engine.Options{})
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrSupportedAttrs, nfs4.AttrACL, nfs4.AttrACLSupport, nfs4.AttrMode))
	if err != nil {
		t.Fatal(err)
	}
	if a.Supported.Has(nfs4.AttrACL) || !a.Supported.Has(nfs4.AttrACLSupport) || a.ACLSupport != 0 || a.ACL != nil || a.Mode != 0o644 {
		t.Fatalf("supported %v, aclsupport %#x, acl %v, mode %o", a.Supported, a.ACLSupport, a.ACL, a.Mode)
	}
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::OWNER@:rwa", "A::GROUP@:r", "A::EVERYONE@:")); !client.IsStatus(err, nfs4.ErrAttrnotsupp) {
		t.Fatalf("SETATTR acl on ramfs: %v, want NFS4ERR_ATTRNOTSUPP", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "f")); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode after a refused SETATTR acl: %v %v", st.Mode(), err)
	}
}

// TestACLNamedUser: an ACE for a named user lets that user, and only
// that user, read a 0600 file: the kernel enforces the POSIX ACL the
// server set.
func TestACLNamedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as other users")
	}
	f, p := aclFixture(t, nfs.Config{})
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "acl.txt")
	if err != nil {
		t.Fatal(err)
	}
	u1000, err := client.Dial(ctx, f.addr, client.Options{UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer u1000.Close()
	u1001, err := client.Dial(ctx, f.addr, client.Options{UID: 1001, GID: 1001})
	if err != nil {
		t.Fatal(err)
	}
	defer u1001.Close()
	if _, err := u1000.ReadFile(ctx, "acl.txt", 4096); !client.IsStatus(err, nfs4.ErrAccess) {
		t.Fatalf("uid 1000 read before the ACL: %v, want NFS4ERR_ACCESS", err)
	}
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::OWNER@:rwa", "A::1000:r", "A::GROUP@:", "A::EVERYONE@:")); err != nil {
		t.Fatal(err)
	}
	if got, err := u1000.ReadFile(ctx, "acl.txt", 4096); err != nil || string(got) != "acl\n" {
		t.Fatalf("uid 1000 read with the ACL: %q %v", got, err)
	}
	if _, err := u1001.ReadFile(ctx, "acl.txt", 4096); !client.IsStatus(err, nfs4.ErrAccess) {
		t.Fatalf("uid 1001 read: %v, want NFS4ERR_ACCESS", err)
	}
	// A DENY for the named user takes the read back.
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::OWNER@:rwa", "D::1000:r", "A::EVERYONE@:r")); err != nil {
		t.Fatal(err)
	}
	if _, err := u1000.ReadFile(ctx, "acl.txt", 4096); !client.IsStatus(err, nfs4.ErrAccess) {
		t.Fatalf("uid 1000 read after the DENY: %v, want NFS4ERR_ACCESS", err)
	}
	if got, err := u1001.ReadFile(ctx, "acl.txt", 4096); err != nil || string(got) != "acl\n" {
		t.Fatalf("uid 1001 read with EVERYONE@ allowed: %q %v", got, err)
	}
}

// TestOwnerNamesWire: owner strings over the wire. By default numeric
// (knfsd's AUTH_SYS behaviour); with IdmapNames, root@DOMAIN; names with
// another domain, or unknown to the name service, are NFS4ERR_BADOWNER.
func TestOwnerNamesWire(t *testing.T) {
	root, err := user.LookupId("0")
	if err != nil {
		t.Skip("no name for uid 0")
	}
	f, p := aclFixture(t, nfs.Config{IdmapDomain: "example.test", IdmapNames: true})
	c := dial(t, f)
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "acl.txt")
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrOwner, nfs4.AttrOwnerGroup, nfs4.AttrACL))
	if err != nil {
		t.Fatal(err)
	}
	name := root.Username + "@example.test"
	if a.Owner != name {
		t.Fatalf("owner %q, want %q", a.Owner, name)
	}
	set := func(owner string) error {
		_, err := c.Setattr(ctx, fh, nfs4.AnonStateid, &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrOwner), Owner: owner})
		return err
	}
	for _, ok := range []string{name, root.Username + "@EXAMPLE.test", "0", "1000"} {
		if err := set(ok); err != nil {
			t.Errorf("owner %q: %v", ok, err)
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil || st.Uid != 1000 {
		t.Fatalf("uid after owner \"1000\": %d %v", st.Uid, err)
	}
	for _, bad := range []string{root.Username + "@other.test", "nosuchuser-acl@example.test", "@example.test"} {
		if err := set(bad); !client.IsStatus(err, nfs4.ErrBadowner) {
			t.Errorf("owner %q: %v, want NFS4ERR_BADOWNER", bad, err)
		}
	}
	// No name at all is malformed, not unknown (knfsd; pynfs SATT16).
	if err := set(""); !client.IsStatus(err, nfs4.ErrInval) {
		t.Errorf("owner \"\": %v, want NFS4ERR_INVAL", err)
	}
	// The ACL's named whos are names too.
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::OWNER@:rwa", "A::"+name+":r", "A::EVERYONE@:")); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetACL(ctx, fh)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(aceStrings(got), "A::"+name+":rtcy") {
		t.Fatalf("ACL %q has no ACE for %s", aceStrings(got), name)
	}

	// Without IdmapNames an AUTH_SYS caller sees numbers.
	g, _ := aclFixture(t, nfs.Config{IdmapDomain: "example.test"})
	gc := dial(t, g)
	gfh, err := gc.LookupPath(ctx, "acl.txt")
	if err != nil {
		t.Fatal(err)
	}
	if a, err := gc.Getattr(ctx, gfh, nfs4.BitmapOf(nfs4.AttrOwner, nfs4.AttrOwnerGroup)); err != nil || a.Owner != "0" || a.OwnerGroup != "0" {
		t.Fatalf("owner %q group %q, %v; want numeric", a.Owner, a.OwnerGroup, err)
	}
}

// TestCreateWithACL: CREATE (a directory) and OPEN (a file) take the acl
// attribute with the new object, after its mode, as knfsd.
func TestCreateWithACL(t *testing.T) {
	f, _ := aclFixture(t, nfs.Config{})
	c := dial(t, f)
	ctx := ctxT(t)
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dirACL := parseACEs(t, "A::OWNER@:rwaxD", "A::EVERYONE@:rx", "A:fdi:OWNER@:rwaxD", "A:fdi:1000:rwaxD", "A:fdi:EVERYONE@:")
	if _, err := c.Create(ctx, root, nfs4.NF4DIR, "cd", "", &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode, nfs4.AttrACL), Mode: 0o700, ACL: dirACL}); err != nil {
		t.Fatal(err)
	}
	if got, want := getfacl(t, "-d", filepath.Join(f.dir, "cd")), "user::rwx,user:1000:rwx,group::---,mask::rwx,other::---"; got != "" && got != want {
		t.Fatalf("default ACL of the created directory: %s, want %s", got, want)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(f.dir, "cd"), &st); err != nil || st.Mode&0o777 != 0o755 {
		t.Fatalf("mode %o %v, want 755 (the ACL after the mode)", st.Mode&0o777, err)
	}
	nf, err := c.OpenWith(ctx, root, &client.OpenArgs{Access: nfs4.ShareAccessBoth, Name: "cf", Create: true,
		CreateMode: nfs4.CreateUnchecked, Attrs: &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode, nfs4.AttrACL), Mode: 0o644,
			ACL: parseACEs(t, "A::OWNER@:rwa", "A::1000:rwa", "A::GROUP@:r", "A::EVERYONE@:")}})
	if err != nil {
		t.Fatal(err)
	}
	c.CloseFile(ctx, nf.FH, nf.Stateid)
	if got, want := getfacl(t, filepath.Join(f.dir, "cf")), "user::rw-,user:1000:rw-,group::r--,mask::rw-,other::---"; got != "" && got != want {
		t.Fatalf("ACL of the created file: %s, want %s", got, want)
	}
	// EXCLUSIVE4_1 takes it too (suppattr_exclcreat lists acl, as knfsd).
	xf, err := c.OpenWith(ctx, root, &client.OpenArgs{Access: nfs4.ShareAccessBoth, Name: "xf", Create: true,
		CreateMode: nfs4.CreateExclusive41, Verifier: [nfs4.VerifierSize]byte{1, 2, 3},
		Attrs: &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode, nfs4.AttrACL), Mode: 0o600,
			ACL: parseACEs(t, "A::OWNER@:rwa", "A::1000:r", "A::GROUP@:", "A::EVERYONE@:")}})
	if err != nil {
		t.Fatal(err)
	}
	c.CloseFile(ctx, xf.FH, xf.Stateid)
	if got, want := getfacl(t, filepath.Join(f.dir, "xf")), "user::rw-,user:1000:r--,group::---,mask::r--,other::---"; got != "" && got != want {
		t.Fatalf("ACL of the EXCLUSIVE4_1 file: %s, want %s", got, want)
	}
	// An unmappable ACL fails the create and leaves nothing behind.
	if _, err := c.Create(ctx, root, nfs4.NF4DIR, "bad", "", &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrACL), ACL: parseACEs(t, "U::EVERYONE@:r")}); !client.IsStatus(err, nfs4.ErrAttrnotsupp) {
		t.Fatalf("CREATE with an audit ACE: %v, want NFS4ERR_ATTRNOTSUPP", err)
	}
	if _, err := os.Lstat(filepath.Join(f.dir, "bad")); !os.IsNotExist(err) {
		t.Fatalf("the refused directory exists: %v", err)
	}
}

// TestDelegationRecallOnACL: another client's read delegation is recalled
// before an ACL (or mode) change: its holder checks opens against cached
// access rights that the change may take away.
func TestDelegationRecallOnACL(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := ctxT(t)
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	b := dialDeleg(t, addr, client.Options{})
	root := makeFile(t, a, "f")
	for i, attrs := range []*client.Attrs{
		{Mask: nfs4.BitmapOf(nfs4.AttrACL), ACL: parseACEs(t, "A::OWNER@:rwa", "A::EVERYONE@:")},
		{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: 0o600},
	} {
		fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
		if err != nil || fa.Open.Deleg != nfs4.DelegateRead {
			t.Fatalf("open: %v, delegation %+v", err, fa)
		}
		if err := a.CloseFile(ctx, fa.FH, fa.Stateid); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Setattr(ctx, fa.FH, nfs4.AnonStateid, attrs); err != nil {
			if client.IsStatus(err, nfs4.ErrAttrnotsupp) {
				t.Skip("no POSIX ACLs on the export")
			}
			t.Fatalf("SETATTR %v: %v", attrs.Mask, err)
		}
		if a.Recalls() != uint64(i+1) {
			t.Fatalf("SETATTR %v: recalls %d, want %d", attrs.Mask, a.Recalls(), i+1)
		}
	}
}
