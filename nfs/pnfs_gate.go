package nfs

import (
	"net/netip"
	"sync"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// maxProxiedPerHost bounds the READs, WRITEs and SEEKs one client host may
// have stuck on the data servers through the MDS. A proxied call holds its
// worker for as long as the data server takes (up to dsTimeout while one
// hangs, until the prober takes it out of service), and the io_uring
// engine's workers are a fixed pool of max(8, 4 x cores): without the bound a
// single host could occupy all of them and stall every other host's OPENs and
// WRITEs. The bound bites only while the host's calls make no progress (none
// began from idle or ended for proxyStuckAfter): a client streaming through
// the MDS to healthy data servers keeps as many calls in flight as it likes,
// since NFS4ERR_DELAY costs a Linux client at least 100 ms
// (NFS4_POLL_RETRY_MIN).
const (
	maxProxiedPerHost = 4
	proxyStuckAfter   = time.Second
)

// hostGate counts calls in flight per client host, and when each host's
// calls last made progress.
type hostGate struct {
	mu sync.Mutex
	m  map[netip.Addr]*hostCalls
}

type hostCalls struct {
	n        int
	progress time.Time // the last enter from idle or leave
}

// enter takes a place for a at now; false when a has max calls in flight
// and none of them progressed within proxyStuckAfter.
func (g *hostGate) enter(a netip.Addr, max int, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.m[a]
	if h == nil {
		if g.m == nil {
			g.m = make(map[netip.Addr]*hostCalls)
		}
		h = &hostCalls{progress: now}
		g.m[a] = h
	}
	if h.n >= max && now.Sub(h.progress) > proxyStuckAfter {
		return false
	}
	h.n++
	return true
}

// leave gives back a place enter took.
func (g *hostGate) leave(a netip.Addr, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.m[a]
	if h.n--; h.n <= 0 {
		delete(g.m, a)
		return
	}
	h.progress = now
}

// proxied runs a proxied call (pnfs_proxy.go) within the caller's host's
// share of the workers: NFS4ERR_DELAY when the host has maxProxiedPerHost
// under way and stuck.
func (c *compound) proxied(call func() nfs4.Status) nfs4.Status {
	g := &c.s.mds.proxyGate
	a := c.conn.addr
	if !g.enter(a, maxProxiedPerHost, time.Now()) {
		c.s.mds.proxyDelayed.Add(1)
		return nfs4.ErrDelay
	}
	defer func() { g.leave(a, time.Now()) }()
	return call()
}
