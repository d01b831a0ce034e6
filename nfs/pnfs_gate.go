package nfs

import (
	"net/netip"
	"sync"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// maxProxiedPerHost bounds the READs, WRITEs and SEEKs one client host may
// have waiting on the data servers through the MDS at once. A proxied call
// holds its worker for as long as the data server takes (up to dsTimeout
// while one hangs, until the prober takes it out of service), and the io_uring
// engine's workers are a fixed pool of max(8, 4 x cores): without the bound a
// single host could occupy all of them and stall every other host's OPENs and
// WRITEs. Past it the host is told NFS4ERR_DELAY and retries.
const maxProxiedPerHost = 4

// hostGate counts calls in flight per client host.
type hostGate struct {
	mu sync.Mutex
	n  map[netip.Addr]int
}

// enter takes a place for a, false when a has max calls in flight.
func (g *hostGate) enter(a netip.Addr, max int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n[a] >= max {
		return false
	}
	if g.n == nil {
		g.n = make(map[netip.Addr]int)
	}
	g.n[a]++
	return true
}

// leave gives back a place enter took.
func (g *hostGate) leave(a netip.Addr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n[a]--; g.n[a] <= 0 {
		delete(g.n, a)
	}
}

// proxied runs a proxied call (pnfs_proxy.go) within the caller's host's
// share of the workers: NFS4ERR_DELAY when the host has maxProxiedPerHost
// under way.
func (c *compound) proxied(call func() nfs4.Status) nfs4.Status {
	g := &c.s.mds.proxyGate
	a := c.conn.addr
	if !g.enter(a, maxProxiedPerHost) {
		c.s.mds.proxyDelayed.Add(1)
		return nfs4.ErrDelay
	}
	defer g.leave(a)
	return call()
}
