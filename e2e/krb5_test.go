package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/internal/krb5test"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

const krb5Service = "nfs/nfs-server.test"

// krb5Server starts an MIT KDC (skipping without one) and a server with
// a keytab for krb5Service exporting list (nil: one shorthand export of
// a fresh directory, returned).
func krb5Server(t *testing.T, list []nfs.Export) (kdc *krb5test.KDC, addr, dir string) {
	kdc, addr, dir, _ = krb5ServerMetrics(t, list)
	return kdc, addr, dir
}

// krb5ServerMetrics is krb5Server that also returns the server's metrics.
func krb5ServerMetrics(t *testing.T, list []nfs.Export) (kdc *krb5test.KDC, addr, dir string, set *metrics.Set) {
	t.Helper()
	return krb5ServerOn(t, testEngine(), list)
}

// krb5ServerOn is krb5ServerMetrics on engine eng.
func krb5ServerOn(t *testing.T, eng string, list []nfs.Export) (kdc *krb5test.KDC, addr, dir string, set *metrics.Set) {
	t.Helper()
	kdc = krb5test.Start(t)
	tab, err := gss.LoadKeytab(kdc.AddKeytab(krb5Service))
	if err != nil {
		t.Fatal(err)
	}
	if list == nil {
		dir = t.TempDir()
		os.Chmod(dir, 0o777)
		list = []nfs.Export{{Path: dir}}
	}
	set = metrics.New()
	addr, _ = serve(t, eng, nfs.Config{Exports: list, GSS: gss.NewAcceptor(tab), Metrics: set}, engine.Options{})
	return kdc, addr, dir, set
}

// gssContexts reads the rpcsec_gss_contexts gauge.
func gssContexts(set *metrics.Set) float64 {
	for _, g := range set.Snapshot().Gauges {
		if g.Name == "rpcsec_gss_contexts" {
			return g.Value
		}
	}
	return -1
}

func krb5Dial(t *testing.T, addr string, ini *gss.Initiator, sec string) *client.Client {
	t.Helper()
	c, err := client.Dial(ctxT(t), addr, client.Options{Krb5: &client.Krb5{Initiator: ini, Service: krb5Service, Sec: sec}})
	if err != nil {
		t.Fatalf("dial %s: %v", sec, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// krb5WriteRead creates name, writes data, reads it back, and returns the
// uid the file got on the server.
func krb5WriteRead(t *testing.T, c *client.Client, dir, name string, data []byte) uint32 {
	t.Helper()
	ctx := ctxT(t)
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.OpenCreate(ctx, root, name, 0o644)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		end := min(off+1<<20, len(data))
		if _, err := c.Write(ctx, f.FH, f.Stateid, uint64(off), nfs4.FileSync4, data[off:end]); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	var got []byte
	for off := 0; off < len(data); {
		b, eof, err := c.Read(ctx, f.FH, f.Stateid, uint64(off), 1<<20)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		got = append(got, b...)
		off += len(b)
		if eof || len(b) == 0 {
			break
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("%s: read back %d bytes, differ from the %d written", name, len(got), len(data))
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, name), &st); err != nil {
		t.Fatal(err)
	}
	return st.Uid
}

// TestKrb5Mount: the project's client gets a ticket from an MIT KDC and
// mounts over krb5, krb5i and krb5p, writing and reading 2 MiB + 3 bytes
// as user "daemon" (uid 1 through the name service).
func TestKrb5Mount(t *testing.T) {
	kdc, addr, dir, set := krb5ServerMetrics(t, nil)
	kdc.AddPassword("daemon", "daemon-pw")
	ini, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "daemon", Password: "daemon-pw", Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 2<<20+3)
	rand.Read(data)
	for _, sec := range []string{client.SecKrb5, client.SecKrb5i, client.SecKrb5p} {
		c := krb5Dial(t, addr, ini, sec)
		if uid := krb5WriteRead(t, c, dir, "file-"+sec, data); uid != 1 {
			t.Fatalf("%s: file owned by uid %d, want 1 (daemon)", sec, uid)
		}
		if n := gssContexts(set); n != 1 {
			t.Fatalf("%s: %v contexts", sec, n)
		}
		c.Close() // RPCSEC_GSS_DESTROY
		if n := gssContexts(set); n != 0 {
			t.Fatalf("%s: %v contexts after Close", sec, n)
		}
	}
	// A ticket for a service the server has no key for is refused.
	if _, err := client.Dial(ctxT(t), addr, client.Options{Krb5: &client.Krb5{Initiator: ini, Service: "nfs/other.test", Sec: "krb5"}}); err == nil {
		t.Fatal("context for a foreign service accepted")
	}
}

// TestKrb5MachineRootSquashed: a machine principal (nfs/client from a
// keytab) acts as the anonymous user; root@REALM maps to uid 0 and is
// squashed by root_squash, kept with no_root_squash.
func TestKrb5MachineRootSquashed(t *testing.T) {
	squashDir, keepDir := t.TempDir(), t.TempDir()
	os.Chmod(squashDir, 0o777)
	os.Chmod(keepDir, 0o777)
	o := nfs.DefaultClientOptions()
	o.ReadOnly, o.Insecure = false, true
	o.Sec = exports.AllSec
	keep := o
	keep.Squash = nfs.NoRootSquash
	list := []nfs.Export{
		{Path: squashDir, Name: "/squash", Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: o}}},
		{Path: keepDir, Name: "/keep", Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: keep}}},
	}
	kdc, addr, _ := krb5Server(t, list)
	machine, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "nfs/client.test", Keytab: kdc.AddKeytab("nfs/client.test"), Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	kdc.AddPassword("root", "root-pw")
	root, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "root", Password: "root-pw", Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	create := func(c *client.Client, exp, name string) uint32 {
		t.Helper()
		fh, err := c.LookupPath(ctx, map[string]string{squashDir: "/squash", keepDir: "/keep"}[exp])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.OpenCreate(ctx, fh, name, 0o644); err != nil {
			t.Fatalf("create %s/%s: %v", exp, name, err)
		}
		var st syscall.Stat_t
		dir := map[string]string{squashDir: squashDir, keepDir: keepDir}[exp]
		if err := syscall.Stat(filepath.Join(dir, name), &st); err != nil {
			t.Fatal(err)
		}
		return st.Uid
	}
	mc := krb5Dial(t, addr, machine, client.SecKrb5i)
	rc := krb5Dial(t, addr, root, client.SecKrb5)
	for _, c := range []struct {
		c         *client.Client
		exp, name string
		uid       uint32
	}{{mc, squashDir, "machine", 65534}, {mc, keepDir, "machine", 65534}, {rc, squashDir, "root", 65534}, {rc, keepDir, "root", 0}} {
		if uid := create(c.c, c.exp, c.name); uid != c.uid {
			t.Errorf("%s in %s: uid %d, want %d", c.name, c.exp, uid, c.uid)
		}
	}
}

// secinfo returns SECINFO's list for name in the root: flavors, and for
// RPCSEC_GSS entries the service (1 krb5, 2 krb5i, 3 krb5p) instead.
func secinfo(t *testing.T, c *client.Client, name string) []uint32 {
	t.Helper()
	var out []uint32
	err := c.Compound(ctxT(t), func(e *xdr.Encoder) int {
		client.EncodePutrootfh(e)
		e.Uint32(nfs4.OpSecinfo)
		e.String(name)
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutrootfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpSecinfo); err != nil {
			return err
		}
		n := r.D.Uint32()
		for i := uint32(0); i < n && r.D.Err() == nil; i++ {
			f := r.D.Uint32()
			if f != nfs4.AuthGSS {
				out = append(out, f)
				continue
			}
			if oid := r.D.Opaque(64); !bytes.Equal(oid, gss.KRB5OID) {
				t.Errorf("oid %x", oid)
			}
			r.D.Uint32()
			out = append(out, 100+r.D.Uint32())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("SECINFO %s: %v", name, err)
	}
	return out
}

// TestKrb5WrongSec: an export with sec=krb5p refuses AUTH_SYS and krb5i
// callers with NFS4ERR_WRONGSEC (LOOKUP into it, PUTFH of its handle
// followed by GETATTR), a sec=sys one refuses krb5p, and SECINFO names
// each export's flavours.
func TestKrb5WrongSec(t *testing.T) {
	sysDir, kDir := t.TempDir(), t.TempDir()
	o := nfs.DefaultClientOptions()
	o.Insecure = true
	ko := o
	ko.Sec = exports.SecList(exports.SecKrb5p) | exports.SecList(exports.SecKrb5)<<4
	list := []nfs.Export{
		{Path: sysDir, Name: "/sys", Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: o}}},
		{Path: kDir, Name: "/k", Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: ko}}},
	}
	kdc, addr, _ := krb5Server(t, list)
	kdc.AddPassword("daemon", "daemon-pw")
	ini, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "daemon", Password: "daemon-pw", Krb5Conf: kdc.Conf})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	sys, err := client.Dial(ctx, addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	kp := krb5Dial(t, addr, ini, client.SecKrb5p)
	ki := krb5Dial(t, addr, ini, client.SecKrb5i)
	if got := secinfo(t, sys, "k"); len(got) != 2 || got[0] != 103 || got[1] != 101 {
		t.Errorf("SECINFO k: %v, want krb5p, krb5", got)
	}
	if got := secinfo(t, kp, "sys"); len(got) != 2 || got[0] != nfs4.AuthSys || got[1] != nfs4.AuthNone {
		t.Errorf("SECINFO sys: %v", got)
	}
	_, err = sys.LookupPath(ctx, "/k")
	wantStatus(t, "AUTH_SYS LOOKUP /k", err, nfs4.ErrWrongsec)
	_, err = ki.LookupPath(ctx, "/k")
	wantStatus(t, "krb5i LOOKUP /k", err, nfs4.ErrWrongsec)
	kfh, err := kp.LookupPath(ctx, "/k")
	wantStatus(t, "krb5p LOOKUP /k", err, nfs4.OK)
	_, err = kp.LookupPath(ctx, "/sys")
	wantStatus(t, "krb5p LOOKUP /sys", err, nfs4.ErrWrongsec)
	_, err = sys.Getattr(ctx, kfh, nfs4.BitmapOf(nfs4.AttrType))
	wantStatus(t, "AUTH_SYS PUTFH+GETATTR of /k", err, nfs4.ErrWrongsec)
	_, err = kp.Getattr(ctx, kfh, nfs4.BitmapOf(nfs4.AttrType))
	wantStatus(t, "krb5p PUTFH+GETATTR of /k", err, nfs4.OK)
}

// dialV3Krb5 is dialV3 whose calls go under an RPCSEC_GSS context of
// ini's principal with service sec, made by an INIT call to NFS
// version 3.
func dialV3Krb5(t *testing.T, addr string, ini *gss.Initiator, sec string) *v3conn {
	t.Helper()
	v := dialV3(t, addr)
	v.xid++
	g, err := client.NewGSS(&client.Krb5{Initiator: ini, Service: krb5Service, Sec: sec}, nfs4.ProgramNFS, 3, v.xid, v.xid+1,
		func(rec []byte) ([]byte, error) {
			return bytes.Clone(v.exchange(append(binary.BigEndian.AppendUint32(nil, xdr.RecordMark(len(rec))), rec...))), nil
		})
	if err != nil {
		t.Fatalf("NFSv3 %s context: %v", sec, err)
	}
	v.gss = g
	return v
}

// TestKrb5NFS3: NFSv3 and MOUNT over krb5, krb5i and krb5p on both
// engines. On a sec=krb5:krb5i:krb5p export with root_squash, "daemon"
// (uid 1) mounts, creates a file, writes 1 MiB + 3 bytes and reads them
// back byte-exact (a 1 MiB READ: the engine's zero-copy read, wrapped);
// root@REALM is squashed to 65534. AUTH_SYS may MNT the krb5 export (the
// flavours are the NFS calls' to check) and GETATTR its root, but LOOKUP
// in it answers NFS3ERR_ACCES; a sec=sys export answers NFS3ERR_ACCES to
// krb5 calls.
func TestKrb5NFS3(t *testing.T) {
	for _, eng := range []string{"portable", "uring"} {
		t.Run(eng, func(t *testing.T) {
			kDir, sDir := t.TempDir(), t.TempDir()
			os.Chmod(kDir, 0o777)
			os.Chmod(sDir, 0o777)
			o := nfs.DefaultClientOptions()
			o.ReadOnly, o.Insecure = false, true
			ko, so := o, o
			ko.Sec = exports.SecList(exports.SecKrb5) | exports.SecList(exports.SecKrb5i)<<4 | exports.SecList(exports.SecKrb5p)<<8
			so.Sec = exports.SecList(exports.SecSys)
			list := []nfs.Export{
				{Path: kDir, Name: "/k", Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: ko}}},
				{Path: sDir, Name: "/s", Clients: []nfs.ClientRule{{Spec: "*", Any: true, Options: so}}},
			}
			kdc, addr, _, _ := krb5ServerOn(t, eng, list)
			kdc.AddPassword("daemon", "daemon-pw")
			kdc.AddPassword("root", "root-pw")
			daemon, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "daemon", Password: "daemon-pw", Krb5Conf: kdc.Conf})
			if err != nil {
				t.Fatal(err)
			}
			root, err := gss.NewInitiator(gss.InitiatorConfig{Principal: "root", Password: "root-pw", Krb5Conf: kdc.Conf})
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, 1<<20+3)
			rand.Read(data)
			var kfh []byte
			for _, sec := range []string{client.SecKrb5, client.SecKrb5i, client.SecKrb5p} {
				for _, who := range []struct {
					ini  *gss.Initiator
					name string
					uid  uint32
				}{{daemon, "daemon", 1}, {root, "root", 65534}} {
					v := dialV3Krb5(t, addr, who.ini, sec)
					st, fh := v.mount("/k")
					if st != 0 {
						t.Fatalf("%s MNT /k: %d", sec, st)
					}
					kfh = fh
					name := sec + "-" + who.name
					st, f := v.create(fh, name)
					if st != nfs3OK {
						t.Fatalf("%s CREATE: %d", name, st)
					}
					for off := 0; off < len(data); off += 1 << 20 {
						if st := v.write(f, uint64(off), data[off:min(off+1<<20, len(data))]); st != nfs3OK {
							t.Fatalf("%s WRITE at %d: %d", name, off, st)
						}
					}
					var got []byte
					for len(got) < len(data) {
						st, b, eof := v.read(f, uint64(len(got)), 1<<20)
						if st != nfs3OK || len(b) == 0 {
							t.Fatalf("%s READ at %d: %d, %d bytes", name, len(got), st, len(b))
						}
						got = append(got, b...)
						if eof {
							break
						}
					}
					if !bytes.Equal(got, data) {
						t.Fatalf("%s: read back %d bytes, differ from the %d written", name, len(got), len(data))
					}
					var sst syscall.Stat_t
					if err := syscall.Stat(filepath.Join(kDir, name), &sst); err != nil {
						t.Fatal(err)
					}
					if sst.Uid != who.uid {
						t.Errorf("%s: owned by uid %d, want %d", name, sst.Uid, who.uid)
					}
				}
			}
			sys := dialV3(t, addr)
			if st, _ := sys.mount("/k"); st != 0 {
				t.Errorf("AUTH_SYS MNT /k: %d, want it answered", st)
			}
			if st, _ := sys.lookup(kfh, "krb5-daemon"); st != nfs3Acces {
				t.Errorf("AUTH_SYS LOOKUP in /k: %d, want NFS3ERR_ACCES", st)
			}
			if st, _ := sys.nfs(v3Getattr, func(e *xdr.Encoder) { e.Opaque(kfh) }); st != nfs3OK {
				t.Errorf("AUTH_SYS GETATTR of /k's root: %d, want it answered (RFC 2623 2.3.2)", st)
			}
			st, sfh := sys.mount("/s")
			if st != 0 {
				t.Fatalf("AUTH_SYS MNT /s: %d", st)
			}
			if st, _ := sys.nfs(v3Getattr, func(e *xdr.Encoder) { e.Opaque(sfh) }); st != nfs3OK {
				t.Errorf("AUTH_SYS GETATTR in /s: %d", st)
			}
			k := dialV3Krb5(t, addr, daemon, client.SecKrb5p)
			if st, _ := k.mount("/s"); st != 0 {
				t.Errorf("krb5p MNT /s: %d, want it answered", st)
			}
			if st, _ := k.nfs(v3Getattr, func(e *xdr.Encoder) { e.Opaque(sfh) }); st != nfs3Acces {
				t.Errorf("krb5p GETATTR in /s: %d, want NFS3ERR_ACCES", st)
			}
		})
	}
}
