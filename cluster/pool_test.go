package cluster

import (
	"encoding/hex"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

// serveDS runs an nfsd-uring data server on 127.0.0.1 until stop.
func serveDS(t *testing.T) (addr string, stop func()) {
	t.Helper()
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New("portable", srv, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	return ln.Addr().String(), func() {
		eng.Close()
		<-done
		srv.Close()
	}
}

// TestPoolRegistry: a pnfs.Pool over the cluster records its data
// servers' states in etcd as they go in and out of service, and takes
// its synthetic ids from the cluster's counter.
func TestPoolRegistry(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	ctx := ctxT(t)
	addr, stop := serveDS(t)
	sc := pnfs.ServerConfig{Addr: addr, Path: pnfs.DefaultPath}
	p, err := pnfs.New(ctx, pnfs.Config{Servers: []pnfs.ServerConfig{sc}, Registry: c, Logger: slog.New(slog.DiscardHandler),
		ProbeInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	id := sc.ID()
	key := hex.EncodeToString(id[:])
	state := func() string {
		s, err := c.Servers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s[key].State
	}
	waitState(t, state, "in-service")
	l, err := p.Create(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	if l.UID != pnfs.FirstSyntheticID {
		t.Errorf("uid %#x: not from the cluster's counter", l.UID)
	}
	stop()
	waitState(t, state, "out-of-service")
}

func waitState(t *testing.T, state func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for state() != want {
		if time.Now().After(deadline) {
			t.Fatalf("registry state %q, want %q", state(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
