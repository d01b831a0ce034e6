package nfs

import (
	"net/netip"
	"testing"
)

// TestFairQueues: a flooding address pushes out its own oldest keys, not a
// quiet one's; a newcomer gets room from the address holding the most;
// the total never passes max; remove and popBig keep the count.
func TestFairQueues(t *testing.T) {
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")
	f := fairQueues[int]{max: 100}
	held := map[int]bool{}
	push := func(addr netip.Addr, k int) {
		if out, ok := f.push(addr, k); ok {
			if !held[out] {
				t.Fatalf("pushed out %d, not held", out)
			}
			delete(held, out)
		}
		held[k] = true
		if f.n != len(held) || f.n > f.max {
			t.Fatalf("n %d, held %d, max %d", f.n, len(held), f.max)
		}
	}
	for i := 0; i < 20; i++ {
		push(b, 1000+i)
	}
	for i := 0; i < 1000; i++ {
		push(a, i)
	}
	for i := 0; i < 20; i++ {
		if !held[1000+i] {
			t.Fatalf("the quiet address lost key %d to the flooding one", 1000+i)
		}
	}
	if !held[999] || held[0] {
		t.Fatalf("the flooding address kept its oldest, or lost its newest")
	}
	// A third address: a's queue gives way, until c's is the longest.
	for i := 0; i < 60; i++ {
		push(c, 2000+i)
	}
	if len(f.by[c].keys) != 41 || len(f.by[b].keys) != 20 || len(f.by[a].keys) != 39 || f.n != 100 {
		t.Fatalf("c %d, b %d, a %d keys", len(f.by[c].keys), len(f.by[b].keys), len(f.by[a].keys))
	}
	f.remove(b, 1005)
	delete(held, 1005)
	if f.n != 99 || len(f.by[b].keys) != 19 {
		t.Fatalf("remove: n %d, b %d", f.n, len(f.by[b].keys))
	}
	for f.n > 0 {
		if _, ok := f.popBig(); !ok {
			t.Fatalf("popBig failed with %d held", f.n)
		}
	}
	if _, ok := f.popBig(); ok || len(f.by) != 0 {
		t.Fatalf("popBig of nothing, %d queues", len(f.by))
	}
}
