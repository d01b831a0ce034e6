package nfs

import (
	"time"
)

// Courteous leases (knfsd since Linux 5.19): a client whose lease ran out
// while it held opens or locks keeps them as a "courtesy client" instead of
// losing them at once. If it comes back (any SEQUENCE renews the lease)
// before anyone needed what it holds, nothing was lost: a laptop waking
// from sleep or a network partition healing costs no state. Only when
// another client's OPEN (share reservation) or LOCK/LOCKT (byte range)
// conflicts with a courtesy client's state is that client expired, its
// state released, and the request granted. Courtesy clients go anyway
// after courtesyMax, and when the client table or the reply cache budget is
// full (state_limits.go), the server's memory bound.

// courtesyMax bounds how long a courtesy client keeps its state: knfsd's
// NFSD_COURTESY_CLIENT_TIMEOUT, 24 hours.
const courtesyMax = 24 * time.Hour

// leaseExpiredLocked reports whether c's lease has run out: it has been
// silent for longer than the lease time (RFC 8881 section 8.3).
func (t *stateTable) leaseExpiredLocked(c *client, now time.Time) bool {
	lease := time.Duration(t.s.cfg.LeaseTime) * time.Second
	return now.Sub(time.Unix(0, c.renewed.Load())) > lease
}

// courtesyLocked reports whether c is a courtesy client: confirmed, lease
// expired, state kept.
func (t *stateTable) courtesyLocked(c *client, now time.Time) bool {
	return c.confirmed && len(c.opens) > 0 && t.leaseExpiredLocked(c, now)
}

// expireCourtesyLocked expires c if it is a courtesy client, releasing
// its state, and reports whether it did.
func (t *stateTable) expireCourtesyLocked(c *client, now time.Time) bool {
	if !t.courtesyLocked(c, now) {
		return false
	}
	t.s.log.Info("courtesy client expired: another client needs its state", "clientid", c.id)
	t.removeClientLocked(c)
	return true
}

// shareConflictLocked reports whether an open of n by open owner key of
// client cl, for access with deny, conflicts with another owner's open
// (RFC 8881 section 9.7). Courtesy clients in the way are expired first.
func (t *stateTable) shareConflictLocked(cl *client, n *node, key openKey, access, deny uint32) bool {
	now := time.Now()
	for {
		var other *openState
		// The owner's own open of the file through another export (another
		// node) is the same owner's: no conflict, as in knfsd, where an
		// owner has one open per file.
		for _, o := range t.peekFileLocked(n).opens {
			if (o.client != cl || o.key.owner != key.owner) && (o.deny&access != 0 || deny&o.access.Load() != 0) {
				other = o
				break
			}
		}
		if other == nil {
			return false
		}
		if !t.expireCourtesyLocked(other.client, now) {
			return true
		}
	}
}

// lockConflictLocked returns a lock on n held by another owner that blocks
// the request, as conflict does, after expiring courtesy clients whose
// locks were in the way.
func (t *stateTable) lockConflictLocked(n *node, cl *client, owner string, start, end uint64, write bool) *lockRange {
	now := time.Now()
	for {
		l := conflict(t.peekFileLocked(n).locks, cl, owner, start, end, write)
		if l == nil || !t.expireCourtesyLocked(l.st.client, now) {
			return l
		}
	}
}

// dropCourtesyLocked expires every courtesy client, when the server needs
// the memory they hold, and returns how many went.
func (t *stateTable) dropCourtesyLocked(now time.Time) int {
	n := 0
	for _, c := range t.clients {
		if t.courtesyLocked(c, now) {
			t.s.log.Info("courtesy client expired: the server is short of room", "clientid", c.id)
			t.removeClientLocked(c)
			n++
		}
	}
	return n
}
