package cluster

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

func open(t *testing.T, dir string) *Cluster {
	t.Helper()
	c, err := Open(ctxT(t), Options{StateDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestEmbeddedRestart: what one run of the embedded etcd stored, the next
// run on the same state directory reads back; the synthetic-id counter
// never hands out a block twice, across restarts too.
func TestEmbeddedRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t)
	c := open(t, dir)
	if !c.Embedded() {
		t.Fatal("not embedded")
	}
	if err := c.Put(ctx, "k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := c.Get(ctx, "k"); err != nil || !ok || string(v) != "v1" {
		t.Fatalf("Get: %q %v %v", v, ok, err)
	}
	if _, ok, err := c.Get(ctx, "missing"); ok || err != nil {
		t.Fatalf("Get(missing): %v %v", ok, err)
	}
	id := pnfs.ServerConfig{Addr: "127.0.0.1:2049", Path: "/d"}.ID()
	rec := pnfs.ServerRecord{Addr: "127.0.0.1:2049", Path: "/d", State: "in-service", Since: time.Unix(1700000000, 0).UTC()}
	if err := c.PutServer(ctx, id, rec); err != nil {
		t.Fatal(err)
	}
	first, err := c.ReserveIDs(ctx, 1024)
	if err != nil || first != pnfs.FirstSyntheticID {
		t.Fatalf("first reservation: %#x %v", first, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c = open(t, dir)
	defer c.Close()
	if v, ok, err := c.Get(ctx, "k"); err != nil || !ok || string(v) != "v1" {
		t.Fatalf("Get after restart: %q %v %v", v, ok, err)
	}
	servers, err := c.Servers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := servers[hexID(id)]; got != rec {
		t.Fatalf("registry after restart: %+v, want %+v", servers, rec)
	}
	second, err := c.ReserveIDs(ctx, 10)
	if err != nil || second != pnfs.FirstSyntheticID+1024 {
		t.Fatalf("reservation after restart: %#x %v", second, err)
	}
}

func hexID(id nfs.DeviceID) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for _, x := range id {
		b.WriteByte(digits[x>>4])
		b.WriteByte(digits[x&15])
	}
	return b.String()
}

// TestReserveIDsConcurrent: reservations racing from many goroutines
// never overlap.
func TestReserveIDsConcurrent(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	ctx := ctxT(t)
	got := make(chan uint32, 40)
	for range 40 {
		go func() {
			first, err := c.ReserveIDs(ctx, 100)
			if err != nil {
				t.Error(err)
			}
			got <- first
		}()
	}
	seen := map[uint32]bool{}
	for range 40 {
		f := <-got
		if seen[f] || (f-pnfs.FirstSyntheticID)%100 != 0 {
			t.Fatalf("block %#x given twice or misaligned", f)
		}
		seen[f] = true
	}
}

// TestTwoOpensFail: a second server on the same state directory fails at
// once, saying why, instead of waiting on etcd's database lock.
func TestTwoOpensFail(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	defer c.Close()
	start := time.Now()
	_, err := Open(ctxT(t), Options{StateDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "in use by another server") {
		t.Fatalf("second Open: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second Open took %v", d)
	}
}

// TestExternalEndpoints: Open with endpoints uses them (here the embedded
// etcd of another Cluster), and a dead endpoint fails Open.
func TestExternalEndpoints(t *testing.T) {
	emb := open(t, t.TempDir())
	defer emb.Close()
	ctx := ctxT(t)
	// The embedded etcd serves a unix socket only (not a port every local
	// user could write to), so its endpoint goes in as Open takes it.
	ep := emb.cli.Endpoints()[0]
	if !strings.HasPrefix(ep, "unix://") {
		t.Fatalf("embedded etcd's endpoint %q is not a unix socket", ep)
	}
	if fi, err := os.Stat(strings.TrimPrefix(ep, "unix://")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the embedded etcd's socket: %v %v, want mode 0600", fi, err)
	}
	c, err := Open(ctx, Options{Endpoints: []string{ep}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Embedded() {
		t.Error("external connection says embedded")
	}
	if err := c.Put(ctx, "x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := emb.Get(ctx, "x"); string(v) != "1" {
		t.Errorf("value through the other client: %q", v)
	}
	if _, err := Open(ctx, Options{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: 500 * time.Millisecond}); err == nil {
		t.Error("Open with a dead endpoint succeeded")
	}
	for _, bad := range []string{"http://x:1", "etcd://x", "etcd://"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) succeeded", bad)
		}
	}
}

// TestElection: the first campaigner leads; a second waits until the
// first resigns.
func TestElection(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	ctx := ctxT(t)
	if _, found, err := c.Leader(ctx); found || err != nil {
		t.Fatalf("leader before any campaign: %v %v", found, err)
	}
	a, err := c.Campaign(ctx, "mds-a", 5)
	if err != nil {
		t.Fatal(err)
	}
	won := make(chan *Leadership, 1)
	go func() {
		b, err := c.Campaign(ctx, "mds-b", 5)
		if err != nil {
			t.Error(err)
		}
		won <- b
	}()
	time.Sleep(200 * time.Millisecond)
	if v, _, _ := c.Leader(ctx); v != "mds-a" {
		t.Fatalf("leader %q, want mds-a", v)
	}
	select {
	case <-won:
		t.Fatal("second campaign won while the first holds the role")
	default:
	}
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	b := <-won
	if v, _, _ := c.Leader(ctx); v != "mds-b" {
		t.Fatalf("leader %q, want mds-b", v)
	}
	b.Resign(ctx)
}

// TestClientRecords: the nfs client list kept in etcd reads back, and an
// empty cluster starts from the state directory's clients file.
func TestClientRecords(t *testing.T) {
	dir := t.TempDir()
	seed := dir + "/clients"
	if err := os.WriteFile(seed, []byte("nfsd-uring clients 1\n0 6162\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := open(t, dir)
	defer c.Close()
	s := c.ClientRecords(seed)
	if b, err := s.Load(); err != nil || string(b) != "nfsd-uring clients 1\n0 6162\n" {
		t.Fatalf("Load from the seed file: %q %v", b, err)
	}
	if err := s.Save([]byte("nfsd-uring clients 1\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Load(); err != nil || string(b) != "nfsd-uring clients 1\n" {
		t.Fatalf("Load after Save: %q %v", b, err)
	}
	if b, err := c.ClientRecords("").Load(); err != nil || b == nil {
		t.Fatalf("Load without a seed: %q %v", b, err)
	}
}

// TestFileStates: a data file's pending work round-trips through etcd,
// and nil removes it.
func TestFileStates(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	ctx := ctxT(t)
	id := pnfs.ServerConfig{Addr: "127.0.0.1:2049", Path: "/d"}.ID()
	st := &pnfs.FileState{Stale: true, Fence: true, UID: 0x40000007, GID: 0x40000007, FH: []byte{1, 2, 3},
		Mirrors: []pnfs.MirrorRecord{{Device: id[:], FH: []byte{4, 5}}, {Device: make([]byte, 16), FH: []byte{6}}}}
	if err := c.PutFileState(ctx, id, "a name", st); err != nil {
		t.Fatal(err)
	}
	if err := c.PutFileState(ctx, id, "b", &pnfs.FileState{Remove: true}); err != nil {
		t.Fatal(err)
	}
	all, err := c.FileStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := all[id]["a name"]; got.UID != st.UID || !got.Stale || !got.Fence || string(got.FH) != "\x01\x02\x03" || !all[id]["b"].Remove ||
		len(got.Mirrors) != 2 || string(got.Mirrors[0].Device) != string(id[:]) || string(got.Mirrors[1].FH) != "\x06" {
		t.Fatalf("file states %+v", all)
	}
	if err := c.PutFileState(ctx, id, "a name", nil); err != nil {
		t.Fatal(err)
	}
	if all, _ = c.FileStates(ctx); len(all[id]) != 1 {
		t.Fatalf("after clearing: %+v", all)
	}
}

// TestOrphans: a removed file's layout recorded with PutOrphan comes
// back whole from Orphans until it is forgotten.
func TestOrphans(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	ctx := ctxT(t)
	id := pnfs.ServerConfig{Addr: "127.0.0.1:2049", Path: "/d"}.ID()
	l := nfs.FileLayout{Name: "803-2a-65f0.1", Mirrors: []nfs.DSFile{{Device: id, FH: []byte{9, 8}}}, UID: 0x40000001, GID: 0x40000001}
	if err := c.PutOrphan(ctx, l.Name, &l); err != nil {
		t.Fatal(err)
	}
	got, err := c.Orphans(ctx)
	if err != nil || len(got) != 1 || got[0].Name != l.Name || got[0].Mirrors[0].Device != id || string(got[0].Mirrors[0].FH) != "\x09\x08" || got[0].UID != l.UID {
		t.Fatalf("orphans %+v (%v)", got, err)
	}
	if err := c.PutOrphan(ctx, l.Name, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ = c.Orphans(ctx); len(got) != 0 {
		t.Fatalf("after forgetting: %+v", got)
	}
}
