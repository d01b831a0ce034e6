package nfs

import (
	"net/netip"
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
// clients (state_courtesy.go) for up to courtesyMax. Called periodically.
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

// roomForClientLocked reports whether one more client record may be made
// for a client at addr, first dropping records to make room (issue 21: a
// full table of one host's records used to refuse every other host):
//
//   - an address at its share (clientShareLocked; there is none while the
//     table is less than half full) makes room only among its own
//     records, an unconfirmed one first, then one whose lease ran out;
//     failing that it is refused, and only it;
//   - a full table drops an unconfirmed record first, whatever its age
//     (RFC 8881 section 18.35.4 lets the server drop them at any time),
//     then the clients whose lease ran out, courtesy clients included.
//
// What is still full answers NFS4ERR_DELAY, as knfsd does when it is over
// its client limit: the client retries once leases run out.
func (t *stateTable) roomForClientLocked(addr netip.Addr) bool {
	now := time.Now()
	if t.useOf(addr).clients >= t.clientShareLocked(addr) {
		v := t.victimLocked(now, func(c *client) bool { return c.addr == addr })
		t.tidyUse(addr)
		if v == nil {
			t.warnShareLocked(now, addr)
			return false
		}
		t.dropVictimLocked(v)
	}
	if len(t.clients) < t.s.cfg.MaxClients {
		return true
	}
	if v := t.victimLocked(now, func(c *client) bool { return !c.confirmed }); v != nil {
		t.dropVictimLocked(v)
		return true
	}
	// One lease of silence, not the periodic reaper's two: the table is
	// full, and a client that silent has lost its lease (RFC 8881 section
	// 8.3).
	t.expireLocked(now, 1, true)
	return len(t.clients) < t.s.cfg.MaxClients
}

// warnShareLocked logs, at most once a minute, that an address's clients
// are refused for holding their share: behind NAT many real clients may
// share one address, and --max-clients-per-addr is then the knob.
func (t *stateTable) warnShareLocked(now time.Time, addr netip.Addr) {
	if now.Sub(t.shareWarned) < time.Minute {
		return
	}
	t.shareWarned = now
	t.s.log.Warn("an address holds its share of client records: its new clients get NFS4ERR_DELAY (see --max-clients-per-addr)", "addr", addr, "records", t.useOf(addr).clients)
}

// clientShareLocked is how many client records the clients at addr may
// hold. While the table is less than half full there is no share: one
// address (a test suite, many clients behind one NAT) may use the quiet
// half. Past that it is MaxClientsPerAddress, by default an eighth of the
// table and at least 16, so one host can take at most half the table and
// another host's newcomer always finds room (issue 21). An address no
// export admits gets one record, whatever the table: its client can do
// nothing but cost a record.
func (t *stateTable) clientShareLocked(addr netip.Addr) int {
	cfg := &t.s.cfg
	switch {
	case !t.s.admitsAddr(addr):
		return 1
	case len(t.clients) < cfg.MaxClients/2:
		return cfg.MaxClients
	case cfg.MaxClientsPerAddress > 0:
		return cfg.MaxClientsPerAddress
	}
	return max(16, cfg.MaxClients/8)
}

// victimLocked picks, among the records that match, the one to drop for a
// newcomer: an unconfirmed record before one whose lease ran out
// (courtesy clients included); among those, the one whose address holds
// the most records, then the longest silent. nil when every match is a
// live client.
func (t *stateTable) victimLocked(now time.Time, match func(*client) bool) *client {
	lease := time.Duration(t.s.cfg.LeaseTime) * time.Second
	var best *client
	var bestRank victimRank
	for _, c := range t.clients {
		if !match(c) || c.confirmed && now.Sub(time.Unix(0, c.renewed.Load())) <= lease {
			continue
		}
		r := victimRank{c.confirmed, t.useOf(c.addr).clients, c.renewed.Load()}
		if best == nil || r.before(bestRank) {
			best, bestRank = c, r
		}
	}
	return best
}

// victimRank orders the records victimLocked may drop.
type victimRank struct {
	confirmed bool
	addrCount int   // records held by the record's address
	renewed   int64 // unix nanoseconds
}

func (a victimRank) before(b victimRank) bool {
	switch {
	case a.confirmed != b.confirmed:
		return !a.confirmed
	case a.addrCount != b.addrCount:
		return a.addrCount > b.addrCount
	}
	return a.renewed < b.renewed
}

// dropVictimLocked drops a record victimLocked chose.
func (t *stateTable) dropVictimLocked(c *client) {
	if c.confirmed {
		t.s.log.Info("lease expired: the client table needs its room", "clientid", c.id)
	} else {
		// Debug: a flood of EXCHANGE_IDs must not flood the log.
		t.s.log.Debug("unconfirmed client dropped: the client table needs its room", "clientid", c.id)
	}
	t.removeClientLocked(c)
}

// useOf returns what the clients at addr hold, making the entry.
func (t *stateTable) useOf(addr netip.Addr) *addrUse {
	u := t.byAddr[addr]
	if u == nil {
		u = &addrUse{}
		t.byAddr[addr] = u
	}
	return u
}

// tidyUse forgets addr once its clients hold nothing, so that the map
// grows with the clients, not with every address ever seen.
func (t *stateTable) tidyUse(addr netip.Addr) {
	if u := t.byAddr[addr]; u != nil && u.clients <= 0 && u.drc <= 0 {
		delete(t.byAddr, addr)
	}
}

// hasState reports whether a client holds sessions or opens, which makes
// its record worth protecting from another principal (RFC 8881 section
// 18.35.5, NFS4ERR_CLID_INUSE).
func (c *client) hasState() bool { return len(c.sessions) > 0 || len(c.opens) > 0 }

// reserveSlotsLocked reserves reply cache memory for up to want slots
// caching up to perSlot bytes each, for a session of a client at addr,
// and returns how many it got: fewer when the server-wide budget or, once
// half of it is spent, addr's share of it (drcShare) runs low (RFC 8881
// section 18.36.3 lets the server lower ca_maxrequests), and never none:
// as knfsd's nfsd4_get_drc_mem, "one slot is better than failure", even
// when that one slot goes over the budget (issue 21: a spent budget used
// to answer every CREATE_SESSION NFS4ERR_DELAY). What that can overspend
// is one slot per session, so the client and session caps bound it.
func (t *stateTable) reserveSlotsLocked(addr netip.Addr, want, perSlot uint32) uint32 {
	n := min(int64(want), t.drcLeftLocked(addr)/slotsCost(1, perSlot))
	if n <= 0 && t.dropCourtesyLocked(time.Now()) > 0 {
		// Courtesy clients' sessions give their reply caches back.
		n = min(int64(want), t.drcLeftLocked(addr)/slotsCost(1, perSlot))
	}
	n = max(n, 1)
	cost := slotsCost(uint32(n), perSlot)
	t.drcUsed += cost
	t.useOf(addr).drc += cost
	return uint32(n)
}

// drcLeftLocked is the reply cache memory a new session of a client at
// addr may still reserve: what is left of the budget and, once half of it
// is spent, of addr's share (as with client records, one address may use
// the quiet half; then another host's sessions find the rest).
func (t *stateTable) drcLeftLocked(addr netip.Addr) int64 {
	total := t.s.cfg.ReplyCacheMemory
	left := total - t.drcUsed
	if t.drcUsed >= total/2 {
		left = min(left, t.drcShare()-t.useOf(addr).drc)
	}
	return max(left, 0)
}

// drcShare is the reply cache memory the sessions of one address may
// reserve once half the budget is spent: an eighth of the budget, or one
// session of the most slots at the largest cached reply when that is
// more (small budgets).
func (t *stateTable) drcShare() int64 {
	cfg := &t.s.cfg
	return max(cfg.ReplyCacheMemory/8, slotsCost(uint32(cfg.Slots), uint32(cfg.MaxCachedReply)))
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
	t.useOf(sess.client.addr).drc -= sess.drc
	t.tidyUse(sess.client.addr)
	sess.drc = 0
}
