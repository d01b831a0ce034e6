package rpctls_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/rpctls"
	"github.com/nfsd-uring/nfsd-uring/rpctls/tlstest"
)

func listen(t *testing.T, f *tlstest.Files, tweak func(*rpctls.Config)) *rpctls.Listener {
	t.Helper()
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
	cfg := rpctls.Config{Certs: certs, Logger: slog.New(slog.NewTextHandler(logTo, nil))}
	if tweak != nil {
		tweak(&cfg)
	}
	l := rpctls.Listen(inner, cfg)
	t.Cleanup(func() { l.Close() })
	return l
}

type accepted struct {
	c   net.Conn
	err error
}

func acceptAsync(l net.Listener) chan accepted {
	ch := make(chan accepted, 1)
	go func() {
		c, err := l.Accept()
		ch <- accepted{c, err}
	}()
	return ch
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// echo makes the server's side echo one chunk, and checks it from the
// client's side.
func echo(t *testing.T, cli, srv net.Conn) {
	t.Helper()
	msg := bytes.Repeat([]byte("nfs over tls "), 5000)
	go func() {
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(srv, buf); err != nil {
			return
		}
		srv.Write(buf)
	}()
	if _, err := cli.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(cli, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("echo differs")
	}
}

func TestStartTLS(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	for _, mutual := range []bool{false, true} {
		l := listen(t, f, nil)
		ch := acceptAsync(l)
		raw, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		tc, err := client.StartTLS(ctx(t), raw, f.Client(t, mutual))
		if err != nil {
			t.Fatal(err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "sunrpc" {
			t.Fatalf("ALPN %q", p)
		}
		a := <-ch
		if a.err != nil {
			t.Fatal(a.err)
		}
		s, ok := a.c.(interface{ RPCTLS() (bool, bool) })
		if !ok {
			t.Fatalf("accepted %T, not a TLS connection", a.c)
		}
		m, kernel := s.RPCTLS()
		if m != mutual {
			t.Fatalf("mutual %v, want %v", m, mutual)
		}
		t.Logf("kernel TLS: %v", kernel)
		if os.Getenv("RPCTLS_REQUIRE_KTLS") != "" && !kernel {
			t.Fatal("RPCTLS_REQUIRE_KTLS: no kernel TLS")
		}
		if a.c.RemoteAddr().String() != raw.LocalAddr().String() {
			t.Fatalf("remote %v, want %v", a.c.RemoteAddr(), raw.LocalAddr())
		}
		echo(t, tc, a.c)
		tc.Close()
		a.c.Close()
	}
}

// The client's first records may follow its Finished in the same segment:
// none of them may be lost to the handshake.
func TestPipelinedAfterHandshake(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	l := listen(t, f, nil)
	ch := acceptAsync(l)
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tc, err := client.StartTLS(ctx(t), raw, f.Client(t, false))
	if err != nil {
		t.Fatal(err)
	}
	tc.Write([]byte("first"))
	a := <-ch
	if a.err != nil {
		t.Fatal(a.err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(a.c, got); err != nil || string(got) != "first" {
		t.Fatalf("read %q, %v", got, err)
	}
	echo(t, tc, a.c)
}

func TestPlaintextPassesThrough(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	for _, first := range [][]byte{
		call(1, 100003, 4, 1, 1),                    // a COMPOUND with AUTH_SYS
		call(2, 100003, 4, 0, 0),                    // NULL, AUTH_NONE
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), // garbage
		{0x80, 0, 0, 2, 1, 2},                       // a tiny record
	} {
		l := listen(t, f, nil)
		ch := acceptAsync(l)
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write(first)
		a := <-ch
		if a.err != nil {
			t.Fatal(a.err)
		}
		if _, ok := a.c.(*net.TCPConn); !ok {
			t.Fatalf("%q: accepted %T, want a plain *net.TCPConn", first, a.c)
		}
		got := make([]byte, len(first))
		if _, err := io.ReadFull(a.c, got); err != nil || !bytes.Equal(got, first) {
			t.Fatalf("read %q, %v; want %q", got, err, first)
		}
		c.Close()
		a.c.Close()
	}
}

// call is a record-marked RPC call header with an empty credential of
// flavor cred and an AUTH_NONE verifier.
func call(xid, prog, vers, proc, cred uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x80000000|40)
	for _, w := range []uint32{xid, 0, 2, prog, vers, proc, cred, 0, 0, 0} {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

func TestSilentConnectionPassesThrough(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	l := listen(t, f, func(c *rpctls.Config) { c.HandshakeTimeout = 200 * time.Millisecond })
	ch := acceptAsync(l)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := <-ch
	if _, ok := a.c.(*net.TCPConn); !ok || a.err != nil {
		t.Fatalf("accepted %T, %v", a.c, a.err)
	}
	a.c.Close()
}

func TestHandshakeTimeout(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	l := listen(t, f, func(c *rpctls.Config) { c.HandshakeTimeout = 300 * time.Millisecond })
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(call(7, 100003, 4, 0, rpctls.AuthTLS))
	rep := make([]byte, 36)
	if _, err := io.ReadFull(c, rep); err != nil {
		t.Fatal(err)
	}
	if string(rep[24:32]) != "STARTTLS" {
		t.Fatalf("reply %x", rep)
	}
	// No ClientHello: the server gives up and closes.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := c.Read(rep); err != io.EOF {
		t.Fatalf("read after the timeout: %v, want EOF", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("closed after %v", d)
	}
}

func TestHandshakeRefusals(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	other, err := tls.LoadX509KeyPair(f.OtherCert, f.OtherKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*tls.Config{
		"client cert from another CA": {RootCAs: f.RootCAs(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{other}},
		"untrusted server":            {ServerName: "127.0.0.1"},
	} {
		l := listen(t, f, nil)
		raw, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		tc, err := client.StartTLS(ctx(t), raw, cfg)
		if err == nil {
			// TLS 1.3: the client learns of a refused certificate at
			// its first read.
			tc.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = tc.Read(make([]byte, 1))
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		raw.Close()
	}
	// ALPN: a client that asks for another protocol only.
	l := listen(t, f, nil)
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write(call(9, 100003, 4, 0, rpctls.AuthTLS))
	io.ReadFull(raw, make([]byte, 36))
	tc := tls.Client(raw, &tls.Config{RootCAs: f.RootCAs(), ServerName: "127.0.0.1", NextProtos: []string{"h2"}})
	if err := tc.HandshakeContext(ctx(t)); err == nil {
		t.Error("ALPN h2 accepted")
	}
}

// TestNoALPN: a client that offers no ALPN at all (the Linux client's
// tlshd, ktls-utils, sets none) gets RPC-with-TLS, as from knfsd.
func TestNoALPN(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	for _, mutual := range []bool{false, true} {
		l := listen(t, f, nil)
		ch := acceptAsync(l)
		raw, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		raw.Write(call(11, 100003, 4, 0, rpctls.AuthTLS))
		if _, err := io.ReadFull(raw, make([]byte, 36)); err != nil {
			t.Fatal(err)
		}
		cfg := f.Client(t, mutual)
		cfg.NextProtos = nil
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(ctx(t)); err != nil {
			t.Fatalf("mutual %v: handshake without ALPN: %v", mutual, err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" {
			t.Fatalf("ALPN %q negotiated with a client that offered none", p)
		}
		var a accepted
		select {
		case a = <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("mutual %v: the listener refused the connection (nothing accepted)", mutual)
		}
		if a.err != nil {
			t.Fatalf("mutual %v: accept: %v", mutual, a.err)
		}
		s, ok := a.c.(interface{ RPCTLS() (bool, bool) })
		if !ok {
			t.Fatalf("accepted %T, not a TLS connection", a.c)
		}
		if m, _ := s.RPCTLS(); m != mutual {
			t.Fatalf("mutual %v, want %v", m, mutual)
		}
		echo(t, tc, a.c)
		tc.Close()
		a.c.Close()
	}
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	f := tlstest.New(t, dir)
	certs, err := rpctls.LoadCerts(f.Cert, f.Key, "")
	if err != nil {
		t.Fatal(err)
	}
	g := tlstest.New(t, t.TempDir())
	for _, p := range [][2]string{{g.Cert, f.Cert}, {g.Key, f.Key}} {
		b, _ := os.ReadFile(p[0])
		os.WriteFile(p[1], b, 0o600)
	}
	if err := certs.Reload(); err != nil {
		t.Fatal(err)
	}
	inner, _ := net.Listen("tcp", "127.0.0.1:0")
	l := rpctls.Listen(inner, rpctls.Config{Certs: certs})
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	raw, _ := net.Dial("tcp", l.Addr().String())
	defer raw.Close()
	if _, err := client.StartTLS(ctx(t), raw, g.Client(t, false)); err != nil {
		t.Fatalf("new certificate not served: %v", err)
	}
	os.WriteFile(f.Cert, []byte("junk"), 0o600)
	if err := certs.Reload(); err == nil {
		t.Fatal("reload of a broken certificate succeeded")
	}
}

func TestProbe(t *testing.T) {
	full := call(0x1234, 100003, 4, 0, rpctls.AuthTLS)
	for i := 0; i < len(full); i++ {
		probe, need, _, _ := rpctls.Probe(full[:i])
		if probe || need <= i {
			t.Fatalf("prefix %d: probe %v need %d", i, probe, need)
		}
		if i >= 31 {
			break
		}
	}
	probe, need, rec, xid := rpctls.Probe(full)
	if !probe || need > len(full) || rec != len(full) || xid != 0x1234 {
		t.Fatalf("probe %v need %d rec %d xid %x", probe, need, rec, xid)
	}
	for _, c := range [][]byte{
		call(1, 100003, 4, 1, rpctls.AuthTLS),
		call(1, 100003, 4, 0, 1),
		append([]byte{0, 0, 0, 40}, full[4:]...), // not the last fragment
	} {
		if probe, need, _, _ := rpctls.Probe(c); probe || need > len(c) {
			t.Fatalf("%x: probe %v need %d", c, probe, need)
		}
	}
}

func FuzzProbe(f *testing.F) {
	f.Add(call(1, 100003, 4, 0, rpctls.AuthTLS))
	f.Add(call(1, 100003, 4, 1, 1))
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Add([]byte{0x80, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		probe, need, rec, _ := rpctls.Probe(b)
		if need > len(b) {
			if probe {
				t.Fatal("probe before enough bytes")
			}
			if need > 32 {
				t.Fatalf("need %d", need)
			}
			return
		}
		if probe && (rec < 32 || rec > 4+512) {
			t.Fatalf("record %d", rec)
		}
	})
}

// MaxHandshakes bounds the connections in their probe or handshake: one
// more waits for a turn.
func TestMaxHandshakes(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	l := listen(t, f, func(c *rpctls.Config) { c.MaxHandshakes = 1; c.HandshakeTimeout = 5 * time.Second })
	got := make(chan accepted, 2)
	go func() {
		for range 2 {
			c, err := l.Accept()
			got <- accepted{c, err}
		}
	}()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Write(call(1, 100003, 4, 0, rpctls.AuthTLS))
	if _, err := io.ReadFull(a, make([]byte, 36)); err != nil {
		t.Fatal(err)
	}
	// a is in its handshake: b, plaintext, must wait.
	b, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.Write(call(2, 100003, 4, 1, 1))
	select {
	case r := <-got:
		t.Fatalf("accepted %T while the only handshake slot was taken", r.c)
	case <-time.After(300 * time.Millisecond):
	}
	tc := tls.Client(a, &tls.Config{RootCAs: f.RootCAs(), ServerName: "127.0.0.1", NextProtos: []string{rpctls.ALPN}})
	if err := tc.HandshakeContext(ctx(t)); err != nil {
		t.Fatal(err)
	}
	kinds := map[bool]int{}
	for range 2 {
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatal(r.err)
			}
			_, plain := r.c.(*net.TCPConn)
			kinds[plain]++
			r.c.Close()
		case <-time.After(4 * time.Second):
			t.Fatal("a connection was not delivered once the slot was free")
		}
	}
	if kinds[true] != 1 || kinds[false] != 1 {
		t.Fatalf("delivered %v", kinds)
	}
	if n := l.Counts(); n.Plain.Load() != 1 || n.Kernel.Load()+n.User.Load() != 1 {
		t.Fatalf("counts plain %d kernel %d user %d", n.Plain.Load(), n.Kernel.Load(), n.User.Load())
	}
}
