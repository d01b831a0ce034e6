package e2e

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/internal/krb5test"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

const krb5Service = "nfs/nfs-server.test"

// krb5Server starts an MIT KDC (skipping without one) and a server with
// a keytab for krb5Service exporting list (nil: one shorthand export of
// a fresh directory, returned).
func krb5Server(t *testing.T, list []nfs.Export) (kdc *krb5test.KDC, addr, dir string) {
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
	addr, _ = serve(t, testEngine(), nfs.Config{Exports: list, GSS: gss.NewAcceptor(tab)}, engine.Options{})
	return kdc, addr, dir
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
	kdc, addr, dir := krb5Server(t, nil)
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
