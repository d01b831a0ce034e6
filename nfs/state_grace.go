package nfs

import (
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// The grace period (RFC 8881 section 8.4.2): after a restart, clients that
// held state before it may reclaim their opens (OPEN CLAIM_PREVIOUS) and
// locks (LOCK reclaim=true) while everyone else waits (NFS4ERR_GRACE), so
// no new open or lock can take what a reclaim is entitled to. Which
// clients may reclaim comes from the client list in the state directory
// (state_store.go). As with knfsd, there is no grace period when that list
// is empty, and it ends early once every client on it has sent
// RECLAIM_COMPLETE.

// graceState is the grace period of this boot. Guarded by stateTable.mu.
type graceState struct {
	until time.Time
	// pending are the clients of the previous boot that have not yet sent
	// RECLAIM_COMPLETE; nil once the grace period is over.
	pending map[clientRecord]bool
	// nlm: NLM hosts of the previous boot may reclaim (nlm.go): the grace
	// period runs its full time, as lockd's.
	nlm bool
}

// startGrace begins the grace period for the clients a previous boot
// recorded; called once, before the server serves anything.
func (t *stateTable) startGrace(prev []clientRecord, d time.Duration) {
	if len(prev) == 0 {
		return
	}
	t.grace.pending = make(map[clientRecord]bool, len(prev))
	for _, r := range prev {
		t.grace.pending[r] = true
	}
	t.grace.until = time.Now().Add(d)
	t.s.log.Info("grace period: clients of the previous boot may reclaim their state", "clients", len(prev), "seconds", d.Seconds())
}

// inGraceLocked reports whether the grace period is on, ending it when its
// time is up or no client is left to reclaim.
func (t *stateTable) inGraceLocked() bool {
	if t.grace.pending == nil {
		return false
	}
	if (len(t.grace.pending) > 0 || t.grace.nlm) && time.Now().Before(t.grace.until) {
		return true
	}
	t.s.log.Info("grace period ended", "clients that did not reclaim", len(t.grace.pending))
	// Their records go: a client that missed the grace period has lost
	// its state, and must not reclaim it after a later restart either.
	t.grace.pending = nil
	t.recGen.Add(1)
	return false
}

// mayReclaimLocked says whether cl may reclaim state now, with the error
// knfsd's nfs4_check_open_reclaim gives when not: after its
// RECLAIM_COMPLETE or the grace period, NFS4ERR_NO_GRACE; a client the
// previous boot did not know (or knew under another principal),
// NFS4ERR_RECLAIM_BAD.
func (t *stateTable) mayReclaimLocked(cl *client) nfs4.Status {
	if cl.reclaimDone || !t.inGraceLocked() {
		return nfs4.ErrNoGrace
	}
	if !t.grace.pending[clientRecord{cl.owner, cl.principal}] {
		return nfs4.ErrReclaimBad
	}
	return nfs4.OK
}

// openGrace checks an OPEN of the client against the grace period before
// anything is looked up or created.
func (t *stateTable) openGrace(cl *client, claim uint32) nfs4.Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	if claim == nfs4.ClaimPrevious {
		st := t.mayReclaimLocked(cl)
		if st == nfs4.OK {
			cl.reclaims.opens++
		}
		return st
	}
	// RFC 8881 section 18.51.3 (and knfsd's nfsd4_open): a client gets no
	// new state before its RECLAIM_COMPLETE, grace period or not.
	if !cl.reclaimDone || t.inGraceLocked() {
		return nfs4.ErrGrace
	}
	return nfs4.OK
}

// lockGraceLocked checks a LOCK against the grace period: only reclaims
// during it, none after.
func (t *stateTable) lockGraceLocked(cl *client, reclaim bool) nfs4.Status {
	if reclaim {
		st := t.mayReclaimLocked(cl)
		if st == nfs4.OK {
			cl.reclaims.locks++
		}
		return st
	}
	if t.inGraceLocked() {
		return nfs4.ErrGrace
	}
	return nfs4.OK
}

// locktGraceLocked: LOCKT answers NFS4ERR_GRACE during the grace period
// (as knfsd's nfsd4_lockt), since locks still to be reclaimed are not
// there to test against.
func (t *stateTable) locktGraceLocked() nfs4.Status {
	if t.inGraceLocked() {
		return nfs4.ErrGrace
	}
	return nfs4.OK
}

// reclaimComplete is RECLAIM_COMPLETE(rca_one_fs = false) from cl: its
// reclaims are done, it may make new state once the grace period is over,
// and it is recorded as a client that may reclaim after a restart. The
// record is on disk before the reply goes.
func (t *stateTable) reclaimComplete(cl *client) nfs4.Status {
	defer t.syncRecords()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reclaimCompleteLocked(cl)
}

func (t *stateTable) reclaimCompleteLocked(cl *client) nfs4.Status {
	if cl.reclaimDone {
		return nfs4.ErrCompleteAlready
	}
	cl.reclaimDone = true
	t.recordLocked(cl)
	if t.grace.pending != nil && t.grace.pending[clientRecord{cl.owner, cl.principal}] {
		t.s.log.Info("client reclaimed its state", "clientid", cl.id, "opens", cl.reclaims.opens, "locks", cl.reclaims.locks)
		delete(t.grace.pending, clientRecord{cl.owner, cl.principal})
		t.inGraceLocked() // ends it when this was the last client
	}
	return nfs4.OK
}

// recordLocked adds cl to the clients that may reclaim after a restart.
func (t *stateTable) recordLocked(cl *client) {
	t.records[cl.owner] = clientRecord{cl.owner, cl.principal}
	cl.recorded = true
	t.recGen.Add(1)
}

// forgetRecordLocked removes cl's record: its state is gone (expired,
// destroyed, or replaced by a rebooted client's), so after a restart it
// has nothing to reclaim, and must not reclaim what others took since.
func (t *stateTable) forgetRecordLocked(cl *client) {
	if !cl.recorded {
		return
	}
	cl.recorded = false
	delete(t.records, cl.owner)
	t.recGen.Add(1)
}

// recordListLocked is what the client list on disk should hold: this
// boot's recorded clients and the previous boot's still entitled to
// reclaim.
func (t *stateTable) recordListLocked() []clientRecord {
	seen := make(map[clientRecord]bool, len(t.records)+len(t.grace.pending))
	out := make([]clientRecord, 0, len(seen))
	for _, r := range t.records {
		seen[r] = true
		out = append(out, r)
	}
	for r := range t.grace.pending {
		if !seen[r] {
			out = append(out, r)
		}
	}
	return out
}

// syncRecords writes the client list if it changed. Callers run it after
// releasing the state lock (a deferred call placed before the Lock), and
// before their reply goes out: a client told it may make new state, or
// one granted what an expired client held, must find the list updated
// after a crash (RFC 8881 section 8.4.3's edge conditions).
func (t *stateTable) syncRecords() {
	if t.recGen.Load() == t.store.written.Load() {
		return
	}
	t.mu.Lock()
	gen := t.recGen.Load()
	recs := t.recordListLocked()
	t.mu.Unlock()
	if err := t.store.save(gen, recs); err != nil {
		t.s.log.Warn("cannot save the client list: clients may fail to reclaim their state after a restart", "err", err)
	}
}
