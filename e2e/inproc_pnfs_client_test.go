package e2e

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

// The project's own pNFS client (client.PNFS, written from the RFCs apart
// from the server) against the metadata-server role over in-process
// nfsd-uring data servers.

// pnfsCluster is an MDS over data servers, all in process.
type pnfsCluster struct {
	mds     string
	ds      []string    // data servers' export directories
	addrs   []string    // and addresses (their proxies')
	proxies []*tcpProxy // in front of each data server
	pool    *pnfs.Pool
}

func startPNFSCluster(t *testing.T, nds, mirrors int) *pnfsCluster {
	t.Helper()
	return startPNFSClusterLease(t, nds, mirrors, 0)
}

// startPNFSClusterLease is startPNFSCluster with the MDS's lease in
// seconds (0: the default).
func startPNFSClusterLease(t *testing.T, nds, mirrors int, lease uint32) *pnfsCluster {
	t.Helper()
	c := &pnfsCluster{}
	cfg := pnfs.Config{Mirrors: mirrors, Logger: slog.New(slog.DiscardHandler), ProbeInterval: 100 * time.Millisecond,
		HoldDown: 200 * time.Millisecond, DialTimeout: time.Second, CallTimeout: 5 * time.Second}
	for range nds {
		dir := t.TempDir()
		addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, StateDir: t.TempDir()}, engine.Options{})
		px := startProxy(t, addr)
		addr = px.addr()
		c.ds = append(c.ds, dir)
		c.addrs = append(c.addrs, addr)
		c.proxies = append(c.proxies, px)
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

// dataBytes is how many bytes of data files each data server holds.
func (c *pnfsCluster) dataBytes(t *testing.T) []int64 {
	var out []int64
	for _, dir := range c.ds {
		var n int64
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		out = append(out, n)
	}
	return out
}

func dialMDS(t *testing.T, addr string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, client.Options{BackChannel: true, ExchangeFlags: nfs4.ExchgIDUseNonPNFS | nfs4.ExchgIDUsePNFSMDS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.ExchangeFlags()&nfs4.ExchgIDUsePNFSMDS == 0 {
		t.Fatalf("EXCHANGE_ID flags %#x: no USE_PNFS_MDS", c.ExchangeFlags())
	}
	return c
}

func pnfsWrite(t *testing.T, ctx context.Context, f *client.PNFSFile, data []byte, stable uint32) {
	t.Helper()
	for off := 0; off < len(data); {
		res, err := f.WriteAt(ctx, data[off:], uint64(off), stable)
		if err != nil {
			t.Fatal(err)
		}
		off += int(res.Count)
	}
}

func pnfsRead(t *testing.T, ctx context.Context, f *client.PNFSFile, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	for off := 0; off < n; {
		k, eof, err := f.ReadAt(ctx, out[off:], uint64(off))
		if err != nil {
			t.Fatal(err)
		}
		off += k
		if k == 0 || (eof && off < n) {
			t.Fatalf("short read at %d of %d", off, n)
		}
	}
	return out
}

func TestPNFSClientRoundTrip(t *testing.T) {
	cl := startPNFSCluster(t, 2, 1)
	c := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// GETDEVICELIST is NFSv4.1 only (RFC 7862 section 13: MUST NOT be
	// implemented in 4.2).
	if _, err := c.GetDeviceList(ctx, root, client.LayoutFlexFiles); !client.IsStatus(err, nfs4.ErrNotsupp) {
		t.Fatalf("GETDEVICELIST in NFSv4.2: %v, want NFS4ERR_NOTSUPP", err)
	}
	c41, err := client.Dial(ctx, cl.mds, client.Options{Minor: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c41.Close()
	ids, err := c41.GetDeviceList(ctx, root, client.LayoutFlexFiles)
	if err != nil || len(ids) != 2 {
		t.Fatalf("GETDEVICELIST: %x %v", ids, err)
	}
	for _, id := range ids {
		if a, err := c.FFDeviceInfo(ctx, id); err != nil || len(a.Addrs) == 0 {
			t.Fatalf("GETDEVICEINFO %x: %+v %v", id, a, err)
		}
	}
	p := client.NewPNFS(c, client.PNFSOptions{ReturnStats: true})
	defer p.Close()
	want := map[string][]byte{"a": pnfsBytes(3<<20 + 4321), "b": pnfsBytes(1 << 20)}
	for name, data := range want {
		f, err := c.OpenCreate(ctx, root, name, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		pf := p.Open(f, client.IOModeRW)
		l, err := pf.Layout(ctx)
		if err != nil || l == nil {
			t.Fatalf("%s: no layout: %v", name, err)
		}
		pnfsWrite(t, ctx, pf, data, nfs4.Unstable4)
		if err := pf.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Fallbacks(); n != 0 {
		t.Fatalf("%d I/Os through the MDS", n)
	}
	// Round robin: one file per data server, the bytes there, not on the MDS.
	got := cl.dataBytes(t)
	if got[0]+got[1] != int64(len(want["a"])+len(want["b"])) || got[0] == 0 || got[1] == 0 {
		t.Fatalf("data server bytes %v", got)
	}
	for name, data := range want {
		a, err := c.Getattr(ctx, mustLookup(t, c, root, name), nfs4.BitmapOf(nfs4.AttrSize))
		if err != nil || a.Size != uint64(len(data)) {
			t.Fatalf("%s: size %d after LAYOUTCOMMIT, want %d (%v)", name, a.Size, len(data), err)
		}
		f, err := c.Open(ctx, root, name, nfs4.ShareAccessRead)
		if err != nil {
			t.Fatal(err)
		}
		pf := p.Open(f, client.IOModeRead)
		if back := pnfsRead(t, ctx, pf, len(data)); !bytes.Equal(back, data) {
			t.Fatalf("%s: read back through the layout differs", name)
		}
		if err := pf.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Fallbacks(); n != 0 {
		t.Fatalf("%d reads through the MDS", n)
	}
	st := p.Stats()
	if len(st) != 2 || st[0].WriteBytes == 0 || st[1].WriteBytes == 0 || st[0].ReadBytes+st[1].ReadBytes != uint64(len(want["a"])+len(want["b"])) {
		t.Fatalf("per data server %+v", st)
	}
}

func mustLookup(t *testing.T, c *client.Client, dir []byte, name string) []byte {
	t.Helper()
	fh, err := c.Lookup(context.Background(), dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return fh
}

func TestPNFSClientMirrors(t *testing.T) {
	cl := startPNFSCluster(t, 2, 2)
	c := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, _ := c.RootFH(ctx)
	p := client.NewPNFS(c, client.PNFSOptions{})
	defer p.Close()
	f, err := c.OpenCreate(ctx, root, "m", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pf := p.Open(f, client.IOModeRW)
	data := pnfsBytes(2<<20 + 17)
	pnfsWrite(t, ctx, pf, data, nfs4.FileSync4)
	l, _ := pf.Layout(ctx)
	if l == nil || len(l.Mirrors) != 2 {
		t.Fatalf("layout %+v", l)
	}
	if err := pf.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cl.dataBytes(t); got[0] != int64(len(data)) || got[1] != int64(len(data)) {
		t.Fatalf("mirrors hold %v bytes, want %d each", got, len(data))
	}
}

// A mode change by another client recalls the layout (the MDS must fence
// or recall before it, RFC 8435 section 15): the client answers the
// CB_LAYOUTRECALL, returns the layout, and its next I/O gets a new one.
func TestPNFSClientRecall(t *testing.T) {
	cl := startPNFSCluster(t, 1, 1)
	c := dialMDS(t, cl.mds)
	other := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, _ := c.RootFH(ctx)
	p := client.NewPNFS(c, client.PNFSOptions{RetryAfter: time.Millisecond})
	defer p.Close()
	f, err := c.OpenCreate(ctx, root, "r", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pf := p.Open(f, client.IOModeRW)
	pnfsWrite(t, ctx, pf, pnfsBytes(100000), nfs4.Unstable4)
	if _, err := other.Setattr(ctx, f.FH, nfs4.AnonStateid, &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: 0o600}); err != nil {
		t.Fatal(err)
	}
	if c.LayoutRecalls() == 0 {
		t.Fatal("no CB_LAYOUTRECALL before the mode change")
	}
	time.Sleep(5 * time.Millisecond)
	data := pnfsBytes(70000)
	pnfsWrite(t, ctx, pf, data, nfs4.FileSync4)
	if back := pnfsRead(t, ctx, pf, len(data)); !bytes.Equal(back, data) {
		t.Fatal("read back after the recall differs")
	}
	if err := pf.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if p.Fallbacks() != 0 {
		t.Logf("%d I/Os through the MDS after the recall", p.Fallbacks())
	}
}

// A data server that goes away under a read: the client reports it
// (LAYOUTERROR, or LAYOUTRETURN's ff_ioerr4), reads the other mirror, and
// the MDS takes the server out of service.
func TestPNFSClientDataServerFails(t *testing.T) {
	t.Run("LAYOUTERROR", func(t *testing.T) { dataServerFails(t, client.PNFSOptions{}) })
	t.Run("LAYOUTRETURN", func(t *testing.T) { dataServerFails(t, client.PNFSOptions{ReportInReturn: true}) })
}

// dataServerFails is TestPNFSClientDataServerFails with the error
// reported by LAYOUTERROR, or in LAYOUTRETURN's ff_ioerr4.
func dataServerFails(t *testing.T, opts client.PNFSOptions) {
	cl := startPNFSCluster(t, 2, 2)
	c := dialMDS(t, cl.mds)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, _ := c.RootFH(ctx)
	p := client.NewPNFS(c, opts)
	defer p.Close()
	f, err := c.OpenCreate(ctx, root, "d", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	pf := p.Open(f, client.IOModeRW)
	data := pnfsBytes(300000)
	pnfsWrite(t, ctx, pf, data, nfs4.FileSync4)
	l, _ := pf.Layout(ctx)
	if l == nil || len(l.Mirrors) != 2 {
		t.Fatalf("layout %+v", l)
	}
	// The first mirror's data server goes away.
	dev, err := c.FFDeviceInfo(ctx, l.Mirrors[0].Servers[0].Device)
	if err != nil {
		t.Fatal(err)
	}
	hp, _ := client.UaddrToHostPort(dev.Addrs[0].Addr)
	broken := -1
	for i, a := range cl.addrs {
		if a == hp {
			broken = i
		}
	}
	if broken < 0 {
		t.Fatalf("device address %s is none of %v", hp, cl.addrs)
	}
	cl.proxies[broken].kill()
	if back := pnfsRead(t, ctx, pf, len(data)); !bytes.Equal(back, data) {
		t.Fatal("read back differs")
	}
	if p.Reports() != 1 || p.Fallbacks() != 0 {
		t.Fatalf("reports %d, fallbacks %d, per data server %+v", p.Reports(), p.Fallbacks(), p.Stats())
	}
	// The report makes the pool ask the server at once (a client's word
	// alone takes no server away); it does not answer, so it leaves.
	deadline := time.Now().Add(10 * time.Second)
	for len(cl.pool.Devices()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d data servers in service 10 s after the report, want 1", len(cl.pool.Devices()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	pf.Close(ctx)
}

// Fencing (RFC 8435 section 14, issue 23 "Done means" 2): a client holding
// a layout whose lease ends can no longer write the data file with the
// layout's synthetic owner.
func TestPNFSClientFencedAfterLease(t *testing.T) {
	const lease = 2
	cl := startPNFSClusterLease(t, 1, 1, lease)
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
	s := l.Mirrors[0].Servers[0]
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
		t.Fatalf("WRITE with the layout's owner before the lease ended: %v", err)
	}
	// The client goes silent (no SEQUENCE renews its lease) past the lease.
	deadline := time.Now().Add(6 * lease * time.Second)
	for {
		time.Sleep(500 * time.Millisecond)
		_, err = ds.Write(as, s.FHs[0], s.Stateid, 0, nfs4.FileSync4, []byte("after"))
		if err != nil || time.Now().After(deadline) {
			break
		}
	}
	if !client.IsStatus(err, nfs4.ErrAccess) && !client.IsStatus(err, nfs4.ErrPerm) {
		t.Fatalf("WRITE with the layout's owner %d s after the lease ended: %v, want NFS4ERR_ACCESS", 6*lease, err)
	}
}

// tcpProxy forwards connections to a data server until killed, which
// ends them all at once, as a data server that dies.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func startProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.kill)
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		d, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, d)
		p.mu.Unlock()
		go func() { io.Copy(d, c); d.Close() }()
		go func() { io.Copy(c, d); c.Close() }()
	}
}

func (p *tcpProxy) kill() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func pnfsBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>12)
	}
	return b
}
