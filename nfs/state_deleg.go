package nfs

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Delegations (RFC 8881 section 10.2). OPEN grants a read or write
// delegation when no other client's state conflicts and the client has a
// back channel to recall it over. An access by another client that
// conflicts (OPEN, and the namespace and size changes that call
// breakDelegs) recalls it with CB_RECALL and answers NFS4ERR_DELAY until
// the holder returns it with DELEGRETURN; one not returned within a lease
// of the recall is revoked: its stateid then gives NFS4ERR_DELEG_REVOKED
// and the holder's SEQUENCE replies carry
// SEQ4_STATUS_RECALLABLE_STATE_REVOKED until it frees the stateid. A
// delegation is an openState with deleg set, so stateid lookup, TEST_STATEID
// and the per-client cap treat it like any other stateid.

const (
	// cbTimeout bounds a CB_RECALL's wait for its reply.
	cbTimeout = 10 * time.Second
	// recallWait is how long a conflicting request waits for a recalled
	// delegation to come back before answering NFS4ERR_DELAY: a client
	// that returns at once (the Linux client takes a few milliseconds)
	// then costs the opener no DELAY round trip and its backoff (100 ms
	// and more for the Linux client).
	recallWait = 100 * time.Millisecond
	// cbGetattrTimeout bounds a GETATTR's wait for CB_GETATTR: the
	// request holds a worker meanwhile. Without an answer the server's
	// own attributes are reported.
	cbGetattrTimeout = time.Second
	// wantFlags are the share_access bits above the want field
	// (OPEN4_SHARE_ACCESS_WANT_SIGNAL_DELEG_WHEN_RESRC_AVAIL, ..._PUSH_...,
	// and RFC 9754's timestamps and OPEN_XOR_DELEGATION): hints the server
	// may ignore.
	wantFlags = 0xffff0000
	// cbProbeWait is how long an OPEN waits for the CB_NULL probe of a
	// back channel just bound (state_callback.go, cbUp) before it grants no
	// delegation.
	cbProbeWait = time.Second
)

// delegState is the delegation part of a delegation stateid.
type delegState struct {
	typ      uint32        // nfs4.DelegateRead or nfs4.DelegateWrite
	recalled time.Time     // when CB_RECALL was sent; zero before
	revoked  atomic.Bool   // read without stateTable.mu by find
	gone     chan struct{} // closed when returned, revoked or dropped
}

// delegTable is the server-wide delegation state, under stateTable.mu
// except for the atomic counter.
type delegTable struct {
	recalling map[*openState]struct{}
	// writes counts write delegations out: while there are none, GETATTR
	// needs no CB_GETATTR check and may run on an event loop.
	writes atomic.Int64
}

// delegGrant is what OPEN reports in its open_delegation4.
type delegGrant struct {
	typ uint32 // nfs4.Delegate*
	sid nfs4.Stateid
	why uint32 // WND4_* with DelegateNoneExt
}

// encode writes open_delegation4.
func (g delegGrant) encode(e *xdr.Encoder) {
	e.Uint32(g.typ)
	switch g.typ {
	case nfs4.DelegateRead, nfs4.DelegateWrite:
		g.sid.Encode(e)
		e.Bool(false) // recall: not being recalled
		if g.typ == nfs4.DelegateWrite {
			e.Uint32(1) // NFS_LIMIT_SIZE: the client may grow the file freely
			e.Uint64(^uint64(0))
		}
		// permissions: an empty ACE, as knfsd sends: the client asks
		// ACCESS for anything it opens locally.
		e.Uint32(0)
		e.Uint32(0)
		e.Uint32(0)
		e.Uint32(0)
	case nfs4.DelegateNoneExt:
		e.Uint32(g.why)
		if g.why == nfs4.WhyNoDelegContention || g.why == nfs4.WhyNoDelegResource {
			e.Bool(false) // the server will not push or signal
		}
	}
}

// wantedType is the delegation type an OPEN with access and want asks
// for, or DelegateNone. Without a preference a read-only open gets a read
// delegation and a read-write open a write one (as knfsd: a write-only
// open would let the client serve later reads it was never checked for).
func wantedType(access, want uint32) uint32 {
	switch want {
	case nfs4.ShareAccessWantReadDeleg:
		return nfs4.DelegateRead
	case nfs4.ShareAccessWantWriteDeleg:
		return nfs4.DelegateWrite
	case nfs4.ShareAccessWantAnyDeleg:
		if access&nfs4.ShareAccessWrite != 0 {
			return nfs4.DelegateWrite
		}
		return nfs4.DelegateRead
	case nfs4.ShareAccessWantNoPreference:
		switch access {
		case nfs4.ShareAccessRead:
			return nfs4.DelegateRead
		case nfs4.ShareAccessBoth:
			return nfs4.DelegateWrite
		}
	}
	return nfs4.DelegateNone
}

// grantDeleg decides the delegation of an OPEN of n by the compound's
// client with access and want (RFC 8881 section 10.4).
func (c *compound) grantDeleg(n *node, access, want uint32) delegGrant {
	none := func(why uint32) delegGrant {
		if want == nfs4.ShareAccessWantNoPreference {
			return delegGrant{typ: nfs4.DelegateNone}
		}
		return delegGrant{typ: nfs4.DelegateNoneExt, why: why}
	}
	switch want {
	case nfs4.ShareAccessWantNoDeleg:
		return delegGrant{typ: nfs4.DelegateNoneExt, why: nfs4.WhyNoDelegNotWanted}
	case nfs4.ShareAccessWantCancel:
		return delegGrant{typ: nfs4.DelegateNoneExt, why: nfs4.WhyNoDelegCancelled}
	}
	typ := wantedType(access, want)
	if typ == nfs4.DelegateNone {
		return none(nfs4.WhyNoDelegNotWanted)
	}
	if !c.s.cfg.Delegations || !c.sess.canCall() || !c.sess.cbUp(cbProbeWait) {
		return none(nfs4.WhyNoDelegResource)
	}
	sid, why := c.s.state.grant(c.sess.client, n, typ)
	if why != 0 {
		return none(why - 1)
	}
	if !c.s.guardDeleg(n, typ) {
		c.s.state.ungrant(sid)
		return none(nfs4.WhyNoDelegContention)
	}
	c.s.log.Debug("delegation granted", "client", c.sess.client.id, "type", delegTypeName(typ))
	return delegGrant{typ: typ, sid: sid}
}

// grant records a delegation of n to cl if nothing conflicts. why is
// WND4_* + 1 when there is none (0 when granted).
func (t *stateTable) grant(cl *client, n *node, typ uint32) (nfs4.Stateid, uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.fileLocked(n)
	for _, o := range f.opens {
		// A read delegation's lease (vfs_lease.go) cannot be had while the
		// server holds the file open for writing, for this client too.
		if o.access.Load()&nfs4.ShareAccessWrite != 0 && typ == nfs4.DelegateRead {
			return nfs4.Stateid{}, nfs4.WhyNoDelegContention + 1
		}
		if o.client != cl && typ == nfs4.DelegateWrite {
			return nfs4.Stateid{}, nfs4.WhyNoDelegContention + 1
		}
	}
	for _, o := range f.delegs {
		// A client holds one delegation per file; a conflicting or
		// recalled one of another client's stops a new grant.
		if o.client == cl || typ == nfs4.DelegateWrite || o.deleg.typ == nfs4.DelegateWrite || !o.deleg.recalled.IsZero() {
			return nfs4.Stateid{}, nfs4.WhyNoDelegContention + 1
		}
	}
	if len(cl.opens) >= t.s.cfg.MaxOpensPerClient {
		t.tidyFileLocked(n)
		return nfs4.Stateid{}, nfs4.WhyNoDelegResource + 1
	}
	o := &openState{other: t.newOther(), client: cl, node: n,
		deleg: &delegState{typ: typ, gone: make(chan struct{})}}
	o.seq.Store(1)
	o.key = openKey{owner: "d:" + string(o.other[:]), node: n}
	o.access.Store(nfs4.ShareAccessRead)
	if typ == nfs4.DelegateWrite {
		o.access.Store(nfs4.ShareAccessBoth)
		t.dl.writes.Add(1)
	}
	cl.opens[o.key] = o
	t.opens.put(o.other, o)
	f.delegs = append(f.delegs, o)
	return nfs4.Stateid{Seqid: 1, Other: o.other}, 0
}

// unlinkDelegLocked is dropLocked's part for a delegation.
func (t *stateTable) unlinkDelegLocked(o *openState) {
	if o.deleg.revoked.Load() {
		o.client.revoked.Add(-1) // unlinked when revoked; freed now
		return
	}
	t.detachDelegLocked(o)
}

// detachDelegLocked takes a delegation off its file: it no longer
// conflicts with anything, and whoever waits for it is woken.
func (t *stateTable) detachDelegLocked(o *openState) {
	f := t.fileLocked(o.node)
	for i, x := range f.delegs {
		if x == o {
			f.delegs = append(f.delegs[:i], f.delegs[i+1:]...)
			break
		}
	}
	t.tidyFileLocked(o.node)
	delete(t.dl.recalling, o)
	close(o.deleg.gone)
	if o.deleg.typ == nfs4.DelegateWrite {
		t.dl.writes.Add(-1)
	}
	if !delegatedThrough(f, o.node) {
		// A local opener held by the lease's break proceeds now.
		releaseLease(o.node)
	}
}

// delegatedThrough reports whether a delegation on f was granted through
// node n: the lease (vfs_lease.go) is taken on the descriptor of the node
// that granted, and a file reached through two exports has two nodes.
func delegatedThrough(f *fileState, n *node) bool {
	for _, o := range f.delegs {
		if o.node == n {
			return true
		}
	}
	return false
}

// ungrant takes back a delegation grant recorded but not guarded.
func (t *stateTable) ungrant(sid nfs4.Stateid) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.opens.get(sid.Other); o != nil && o.deleg != nil {
		t.dropLocked(o)
	}
}

// guardDeleg takes the kernel lease (and inotify watch) that makes a
// change to n by another process than the server recall its delegations
// (vfs_lease.go), and reports whether n is guarded. A delegation returned
// meanwhile leaves no lease behind.
func (s *Server) guardDeleg(n *node, typ uint32) bool {
	ok := takeLease(n, typ == nfs4.DelegateWrite, func(why int) { s.recallLocal(n, why) })
	t := s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	if !delegatedThrough(t.peekFileLocked(n), n) {
		releaseLease(n)
	}
	return ok
}

// recallLocal recalls the delegations on n for a change by another
// process (vfs_lease.go): a lease break recalls them all and revokes those
// not returned before the kernel gives up waiting for the lease
// (lease-break-time); an inotify event recalls those of clients that had
// no operation of their own under way here that could have made it
// (clientChanging).
func (s *Server) recallLocal(n *node, why int) {
	t := s.state
	now := time.Now()
	var recall, out []*openState
	t.mu.Lock()
	f := t.peekFileLocked(n)
	if why == breakLease && !delegatedThrough(f, n) {
		releaseLease(n)
	}
	for _, o := range f.delegs {
		if why == breakWatch && o.client.changing(now) {
			continue
		}
		out = append(out, o)
		if o.deleg.recalled.IsZero() {
			o.deleg.recalled = now
			if t.dl.recalling == nil {
				t.dl.recalling = make(map[*openState]struct{})
			}
			t.dl.recalling[o] = struct{}{}
			recall = append(recall, o)
		}
	}
	t.mu.Unlock()
	if len(out) > 0 {
		s.log.Debug("delegations recalled: the file was opened or changed other than through this server", "delegations", len(out), "by", breakNames[why])
	}
	for _, o := range recall {
		go s.recall(o)
	}
	if why == breakLease && len(out) > 0 {
		go s.revokeAtBreakTime(out)
	}
}

// revokeAtBreakTime revokes the delegations of out not returned a second
// before the kernel would break their lease itself: from then on the
// local opener proceeds, and the holder must not keep serving its cache.
func (s *Server) revokeAtBreakTime(out []*openState) {
	wait := max(leaseBreakTime()-time.Second, time.Second)
	timer := time.NewTimer(wait)
	defer timer.Stop()
wait:
	for _, o := range out {
		select {
		case <-o.deleg.gone:
		case <-s.stop:
			return
		case <-timer.C:
			break wait
		}
	}
	t := s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range out {
		select {
		case <-o.deleg.gone:
		default:
			s.log.Info("delegation revoked: a local opener waits for its file, and the kernel's lease-break-time is running out", "client", o.client.id)
			t.revokeLocked(o)
		}
	}
}

// selfEventWindow is how long after an operation of a client that can
// change a file's attributes or names (opChangesFile) an inotify event on
// a file it holds a delegation of is still taken for that operation's
// own: the event comes a few microseconds after the change, the rest is
// slack for a loaded machine. A recall it causes by mistake costs the
// holder a round trip; one it misses lets a cache go stale.
const selfEventWindow = 250 * time.Millisecond

// beginChange notes that the compound's client starts the op of entry
// info, and returns the client to pass to endChange (nil when the table
// does not mark the op opChangesFile).
func (c *compound) beginChange(info *opInfo) *client {
	if c.sess == nil || info.flags&opChangesFile == 0 {
		return nil
	}
	cl := c.sess.client
	cl.changingOps.Add(1)
	return cl
}

// endChange notes that an operation beginChange counted ended.
func (cl *client) endChange() {
	cl.changedAt.Store(time.Now().UnixNano())
	cl.changingOps.Add(-1)
}

// changing reports whether cl has an operation under way, or one that
// ended within selfEventWindow of now, that could have changed a file.
func (cl *client) changing(now time.Time) bool {
	return cl.changingOps.Load() > 0 || now.UnixNano()-cl.changedAt.Load() < int64(selfEventWindow)
}

// revokeLocked revokes a delegation its holder did not return in time.
// The stateid stays, answering NFS4ERR_DELEG_REVOKED, until FREE_STATEID.
func (t *stateTable) revokeLocked(o *openState) {
	t.detachDelegLocked(o)
	o.deleg.revoked.Store(true)
	o.client.revoked.Add(1)
	t.s.log.Info("delegation revoked: not returned within a lease of its recall", "client", o.client.id)
}

// revokeOverdue revokes the recalled delegations whose lease ran out.
func (t *stateTable) revokeOverdue(now time.Time) {
	lease := time.Duration(t.s.cfg.LeaseTime) * time.Second
	t.mu.Lock()
	defer t.mu.Unlock()
	for o := range t.dl.recalling {
		if now.Sub(o.deleg.recalled) > lease {
			t.revokeLocked(o)
		}
	}
}

// conflictsLocked reports whether delegation o stands against an access
// by client cl; write is whether that access modifies the file (or
// denies reading it).
func conflictsLocked(o *openState, cl *client, write bool) bool {
	return o.client != cl && (write || o.deleg.typ == nfs4.DelegateWrite)
}

// delegConflictLocked reports whether another client's delegation on n
// conflicts with an access by cl.
func (t *stateTable) delegConflictLocked(cl *client, n *node, write bool) bool {
	for _, o := range t.peekFileLocked(n).delegs {
		if conflictsLocked(o, cl, write) {
			return true
		}
	}
	return false
}

// breakDelegs recalls the delegations of other clients on n that conflict
// with an access by cl (write: see conflictsLocked), waits up to
// recallWait for them to be returned, and answers NFS4ERR_DELAY while any
// remains. Those recalled more than a lease ago are revoked instead.
func (s *Server) breakDelegs(cl *client, n *node, write bool) nfs4.Status {
	t := s.state
	now := time.Now()
	lease := time.Duration(s.cfg.LeaseTime) * time.Second
	var recall []*openState
	var wait []chan struct{}
	t.mu.Lock()
	delegs := t.peekFileLocked(n).delegs
	if len(delegs) == 0 {
		t.mu.Unlock()
		return nfs4.OK
	}
	for _, o := range append([]*openState(nil), delegs...) {
		if !conflictsLocked(o, cl, write) {
			continue
		}
		d := o.deleg
		switch {
		case d.recalled.IsZero():
			d.recalled = now
			if t.dl.recalling == nil {
				t.dl.recalling = make(map[*openState]struct{})
			}
			t.dl.recalling[o] = struct{}{}
			recall = append(recall, o)
		case now.Sub(d.recalled) > lease:
			t.revokeLocked(o)
			continue
		}
		wait = append(wait, d.gone)
	}
	t.mu.Unlock()
	for _, o := range recall {
		go s.recall(o)
	}
	return waitGone(wait)
}

// waitGone waits, recallWait at most, until every channel of wait is
// closed (the recalled delegations or layouts returned, revoked or
// dropped): NFS4ERR_DELAY when one is not by then, so the client retries
// the request that conflicted.
func waitGone(wait []chan struct{}) nfs4.Status {
	if len(wait) == 0 {
		return nfs4.OK
	}
	timer := time.NewTimer(recallWait)
	defer timer.Stop()
	for _, ch := range wait {
		select {
		case <-ch:
		case <-timer.C:
			return nfs4.ErrDelay
		}
	}
	return nfs4.OK
}

// recall sends CB_RECALL for delegation o over a back channel of its
// client, and sends it again every recallRetry while it could not be
// delivered (no back channel, the connection gone, no reply in
// cbTimeout), each time on whichever session can call the client then:
// a client whose connection dropped with the recall unanswered binds a
// new one (BIND_CONN_TO_SESSION, or a new session), and the recall
// reaches it there, as knfsd requeues a failed callback (pynfs
// DSESS9003). It stops once the client answered, whatever its status,
// or the delegation is gone (returned, or revoked a lease after the
// recall).
func (s *Server) recall(o *openState) {
	for {
		sess, sid, fh := s.recallTarget(o)
		if sess != nil {
			res, err := s.cbCompound(sess, 1, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpCBRecall)
				sid.Encode(e)
				e.Bool(false) // truncate
				e.Opaque(fh)
			}, cbTimeout)
			switch {
			case err == nil && res.status == nfs4.OK:
				// e2e/kernel/e2e-deleg.sh counts these lines.
				s.log.Debug("delegation recalled", "client", o.client.id, "type", delegTypeName(o.deleg.typ))
				return
			case err == nil:
				s.log.Debug("CB_RECALL refused", "client", o.client.id, "status", res.status)
				return
			}
			s.log.Debug("CB_RECALL not delivered; sent again later", "client", o.client.id, "err", err)
		} else {
			s.log.Debug("cannot recall delegation yet: no back channel", "client", o.client.id)
		}
		select {
		case <-o.deleg.gone:
			return
		case <-s.stop:
			return
		case <-time.After(recallRetry):
		}
	}
}

// recallRetry is how long a recall that could not be delivered waits
// before it is sent again.
const recallRetry = time.Second

// recallTarget returns a session that can call o's client now (nil if
// none), and the stateid and file handle to recall.
func (s *Server) recallTarget(o *openState) (*session, nfs4.Stateid, []byte) {
	t := s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	var sess *session
	for _, x := range o.client.sessions {
		if x.canCall() {
			sess = x
			break
		}
	}
	if sess == nil {
		sess = callback40(o.client) // v40_callback.go
	}
	return sess, nfs4.Stateid{Seqid: o.seq.Load(), Other: o.other}, o.node.handle
}

// delegTypeName names a delegation type for the log.
func delegTypeName(typ uint32) string {
	if typ == nfs4.DelegateWrite {
		return "write"
	}
	return "read"
}

// delegAttrs asks the holder of a write delegation on n, when another
// client holds one, for the file's size and change attribute (CB_GETATTR,
// RFC 8881 section 10.4.3) and puts them in st, so that a GETATTR of
// req by the compound's client sees the holder's cached writes. A holder
// that reports a change gets the file reported as changed: size as it
// says, change one past the server's.
func (c *compound) delegAttrs(n *node, req nfs4.Bitmap, st *unix.Stat_t) {
	t := c.s.state
	if t.dl.writes.Load() == 0 || (!req.Has(nfs4.AttrSize) && !req.Has(nfs4.AttrChange)) || c.sess == nil {
		return
	}
	cl := c.sess.client
	var holder *session
	t.mu.Lock()
	for _, o := range t.peekFileLocked(n).delegs {
		if o.client != cl && o.deleg.typ == nfs4.DelegateWrite {
			for _, x := range o.client.sessions {
				if x.canCall() {
					holder = x
					break
				}
			}
			if holder == nil {
				holder = callback40(o.client) // v40_callback.go
			}
		}
	}
	fh := n.handle
	t.mu.Unlock()
	if holder == nil {
		return
	}
	res, err := c.s.cbCompound(holder, 1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpCBGetattr)
		e.Opaque(fh)
		nfs4.BitmapOf(nfs4.AttrChange, nfs4.AttrSize).Encode(e)
	}, cbGetattrTimeout)
	if err != nil || res.status != nfs4.OK {
		return
	}
	size, change, ok := decodeCBGetattr(res.d)
	if !ok {
		return
	}
	server := changeAttr(st)
	if change == server && size == uint64(st.Size) {
		return
	}
	st.Size = int64(size)
	server++
	st.Ctim = unix.Timespec{Sec: int64(server / 1e9), Nsec: int64(server % 1e9)}
}

// decodeCBGetattr reads a CB_GETATTR result holding change and size.
func decodeCBGetattr(d *xdr.Decoder) (size, change uint64, ok bool) {
	if d.Uint32() != nfs4.OpCBGetattr || nfs4.Status(d.Uint32()) != nfs4.OK {
		return 0, 0, false
	}
	bm := nfs4.DecodeBitmap(d)
	vals := xdr.NewDecoder(d.Opaque(1024))
	if !bm.Has(nfs4.AttrChange) || !bm.Has(nfs4.AttrSize) {
		return 0, 0, false
	}
	change = vals.Uint64() // attribute 3 comes before 4
	size = vals.Uint64()
	return size, change, d.Err() == nil && vals.Err() == nil
}

// seqStatus is the sr_status_flags of a SEQUENCE on sess.
func (sess *session) seqStatus() uint32 {
	var f uint32
	if sess.client.revoked.Load() > 0 {
		f |= nfs4.SeqStatusRecallableStateRevoked
	}
	if sess.pathDown() {
		f |= nfs4.SeqStatusCBPathDownSession
	}
	if sess.cb.probe.Load() == probeDown {
		// The back channel did not answer CB_NULL (knfsd: the client's
		// callback state NFSD4_CB_DOWN); the client binds it again.
		f |= nfs4.SeqStatusCBPathDown
	}
	return f
}

// encodeOpenArguments writes fattr4_open_arguments (RFC 9754 section 6):
// each OPEN argument value the server supports, as a bitmap of the
// value's number.
func encodeOpenArguments(e *xdr.Encoder) {
	bits := func(vals ...int) {
		var w uint32
		for _, v := range vals {
			w |= 1 << v
		}
		e.Uint32(1)
		e.Uint32(w)
	}
	bits(nfs4.ShareAccessRead, nfs4.ShareAccessWrite, nfs4.ShareAccessBoth)
	bits(nfs4.ShareDenyNone, nfs4.ShareDenyRead, nfs4.ShareDenyWrite, nfs4.ShareDenyBoth)
	// open_args_share_access_want4: ANY_DELEG, NO_DELEG, CANCEL (the
	// want values shifted down by 8); no signal, push or timestamps.
	bits(3, 4, 5)
	bits(nfs4.ClaimNull, nfs4.ClaimDelegateCur, nfs4.ClaimFH, nfs4.ClaimDelegCurFH)
	bits(nfs4.CreateUnchecked, nfs4.CreateGuarded, nfs4.CreateExclusive, nfs4.CreateExclusive41)
}

// breakDelegsOf is breakDelegs for the file st describes in the current
// directory's export, when the server knows it (REMOVE: another client's
// delegation must come back before its file goes, RFC 8881 section
// 10.4.4).
func (c *compound) breakDelegsOf(st *unix.Stat_t) nfs4.Status {
	f := c.cfh.exp.fsOfDev(st.Dev)
	if f == nil {
		return nfs4.OK
	}
	n := c.s.files.get(nodeKey{c.cfh.exp.id, f.id, st.Ino})
	if n == nil {
		return nfs4.OK
	}
	return c.s.breakDelegs(c.client(), n, true)
}
