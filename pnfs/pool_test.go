package pnfs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// testDS is an nfsd-uring data server served in-process on 127.0.0.1
// over a temporary export (no_root_squash: an export without client
// rules), which can be stopped and started again on the same address and
// state directory (its file handles stay valid).
type testDS struct {
	t     testing.TB
	dir   string // the export
	state string
	addr  string
	stop  func()
}

func startDS(t testing.TB) *testDS {
	t.Helper()
	d := &testDS{t: t, dir: t.TempDir(), state: t.TempDir(), addr: "127.0.0.1:0"}
	d.start()
	t.Cleanup(func() {
		if d.stop != nil {
			d.stop()
		}
	})
	return d
}

func (d *testDS) start() {
	d.t.Helper()
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: d.dir}}, StateDir: d.state, GraceTime: 1})
	if err != nil {
		d.t.Fatal(err)
	}
	name := os.Getenv("NFSD_ENGINE") // as e2e: uring or portable
	if name == "" {
		name = "portable"
	}
	eng, err := engine.New(name, srv, engine.Options{})
	if err != nil {
		srv.Close()
		if name == "uring" {
			d.t.Skipf("io_uring: %v", err)
		}
		d.t.Fatal(err)
	}
	var ln net.Listener
	for range 50 { // the old listener's port may take a moment to free
		if ln, err = net.Listen("tcp", d.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		d.t.Fatal(err)
	}
	d.addr = ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	d.stop = func() {
		eng.Close()
		<-done
		srv.Close()
		d.stop = nil
	}
}

// path is where the data file name lies on the export.
func (d *testDS) path(name string) string { return filepath.Join(d.dir, DefaultPath, name) }

func (d *testDS) config() ServerConfig { return ServerConfig{Addr: d.addr, Path: DefaultPath} }

func newTestPool(t testing.TB, mirrors int, ds ...*testDS) *Pool {
	t.Helper()
	cfg := Config{Mirrors: mirrors, Logger: slog.New(slog.DiscardHandler), ProbeInterval: 50 * time.Millisecond, HoldDown: 100 * time.Millisecond, DialTimeout: time.Second, CallTimeout: 5 * time.Second}
	for _, d := range ds {
		cfg.Servers = append(cfg.Servers, d.config())
	}
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// owner returns the file's mode bits, uid and gid on disk.
func owner(t *testing.T, p string) (mode os.FileMode, uid, gid uint32) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fi.Mode().Perm(), st.Uid, st.Gid
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestParseServer(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ServerConfig
		bad  bool
	}{
		{in: "10.0.0.1:2049", want: ServerConfig{Addr: "10.0.0.1:2049", Path: "/def"}},
		{in: "ds1:2049/exp/data", want: ServerConfig{Addr: "ds1:2049", Path: "/exp/data"}},
		{in: "[::1]:2049/d/,advertise=192.0.2.1:2049", want: ServerConfig{Addr: "[::1]:2049", Path: "/d", Advertise: "192.0.2.1:2049"}},
		{in: "ds1/path", bad: true},
		{in: "ds1:2049,advertise=x", bad: true},
		{in: "ds1:2049,bogus", bad: true},
		{in: ":2049", bad: true},
	} {
		got, err := ParseServer(c.in, "/def")
		if (err != nil) != c.bad {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if !c.bad && got != c.want {
			t.Errorf("%q: got %+v, want %+v", c.in, got, c.want)
		}
	}
	a, _ := ParseServer("ds1:2049/x", "")
	b, _ := ParseServer("ds1:2049/x/,advertise=1.2.3.4:1", "")
	c, _ := ParseServer("ds1:2049/y", "")
	if a.ID() != b.ID() || a.ID() == c.ID() {
		t.Errorf("device ids: %x %x %x: want the first two equal (advertise is not part of it), the third different", a.ID(), b.ID(), c.ID())
	}
}

// TestCreatePlaces: files go round robin over the servers, each data file
// with mode 0640 and a fresh synthetic owner.
func TestCreatePlaces(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	p := newTestPool(t, 1, ds...)
	ctx := ctxT(t)
	if n := len(p.Devices()); n != 2 {
		t.Fatalf("%d devices in service, want 2", n)
	}
	perDS := map[nfs.DeviceID]int{}
	seen := map[uint32]bool{}
	for _, name := range []string{"a", "b", "c", "d"} {
		l, err := p.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Mirrors) != 1 || l.Name != name || len(l.Mirrors[0].FH) == 0 {
			t.Fatalf("layout %+v", l)
		}
		if l.UID < FirstSyntheticID || l.UID > LastSyntheticID || seen[l.UID] {
			t.Errorf("uid %#x: not a fresh synthetic id", l.UID)
		}
		seen[l.UID] = true
		perDS[l.Mirrors[0].Device]++
		d := ds[0]
		if l.Mirrors[0].Device == ds[1].config().ID() {
			d = ds[1]
		}
		mode, uid, gid := owner(t, d.path(name))
		if mode != 0o640 || uid != l.UID || gid != l.GID {
			t.Errorf("%s on disk: mode %o uid %d gid %d, want 640 %d %d", name, mode, uid, gid, l.UID, l.GID)
		}
	}
	if len(perDS) != 2 || perDS[ds[0].config().ID()] != 2 {
		t.Errorf("placement %v: want 2 files on each server", perDS)
	}
	if _, err := p.Create(ctx, "../x"); err == nil {
		t.Error("Create(../x) succeeded")
	}
}

// TestMirroredIO: WriteAt goes to both mirrors, ReadAt reads it back,
// SetSize truncates both, Remove removes both.
func TestMirroredIO(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	p := newTestPool(t, 2, ds...)
	ctx := ctxT(t)
	l, err := p.Create(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Mirrors) != 2 || l.Mirrors[0].Device == l.Mirrors[1].Device {
		t.Fatalf("mirrors %+v", l.Mirrors)
	}
	data := make([]byte, 3<<20+4321)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	const off = 12345
	if n, err := p.WriteAt(ctx, l, data, off); err != nil || n != len(data) {
		t.Fatalf("WriteAt: %d %v", n, err)
	}
	for _, d := range ds {
		got, err := os.ReadFile(d.path("m"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != off+len(data) || !bytes.Equal(got[off:], data) {
			t.Fatalf("%s: data on disk differs (%d bytes)", d.addr, len(got))
		}
	}
	buf := make([]byte, len(data)+100)
	n, eof, err := p.ReadAt(ctx, l, buf, off)
	if err != nil || n != len(data) || !eof || !bytes.Equal(buf[:n], data) {
		t.Fatalf("ReadAt: n %d eof %v err %v, equal %v", n, eof, err, bytes.Equal(buf[:n], data))
	}
	if err := p.SetSize(ctx, l, 1000); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if fi, err := os.Stat(d.path("m")); err != nil || fi.Size() != 1000 {
			t.Fatalf("after SetSize(1000): %v %v", fi, err)
		}
	}
	if err := p.SetSize(ctx, l, 5<<20); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(ds[0].path("m")); fi.Size() != 5<<20 {
		t.Fatalf("after SetSize(5 MiB): size %d", fi.Size())
	}
	if err := p.Remove(ctx, l); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if _, err := os.Stat(d.path("m")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("after Remove: %v", err)
		}
	}
	if err := p.Remove(ctx, l); err != nil {
		t.Fatalf("second Remove: %v", err)
	}
	st := p.Stats()
	if st[0].BytesWritten != uint64(len(data)) || st[0].BytesRead+st[1].BytesRead != uint64(len(data)) {
		t.Errorf("stats %+v", st)
	}
}

// TestFence: the data file gets a new owner on disk, so AUTH_SYS calls
// with the old ids are refused.
func TestFence(t *testing.T) {
	ds := startDS(t)
	p := newTestPool(t, 1, ds)
	ctx := ctxT(t)
	l, err := p.Create(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	nl, err := p.Fence(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if nl.UID == l.UID || nl.GID == l.GID || nl.Name != l.Name || len(nl.Mirrors) != 1 {
		t.Fatalf("fenced layout %+v from %+v", nl, l)
	}
	if _, uid, gid := owner(t, ds.path("f")); uid != nl.UID || gid != nl.GID {
		t.Errorf("owner on disk %d:%d, want %d:%d", uid, gid, nl.UID, nl.GID)
	}
}

// TestServerDownAndBack: a stopped server leaves service (the prober
// sees it), placement skips it, and once restarted it is back in service
// with a fence queued while it was away done on it.
func TestServerDownAndBack(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	p := newTestPool(t, 1, ds...)
	ctx := ctxT(t)
	down := ds[1].config().ID()
	var onDown nfs.FileLayout
	for onDown.Name == "" {
		l, err := p.Create(ctx, "x"+string(rune('a'+p.rr.Load()%26)))
		if err != nil {
			t.Fatal(err)
		}
		if l.Mirrors[0].Device == down {
			onDown = l
		}
	}
	ds[1].stop()
	waitFor(t, "the stopped server out of service", func() bool { return len(p.Devices()) == 1 })
	for i := range 4 {
		l, err := p.Create(ctx, "after"+string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if l.Mirrors[0].Device == down {
			t.Fatalf("file placed on the stopped server")
		}
	}
	if _, _, err := p.ReadAt(ctx, onDown, make([]byte, 10), 0); err == nil {
		t.Error("ReadAt from a stopped server succeeded")
	}
	fenced, err := p.Fence(ctx, onDown) // queued for its return
	if err != nil {
		t.Fatalf("Fence with the server down: %v", err)
	}
	ds[1].start()
	waitFor(t, "the restarted server back in service", func() bool { return len(p.Devices()) == 2 })
	if _, uid, _ := owner(t, ds[1].path(onDown.Name)); uid != fenced.UID {
		t.Errorf("owner after return %d, want the queued fence's %d", uid, fenced.UID)
	}
	if n, _, err := p.ReadAt(ctx, onDown, make([]byte, 10), 0); err != nil || n != 0 {
		t.Errorf("ReadAt after return: %d %v", n, err)
	}
	// A report for a server that still answers leaves it in service (a
	// client's claim is checked, not believed)...
	p.Failed(down, 5)
	waitFor(t, "the report checked", func() bool { return !p.byID[down].probing.Load() })
	if len(p.Devices()) != 2 {
		t.Fatal("a report took a server that answers out of service")
	}
	// ...one for a server that does not answer takes it out, for
	// HoldDown at least.
	ds[1].stop()
	p.Failed(down, 5)
	waitFor(t, "the reported server out of service", func() bool { return len(p.Devices()) == 1 })
	ds[1].start()
	waitFor(t, "the reported server back after the hold-down", func() bool { return len(p.Devices()) == 2 })
	if st := p.Stats()[1]; st.Reported != 2 || st.Downs < 2 || st.Connects < 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestUnreachableAtStart: a server that does not answer at startup is
// logged and left out of service; the pool starts with the others.
func TestUnreachableAtStart(t *testing.T) {
	ds := startDS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	p, err := New(context.Background(), Config{Servers: []ServerConfig{ds.config(), {Addr: dead, Path: DefaultPath}},
		ProbeInterval: 50 * time.Millisecond, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	devs := p.Devices()
	if len(devs) != 1 || devs[0].ID != ds.config().ID() {
		t.Fatalf("devices %+v", devs)
	}
	if _, ok := p.Device(ServerConfig{Addr: dead, Path: DefaultPath}.ID()); !ok {
		t.Error("Device does not know the unreachable server")
	}
	st := p.Stats()[1]
	if st.InService || st.Reason == "" {
		t.Errorf("unreachable server: %+v", st)
	}
}

// TestFenceStopsOldOwner: a client acting as the layout's synthetic owner
// (AUTH_SYS, anonymous stateid, as a pNFS client writes to a data server)
// may write the data file; after Fence it is refused, and one with the new
// ids may write (RFC 8435 sections 2.2 and 14).
func TestFenceStopsOldOwner(t *testing.T) {
	ds := startDS(t)
	p := newTestPool(t, 1, ds)
	ctx := ctxT(t)
	l, err := p.Create(ctx, "fenced")
	if err != nil {
		t.Fatal(err)
	}
	write := func(uid, gid uint32) error {
		c, err := client.Dial(ctx, ds.addr, client.Options{UID: uid, GID: gid})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Write(ctx, l.Mirrors[0].FH, nfs4.AnonStateid, 0, nfs4.FileSync4, []byte("data"))
		return err
	}
	if err := write(l.UID, l.GID); err != nil {
		t.Fatalf("write as the synthetic owner: %v", err)
	}
	if err := write(l.UID+1, l.GID+1); err == nil {
		t.Fatal("write as another id succeeded: the data file is not protected")
	}
	nl, err := p.Fence(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(l.UID, l.GID); !client.IsStatus(err, nfs4.ErrAccess) && !client.IsStatus(err, nfs4.ErrPerm) {
		t.Fatalf("write with the fenced ids: %v, want NFS4ERR_ACCESS or NFS4ERR_PERM", err)
	}
	if err := write(nl.UID, nl.GID); err != nil {
		t.Fatalf("write with the new ids: %v", err)
	}
}

// TestResilver: with two mirrors, writes while one server is down go to
// the other and mark the down one's copy stale; reads skip it; once back,
// Resilver copies the good mirror over it.
func TestResilver(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	p := newTestPool(t, 2, ds...)
	ctx := ctxT(t)
	l, err := p.Create(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Repeat([]byte("old!"), 1<<18) // 1 MiB
	if _, err := p.WriteAt(ctx, l, old, 0); err != nil {
		t.Fatal(err)
	}
	ds[1].stop()
	waitFor(t, "the stopped server out of service", func() bool { return len(p.Devices()) == 1 })
	data := bytes.Repeat([]byte("new data"), 300000) // 2.4 MB
	if n, err := p.WriteAt(ctx, l, data, 100); err != nil || n != len(data) {
		t.Fatalf("WriteAt with a mirror down: %d %v", n, err)
	}
	id1 := ds[1].config().ID()
	if st := p.StaleMirrors(l); len(st) != 1 || st[0] != id1 {
		t.Fatalf("stale mirrors %x", st)
	}
	ds[1].start()
	waitFor(t, "the restarted server back in service", func() bool { return len(p.Devices()) == 2 })
	want := append(old[:100:100], data...)
	buf := make([]byte, len(want)+10)
	n, _, err := p.ReadAt(ctx, l, buf, 0)
	if err != nil || !bytes.Equal(buf[:n], want) {
		t.Fatalf("ReadAt read the stale mirror or failed: %d %v", n, err)
	}
	copied, err := p.Resilver(ctx, l)
	if err != nil || copied != uint64(len(want)) {
		t.Fatalf("Resilver: %d %v", copied, err)
	}
	got, err := os.ReadFile(ds[1].path("r"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("resilvered copy differs (%d bytes, %v)", len(got), err)
	}
	if st := p.StaleMirrors(l); len(st) != 0 {
		t.Fatalf("still stale after Resilver: %x", st)
	}
}

// TestResilverAutomatic: with two mirrors and BeforeResilver set (as
// the metadata server does), a server stopped while writes go through the
// pool has its stale copy copied over on its own once it is back: the
// hook is asked first for that file, StaleMirrors names it no more, the
// bytes on both disks are equal, and writes through the pool after it
// reach both mirrors again.
func TestResilverAutomatic(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	reg := newMemRegistry()
	cfg := Config{Servers: []ServerConfig{ds[0].config(), ds[1].config()}, Mirrors: 2, Registry: reg,
		Logger: slog.New(slog.DiscardHandler), ProbeInterval: 50 * time.Millisecond, HoldDown: 100 * time.Millisecond}
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var asked []string
	p.BeforeResilver(func(ctx context.Context, name string) error {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, name)
		return nil
	})
	ctx := ctxT(t)
	l, err := p.Create(ctx, "auto")
	if err != nil {
		t.Fatal(err)
	}
	clean, err := p.Create(ctx, "clean") // not written while away: not copied
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WriteAt(ctx, l, bytes.Repeat([]byte("old!"), 1<<18), 0); err != nil {
		t.Fatal(err)
	}
	ds[1].stop()
	waitFor(t, "the stopped server out of service", func() bool { return len(p.Devices()) == 1 })
	data := bytes.Repeat([]byte("written while away"), 200000) // 3.6 MB, past the old end
	if _, err := p.WriteAt(ctx, l, data, 4096); err != nil {
		t.Fatal(err)
	}
	if err := p.SetSize(ctx, l, 4096+uint64(len(data))-7); err != nil {
		t.Fatal(err)
	}
	id1 := ds[1].config().ID()
	if st := p.StaleMirrors(l); len(st) != 1 || st[0] != id1 {
		t.Fatalf("stale mirrors %x", st)
	}
	if st, _ := reg.get(id1, "auto"); !st.Stale || len(st.Mirrors) != 2 {
		t.Fatalf("registry holds %+v: want the stale mark with both mirrors", st)
	}
	ds[1].start()
	waitFor(t, "the stale mirror copied over", func() bool { return len(p.StaleMirrors(l)) == 0 })
	mu.Lock()
	if len(asked) != 1 || asked[0] != "auto" {
		t.Errorf("BeforeResilver asked for %q, want [auto]", asked)
	}
	mu.Unlock()
	a, err0 := os.ReadFile(ds[0].path("auto"))
	b, err1 := os.ReadFile(ds[1].path("auto"))
	if err0 != nil || err1 != nil || len(a) != 4096+len(data)-7 || !bytes.Equal(a, b) {
		t.Fatalf("mirrors differ after the resilver: %d and %d bytes (%v %v)", len(a), len(b), err0, err1)
	}
	waitFor(t, "the stale mark gone from the registry", func() bool { _, ok := reg.get(id1, "auto"); return !ok })
	if st := p.Stats()[1]; st.StaleFiles != 0 || p.rsvFiles.Load() != 1 || p.rsvBytes.Load() != uint64(len(a)) {
		t.Errorf("stats %+v, resilvered %d files %d bytes", st, p.rsvFiles.Load(), p.rsvBytes.Load())
	}
	if len(p.StaleMirrors(clean)) != 0 {
		t.Error("a file not written while away is stale")
	}
	if _, err := p.WriteAt(ctx, l, []byte("after"), 0); err != nil {
		t.Fatal(err)
	}
	a, _ = os.ReadFile(ds[0].path("auto"))
	b, _ = os.ReadFile(ds[1].path("auto"))
	if !bytes.Equal(a, b) || !bytes.HasPrefix(b, []byte("after")) {
		t.Error("a write after the resilver did not reach both mirrors alike")
	}
}

// TestResilverWaitsForHook: while BeforeResilver's function says the
// file's layouts are still out, nothing is copied and the mark stays;
// once it lets go, the copy is done on a later pass.
func TestResilverWaitsForHook(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	p := newTestPool(t, 2, ds...)
	var busy sync.Mutex
	busy.Lock() // held: layouts out
	var refused atomic.Int32
	p.BeforeResilver(func(ctx context.Context, name string) error {
		if !busy.TryLock() {
			refused.Add(1)
			return errors.New("layouts still out")
		}
		busy.Unlock()
		return nil
	})
	ctx := ctxT(t)
	l, err := p.Create(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	ds[1].stop()
	waitFor(t, "the stopped server out of service", func() bool { return len(p.Devices()) == 1 })
	if _, err := p.WriteAt(ctx, l, []byte("while away"), 0); err != nil {
		t.Fatal(err)
	}
	ds[1].start()
	waitFor(t, "the restarted server back in service", func() bool { return len(p.Devices()) == 2 })
	time.Sleep(300 * time.Millisecond)
	if len(p.StaleMirrors(l)) != 1 || refused.Load() == 0 {
		t.Fatalf("copied while the hook refused (refused %d times)", refused.Load())
	}
	if got, _ := os.ReadFile(ds[1].path("w")); len(got) != 0 {
		t.Fatalf("the stale mirror was written: %q", got)
	}
	busy.Unlock()
	waitFor(t, "the copy on a later pass", func() bool { return len(p.StaleMirrors(l)) == 0 })
	if got, _ := os.ReadFile(ds[1].path("w")); string(got) != "while away" {
		t.Fatalf("resilvered copy %q", got)
	}
}

// TestPlacementSkipsFull: a server with less than MinFree free space gets
// no new files while another has room; when none has, any will do.
func TestPlacementSkipsFull(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	p, err := New(context.Background(), Config{Servers: []ServerConfig{ds[0].config(), ds[1].config()},
		Logger: slog.New(slog.DiscardHandler), ProbeInterval: time.Hour, MinFree: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := ctxT(t)
	for _, s := range p.servers {
		if !s.availKnown || s.avail < 1<<20 {
			t.Fatalf("%s: space_avail %d known %v", s.cfg, s.avail, s.availKnown)
		}
	}
	p.servers[0].mu.Lock()
	p.servers[0].avail = 1000
	p.servers[0].mu.Unlock()
	for i := range 4 {
		l, err := p.Create(ctx, "s"+string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if l.Mirrors[0].Device != p.servers[1].id {
			t.Fatal("file placed on the full server")
		}
	}
	p.servers[1].mu.Lock()
	p.servers[1].avail = 1000
	p.servers[1].mu.Unlock()
	seen := map[nfs.DeviceID]bool{}
	for i := range 4 {
		l, err := p.Create(ctx, "t"+string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		seen[l.Mirrors[0].Device] = true
	}
	if len(seen) != 2 {
		t.Errorf("with every server full, placement used %d of 2", len(seen))
	}
}

// memRegistry is a Registry in memory.
type memRegistry struct {
	mu      sync.Mutex
	next    uint32
	servers map[nfs.DeviceID]ServerRecord
	files   map[nfs.DeviceID]map[string]FileState
	orphans map[string]nfs.FileLayout
}

func (m *memRegistry) PutOrphan(_ context.Context, name string, l *nfs.FileLayout) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l == nil {
		delete(m.orphans, name)
	} else {
		m.orphans[name] = *l
	}
	return nil
}

func (m *memRegistry) Orphans(context.Context) ([]nfs.FileLayout, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []nfs.FileLayout
	for _, l := range m.orphans {
		out = append(out, l)
	}
	return out, nil
}

func newMemRegistry() *memRegistry {
	return &memRegistry{next: FirstSyntheticID, servers: map[nfs.DeviceID]ServerRecord{}, files: map[nfs.DeviceID]map[string]FileState{},
		orphans: map[string]nfs.FileLayout{}}
}

func (m *memRegistry) ReserveIDs(_ context.Context, n uint32) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	first := m.next
	m.next += n
	return first, nil
}

func (m *memRegistry) PutServer(_ context.Context, id nfs.DeviceID, r ServerRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.servers[id] = r
	return nil
}

func (m *memRegistry) PutFileState(_ context.Context, id nfs.DeviceID, name string, st *FileState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st == nil {
		delete(m.files[id], name)
		return nil
	}
	if m.files[id] == nil {
		m.files[id] = map[string]FileState{}
	}
	m.files[id][name] = *st
	return nil
}

func (m *memRegistry) get(id nfs.DeviceID, name string) (FileState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.files[id][name]
	return st, ok
}

func (m *memRegistry) FileStates(context.Context) (map[nfs.DeviceID]map[string]FileState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[nfs.DeviceID]map[string]FileState{}
	for id, files := range m.files {
		out[id] = map[string]FileState{}
		for k, v := range files {
			out[id][k] = v
		}
	}
	return out, nil
}

// TestPendingWorkSurvivesRestart: a fence and a stale mark owed to a
// server that is down are kept in the registry; a new pool (the metadata
// server restarted) does the fence when the server returns and still
// skips the stale copy. Synthetic ids come from the registry's counter.
func TestPendingWorkSurvivesRestart(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	reg := newMemRegistry()
	cfg := Config{Servers: []ServerConfig{ds[0].config(), ds[1].config()}, Mirrors: 2, Registry: reg,
		Logger: slog.New(slog.DiscardHandler), ProbeInterval: 50 * time.Millisecond, HoldDown: 100 * time.Millisecond}
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	l, err := p.Create(ctx, "persist")
	if err != nil {
		t.Fatal(err)
	}
	if l.UID != FirstSyntheticID {
		t.Errorf("first synthetic id %#x, want the registry's %#x", l.UID, FirstSyntheticID)
	}
	ds[1].stop()
	waitFor(t, "the stopped server out of service", func() bool { return len(p.Devices()) == 1 })
	if _, err := p.WriteAt(ctx, l, []byte("while away"), 0); err != nil {
		t.Fatal(err)
	}
	fenced, err := p.Fence(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	id1 := ds[1].config().ID()
	if st := reg.files[id1]["persist"]; !st.Stale || !st.Fence || st.UID != fenced.UID {
		t.Fatalf("registry holds %+v", st)
	}
	p.Close()

	p, err = New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if st := p.StaleMirrors(l); len(st) != 1 || st[0] != id1 {
		t.Fatalf("after restart, stale mirrors %x", st)
	}
	ds[1].start()
	waitFor(t, "the restarted server back in service", func() bool { return len(p.Devices()) == 2 })
	if _, uid, _ := owner(t, ds[1].path("persist")); uid != fenced.UID {
		t.Errorf("owner %d, want the fence queued before the restart: %d", uid, fenced.UID)
	}
	if _, err := p.Resilver(ctx, fenced); err != nil {
		t.Fatal(err)
	}
	if st, ok := reg.files[id1]["persist"]; ok {
		t.Errorf("registry still holds %+v after the fence and the resilver", st)
	}
	if nl, err := p.Create(ctx, "next"); err != nil || nl.UID <= fenced.UID {
		t.Errorf("id after restart %#x (%v): not past %#x", nl.UID, err, fenced.UID)
	}
}

// TestAllocateDeallocate: ALLOCATE and DEALLOCATE of a file with a layout
// reach every mirror's data file: ALLOCATE past the end grows it,
// DEALLOCATE punches a hole that reads as zeros (pynfs ALLOC1-3 against
// the metadata-server role).
func TestAllocateDeallocate(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t)}
	p := newTestPool(t, 2, ds...)
	ctx := ctxT(t)
	l, err := p.Create(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Allocate(ctx, l, 0, 1<<20); err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	data := bytes.Repeat([]byte{0xab}, 1<<20)
	if n, err := p.WriteAt(ctx, l, data, 0); err != nil || n != len(data) {
		t.Fatalf("WriteAt: %d %v", n, err)
	}
	if err := p.Deallocate(ctx, l, 4096, 8192); err != nil {
		t.Fatalf("Deallocate: %v", err)
	}
	want := bytes.Clone(data)
	clear(want[4096 : 4096+8192])
	for _, d := range ds {
		got, err := os.ReadFile(d.path("a"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes, not the allocated file with its hole", d.addr, len(got))
		}
	}
}
