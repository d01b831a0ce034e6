package nfs

import (
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
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
		return false // a delegation's lease is on them (vfs_lease.go)
	}
	if !n.closeUnpinnedLocked() {
		return false
	}
	n.cached = false
	return true
}

// defaultUnlinkSweep is how often the cached descriptors are checked for
// files removed behind the server's back (Config.UnlinkSweep). One fstat
// per cached file: 8192 of them (defaultMaxOpenFiles) cost a few ms of
// one CPU per pass.
const defaultUnlinkSweep = 2 * time.Second

// sweepUnlinked runs until the server stops. Every interval it drops the
// nodes whose file lost its last link (a local rm, or a REMOVE by another
// client of a file this server still had open) while no open, lock or
// delegation holds it, and closes their descriptors: the kernel then
// frees the inode and its space, and the handle answers NFS4ERR_STALE,
// as knfsd's does (its file cache closes an unlinked inode on the
// fsnotify event, and exportfs_decode_fh then no longer finds it). A file
// some client still has open stays readable and writable through its
// handle until the last CLOSE (POSIX unlink-while-open); the next pass
// after that drops it.
func (s *Server) sweepUnlinked(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			for _, e := range s.table().exports {
				e.fds.dropUnlinked(s)
			}
			s.sweepOrphans() // pnfs_mds.go: data files of removed files
		}
	}
}

// dropUnlinked drops (s.files.drop) every cached node whose file has no
// link left and that no state holds, then takes the dropped nodes whose
// descriptors are closed off the cache's list. The fstats run without the
// cache's lock: opens elsewhere go on meanwhile.
func (c *fdCache) dropUnlinked(s *Server) {
	c.mu.Lock()
	nodes := slices.Clone(c.nodes)
	c.mu.Unlock()
	for _, n := range nodes {
		if !n.dead.Load() && n.unlinked() && !s.state.holds(n) {
			s.files.drop(n)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeDead()
}

// removeDead takes the dropped nodes whose descriptors it can close off
// the list (a pinned node's close at its last unpin, and it leaves at a
// later pass). The clock hand stays on the node it pointed at, so the
// sweep goes on where it was instead of starting over every pass.
// Called with c.mu held.
func (c *fdCache) removeDead() {
	kept, hand := 0, c.hand
	for i, n := range c.nodes {
		if n.dead.Load() && n.tryClose() {
			if i < c.hand {
				hand--
			}
			continue
		}
		c.nodes[kept] = n
		kept++
	}
	clear(c.nodes[kept:])
	c.nodes = c.nodes[:kept]
	c.hand = hand
}

// unlinked reports whether a descriptor n keeps shows no link left to its
// file. False when n keeps none: then nothing holds the inode, and a use
// of the handle finds the path gone (ENOENT, answered STALE).
func (n *node) unlinked() bool {
	if n.exp == nil || n.isExportRoot() {
		return false
	}
	n.pin()
	defer n.unpin()
	fd, ok := n.pub.read.get()
	if !ok || fd < 0 {
		if fd, ok = n.pub.path.get(); !ok || fd < 0 {
			return false
		}
	}
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Nlink == 0
}

// removedUnheld reports whether n, whose attributes are st, is a file
// with no link left that no open, lock or delegation holds, and drops it
// if so: its handle is stale from now on (see sweepUnlinked), and its
// descriptors close without waiting for the next sweep.
func (s *Server) removedUnheld(n *node, st *unix.Stat_t) bool {
	if st.Nlink != 0 || n.exp == nil || s.state.holds(n) {
		return false
	}
	s.files.drop(n)
	return true
}
