package e2e

import (
	"os"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestKrb5MachCred: the client's machine principal (host/client.test from
// a keytab, krb5i) makes the client id with SP4_MACH_CRED (RFC 8881
// section 18.35) and gets knfsd's spo_must_enforce and spo_must_allow. A
// user (daemon, krb5p) opens a file on a sec=krb5p export in that
// session; the machine credential closes it (CLOSE is in spo_must_allow,
// so sec=krb5p does not refuse its krb5i), but may not GETATTR there
// (WRONGSEC). Without SP4_MACH_CRED the same CLOSE is WRONGSEC. Another
// machine principal may not destroy the client id (WRONG_CRED).
func TestKrb5MachCred(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	o := nfs.DefaultClientOptions()
	o.ReadOnly, o.Insecure = false, true
	o.Sec = exports.SecList(exports.SecKrb5p)
	kdc, addr, _ := krb5Server(t, []nfs.Export{{Path: dir, Name: "/m", Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: o}}}})
	machine, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "host/client.test", Keytab: kdc.AddKeytab("host/client.test"), Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	other, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "host/other.test", Keytab: kdc.AddKeytab("host/other.test"), Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	kdc.AddPassword("daemon", "daemon-pw")
	user, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "daemon", Password: "daemon-pw", Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	dial := func(ini *gss.Initiator, sec string, mach bool) *client.Client {
		t.Helper()
		c, err := client.Dial(ctx, addr, client.Options{Krb5: &client.Krb5{Initiator: ini, Service: krb5Service, Sec: sec}, MachCred: mach})
		if err != nil {
			t.Fatalf("dial %s (SP4_MACH_CRED %v): %v", sec, mach, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// openAsUser opens name for the user principal in c's session and
	// switches c back to its machine credential.
	openAsUser := func(c *client.Client, name string) *client.File {
		t.Helper()
		uctx, err := c.NewKrb5Context(ctx, &client.Krb5{Initiator: user, Service: krb5Service, Sec: client.SecKrb5p})
		if err != nil {
			t.Fatal(err)
		}
		mctx := c.UseKrb5Context(uctx)
		defer c.UseKrb5Context(mctx)
		fh, err := c.LookupPath(ctx, "/m")
		if err != nil {
			t.Fatalf("user LOOKUP /m: %v", err)
		}
		f, err := c.OpenCreate(ctx, fh, name, 0o644)
		if err != nil {
			t.Fatalf("user create %s: %v", name, err)
		}
		return f
	}

	// Plain krb5 cannot ask it (knfsd: NFS4ERR_INVAL).
	_, err = client.Dial(ctx, addr, client.Options{Krb5: &client.Krb5{Initiator: machine, Service: krb5Service, Sec: client.SecKrb5}, MachCred: true})
	wantStatus(t, "SP4_MACH_CRED over krb5", err, nfs4.ErrInval)

	mc := dial(machine, client.SecKrb5i, true)
	ex := mc.ExchangeIDResult()
	if ex.StateProtect != nfs4.SP4MachCred || ex.MustEnforce != client.MachCredOps[0] || ex.MustAllow != client.MachCredOps[1] {
		t.Fatalf("EXCHANGE_ID: state protection %d, must_enforce %x, must_allow %x; want %d %x %x",
			ex.StateProtect, ex.MustEnforce, ex.MustAllow, nfs4.SP4MachCred, client.MachCredOps[0], client.MachCredOps[1])
	}
	f := openAsUser(mc, "user-file")
	_, err = mc.Getattr(ctx, f.FH, nfs4.BitmapOf(nfs4.AttrType))
	wantStatus(t, "machine GETATTR on sec=krb5p", err, nfs4.ErrWrongsec)
	if err := mc.CloseFile(ctx, f.FH, f.Stateid); err != nil {
		t.Fatalf("machine CLOSE of the user's open: %v", err)
	}
	err = mc.CloseFile(ctx, f.FH, f.Stateid)
	wantStatus(t, "second CLOSE", err, nfs4.ErrBadStateid)

	// Another machine principal may not destroy the client id.
	oc := dial(other, client.SecKrb5i, false)
	r, err := oc.RawCompound(ctx, 2, func(e *xdr.Encoder) int {
		e.Uint32(nfs4.OpDestroyClientid)
		e.Uint64(mc.ClientID())
		return 1
	})
	if err == nil {
		err = r.Op(nfs4.OpDestroyClientid)
	}
	wantStatus(t, "DESTROY_CLIENTID by another machine principal", err, nfs4.ErrWrongCred)

	// Without SP4_MACH_CRED the machine credential's CLOSE is refused by
	// the export's sec=krb5p.
	nc := dial(machine, client.SecKrb5i, false)
	if sp := nc.ExchangeIDResult().StateProtect; sp != nfs4.SP4None {
		t.Fatalf("SP4_NONE client: state protection %d", sp)
	}
	g := openAsUser(nc, "user-file-2")
	err = nc.CloseFile(ctx, g.FH, g.Stateid)
	wantStatus(t, "CLOSE by the machine credential without SP4_MACH_CRED", err, nfs4.ErrWrongsec)
}
