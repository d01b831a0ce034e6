package cluster

import (
	"errors"
	"testing"
	"time"
)

// TestStandbyTakesOver: a second server waits while the first holds the
// role, wins once the first stops renewing (a crash), starts the next
// grace epoch with the first's as the recovery epoch, and reads what the
// first shared: the handle key, the client list and the layout ledger.
// The first's writes are refused from then on.
func TestStandbyTakesOver(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	ctx := ctxT(t)
	a, err := c.Stand(ctx, "mds-a", 2)
	if err != nil {
		t.Fatal(err)
	}
	if cur, rec, err := a.BeginGrace(ctx); err != nil || cur != 1 || rec != 0 {
		t.Fatalf("first epoch: %d %d %v", cur, rec, err)
	}
	key, err := c.HandleKey(ctx, nil)
	if err != nil || len(key) != 32 {
		t.Fatalf("handle key: %x %v", key, err)
	}
	seed := make([]byte, 32)
	seed[0] = 1
	if k2, err := c.HandleKey(ctx, seed); err != nil || string(k2) != string(key) {
		t.Fatalf("second HandleKey: %x %v, want the first %x", k2, err, key)
	}
	if err := a.ClientRecords("").Save([]byte("list-a")); err != nil {
		t.Fatal(err)
	}
	la := a.Ledger()
	for _, e := range []struct {
		held  bool
		owner string
		fh    string
	}{{true, "client-1", "fh1"}, {true, "client-2", "fh2"}, {true, "client-1", "fh3"}, {false, "client-2", "fh2"}} {
		f := la.Released
		if e.held {
			f = la.Held
		}
		if err := f(e.owner, []byte(e.fh)); err != nil {
			t.Fatal(err)
		}
	}

	won := make(chan *Standing, 1)
	go func() {
		b, err := c.Stand(ctx, "mds-b", 2)
		if err != nil {
			t.Error(err)
		}
		won <- b
	}()
	select {
	case <-won:
		t.Fatal("the standby won while the first holds the role")
	case <-time.After(time.Second):
	}
	if v, _, _ := c.Leader(ctx); v != "mds-a" {
		t.Fatalf("leader %q", v)
	}
	a.abandon()
	start := time.Now()
	b := <-won
	if b == nil {
		t.FailNow()
	}
	defer b.Resign(ctx)
	t.Logf("standby won %v after the first stopped renewing (TTL 2s)", time.Since(start).Round(10*time.Millisecond))
	if v, _, _ := c.Leader(ctx); v != "mds-b" {
		t.Fatalf("leader %q, want mds-b", v)
	}
	cur, rec, err := b.BeginGrace(ctx)
	if err != nil || cur != 2 || rec != 1 {
		t.Fatalf("takeover epoch: %d %d %v", cur, rec, err)
	}
	if b.Epoch() != 2 {
		t.Fatalf("Epoch %d", b.Epoch())
	}
	if got, err := b.ClientRecords("").Load(); err != nil || string(got) != "list-a" {
		t.Fatalf("client list after takeover: %q %v", got, err)
	}
	lb := b.Ledger()
	prev, err := lb.Previous(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(prev) != 1 || len(prev["client-1"]) != 2 {
		t.Fatalf("previous ledger %q", prev)
	}
	if err := lb.Held("client-3", []byte("fh9")); err != nil {
		t.Fatal(err)
	}
	// The deposed server's writes are refused.
	if err := a.ClientRecords("").Save([]byte("stale")); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("deposed Save: %v", err)
	}
	if err := la.Held("client-1", []byte("fh4")); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("deposed ledger write: %v", err)
	}
	if got, _ := b.ClientRecords("").Load(); string(got) != "list-a" {
		t.Fatalf("client list clobbered: %q", got)
	}
	if err := lb.ForgetPrevious(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.EndGrace(ctx); err != nil {
		t.Fatal(err)
	}
	if cur, rec, err := c.Epochs(ctx); cur != 2 || rec != 0 || err != nil {
		t.Fatalf("epochs after grace: %d %d %v", cur, rec, err)
	}
	// A third server sees only the second's ledger.
	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := c.Stand(ctx, "mds-d", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Resign(ctx)
	if cur, rec, err := d.BeginGrace(ctx); cur != 3 || rec != 2 || err != nil {
		t.Fatalf("third epoch: %d %d %v", cur, rec, err)
	}
	if prev, err := d.Ledger().Previous(ctx); err != nil || len(prev) != 1 || string(prev["client-3"][0]) != "fh9" {
		t.Fatalf("third server's previous ledger %q %v", prev, err)
	}
}

// TestSplitBrain: a server that stops renewing (frozen, cut off) knows it
// has lost the role before the standby can win it: its Valid turns false
// and Done closes first, by the TTL ordering.
func TestSplitBrain(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	ctx := ctxT(t)
	a, err := c.Stand(ctx, "mds-a", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Valid() || a.ValidFor() <= time.Second || a.ValidFor() > 2*time.Second {
		t.Fatalf("valid %v for %v after winning", a.Valid(), a.ValidFor())
	}
	won := make(chan time.Time, 1)
	go func() {
		b, err := c.Stand(ctx, "mds-b", 2)
		if err != nil {
			t.Error(err)
			won <- time.Time{}
			return
		}
		won <- time.Now()
		b.Resign(ctx)
	}()
	time.Sleep(500 * time.Millisecond)
	a.abandon()
	stop := time.Now()
	var invalid time.Time
	for invalid.IsZero() {
		if !a.Valid() {
			invalid = time.Now()
		}
		time.Sleep(2 * time.Millisecond)
	}
	select {
	case <-a.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed once the lease is no longer valid")
	}
	at := <-won
	if at.IsZero() {
		t.FailNow()
	}
	t.Logf("first invalid %v after it stopped renewing, standby won %v after", invalid.Sub(stop).Round(time.Millisecond), at.Sub(stop).Round(time.Millisecond))
	if !invalid.Before(at) {
		t.Fatalf("the standby won at %v, before the first server knew it lost the role (%v)", at, invalid)
	}
	if a.Valid() || a.ValidFor() != 0 {
		t.Fatal("valid again")
	}
}
