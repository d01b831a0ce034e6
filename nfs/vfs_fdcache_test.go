package nfs

import (
	"bytes"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Reading more files than the fd cache holds keeps descriptors bounded and
// every read still correct.
func TestFDCacheBound(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.s.table().exports[0].fds.max = 8
	for i := 0; i < 40; i++ {
		name := "f" + itoa(i)
		h.write(name, bytes.Repeat([]byte{byte(i)}, 100))
		if st := h.readWith(h.lookupFH(name), nfs4.AnonStateid); st != nfs4.OK {
			t.Fatalf("read %s: %d", name, st)
		}
		h.s.table().exports[0].fds.sweep()
	}
	fc := &h.s.table().exports[0].fds
	fc.mu.Lock()
	n := len(fc.nodes)
	fc.mu.Unlock()
	if n > 8 {
		t.Fatalf("%d files hold descriptors, bound 8", n)
	}
	// A file whose descriptor was closed reads again, reopened by path.
	if st := h.readWith(h.lookupFH("f0"), nfs4.AnonStateid); st != nfs4.OK {
		t.Fatalf("reread: %d", st)
	}
}

// The node table forgets idle nodes past its bound; their handles still
// resolve.
func TestNodeEviction(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.s.files.max = 16
	var fhs [][]byte
	for i := 0; i < 64; i++ {
		name := "n" + itoa(i)
		h.write(name, []byte(name))
		fhs = append(fhs, h.lookupFH(name))
		for h.s.files.evicting.Load() {
		}
	}
	h.s.files.mu.RLock()
	n := h.s.files.nodes.len()
	h.s.files.mu.RUnlock()
	if n > 17 {
		t.Fatalf("%d nodes kept, bound 16", n)
	}
	if st := h.readWith(fhs[0], nfs4.AnonStateid); st != nfs4.OK {
		t.Fatalf("read through an evicted node's handle: %d", st)
	}
}

// TestRemoveDeadKeepsHand: the unlink sweep's removals leave the clock
// hand on the node it pointed at (it used to go back to the start every
// 2 s, so the nodes at the front were the only ones the sweep reached).
func TestRemoveDeadKeepsHand(t *testing.T) {
	c := &fdCache{max: 10}
	for i := 0; i < 6; i++ {
		n := &node{}
		n.dead.Store(i == 0 || i == 2 || i == 5)
		c.nodes = append(c.nodes, n)
	}
	at := c.nodes[3]
	c.hand = 3
	c.removeDead()
	if len(c.nodes) != 3 {
		t.Fatalf("%d nodes left, want 3", len(c.nodes))
	}
	if c.nodes[c.hand] != at {
		t.Fatalf("hand at %d, not on the node it pointed at", c.hand)
	}
}
