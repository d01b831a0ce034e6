package nfs

import (
	"sync"
)

// fdCache bounds the descriptors an export keeps open. Every file a client
// reads or writes gets cached descriptors (opening per request would cost
// more than the read); without a bound, a client walking millions of files
// would exhaust the process's descriptors and hurt everyone. When over the
// limit, a clock sweep closes the descriptors of nodes not used since the
// last sweep and not pinned by a reply in flight; they reopen by path on
// next use.
type fdCache struct {
	max int

	mu    sync.Mutex
	nodes []*node // nodes holding descriptors
	hand  int     // clock position
}

// defaultMaxOpenFiles is the per-export bound on files with open
// descriptors.
const defaultMaxOpenFiles = 8192

// opened records that n now holds descriptors. Called with n.mu held.
func (c *fdCache) opened(n *node) {
	n.used.Store(true)
	if n.cached {
		return
	}
	n.cached = true
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	over := len(c.nodes) > c.max
	c.mu.Unlock()
	if over {
		// Sweep without holding n.mu: the sweep locks other nodes.
		go c.sweep()
	}
}

// sweep closes descriptors until the cache is back under its bound (or a
// full turn of the clock found nothing to close).
func (c *fdCache) sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for turns := 0; len(c.nodes) > c.max*3/4 && turns < 2*len(c.nodes); turns++ {
		if c.hand >= len(c.nodes) {
			c.hand = 0
		}
		n := c.nodes[c.hand]
		if n.used.Swap(false) || !n.tryClose() {
			c.hand++
			continue
		}
		last := len(c.nodes) - 1
		c.nodes[c.hand] = c.nodes[last]
		c.nodes[last] = nil
		c.nodes = c.nodes[:last]
	}
}

// tryClose closes n's descriptors unless a reply is using them.
func (n *node) tryClose() bool {
	if !n.mu.TryLock() {
		return false
	}
	defer n.mu.Unlock()
	if n.leased() {
		return false // a delegation's lease is on them (lease.go)
	}
	if !n.closeUnpinnedLocked() {
		return false
	}
	n.cached = false
	return true
}
