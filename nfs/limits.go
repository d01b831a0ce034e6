package nfs

import (
	"time"
)

// Default caps on what one client (or all of them) may make the server
// keep. Every per-client resource has one, so that no client can grow the
// server's memory without bound (issue 8.8: 20k CREATE_SESSION grew RSS by
// 85 MB, 20k EXCHANGE_ID by 28 MB, before these caps).
const (
	// defaultMaxClients: client records cost about 1.4 KB each (28 MB per
	// 20k measured), so 1024 is under 2 MB with room for a large site.
	defaultMaxClients = 1024
	// defaultMaxSessions: the Linux client keeps one session per server
	// and makes a second only while it recovers.
	defaultMaxSessions = 16
	// defaultMaxOpens: open and lock stateids per client, about 200 bytes
	// each.
	defaultMaxOpens = 8192
	// defaultMaxLockRanges: byte-range locks held per client.
	defaultMaxLockRanges = 8192
	// defaultMaxCachedReply is the ca_maxresponsesize_cached offered: the
	// most a slot keeps of a reply, file data excluded (reads are redone
	// on a retransmit). 16 KiB x 128 slots bounds a session's reply cache
	// at 2 MiB.
	defaultMaxCachedReply = 16 << 10
	// defaultReplyCacheMemory bounds the reply caches of all sessions
	// together, as knfsd's nfsd_drc_max_mem does: 64 sessions with 128
	// full slots each, after which new sessions get fewer slots.
	defaultReplyCacheMemory = 128 << 20
	// slotOverhead is what a slot costs besides its cached reply.
	slotOverhead = 256
	// unconfirmedTTL: a client record no CREATE_SESSION confirmed goes
	// after this long, far sooner than a lease (RFC 8881 section 18.35.4
	// lets the server drop unconfirmed records at any time).
	unconfirmedTTL = 15 * time.Second
)

// applyLimitDefaults fills the caps a Config leaves at zero.
func (cfg *Config) applyLimitDefaults() {
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = defaultMaxClients
	}
	if cfg.MaxSessionsPerClient <= 0 {
		cfg.MaxSessionsPerClient = defaultMaxSessions
	}
	if cfg.MaxOpensPerClient <= 0 {
		cfg.MaxOpensPerClient = defaultMaxOpens
	}
	if cfg.MaxLockRangesPerClient <= 0 {
		cfg.MaxLockRangesPerClient = defaultMaxLockRanges
	}
	if cfg.MaxCachedReply <= 0 {
		cfg.MaxCachedReply = defaultMaxCachedReply
	}
	if cfg.ReplyCacheMemory <= 0 {
		cfg.ReplyCacheMemory = defaultReplyCacheMemory
	}
}

// expire drops clients whose lease ran out, and unconfirmed clients older
// than unconfirmedTTL. Clients holding opens or locks stay as courtesy
// clients (courteous.go) for up to courtesyMax. Called periodically.
func (t *stateTable) expire(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inGraceLocked() // ends the grace period when its time is up
	t.expireLocked(now, 2, false)
}

// expireLocked drops confirmed clients silent for more than leases leases
// and unconfirmed ones silent for unconfirmedTTL. Courtesy clients go only
// after courtesyMax, or at once when short is set (the server is short of
// room).
func (t *stateTable) expireLocked(now time.Time, leases int, short bool) {
	lease := time.Duration(t.s.cfg.LeaseTime) * time.Second
	for _, c := range t.clients {
		idle := now.Sub(time.Unix(0, c.renewed.Load()))
		switch {
		case !c.confirmed && idle > unconfirmedTTL:
			// Debug: a flood of EXCHANGE_IDs must not flood the log.
			t.s.log.Debug("unconfirmed client dropped", "clientid", c.id)
		case !c.confirmed || idle <= time.Duration(leases)*lease:
			continue
		case t.courtesyLocked(c, now) && !short && idle <= courtesyMax:
			continue
		default:
			t.s.log.Info("lease expired", "clientid", c.id)
		}
		t.removeClientLocked(c)
	}
}

// roomForClientLocked reports whether one more client record may be made,
// first dropping expired ones when the table is full. A full table of live
// clients answers NFS4ERR_DELAY, as knfsd does when it is over its client
// limit: the client retries once leases run out.
func (t *stateTable) roomForClientLocked() bool {
	if len(t.clients) < t.s.cfg.MaxClients {
		return true
	}
	// One lease of silence, not the periodic reaper's two: the table is
	// full, and a client that silent has lost its lease (RFC 8881 section
	// 8.3).
	t.expireLocked(time.Now(), 1, true)
	return len(t.clients) < t.s.cfg.MaxClients
}

// hasState reports whether a client holds sessions or opens, which makes
// its record worth protecting from another principal (RFC 8881 section
// 18.35.5, NFS4ERR_CLID_INUSE).
func (c *client) hasState() bool { return len(c.sessions) > 0 || len(c.opens) > 0 }

// reserveSlotsLocked reserves reply cache memory for up to want slots
// caching up to perSlot bytes each and returns how many it got: fewer when
// the server-wide budget runs low (RFC 8881 section 18.36.3 lets the server
// lower ca_maxrequests), 0 when it is spent (CREATE_SESSION then answers
// NFS4ERR_DELAY, as knfsd does when its DRC memory is used up).
func (t *stateTable) reserveSlotsLocked(want, perSlot uint32) uint32 {
	n := min(int64(want), (t.s.cfg.ReplyCacheMemory-t.drcUsed)/slotsCost(1, perSlot))
	if n <= 0 && t.dropCourtesyLocked(time.Now()) > 0 {
		// Courtesy clients' sessions give their reply caches back.
		n = min(int64(want), (t.s.cfg.ReplyCacheMemory-t.drcUsed)/slotsCost(1, perSlot))
	}
	if n <= 0 {
		return 0
	}
	t.drcUsed += slotsCost(uint32(n), perSlot)
	return uint32(n)
}

// slotsCost is the reply cache memory n slots caching perSlot bytes take.
func slotsCost(n, perSlot uint32) int64 { return int64(n) * (int64(perSlot) + slotOverhead) }

// removeSessionLocked forgets a session and returns its reply cache
// memory to the budget.
func (t *stateTable) removeSessionLocked(sess *session) {
	if t.sessions.get(sess.id) != sess {
		return
	}
	t.sessions.del(sess.id)
	delete(sess.client.sessions, sess.id)
	t.drcUsed -= sess.drc
	sess.drc = 0
}
