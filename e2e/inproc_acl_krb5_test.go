package e2e

import (
	"crypto/rand"
	"os"
	"slices"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/internal/krb5test"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// TestKrb5OwnerNames: an RPCSEC_GSS caller sees owner strings, and ACL
// whos, as user@domain (knfsd's nfsidmap behaviour with Kerberos) and may
// send them; an AUTH_SYS caller of the same server sees numbers.
func TestKrb5OwnerNames(t *testing.T) {
	kdc := krb5test.Start(t)
	tab, err := gss.LoadKeytab(kdc.AddKeytab(krb5Service))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, GSS: gss.NewAcceptor(tab),
		IdmapDomain: "example.test"}, engine.Options{})
	kdc.AddPassword("daemon", "daemon-pw")
	ini, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "daemon", Password: "daemon-pw", Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	c := krb5Dial(t, addr, ini, client.SecKrb5i)
	data := make([]byte, 100)
	rand.Read(data)
	if uid := krb5WriteRead(t, c, dir, "owned", data); uid != 1 {
		t.Fatalf("file owned by uid %d, want 1 (daemon)", uid)
	}
	ctx := ctxT(t)
	fh, err := c.LookupPath(ctx, "owned")
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrOwner))
	if err != nil || a.Owner != "daemon@example.test" {
		t.Fatalf("owner over krb5i: %q %v, want daemon@example.test", a.Owner, err)
	}
	// The owner may set an ACL naming itself by name, and reads it back so.
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::OWNER@:rwa", "A::daemon@example.test:r", "A::EVERYONE@:")); err != nil {
		if client.IsStatus(err, nfs4.ErrAttrnotsupp) {
			t.Skip("no POSIX ACLs on the export")
		}
		t.Fatal(err)
	}
	aces, err := c.GetACL(ctx, fh)
	if err != nil || !slices.Contains(aceStrings(aces), "A::daemon@example.test:rtcy") {
		t.Fatalf("ACL over krb5i: %q %v", aceStrings(aces), err)
	}
	if err := c.SetACL(ctx, fh, parseACEs(t, "A::daemon@elsewhere.test:r")); !client.IsStatus(err, nfs4.ErrBadowner) {
		t.Fatalf("ACL naming another domain: %v, want NFS4ERR_BADOWNER", err)
	}
	sys := dial(t, &fixture{addr: addr})
	if a, err := sys.Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrOwner)); err != nil || a.Owner != "1" {
		t.Fatalf("owner over AUTH_SYS: %q %v, want 1", a.Owner, err)
	}
}
