package e2e

import (
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/rpctls"
	"github.com/nfsd-uring/nfsd-uring/rpctls/tlstest"
)

// RPC-with-TLS (RFC 9289) end to end: our client sends the AUTH_TLS probe,
// shakes hands and then reads and writes over TLS, on the engine the suite
// runs on (NFSD_ENGINE); kernel TLS where the host has it, the user-space
// pump otherwise. Exports with xprtsec= refuse the connections they do not
// accept with NFS4ERR_WRONGSEC.

// serveTLS is serve with an rpctls listener.
func serveTLS(t *testing.T, f *tlstest.Files, cfg nfs.Config) (string, *rpctls.Listener) {
	t.Helper()
	srv, err := nfs.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name := testEngine()
	eng, err := engine.New(name, srv, engine.Options{})
	if err != nil {
		srv.Close()
		if name == "uring" {
			t.Skipf("io_uring: %v", err)
		}
		t.Fatal(err)
	}
	certs, err := rpctls.LoadCerts(f.Cert, f.Key, f.CA)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logTo := io.Discard
	if os.Getenv("RPCTLS_REQUIRE_KTLS") != "" {
		logTo = os.Stderr // the reason kTLS was not used
	}
	ln := rpctls.Listen(inner, rpctls.Config{Certs: certs, NoKTLS: os.Getenv("NFSD_TLS_NO_KTLS") != "",
		Logger: slog.New(slog.NewTextHandler(logTo, nil))})
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	t.Cleanup(func() {
		eng.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	return ln.Addr().String(), ln
}

func TestTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	f := tlstest.New(t, t.TempDir())
	any, tlsOnly, mtls := t.TempDir(), t.TempDir(), t.TempDir()
	want := make([]byte, 1<<20+12345)
	rand.Read(want)
	for _, d := range []string{any, tlsOnly, mtls} {
		if err := os.WriteFile(filepath.Join(d, "f"), want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr, ln := serveTLS(t, f, nfs.Config{Exports: parseExports(t,
		any+"=/any *(rw,insecure,no_root_squash)",
		tlsOnly+"=/tls *(rw,insecure,no_root_squash,xprtsec=tls:mtls)",
		mtls+"=/mtls *(rw,insecure,no_root_squash,xprtsec=mtls)")})
	ctx := ctxT(t)
	id := client.Options{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	dial := func(o client.Options) *client.Client {
		t.Helper()
		c, err := client.Dial(ctx, addr, o)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	plain := dial(id)
	tlsO, mtlsO := id, id
	tlsO.TLS, mtlsO.TLS = f.Client(t, false), f.Client(t, true)
	overTLS, overMTLS := dial(tlsO), dial(mtlsO)

	for _, c := range []struct {
		name string
		c    *client.Client
		ok   map[string]bool
	}{
		{"plaintext", plain, map[string]bool{"/any": true}},
		{"tls", overTLS, map[string]bool{"/any": true, "/tls": true}},
		{"mtls", overMTLS, map[string]bool{"/any": true, "/tls": true, "/mtls": true}},
	} {
		for _, exp := range []string{"/any", "/tls", "/mtls"} {
			got, err := c.c.ReadFile(ctx, exp+"/f", 1<<20)
			if !c.ok[exp] {
				wantStatus(t, c.name+" reads "+exp, err, nfs4.ErrWrongsec)
				continue
			}
			if err != nil {
				t.Fatalf("%s reads %s: %v", c.name, exp, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s reads %s: the data differs", c.name, exp)
			}
		}
	}
	// A handle got over TLS does not open the export to a plaintext
	// connection: PUTFH answers WRONGSEC too.
	fh, err := overTLS.LookupPath(ctx, "/tls/f")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "plaintext PUTFH into /tls", getattr(ctx, plain, fh), nfs4.ErrWrongsec)
	wantStatus(t, "tls PUTFH into /tls", getattr(ctx, overTLS, fh), nfs4.OK)
	// Writes over TLS, read back over TLS and from the file.
	dir, err := overTLS.LookupPath(ctx, "/tls")
	if err != nil {
		t.Fatal(err)
	}
	file, err := overTLS.OpenCreate(ctx, dir, "w", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(want); off += 1 << 20 {
		end := min(off+1<<20, len(want))
		if _, err := overTLS.Write(ctx, file.FH, file.Stateid, uint64(off), nfs4.FileSync4, want[off:end]); err != nil {
			t.Fatalf("WRITE at %d: %v", off, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(tlsOnly, "w"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("written file differs (%d bytes, %v)", len(got), err)
	}
	if got, err := overMTLS.ReadFile(ctx, "/tls/w", 1<<20); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back over mtls: %d bytes, %v", len(got), err)
	}
	n := ln.Counts()
	t.Logf("engine %s: connections plaintext %d, kernel TLS %d, user-space TLS %d", testEngine(), n.Plain.Load(), n.Kernel.Load(), n.User.Load())
	// The kernel-guest run (e2e/kernel/ktls.sh) must show kTLS at work.
	if os.Getenv("RPCTLS_REQUIRE_KTLS") != "" && (n.User.Load() != 0 || n.Kernel.Load() == 0) {
		t.Fatal("RPCTLS_REQUIRE_KTLS: a connection did not get kernel TLS")
	}
}
