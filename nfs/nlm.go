package nfs

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NLM version 4 (byte-range locks of NFSv3 clients) and NSM version 1
// (reboot notification), served on the NFS port beside NFSv4 (Handle) and
// over UDP (ServeNSM). The Open Group XNFS specifies both; Linux's
// fs/lockd is the behaviour followed where it is silent.
//
// There is one lock table: an NLM lock is a lockRange in the same
// per-file list as the locks of NFSv4 lock stateids (op_lock.go,
// state_file.go), so a v3 lock and a v4 lock on one range conflict,
// whichever came first. Each NLM host (caller_name and address, as
// knfsd's nlm_host) has a pseudo client of its own, never in the client
// table, and each (svid, oh) of the host a lock state of that client: the
// conflict check of both protocols tells owners apart by client and owner
// string as it does for v4 owners. A pseudo client is never confirmed, so
// no lease expires it: its locks go by UNLOCK, FREE_ALL or an SM_NOTIFY
// from the rebooted host.
//
// A blocking LOCK that conflicts is answered LCK_BLOCKED and queued; any
// change to a file's state (tidyFileLocked calls nlmChangedLocked: a v3
// UNLOCK, a v4 LOCKU, CLOSE or a lease expiry) wakes the queue, and a lock
// now free is taken for the waiter and announced by an NLM_GRANTED call to
// the host's lockd, found through its rpcbind (nsm.go has the RPC client).
//
// Hosts that hold locks are recorded in <state-dir>/nlm-hosts (nsm.go).
// After a restart they are notified with SM_NOTIFY and the grace period
// (state_grace.go) is on: only reclaims (LOCK with reclaim set) are
// granted during it, to v3 and v4 clients alike.

// LockPrograms returns the programs and versions served for NFSv3
// locking, for registration with rpcbind: NLM 4 and NSM 1.
func LockPrograms() [][2]uint32 {
	return [][2]uint32{{NLMProgram, NLMVersion}, {NSMProgram, NSMVersion}}
}

const (
	nlmTick         = 10 * time.Second // callback retries, idle hosts and stale blocks
	nlmBlockTTL     = 3 * time.Minute  // a waiting block the host stopped asking for (Linux re-sends every 30 s)
	nlmHostIdle     = 2 * time.Minute  // a host holding nothing is forgotten (and unmonitored) after it
	nlmMaxBlocks    = 4096             // blocked requests queued, all hosts
	nlmHostBlocks   = 256              // blocked requests queued per host
	nlmHostShares   = 1024             // NLM share reservations per host
	nlmHostsPerAddr = 64               // NLM hosts (caller names) of one address
	nlmCallTimeout  = 5 * time.Second  // one callback (GETPORT, GRANTED, _RES, SM_NOTIFY)
)

// nlmState is the server's NLM and NSM side. Its maps are guarded by
// stateTable.mu, as the lock lists they index into.
type nlmState struct {
	s        *Server
	hosts    map[nlmHostKey]*nlmHost
	byClient map[*client]*nlmHost
	blocks   []*nlmBlock
	shares   map[fileID][]*nlmShare
	// waiting counts the blocks not yet granted: nlmChangedLocked reads it
	// on every change of any file's state, so that with none queued the
	// hook costs one atomic load.
	waiting atomic.Int32
	kick    chan struct{}
	cookies atomic.Uint64 // cookies of our GRANTED callbacks

	nsm nsmState // nsm.go
}

// nlmHostKey names an NLM host as knfsd does: the caller_name it gives
// and the address its calls come from, so that a host cannot name itself
// after another to release that one's locks.
type nlmHostKey struct {
	name string
	addr netip.Addr
}

type nlmHost struct {
	key  nlmHostKey
	cl   *client    // the pseudo client owning its lock states
	open *openState // stands for the open an NFSv4 lock comes from (NLM has none)
	// states are its lock owners' lock states, by owner and file.
	states map[nlmStateKey]*openState
	blocks int // its queued blocks
	shares int // its share reservations
	// monitored: recorded in nlm-hosts (an NM_LOCK does not record).
	monitored bool
	idleSince time.Time // when it last held nothing (zero: it holds something)
}

type nlmStateKey struct {
	owner string
	file  fileID
}

// nlmBlock is a blocking LOCK waiting for the range, or granted and
// waiting for the host to take the grant (granted set).
type nlmBlock struct {
	host       *nlmHost
	owner      string
	lock       nlmLock // copied from the request, caller_name ours
	node       *node
	start, end uint64
	write      bool
	cookie     [8]byte // of our GRANTED callback
	refreshed  time.Time
	granted    bool
	sending    bool // a GRANTED callback is under way
	tries      int
}

// nlmShare is a DOS share reservation (NLM SHARE).
type nlmShare struct {
	host   *nlmHost
	oh     string
	mode   uint32 // fsh4_mode: what others are denied
	access uint32
}

func newNLMState(s *Server) *nlmState {
	return &nlmState{
		s:        s,
		hosts:    make(map[nlmHostKey]*nlmHost),
		byClient: make(map[*client]*nlmHost),
		shares:   make(map[fileID][]*nlmShare),
		kick:     make(chan struct{}, 1),
		nsm:      nsmState{monitors: make(map[string][]nsmMon)},
	}
}

// nlmOwner is the owner string of an NLM lock owner: svid then oh.
func nlmOwner(svid int32, oh []byte) string {
	b := make([]byte, 4, 4+len(oh))
	binary.BigEndian.PutUint32(b, uint32(svid))
	return string(append(b, oh...))
}

// nlmChangedLocked is called whenever the state of a file may have
// changed (tidyFileLocked): a lock a blocked request waits for may be
// gone. The caller holds stateTable.mu.
func (t *stateTable) nlmChangedLocked() {
	n := t.s.nlm
	if n == nil || n.waiting.Load() == 0 {
		return
	}
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// lockCall answers a call to NLM or NSM (Handle's hook).
func (s *Server) lockCall(c *Conn, cl *call, d *xdr.Decoder, rep *Reply) {
	if s.nlm == nil {
		encodeAccepted(rep.Enc, cl.xid, nfs4.AcceptProgUnavail)
		return
	}
	want := uint32(NLMVersion)
	if cl.prog == NSMProgram {
		want = NSMVersion
	}
	if cl.vers != want {
		encodeAccepted(rep.Enc, cl.xid, nfs4.AcceptProgMismatch)
		rep.Enc.Uint32(want)
		rep.Enc.Uint32(want)
		s.countProc(c, cl.prog, cl.vers, cl.proc, "PROG_MISMATCH")
		return
	}
	var status string
	if cl.prog == NLMProgram {
		status = s.nlm.call(c, cl, d, rep.Enc)
	} else {
		status = s.nlm.nsmCall(c, cl, d, rep.Enc)
	}
	if status == "" { // nothing was encoded yet
		encodeAccepted(rep.Enc, cl.xid, nfs4.AcceptGarbageArgs)
		status = "GARBAGE_ARGS"
	}
	s.countProc(c, cl.prog, cl.vers, cl.proc, status)
}

// hostLocked finds the host of a call, making it when create is set (nil
// when the server has as many as it keeps: MaxClients).
func (n *nlmState) hostLocked(c *Conn, name []byte, create bool) *nlmHost {
	k := nlmHostKey{string(name), c.addr}
	if h := n.hosts[k]; h != nil || !create {
		return h
	}
	t := n.s.state
	if len(n.hosts) >= n.s.cfg.MaxClients {
		return nil
	}
	// One address cannot take the whole table by calling itself many
	// names.
	same := 0
	for hk := range n.hosts {
		if hk.addr == k.addr {
			same++
		}
	}
	if same >= nlmHostsPerAddr {
		return nil
	}
	cl := &client{id: t.newClientID(), owner: "nlm:" + k.name, addr: c.addr, opens: make(map[openKey]*openState)}
	h := &nlmHost{key: k, cl: cl, states: make(map[nlmStateKey]*openState), idleSince: time.Now()}
	h.open = &openState{client: cl}
	h.open.access.Store(nfs4.ShareAccessBoth)
	n.hosts[k] = h
	n.byClient[cl] = h
	return h
}

// holdsLocked reports whether h holds or waits for anything.
func (h *nlmHost) holdsLocked() bool {
	return len(h.states) > 0 || h.blocks > 0 || h.shares > 0
}

// setLockLocked gives owner of host h the range on nd, replacing what it
// held there (POSIX locks of one owner merge and convert).
func (n *nlmState) setLockLocked(h *nlmHost, owner string, nd *node, start, end uint64, write bool) uint32 {
	t := n.s.state
	k := nlmStateKey{owner, nd.fileID()}
	st := h.states[k]
	if st == nil {
		st = &openState{client: h.cl, node: nd, key: openKey{owner: "nlm:" + owner, node: nd},
			lock: &lockOwner{open: h.open, owner: owner}}
		h.states[k] = st
	}
	locks := addLock(t.peekFileLocked(nd).locks, st, start, end, write)
	if s := t.setRangesLocked(st, locks); s != nfs4.OK {
		if st.lock.ranges == 0 {
			delete(h.states, k)
		}
		return nlmDeniedNoLocks
	}
	h.idleSince = time.Time{}
	return nlmGranted
}

// unlockLocked releases owner's range on nd.
func (n *nlmState) unlockLocked(h *nlmHost, owner string, nd *node, start, end uint64) {
	t := n.s.state
	k := nlmStateKey{owner, nd.fileID()}
	st := h.states[k]
	if st == nil {
		return
	}
	// Splitting a range may need one more: past the cap the whole
	// owner's locks on the file go rather than none (an unlock must not
	// fail).
	if t.setRangesLocked(st, cut(t.peekFileLocked(st.node).locks, st, start, end)) != nfs4.OK {
		t.setRangesLocked(st, removeOwnerLocks(t.peekFileLocked(st.node).locks, st))
	}
	if st.lock.ranges == 0 {
		delete(h.states, k)
	}
	n.idleLocked(h)
}

func (n *nlmState) idleLocked(h *nlmHost) {
	if !h.holdsLocked() && h.idleSince.IsZero() {
		h.idleSince = time.Now()
	}
}

// freeHostLocked releases everything host h holds or waits for, and
// forgets it.
func (n *nlmState) freeHostLocked(h *nlmHost) {
	t := n.s.state
	for k, st := range h.states {
		t.setRangesLocked(st, removeOwnerLocks(t.peekFileLocked(st.node).locks, st))
		delete(h.states, k)
	}
	for i := 0; i < len(n.blocks); {
		if n.blocks[i].host == h {
			n.removeBlockLocked(i)
			continue
		}
		i++
	}
	for id, list := range n.shares {
		out := list[:0]
		for _, sh := range list {
			if sh.host != h {
				out = append(out, sh)
			}
		}
		if len(out) == 0 {
			delete(n.shares, id)
		} else {
			n.shares[id] = out
		}
	}
	h.shares = 0
	n.forgetHostLocked(h)
}

func (n *nlmState) forgetHostLocked(h *nlmHost) {
	if n.hosts[h.key] == h {
		delete(n.hosts, h.key)
	}
	delete(n.byClient, h.cl)
	if h.monitored {
		h.monitored = false
		n.nsm.gen.Add(1)
	}
}

// holderOf describes the owner of lock l for TEST.
func (n *nlmState) holderOf(l *lockRange) nlmHolder {
	hd := nlmHolder{exclusive: l.write, offset: l.start, length: nlmLen(l.start, l.end)}
	if _, ok := n.byClient[l.st.client]; ok && len(l.st.lock.owner) >= 4 {
		hd.svid = int32(binary.BigEndian.Uint32([]byte(l.st.lock.owner[:4])))
		hd.oh = []byte(l.st.lock.owner[4:])
	}
	return hd
}

// findBlockLocked returns the index of the block of owner for the range.
func (n *nlmState) findBlockLocked(h *nlmHost, owner string, id fileID, start, end uint64) int {
	for i, b := range n.blocks {
		if b.host == h && b.owner == owner && b.start == start && b.end == end && b.node.fileID() == id {
			return i
		}
	}
	return -1
}

func (n *nlmState) removeBlockLocked(i int) {
	b := n.blocks[i]
	n.blocks = append(n.blocks[:i], n.blocks[i+1:]...)
	b.host.blocks--
	if !b.granted {
		n.waiting.Add(-1)
	}
	n.idleLocked(b.host)
}

// start begins the NLM side: the hosts file, the grace period and the
// notification of the hosts of the previous boot (nsm.go), and the loop
// that grants blocked locks.
func (s *Server) startNLM() error {
	n := newNLMState(s)
	prev, err := n.nsm.load(s.cfg.StateDir)
	if err != nil {
		return err
	}
	s.nlm = n
	if len(prev) > 0 {
		s.state.mu.Lock()
		s.state.startNLMGrace(len(prev), time.Duration(s.cfg.GraceTime)*time.Second)
		s.state.mu.Unlock()
	}
	n.nsm.gen.Add(1) // the new state number
	if err := n.syncHosts(); err != nil {
		return err
	}
	n.registerGauges()
	go n.loop()
	if len(prev) > 0 {
		go n.notifyAll(prev)
	}
	return nil
}

// loop grants blocked locks when a file changes, and every nlmTick
// retries unanswered GRANTED callbacks, drops blocks no longer asked for
// and forgets idle hosts.
func (n *nlmState) loop() {
	tick := time.NewTicker(nlmTick)
	defer tick.Stop()
	for {
		select {
		case <-n.s.stop:
			return
		case <-n.kick:
			n.grantBlocked()
		case now := <-tick.C:
			n.maintain(now)
			n.grantBlocked()
		}
	}
}

// grantBlocked takes the locks queued blocks wait for where they are now
// free, and sends their GRANTED callbacks.
func (n *nlmState) grantBlocked() {
	t := n.s.state
	t.mu.Lock()
	var send []*nlmBlock
	if !t.inGraceLocked() {
		for _, b := range n.blocks {
			if b.granted {
				continue
			}
			if t.lockConflictLocked(b.node, b.host.cl, b.owner, b.start, b.end, b.write) != nil {
				continue
			}
			if n.setLockLocked(b.host, b.owner, b.node, b.start, b.end, b.write) != nlmGranted {
				continue
			}
			b.granted = true
			n.waiting.Add(-1)
			if !b.host.monitored {
				b.host.monitored = true
				n.nsm.gen.Add(1)
			}
			b.sending = true
			send = append(send, b)
		}
	}
	t.mu.Unlock()
	if len(send) == 0 {
		return
	}
	if err := n.syncHosts(); err != nil {
		n.s.log.Warn("nlm: cannot save the hosts file", "err", err)
	}
	for _, b := range send {
		go n.sendGranted(b)
	}
}

// maintain is the periodic work of loop.
func (n *nlmState) maintain(now time.Time) {
	t := n.s.state
	t.mu.Lock()
	var send []*nlmBlock
	for i := 0; i < len(n.blocks); {
		b := n.blocks[i]
		switch {
		case !b.granted && now.Sub(b.refreshed) > nlmBlockTTL:
			n.removeBlockLocked(i)
			continue
		case b.granted && !b.sending && b.tries >= nlmCallbackAttempts:
			// The host never took the grant: release it, as knfsd
			// does when the client answers that it does not want it.
			n.s.log.Info("nlm: host did not answer GRANTED; lock released", "host", b.host.key.name)
			n.removeBlockLocked(i)
			n.unlockLocked(b.host, b.owner, b.node, b.start, b.end)
			continue
		case b.granted && !b.sending:
			b.sending = true
			send = append(send, b)
		}
		i++
	}
	for _, h := range n.hosts {
		if !h.holdsLocked() && !h.idleSince.IsZero() && now.Sub(h.idleSince) > nlmHostIdle {
			n.forgetHostLocked(h)
		}
	}
	t.mu.Unlock()
	if err := n.syncHosts(); err != nil {
		n.s.log.Warn("nlm: cannot save the hosts file", "err", err)
	}
	for _, b := range send {
		go n.sendGranted(b)
	}
}

// sendGranted tells b's host that its blocked lock is granted (NLM4
// GRANTED, synchronous, over TCP to the port its rpcbind gives for NLM
// 4) and settles the block by the answer: taken, or refused (the lock is
// released), or no answer (retried by maintain).
func (n *nlmState) sendGranted(b *nlmBlock) {
	stat, err := n.callHost(b.host.key.addr, nlmProcGranted, func(e *xdr.Encoder) {
		e.Opaque(b.cookie[:])
		e.Bool(b.write)
		b.lock.encode(e)
	})
	n.settleGrant(b, stat, err)
}

// settleGrant finishes a GRANTED callback of b with the host's answer.
func (n *nlmState) settleGrant(b *nlmBlock, stat uint32, err error) {
	t := n.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	b.sending = false
	i := -1
	for j, x := range n.blocks {
		if x == b {
			i = j
		}
	}
	if i < 0 || !b.granted {
		return // cancelled, or its host freed, meanwhile
	}
	switch {
	case err != nil:
		b.tries++
		if b.tries == 1 {
			n.s.log.Info("nlm: GRANTED callback failed; retrying", "host", b.host.key.name, "err", err)
		}
	case stat == nlmGranted:
		n.removeBlockLocked(i)
	case stat == nlmDeniedGrace:
		b.tries++ // the host is in its own grace period: try again later
	default:
		n.removeBlockLocked(i)
		n.unlockLocked(b.host, b.owner, b.node, b.start, b.end)
	}
}

// callHost makes an NLM call to the lockd of the host at addr and returns
// the nlm4_res status of its answer.
func (n *nlmState) callHost(addr netip.Addr, proc uint32, args func(*xdr.Encoder)) (uint32, error) {
	port, err := n.getport(addr, NLMProgram, NLMVersion, ipprotoTCP)
	if err != nil {
		return 0, err
	}
	body, err := rpcCall("tcp", netip.AddrPortFrom(addr, port), NLMProgram, NLMVersion, proc, n.nsm.name(n.s), args)
	if err != nil {
		return 0, err
	}
	d := xdr.NewDecoder(body)
	d.Opaque(nlmMaxNetobj)
	stat := d.Uint32()
	if d.Err() != nil {
		return 0, errShortReply
	}
	return stat, nil
}

// sendRes answers an NLM _MSG call with the matching _RES call to the
// host's lockd (asynchronous NLM; Linux clients do not use it).
func (n *nlmState) sendRes(addr netip.Addr, proc uint32, res func(*xdr.Encoder)) {
	port, err := n.getport(addr, NLMProgram, NLMVersion, ipprotoTCP)
	if err == nil {
		_, err = rpcCall("tcp", netip.AddrPortFrom(addr, port), NLMProgram, NLMVersion, proc, n.nsm.name(n.s), res)
	}
	if err != nil {
		n.s.log.Info("nlm: cannot send an asynchronous result", "addr", addr, "proc", proc, "err", err)
	}
}

// getport asks the rpcbind of the host at addr for a program's port.
func (n *nlmState) getport(addr netip.Addr, prog, vers, proto uint32) (uint16, error) {
	port := n.s.cfg.NSMRPCBindPort
	if port == 0 {
		port = defaultRPCBindPort
	}
	return rpcbindGetport(netip.AddrPortFrom(addr, uint16(port)), prog, vers, proto)
}

// startNLMGrace puts the server in its grace period for the NLM hosts of
// the previous boot (with the NFSv4 clients' one when there is that too):
// v3 and v4 reclaims alike are granted during it, new locks of neither.
// The caller holds stateTable.mu.
func (t *stateTable) startNLMGrace(hosts int, d time.Duration) {
	if t.grace.pending == nil {
		t.grace.pending = make(map[clientRecord]bool)
		t.grace.until = time.Now().Add(d)
	}
	t.grace.nlm = true
	t.s.log.Info("grace period: NLM hosts of the previous boot may reclaim their locks", "hosts", hosts, "seconds", time.Until(t.grace.until).Seconds())
}

// registerGauges adds the NLM gauges to the server's metrics.
func (n *nlmState) registerGauges() {
	gauge := func(name, help string, f func() int) {
		n.s.stats.AddGauge(metrics.Gauge{Name: name, Help: help, Value: func() float64 {
			n.s.state.mu.Lock()
			defer n.s.state.mu.Unlock()
			return float64(f())
		}})
	}
	gauge("nlm_hosts", "NFSv3 hosts known to the lock manager (NLM)", func() int { return len(n.hosts) })
	gauge("nlm_lock_ranges", "byte ranges held by NLM (NFSv3) lock owners", func() int {
		r := 0
		for _, h := range n.hosts {
			r += h.cl.lockRanges
		}
		return r
	})
	gauge("nlm_blocked", "blocking NLM LOCK requests waiting for a range", func() int { return int(n.waiting.Load()) })
}
