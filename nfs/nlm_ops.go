package nfs

import (
	"bytes"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// call answers one NLM4 call into e and returns the status to count it
// under. It returns "", having encoded nothing, when the arguments do not
// decode (GARBAGE_ARGS).
func (n *nlmState) call(c *Conn, cl *call, d *xdr.Decoder, e *xdr.Encoder) string {
	proc := cl.proc
	status := "OK"
	switch {
	case proc == nlmProcNull:
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	case proc >= nlmProcTest && proc <= nlmProcGranted || proc == nlmProcNMLock:
		a := decodeNLMArgs(proc, d)
		if d.Err() != nil {
			return ""
		}
		stat, hd := n.run(c, cl.cred, proc, &a)
		status = nlmStatName(stat)
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
		encodeNLMRes(e, a.cookie, stat, hd)
	case proc >= nlmProcTestMsg && proc <= nlmProcGrantMsg:
		// Asynchronous NLM: the result goes back as a _RES call.
		a := decodeNLMArgs(proc, d)
		if d.Err() != nil {
			return ""
		}
		stat, hd := n.run(c, cl.cred, proc-(nlmProcTestMsg-nlmProcTest), &a)
		status = nlmStatName(stat)
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
		if c.addr.IsValid() {
			cookie := bytes.Clone(a.cookie)
			go n.sendRes(c.addr, proc+(nlmProcTestRes-nlmProcTestMsg), func(e *xdr.Encoder) {
				encodeNLMRes(e, cookie, stat, hd)
			})
		}
	case proc >= nlmProcTestRes && proc <= nlmProcGrantRes:
		cookie := d.Opaque(nlmMaxNetobj)
		stat := d.Uint32() // TEST_RES's holder that may follow is of no use
		if d.Err() != nil {
			return ""
		}
		if proc == nlmProcGrantRes {
			n.grantRes(cookie, stat)
		}
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	case proc == nlmProcShare || proc == nlmProcUnshare:
		a := decodeNLMShare(d)
		if d.Err() != nil {
			return ""
		}
		stat := n.share(c, cl.cred, proc, &a)
		status = nlmStatName(stat)
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
		e.Opaque(a.cookie)
		e.Uint32(stat)
		e.Int32(0) // sequence
	case proc == nlmProcNSMNotify:
		// A statd on this host (a system rpc.statd owning NSM instead of
		// ServeNSM) tells that a host rebooted: nlm_reboot {mon_name,
		// state, priv}. Only from loopback, as Linux lockd takes it.
		name := d.String(nsmMaxName)
		state := d.Int32()
		d.Fixed(nsmPrivSize)
		if d.Err() != nil {
			return ""
		}
		if c.addr.IsLoopback() {
			n.rebooted(&Conn{}, string(name), state)
		}
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	case proc == nlmProcFreeAll:
		a := decodeNLMNotify(d)
		if d.Err() != nil {
			return ""
		}
		n.freeAll(c, a.name)
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	default:
		encodeAccepted(e, cl.xid, nfs4.AcceptProcUnavail)
		status = "PROC_UNAVAIL"
	}
	return status
}

// encodeNLMRes writes nlm4_res, or nlm4_testres with hd (TEST).
func encodeNLMRes(e *xdr.Encoder, cookie []byte, stat uint32, hd *nlmHolder) {
	e.Opaque(cookie)
	e.Uint32(stat)
	if hd != nil && stat == nlmDenied {
		e.Bool(hd.exclusive)
		e.Int32(hd.svid)
		e.Opaque(hd.oh)
		e.Uint64(hd.offset)
		e.Uint64(hd.length)
	}
}

// run performs a synchronous NLM4 lock procedure (or the work of its _MSG
// twin). TEST's result also carries the holder of a conflicting lock.
func (n *nlmState) run(c *Conn, cred Cred, proc uint32, a *nlmArgs) (uint32, *nlmHolder) {
	switch proc {
	case nlmProcTest:
		return n.test(c, cred, a)
	case nlmProcLock:
		return n.lock(c, cred, a, true), nil
	case nlmProcNMLock:
		a.block = false // NM_LOCK never blocks (XNFS 14.3.21), and is not monitored
		return n.lock(c, cred, a, false), nil
	case nlmProcCancel:
		return n.cancel(c, a), nil
	case nlmProcUnlock:
		return n.unlock(c, a), nil
	}
	// GRANTED is for a client that waits for a lock: the server waits for
	// none.
	return nlmDenied, nil
}

// fileOf resolves the file handle of an NLM call (an NFSv3 handle, which
// is the NFSv4 one) and admits the caller to its export as PUTFH would:
// client specs and the secure-port rule.
func (n *nlmState) fileOf(c *Conn, fh []byte) (*node, uint32) {
	nd, _, st := n.fileAs(c, fh)
	return nd, st
}

// fileAs is fileOf that also returns the caller's credentials as the
// export maps them (squashing).
func (n *nlmState) fileAs(c *Conn, fh []byte) (*node, ClientOptions, uint32) {
	nd, st := n.s.resolve(fh)
	if st != nfs4.OK {
		return nil, ClientOptions{}, nlmStaleFH
	}
	if nd.exp == nil {
		return nil, ClientOptions{}, nlmFailed // a pseudo directory: nothing to lock
	}
	o, ok := nd.exp.access(c.addr)
	// TLS the connection lacks refuses NLM as it does NFSv3. The export's
	// sec= list does not: a client's lock manager calls with AUTH_SYS
	// even for a sec=krb5 mount, and knfsd skips the flavour check for
	// NLM too (fh_verify with NFSD_MAY_LOCK).
	if !ok || !o.Insecure && !c.reservedPort() || !o.XprtSec.Allows(c.xprt()) {
		return nil, ClientOptions{}, nlmFailed
	}
	return nd, o, nlmGranted
}

// mayLock checks that the caller may take locks on nd: as knfsd's
// nfsd_permission for NFSD_MAY_LOCK, read access or ownership of the
// file, with the caller's credentials of the call (a Linux client's lockd
// sends those of the process that opened the file) after the export's
// squashing.
func (n *nlmState) mayLock(nd *node, o *ClientOptions, caller Cred) uint32 {
	cr := squash(o, n.s.ids.cred(caller))
	if cr.UID == 0 {
		return nlmGranted
	}
	fd, done, err := nd.anyFD()
	if err != nil {
		return nlmStaleFH
	}
	defer done()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nlmStaleFH
	}
	switch {
	case cr.UID == st.Uid:
		return nlmGranted
	case st.Mode&0o070 != 0 && n.s.hasACL(nd, &st):
		if kernelRights(nd, cr, mayRead)&mayRead != 0 {
			return nlmGranted
		}
	case modeRights(&st, &cr)&mayRead != 0:
		return nlmGranted
	}
	return nlmFailed
}

// fileToLock is fileOf for the calls that take a lock or a share: the
// caller must also pass mayLock.
func (n *nlmState) fileToLock(c *Conn, cred Cred, fh []byte) (*node, uint32) {
	nd, o, st := n.fileAs(c, fh)
	if st != nlmGranted {
		return nil, st
	}
	if st := n.mayLock(nd, &o, cred); st != nlmGranted {
		return nil, st
	}
	return nd, nlmGranted
}

func (n *nlmState) test(c *Conn, cred Cred, a *nlmArgs) (uint32, *nlmHolder) {
	nd, stat := n.fileToLock(c, cred, a.lock.fh)
	if stat != nlmGranted {
		return stat, nil
	}
	start, end := nlmRange(a.lock.offset, a.lock.length)
	owner := nlmOwner(a.lock.svid, a.lock.oh)
	t := n.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inGraceLocked() {
		return nlmDeniedGrace, nil // locks still to be reclaimed are not there to test
	}
	var cl *client
	if h := n.hostLocked(c, a.lock.callerName, false); h != nil {
		cl = h.cl
	}
	l := t.lockConflictLocked(nd, cl, owner, start, end, a.exclusive)
	if l == nil {
		return nlmGranted, nil
	}
	hd := n.holderOf(l)
	return nlmDenied, &hd
}

// lock is LOCK and NM_LOCK; monitor records the host for notification
// after a restart once it holds a lock.
func (n *nlmState) lock(c *Conn, cred Cred, a *nlmArgs, monitor bool) uint32 {
	nd, stat := n.fileToLock(c, cred, a.lock.fh)
	if stat != nlmGranted {
		return stat
	}
	start, end := nlmRange(a.lock.offset, a.lock.length)
	owner := nlmOwner(a.lock.svid, a.lock.oh)
	t := n.s.state
	defer n.syncHostsLogged() // the host is on disk before it is told it holds the lock
	t.mu.Lock()
	defer t.mu.Unlock()
	// During the grace period only reclaims, after it none (knfsd's
	// nlmsvc_lock).
	if t.inGraceLocked() != a.reclaim {
		return nlmDeniedGrace
	}
	h := n.hostLocked(c, a.lock.callerName, true)
	if h == nil {
		return nlmDeniedNoLocks
	}
	defer n.idleLocked(h)
	id := nd.fileID()
	if i := n.findBlockLocked(h, owner, id, start, end); i >= 0 {
		// The host asks again for what it waits for (Linux re-sends a
		// blocking LOCK every 30 s): granted meanwhile, or still waiting.
		b := n.blocks[i]
		if b.granted {
			n.removeBlockLocked(i)
			return nlmGranted
		}
		b.refreshed = time.Now()
		return nlmBlocked
	}
	if l := t.lockConflictLocked(nd, h.cl, owner, start, end, a.exclusive); l != nil {
		if !a.block {
			return nlmDenied
		}
		if len(n.blocks) >= nlmMaxBlocks || h.blocks >= nlmHostBlocks {
			return nlmDeniedNoLocks
		}
		b := &nlmBlock{host: h, owner: owner, node: nd, start: start, end: end, write: a.exclusive, refreshed: time.Now()}
		b.lock = nlmLock{callerName: []byte(n.nsm.name(n.s)), fh: bytes.Clone(a.lock.fh), oh: bytes.Clone(a.lock.oh),
			svid: a.lock.svid, offset: a.lock.offset, length: a.lock.length}
		putCookie(b.cookie[:], n.cookies.Add(1))
		n.blocks = append(n.blocks, b)
		h.blocks++
		h.idleSince = time.Time{}
		n.waiting.Add(1)
		return nlmBlocked
	}
	stat = n.setLockLocked(h, owner, nd, start, end, a.exclusive)
	if stat == nlmGranted && monitor {
		n.monitorLocked(h)
	}
	return stat
}

func putCookie(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * (len(b) - 1 - i)))
	}
}

// monitorLocked records h in the hosts file (written by syncHosts before
// the reply goes).
func (n *nlmState) monitorLocked(h *nlmHost) {
	if !h.monitored {
		h.monitored = true
		n.nsm.gen.Add(1)
	}
}

func (n *nlmState) cancel(c *Conn, a *nlmArgs) uint32 {
	return n.letGo(c, a, func(h *nlmHost, owner string, nd *node, start, end uint64) {
		if i := n.findBlockLocked(h, owner, nd.fileID(), start, end); i >= 0 {
			b := n.blocks[i]
			n.removeBlockLocked(i)
			if b.granted {
				// Granted but not yet taken by the host: it no longer
				// wants it.
				n.unlockLocked(h, owner, b.node, start, end)
			}
		}
	})
}

func (n *nlmState) unlock(c *Conn, a *nlmArgs) uint32 {
	return n.letGo(c, a, func(h *nlmHost, owner string, nd *node, start, end uint64) {
		// A request of the owner for this very range waits no more
		// (knfsd's nlmsvc_unlock cancels it first).
		if i := n.findBlockLocked(h, owner, nd.fileID(), start, end); i >= 0 {
			n.removeBlockLocked(i)
		}
		n.unlockLocked(h, owner, nd, start, end)
	})
}

// letGo is CANCEL's and UNLOCK's common part: the file, the range and the
// owner, refused in grace (as knfsd's nlm4svc_proc_unlock and _cancel), and
// nothing to do for a host the server does not know; do runs with the
// state lock held.
func (n *nlmState) letGo(c *Conn, a *nlmArgs, do func(h *nlmHost, owner string, nd *node, start, end uint64)) uint32 {
	nd, stat := n.fileOf(c, a.lock.fh)
	if stat != nlmGranted {
		return stat
	}
	start, end := nlmRange(a.lock.offset, a.lock.length)
	owner := nlmOwner(a.lock.svid, a.lock.oh)
	t := n.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inGraceLocked() {
		return nlmDeniedGrace
	}
	if h := n.hostLocked(c, a.lock.callerName, false); h != nil {
		do(h, owner, nd, start, end)
	}
	return nlmGranted
}

// share is SHARE and UNSHARE: DOS share reservations among NLM hosts
// (knfsd's fs/lockd/svcshare.c; they do not meet NFSv4 share
// reservations there either).
func (n *nlmState) share(c *Conn, cred Cred, proc uint32, a *nlmShareArgs) uint32 {
	var nd *node
	var stat uint32
	if proc == nlmProcShare {
		nd, stat = n.fileToLock(c, cred, a.fh)
	} else {
		nd, stat = n.fileOf(c, a.fh)
	}
	if stat != nlmGranted {
		return stat
	}
	t := n.s.state
	defer n.syncHostsLogged()
	t.mu.Lock()
	defer t.mu.Unlock()
	grace := t.inGraceLocked()
	if proc == nlmProcUnshare && grace || proc == nlmProcShare && grace != a.reclaim {
		return nlmDeniedGrace
	}
	h := n.hostLocked(c, a.callerName, proc == nlmProcShare)
	if h == nil {
		if proc == nlmProcUnshare {
			return nlmGranted
		}
		return nlmDeniedNoLocks
	}
	defer n.idleLocked(h)
	id := nd.fileID()
	list := n.shares[id]
	oh := string(a.oh)
	for i, sh := range list {
		if sh.host != h || sh.oh != oh {
			continue
		}
		if proc == nlmProcUnshare {
			list = append(list[:i], list[i+1:]...)
			if len(list) == 0 {
				delete(n.shares, id)
			} else {
				n.shares[id] = list
			}
			h.shares--
			return nlmGranted
		}
		sh.mode, sh.access = a.mode&3, a.access&3
		return nlmGranted
	}
	if proc == nlmProcUnshare {
		return nlmGranted
	}
	for _, sh := range list {
		if a.access&sh.mode != 0 || a.mode&sh.access != 0 {
			return nlmDenied
		}
	}
	if h.shares >= nlmHostShares {
		return nlmDeniedNoLocks
	}
	n.shares[id] = append(list, &nlmShare{host: h, oh: oh, mode: a.mode & 3, access: a.access & 3})
	h.shares++
	h.idleSince = time.Time{}
	n.monitorLocked(h)
	return nlmGranted
}

// freeAll is FREE_ALL: the host of that name at the caller's address
// rebooted (XNFS 14.3.23); everything it held goes.
func (n *nlmState) freeAll(c *Conn, name []byte) {
	t := n.s.state
	defer n.syncHostsLogged()
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, h := range n.hosts {
		if k.name == string(name) && (!c.addr.IsValid() || k.addr == c.addr) {
			n.freeHostLocked(h)
		}
	}
}

// grantRes is GRANTED_RES: a host's answer to a GRANTED_MSG, matched by
// the cookie of our call.
func (n *nlmState) grantRes(cookie []byte, stat uint32) {
	t := n.s.state
	t.mu.Lock()
	var found *nlmBlock
	for _, b := range n.blocks {
		if b.granted && bytes.Equal(b.cookie[:], cookie) {
			found = b
		}
	}
	t.mu.Unlock()
	if found != nil {
		n.settleGrant(found, stat, nil)
	}
}
