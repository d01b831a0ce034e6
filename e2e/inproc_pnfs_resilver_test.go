package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

// revive listens again on the killed proxy's address.
func (p *tcpProxy) revive(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", p.addr()); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.ln = ln
	go p.accept()
}

// TestPNFSResilver: with two mirrors, a client holds a RW layout when a
// data server goes away; a WRITE through the metadata server then misses
// that mirror, which is marked stale. When the server is back, the pool
// has nfs recall the file's RW layout, copies the good mirror over the
// stale one on its own, and the client is given a RW layout naming both
// mirrors again; both data files hold the same bytes.
func TestPNFSResilver(t *testing.T) {
	cl := startPNFSClusterLease(t, 2, 2, 5)
	c := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, _ := c.RootFH(ctx)
	p := client.NewPNFS(c, client.PNFSOptions{})
	defer p.Close()
	f, err := c.OpenCreate(ctx, root, "r", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pf := p.Open(f, client.IOModeRW)
	data := pnfsBytes(1<<20 + 3)
	pnfsWrite(t, ctx, pf, data, nfs4.FileSync4)
	if l, _ := pf.Layout(ctx); l == nil || len(l.Mirrors) != 2 {
		t.Fatalf("layout %+v", l)
	}
	cl.proxies[1].kill()
	waitUntil(t, "the data server out of service", func() bool { return len(cl.pool.Devices()) == 1 })
	more := bytes.Repeat([]byte("through the MDS"), 10000)
	if _, err := c.Write(ctx, f.FH, f.Stateid, 4096, nfs4.FileSync4, more); err != nil {
		t.Fatalf("WRITE through the MDS with a mirror away: %v", err)
	}
	copy(data[4096:], more)
	staleOn := func() int {
		return len(cl.pool.StaleFiles()[pnfs.ServerConfig{Addr: cl.addrs[1], Path: pnfs.DefaultPath}.ID()])
	}
	if staleOn() != 1 {
		t.Fatalf("stale files %v", cl.pool.StaleFiles())
	}
	cl.proxies[1].revive(t)
	waitUntil(t, "the stale mirror resilvered", func() bool { return staleOn() == 0 })
	var files [2][]byte
	for i, dir := range cl.ds {
		ents, err := os.ReadDir(filepath.Join(dir, pnfs.DefaultPath))
		if err != nil || len(ents) != 1 {
			t.Fatalf("data directory %d: %v %v", i, ents, err)
		}
		files[i], _ = os.ReadFile(filepath.Join(dir, pnfs.DefaultPath, ents[0].Name()))
	}
	if !bytes.Equal(files[0], data) || !bytes.Equal(files[1], data) {
		t.Fatalf("mirrors: %d and %d bytes, equal to the data %v %v", len(files[0]), len(files[1]),
			bytes.Equal(files[0], data), bytes.Equal(files[1], data))
	}
	// The client gave up on layouts of the file while RW ones were
	// unavailable: a fresh handle on it asks again.
	pf = p.Open(f, client.IOModeRW)
	if l, err := pf.Layout(ctx); l == nil || len(l.Mirrors) != 2 {
		t.Fatalf("layout after the resilver %+v (%v): want both mirrors", l, err)
	}
	if back := pnfsRead(t, ctx, pf, len(data)); !bytes.Equal(back, data) {
		t.Fatal("read back differs")
	}
	pf.Close(ctx)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
