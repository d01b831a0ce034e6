package pnfs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

func newStripedPool(t testing.TB, mirrors, width int, su uint64, ds ...*testDS) *Pool {
	t.Helper()
	cfg := Config{Mirrors: mirrors, Width: width, StripeUnit: su, Logger: slog.New(slog.DiscardHandler), ProbeInterval: 50 * time.Millisecond,
		HoldDown: 100 * time.Millisecond, DialTimeout: time.Second, CallTimeout: 5 * time.Second}
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

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// onStripe returns what the data file of stripe s should hold after
// data was written at off to a file striped su over width: data's bytes
// of the units of stripe s at their offsets, zeros elsewhere.
func onStripe(data []byte, off, su uint64, width, s int) []byte {
	end := off + uint64(len(data))
	var last uint64 // the end of stripe s's last byte written
	for o := off; o < end; o++ {
		if int((o/su)%uint64(width)) == s {
			last = o + 1
		}
	}
	out := make([]byte, last)
	for o := off; o < last; o++ {
		if int((o/su)%uint64(width)) == s {
			out[o] = data[o-off]
		}
	}
	return out
}

// dsOf returns the test data server holding data file f.
func dsOf(t *testing.T, ds []*testDS, f nfs.DSFile) *testDS {
	t.Helper()
	for _, d := range ds {
		if d.config().ID() == f.Device {
			return d
		}
	}
	t.Fatalf("no data server %x", f.Device)
	return nil
}

// TestStripedIO: with a stripe unit and every server as the width, a new
// file's layout names four distinct servers; a write through the pool
// puts each stripe unit on its stripe's server at the file's offset, a
// read gets every byte back, and truncate, deallocate, fence and remove
// reach every stripe's data file.
func TestStripedIO(t *testing.T) {
	const su = 64 << 10
	ds := []*testDS{startDS(t), startDS(t), startDS(t), startDS(t)}
	p := newStripedPool(t, 1, 0, su, ds...)
	ctx := ctxT(t)
	l, err := p.Create(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if l.Width != 4 || l.StripeUnit != su || len(l.Mirrors) != 4 || l.MirrorCount() != 1 {
		t.Fatalf("layout %+v", l)
	}
	seen := map[nfs.DeviceID]bool{}
	for _, f := range l.Mirrors {
		seen[f.Device] = true
	}
	if len(seen) != 4 {
		t.Fatalf("stripes on %d servers, want 4", len(seen))
	}
	const off = 12345
	data := randomBytes(1<<20+7777, 1)
	if n, err := p.WriteAt(ctx, l, data, off); err != nil || n != len(data) {
		t.Fatalf("WriteAt: %d %v", n, err)
	}
	for s, f := range l.Mirrors {
		got, err := os.ReadFile(dsOf(t, ds, f).path("s"))
		if err != nil {
			t.Fatal(err)
		}
		if want := onStripe(data, off, su, 4, s); !bytes.Equal(got, want) {
			t.Fatalf("stripe %d: %d bytes on disk, want %d of its units", s, len(got), len(want))
		}
	}
	buf := make([]byte, len(data))
	if n, _, err := p.ReadAt(ctx, l, buf, off); err != nil || n != len(data) || !bytes.Equal(buf, data) {
		t.Fatalf("ReadAt: %d %v, equal %v", n, err, bytes.Equal(buf, data))
	}
	// Past what a stripe's data file holds reads as zeros.
	buf = make([]byte, 3*su)
	if n, _, err := p.ReadAt(ctx, l, buf, off+uint64(len(data))); err != nil || n != len(buf) || !bytes.Equal(buf, make([]byte, len(buf))) {
		t.Fatalf("ReadAt past the data: %d %v", n, err)
	}
	const size = 200000
	if err := p.SetSize(ctx, l, size); err != nil {
		t.Fatal(err)
	}
	for _, f := range l.Mirrors {
		if fi, err := os.Stat(dsOf(t, ds, f).path("s")); err != nil || fi.Size() != size {
			t.Fatalf("after SetSize: %v %v", fi, err)
		}
	}
	if err := p.Allocate(ctx, l, 0, size); err != nil {
		t.Fatal(err)
	}
	if err := p.Deallocate(ctx, l, 0, size); err != nil {
		t.Fatal(err)
	}
	buf = make([]byte, size)
	if n, _, err := p.ReadAt(ctx, l, buf, 0); err != nil || n != size || !bytes.Equal(buf, make([]byte, size)) {
		t.Fatalf("ReadAt after DEALLOCATE: %d %v", n, err)
	}
	nl, err := p.Fence(ctx, l)
	if err != nil || nl.Width != 4 || nl.StripeUnit != su {
		t.Fatalf("Fence: %+v %v", nl, err)
	}
	for _, f := range l.Mirrors {
		if _, uid, gid := owner(t, dsOf(t, ds, f).path("s")); uid != nl.UID || gid != nl.GID {
			t.Fatalf("stripe on %x: owner %d:%d after the fence, want %d:%d", f.Device, uid, gid, nl.UID, nl.GID)
		}
	}
	if err := p.Remove(ctx, nl); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if _, err := os.Stat(d.path("s")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("after Remove: %v", err)
		}
	}
}

// TestStripedMirrorsResilver: two mirrors of two stripes; a server that
// misses a write has only its own stripe's data file marked stale, and
// the resilver copies it from the same stripe of the other mirror.
func TestStripedMirrorsResilver(t *testing.T) {
	const su = 64 << 10
	ds := []*testDS{startDS(t), startDS(t), startDS(t), startDS(t)}
	p := newStripedPool(t, 2, 2, su, ds...)
	ctx := ctxT(t)
	l, err := p.Create(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if l.Width != 2 || l.MirrorCount() != 2 || len(l.Mirrors) != 4 {
		t.Fatalf("layout %+v", l)
	}
	data := randomBytes(5*su+99, 2)
	if _, err := p.WriteAt(ctx, l, data, 0); err != nil {
		t.Fatal(err)
	}
	down := dsOf(t, ds, l.Row(1)[0]) // mirror 1, stripe 0
	down.stop()
	waitFor(t, "the stopped server out of service", func() bool { return len(p.Devices()) == 3 })
	data2 := randomBytes(len(data), 3)
	if n, err := p.WriteAt(ctx, l, data2, 0); err != nil || n != len(data2) {
		t.Fatalf("WriteAt with a mirror's stripe down: %d %v", n, err)
	}
	if st := p.StaleMirrors(l); len(st) != 1 || st[0] != l.Row(1)[0].Device {
		t.Fatalf("stale %x, want only mirror 1 stripe 0", st)
	}
	down.start()
	waitFor(t, "the restarted server back in service", func() bool { return len(p.Devices()) == 4 })
	if _, err := p.Resilver(ctx, l); err != nil {
		t.Fatal(err)
	}
	if st := p.StaleMirrors(l); len(st) != 0 {
		t.Fatalf("still stale: %x", st)
	}
	for m := range 2 {
		for s, f := range l.Row(m) {
			got, err := os.ReadFile(dsOf(t, ds, f).path("r"))
			if want := onStripe(data2, 0, su, 2, s); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("mirror %d stripe %d: %d bytes (%v), want %d", m, s, len(got), err, len(want))
			}
		}
	}
}

// TestStripeWidthFallback: with fewer servers in service than the width
// asks, a new file stripes over those there are.
func TestStripeWidthFallback(t *testing.T) {
	ds := []*testDS{startDS(t), startDS(t), startDS(t)}
	p := newStripedPool(t, 1, 0, 1<<20, ds...)
	ds[2].stop()
	waitFor(t, "the stopped server out of service", func() bool { return len(p.Devices()) == 2 })
	l, err := p.Create(ctxT(t), "w")
	if err != nil || l.Width != 2 || len(l.Mirrors) != 2 {
		t.Fatalf("layout %+v %v, want 2 stripes", l, err)
	}
	ds[1].stop()
	waitFor(t, "a second server out of service", func() bool { return len(p.Devices()) == 1 })
	l, err = p.Create(ctxT(t), "w1")
	if err != nil || l.Width != 0 || l.StripeUnit != 0 || len(l.Mirrors) != 1 {
		t.Fatalf("layout %+v %v, want one data file", l, err)
	}
}

func TestCheckStriping(t *testing.T) {
	three := []ServerConfig{{Addr: "a:1"}, {Addr: "b:1"}, {Addr: "c:1"}}
	for _, c := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{Mirrors: 1, Servers: three}, true},
		{Config{Mirrors: 1, Servers: three, StripeUnit: 1 << 20}, true},
		{Config{Mirrors: 1, Servers: three, StripeUnit: 1 << 20, Width: 3}, true},
		{Config{Mirrors: 1, Servers: three, Width: 2}, false},
		{Config{Mirrors: 1, Servers: three, StripeUnit: 1000}, false},
		{Config{Mirrors: 2, Servers: three, StripeUnit: 1 << 20, Width: 2}, false},
		{Config{Mirrors: 1, Servers: three, StripeUnit: 1 << 20, Width: -1}, false},
	} {
		if err := c.cfg.checkStriping(); (err == nil) != c.ok {
			t.Errorf("%+v: %v", c.cfg, err)
		}
	}
}
