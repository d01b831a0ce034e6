package e2e

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

// Striping (--stripe-unit): the metadata server over four in-process
// nfsd-uring data servers, against the project's client (which takes
// striped layouts) and one whose implementation id says Linux 6.12
// (which must not get them: its ff_layout_alloc_lseg fails a mirror of
// more than one data server).

const stripeSU = 256 << 10

// startStripedCluster is startPNFSClusterLease with striping over every
// data server.
func startStripedCluster(t *testing.T, nds int, lease uint32) *pnfsCluster {
	t.Helper()
	c := &pnfsCluster{}
	cfg := pnfs.Config{Mirrors: 1, StripeUnit: stripeSU, Logger: slog.New(slog.DiscardHandler), ProbeInterval: 100 * time.Millisecond,
		HoldDown: 200 * time.Millisecond, DialTimeout: time.Second, CallTimeout: 5 * time.Second}
	for range nds {
		dir := t.TempDir()
		addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, StateDir: t.TempDir()}, engine.Options{})
		c.ds = append(c.ds, dir)
		c.addrs = append(c.addrs, addr)
		cfg.Servers = append(cfg.Servers, pnfs.ServerConfig{Addr: addr, Path: pnfs.DefaultPath})
	}
	pool, err := pnfs.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	c.pool = pool
	c.mds, _ = serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}, StateDir: t.TempDir(), DataServers: pool, LeaseTime: lease}, engine.Options{})
	return c
}

// dataFiles counts the data files on each data server.
func (c *pnfsCluster) dataFiles() []int {
	var out []int
	for _, dir := range c.ds {
		n := 0
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
		out = append(out, n)
	}
	return out
}

// dialLinux612 dials the MDS as a pNFS client whose implementation id is
// the Linux 6.12 client's.
func dialLinux612(t *testing.T, addr string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, client.Options{ExchangeFlags: nfs4.ExchgIDUseNonPNFS | nfs4.ExchgIDUsePNFSMDS,
		ImplDomain: "kernel.org", ImplName: "Linux 6.12.0 #1 SMP PREEMPT_DYNAMIC Thu Jan  1 00:00:00 UTC 2026 x86_64"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readAllMDS reads n bytes of fh through the MDS.
func readAllMDS(t *testing.T, ctx context.Context, c *client.Client, f *client.File, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	for off := 0; off < n; {
		k, eof, err := c.ReadInto(ctx, f.FH, f.Stateid, uint64(off), out[off:min(n, off+(1<<20))])
		if err != nil {
			t.Fatal(err)
		}
		off += k
		if k == 0 || eof && off < n {
			t.Fatalf("short read through the MDS at %d of %d", off, n)
		}
	}
	return out
}

// TestPNFSStripedClient: the project's client gets a layout striping
// over all four data servers, writes and reads the file straight from
// them (every server holds part of it, none goes through the MDS); a
// client that says it is Linux 6.12 gets NFS4ERR_LAYOUTUNAVAILABLE for
// the same file and reads and writes it through the MDS, byte-exact
// both ways, at offsets across stripe units; a truncate and a removal
// through the MDS reach every stripe.
func TestPNFSStripedClient(t *testing.T) {
	cl := startStripedCluster(t, 4, 0)
	c := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := client.NewPNFS(c, client.PNFSOptions{})
	defer p.Close()
	data := pnfsBytes(3<<20 + 4321)
	f, err := c.OpenCreate(ctx, root, "s", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pf := p.Open(f, client.IOModeRW)
	l, err := pf.Layout(ctx)
	if err != nil || l == nil {
		t.Fatalf("no layout: %v", err)
	}
	if l.StripeUnit != stripeSU || len(l.Mirrors) != 1 || len(l.Mirrors[0].Servers) != 4 {
		t.Fatalf("layout: stripe unit %d, %d mirrors, %d servers in the first", l.StripeUnit, len(l.Mirrors), len(l.Mirrors[0].Servers))
	}
	pnfsWrite(t, ctx, pf, data, nfs4.Unstable4)
	if err := pf.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := p.Fallbacks(); n != 0 {
		t.Fatalf("%d I/Os through the MDS", n)
	}
	for i, n := range cl.dataBytes(t) {
		if n == 0 {
			t.Fatalf("data server %d holds nothing of the striped file", i)
		}
	}
	if a, err := c.Getattr(ctx, f.FH, nfs4.BitmapOf(nfs4.AttrSize)); err != nil || a.Size != uint64(len(data)) {
		t.Fatalf("size %d after LAYOUTCOMMIT, want %d (%v)", a.Size, len(data), err)
	}
	f, err = c.Open(ctx, root, "s", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	pf = p.Open(f, client.IOModeRead)
	if back := pnfsRead(t, ctx, pf, len(data)); !bytes.Equal(back, data) {
		t.Fatal("read back through the striped layout differs")
	}
	pf.Close(ctx)
	if n := p.Fallbacks(); n != 0 {
		t.Fatalf("%d reads through the MDS", n)
	}

	// The 6.12 client: no striped layout, I/O through the MDS.
	old := dialLinux612(t, cl.mds)
	of, err := old.Open(ctx, root, "s", nfs4.ShareAccessBoth)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := old.FFLayoutGet(ctx, of.FH, client.IOModeRW, of.Stateid); !client.IsStatus(err, nfs4.ErrLayoutUnavailable) {
		t.Fatalf("LAYOUTGET of a striped file by a Linux 6.12 client: %v, want NFS4ERR_LAYOUTUNAVAILABLE", err)
	}
	// The same file to a client saying it is Linux 6.18: striped.
	c618, err := client.Dial(ctx, cl.mds, client.Options{ExchangeFlags: nfs4.ExchgIDUseNonPNFS | nfs4.ExchgIDUsePNFSMDS,
		ImplDomain: "kernel.org", ImplName: "Linux 6.18.0 #1 SMP PREEMPT_DYNAMIC x86_64"})
	if err != nil {
		t.Fatal(err)
	}
	defer c618.Close()
	nf, err := c618.Open(ctx, root, "s", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	lg, l618, err := c618.FFLayoutGet(ctx, nf.FH, client.IOModeRead, nf.Stateid)
	if err != nil || l618.StripeUnit != stripeSU || len(l618.Mirrors) != 1 || len(l618.Mirrors[0].Servers) != 4 {
		t.Fatalf("LAYOUTGET by a Linux 6.18 client: %+v %v, want one mirror of 4 stripes", l618, err)
	}
	// Given back (it has no back channel for a recall), and closed.
	if _, _, err := c618.LayoutReturn(ctx, nf.FH, &client.LayoutReturnArgs{Type: client.LayoutFlexFiles, IOMode: client.IOModeAny,
		Length: nfs4.LengthToEOF, Stateid: lg.Stateid}); err != nil {
		t.Fatal(err)
	}
	if err := c618.CloseFile(ctx, nf.FH, nf.Stateid); err != nil {
		t.Fatal(err)
	}
	if back := readAllMDS(t, ctx, old, of, len(data)); !bytes.Equal(back, data) {
		t.Fatal("read through the MDS differs from what was written through the striped layout")
	}
	// Writes through the MDS across stripe units, and past the end.
	want := bytes.Clone(data)
	for i, off := range []int{stripeSU - 100, 3*stripeSU + 7, len(data) - 10, len(data) + stripeSU + 1} {
		piece := bytes.Repeat([]byte{byte(0xa0 + i)}, stripeSU+333)
		if end := off + len(piece); end > len(want) {
			want = append(want, make([]byte, end-len(want))...)
		}
		copy(want[off:], piece)
		for done := 0; done < len(piece); {
			res, err := old.Write(ctx, of.FH, of.Stateid, uint64(off+done), nfs4.FileSync4, piece[done:])
			if err != nil {
				t.Fatal(err)
			}
			done += int(res.Count)
		}
	}
	if back := readAllMDS(t, ctx, old, of, len(want)); !bytes.Equal(back, want) {
		t.Fatal("read through the MDS differs from what was written through it")
	}
	f, err = c.Open(ctx, root, "s", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	pf = p.Open(f, client.IOModeRead)
	if back := pnfsRead(t, ctx, pf, len(want)); !bytes.Equal(back, want) {
		t.Fatal("read through the striped layout differs from what was written through the MDS")
	}
	pf.Close(ctx)
	// A truncate through the MDS, then growing again: zeros past the cut.
	const cut = 2*stripeSU + 12345
	if _, err := old.Setattr(ctx, of.FH, of.Stateid, &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrSize), Size: cut}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Setattr(ctx, of.FH, of.Stateid, &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrSize), Size: uint64(len(want))}); err != nil {
		t.Fatal(err)
	}
	clear(want[cut:])
	if back := readAllMDS(t, ctx, old, of, len(want)); !bytes.Equal(back, want) {
		t.Fatal("after truncating and growing, the read differs")
	}
	// DEALLOCATE across stripe units punches every stripe's part.
	const hole, holeLen = stripeSU/2 + 3, 2*stripeSU + 100
	if err := old.Fallocate(ctx, nfs4.OpDeallocate, of.FH, of.Stateid, hole, holeLen); err != nil {
		t.Fatal(err)
	}
	clear(want[hole : hole+holeLen])
	if back := readAllMDS(t, ctx, old, of, len(want)); !bytes.Equal(back, want) {
		t.Fatal("after DEALLOCATE, the read differs")
	}
	if err := old.Fallocate(ctx, nfs4.OpAllocate, of.FH, of.Stateid, 0, uint64(len(want))+stripeSU); err != nil {
		t.Fatal(err)
	}
	want = append(want, make([]byte, stripeSU)...)
	if back := readAllMDS(t, ctx, old, of, len(want)); !bytes.Equal(back, want) {
		t.Fatal("after ALLOCATE past the end, the read differs")
	}
	if err := old.CloseFile(ctx, of.FH, of.Stateid); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, root, "s"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "every stripe's data file removed", func() bool {
		for _, n := range cl.dataFiles() {
			if n != 0 {
				return false
			}
		}
		return true
	})
}

// TestPNFSStripedFencedAfterLease: a client holding a striped layout
// whose lease ends can write none of the stripes' data files any more.
func TestPNFSStripedFencedAfterLease(t *testing.T) {
	const lease = 2
	cl := startStripedCluster(t, 3, lease)
	c := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, _ := c.RootFH(ctx)
	f, err := c.OpenCreate(ctx, root, "fenced", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, l, err := c.FFLayoutGet(ctx, f.FH, client.IOModeRW, f.Stateid)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Mirrors) != 1 || len(l.Mirrors[0].Servers) != 3 {
		t.Fatalf("layout %+v: want one mirror of three stripes", l)
	}
	type target struct {
		ds *client.Client
		s  client.FFDataServer
		as context.Context
	}
	var ts []target
	for _, s := range l.Mirrors[0].Servers {
		a, err := c.FFDeviceInfo(ctx, s.Device)
		if err != nil {
			t.Fatal(err)
		}
		hp, _ := client.UaddrToHostPort(a.Addrs[0].Addr)
		ds, err := client.Dial(ctx, hp, client.Options{Minor: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer ds.Close()
		uid, _ := strconv.ParseUint(s.User, 10, 32)
		gid, _ := strconv.ParseUint(s.Group, 10, 32)
		as := client.WithCred(ctx, client.Cred{Machine: "fenced", UID: uint32(uid), GID: uint32(gid)})
		if _, err := ds.Write(as, s.FHs[0], s.Stateid, 0, nfs4.FileSync4, []byte("before")); err != nil {
			t.Fatalf("WRITE to a stripe with the layout's owner before the lease ended: %v", err)
		}
		ts = append(ts, target{ds, s, as})
	}
	deadline := time.Now().Add(6 * lease * time.Second)
	for i := range ts {
		var err error
		for {
			_, err = ts[i].ds.Write(ts[i].as, ts[i].s.FHs[0], ts[i].s.Stateid, 0, nfs4.FileSync4, []byte("after"))
			if err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if !client.IsStatus(err, nfs4.ErrAccess) && !client.IsStatus(err, nfs4.ErrPerm) {
			t.Fatalf("stripe %d: WRITE with the layout's owner after the lease ended: %v, want NFS4ERR_ACCESS", i, err)
		}
	}
}
