package bench

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/internal/krb5test"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// TestNFS3Krb5: --vers 3 with --sec krb5, krb5i and krb5p (a throw-away
// MIT KDC; skipped without one): MOUNT and the v3 calls go under each
// connection's RPCSEC_GSS context, and randread and ior-easy move and
// check every byte, on an export that takes only Kerberos.
func TestNFS3Krb5(t *testing.T) {
	kdc := krb5test.Start(t)
	tab, err := gss.LoadKeytab(kdc.AddKeytab("nfs/nfs-server.test"))
	if err != nil {
		t.Fatal(err)
	}
	o := exports.ShorthandOptions()
	o.Sec = exports.SecList(exports.SecKrb5) | exports.SecList(exports.SecKrb5i)<<4 | exports.SecList(exports.SecKrb5p)<<8
	exp := nfs.Export{Path: t.TempDir(), Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: o}}}
	addr := serveConfig(t, nfs.Config{Exports: []nfs.Export{exp}, StateDir: t.TempDir(), GSS: gss.NewAcceptor(tab)})
	kdc.AddPassword("root", "root-pw")
	ini, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "root", Password: "root-pw", Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{client.SecKrb5, client.SecKrb5i, client.SecKrb5p} {
		cfg := tinyConfig()
		cfg.Vers = 3
		cfg.Dir = "bench-" + sec
		cfg.Krb5 = &client.Krb5{Initiator: ini, Service: "nfs/nfs-server.test", Sec: sec}
		res := run(t, cfg, &Target{Addr: addr, Export: "/"}, RandRead3)
		if len(res) != 1 || res[0].Ops != int64(cfg.Ops) {
			t.Fatalf("%s randread over v3: %+v", sec, res)
		}
		res = run(t, cfg, &Target{Addr: addr, Export: "/"}, IOREasy3)
		want := int64(cfg.Conns) * ((cfg.Size + iorEasyXfer - 1) / iorEasyXfer) * iorEasyXfer
		if len(res) != 2 || res[0].Bytes != want || res[1].Bytes != want {
			t.Fatalf("%s ior-easy over v3: %+v", sec, res)
		}
	}
}
