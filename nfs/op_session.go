package nfs

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

const serverImplDomain = "nfsd-uring.dev"

// serverOwner is the server's so_major_id and server_scope: the host's
// name and a digest of the handle key, so it stays the same across
// restarts on one --state-dir (clients recognise the server they reclaim
// from) and differs between servers on one host. Two servers that gave
// one owner would look like one to a client's trunking detection (Linux
// nfs4_detect_session_trunking, nfs41_walk_client_list): a pNFS
// metadata server and its data servers must not. knfsd uses the node
// name, one per host.
func serverOwner(key []byte) []byte {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = serverImplDomain
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("server_owner4"))
	return fmt.Appendf(nil, "%s/%x", host, m.Sum(nil)[:8])
}

// decodeStateProtect reads state_protect4_a and reports whether it is one we
// accept (SP4_NONE, or SP4_MACH_CRED, which machCredFor then checks against
// the caller; its spo_must_enforce is not kept, the server answers its own
// list as knfsd does). SP4_SSV
// is decoded whole and refused with NFS4ERR_ENCR_ALG_UNSUPP, as knfsd
// refuses it: well-formed arguments, an algorithm not offered (without
// its arguments read, the rest of the op decoded as garbage: BADXDR).
func decodeStateProtect(d *xdr.Decoder) (stateProtect, nfs4.Status) {
	sp := stateProtect{how: d.Uint32()}
	switch sp.how {
	case nfs4.SP4None:
	case nfs4.SP4MachCred:
		nfs4.DecodeBitmap(d)
		sp.allow = nfs4.DecodeBitmap(d)
	case nfs4.SP4SSV:
		skipSSVParms(d)
		return sp, nfs4.ErrEncrAlgUnsupp
	default:
		return sp, nfs4.ErrNotsupp
	}
	return sp, nfs4.OK
}

// skipSSVParms reads ssv_sp_parms4 (RFC 8881 section 18.35.1): the
// state_protect_ops4 bitmaps, the hash and encryption algorithm OIDs, the
// window and the number of GSS handles.
func skipSSVParms(d *xdr.Decoder) {
	nfs4.DecodeBitmap(d)
	nfs4.DecodeBitmap(d)
	for range 2 { // ssp_hash_algs, ssp_encr_algs: sec_oid4<>
		n := d.ArrayLen(maxSSVAlgs, 4)
		for i := 0; i < n && d.Err() == nil; i++ {
			d.Opaque(nfs4.OpaqueLimit)
		}
	}
	d.Uint32() // ssp_window
	d.Uint32() // ssp_num_gss_handles
}

// maxSSVAlgs bounds the algorithm lists of an SP4_SSV EXCHANGE_ID.
const maxSSVAlgs = 64

func opExchangeID(c *compound) nfs4.Status {
	d := c.d
	var verf [8]byte
	copy(verf[:], d.Fixed(8))
	owner := d.Opaque(nfs4.OpaqueLimit)
	flags := d.Uint32()
	spa, sp := decodeStateProtect(d)
	impl := decodeImplID(d)
	// A zero-length co_ownerid names no client; knfsd's decoder refuses
	// it (nfsd4_decode_opaque: nfserr_bad_xdr). Accepted, it made a
	// client record the clients file could not hold (issue 21).
	if d.Err() != nil || len(owner) == 0 {
		return nfs4.ErrBadXDR
	}
	if sp != nfs4.OK {
		return sp
	}
	if flags&^(nfs4.ExchgIDSuppMovedRefer|nfs4.ExchgIDSuppMovedMigr|nfs4.ExchgIDBindPrincStateid|
		nfs4.ExchgIDUseNonPNFS|nfs4.ExchgIDUsePNFSMDS|nfs4.ExchgIDUsePNFSDS|nfs4.ExchgIDUpdConfirmedRecA) != 0 {
		return nfs4.ErrInval
	}
	mach, st := machCredFor(spa, c.caller) // machcred.go
	if st != nfs4.OK {
		return st
	}
	cl, st := c.s.state.exchangeID(c.conn.addr, string(owner), verf, c.caller, mach, flags&nfs4.ExchgIDUpdConfirmedRecA != 0)
	if st != nfs4.OK {
		return st
	}
	c.s.state.setImplID(cl.id, impl)
	e := c.e
	e.Uint64(cl.id)
	e.Uint32(cl.seq)
	// RFC 8881 section 13.1: a metadata server says USE_PNFS_MDS (and
	// not USE_NON_PNFS, which excludes the pNFS roles).
	rflags := uint32(nfs4.ExchgIDUseNonPNFS)
	if c.s.mds != nil {
		rflags = nfs4.ExchgIDUsePNFSMDS
	}
	// Any export can be a loosely coupled flexfiles data server (RFC 8435
	// section 2.2: plain NFSv4.1 I/O with the anonymous stateid), so a
	// client asking for the data-server role gets it. The Linux client
	// asks (EXCHGID4_FLAG_USE_PNFS_DS in eia_flags) and drops a data server
	// whose reply lacks it (fs/nfs/nfs4session.c nfs4_init_ds_session:
	// -ENODEV), then reports it NFS4ERR_NXIO to the MDS. RFC 8881 section
	// 13.1 allows USE_PNFS_DS with either other role bit.
	if flags&nfs4.ExchgIDUsePNFSDS != 0 {
		rflags |= nfs4.ExchgIDUsePNFSDS
	}
	if cl.confirmed {
		rflags |= nfs4.ExchgIDConfirmedR
	}
	e.Uint32(rflags)
	encodeStateProtect(e, cl.mach) // machcred.go
	// server_owner4: one owner for the whole server, so clients may trunk
	// connections onto one client record; another server (a pNFS data
	// server beside its metadata server) has another (serverOwner).
	e.Uint64(0)
	e.Opaque(c.s.owner)
	e.Opaque(c.s.owner)
	e.Uint32(1)
	e.String(serverImplDomain)
	e.String("nfsd-uring")
	e.Int64(c.s.start.Unix())
	e.Uint32(0)
	return nfs4.OK
}

// clientView is what EXCHANGE_ID reports of a client record, read under
// the state lock.
type clientView struct {
	id        uint64
	seq       uint32
	confirmed bool
	mach      *machCred // the record's state protection, as answered
}

func viewOf(c *client) clientView { return clientView{c.id, c.csSeq, c.confirmed, c.mach} }

// exchangeID finds or makes the client record for owner, following the
// case table of RFC 8881 section 18.35.4 as knfsd's nfsd4_exchange_id
// does. The principal is the uid of the caller (and, for a record made
// with SP4_MACH_CRED, mach, its Kerberos principal: machcred.go), addr the address
// it called from (a new record counts against it). t.owners holds
// the confirmed record of each owner, t.unconfirmed the unconfirmed one;
// an owner may have both while a rebooted client (case 5) is confirming
// its new record.
func (t *stateTable) exchangeID(addr netip.Addr, owner string, verf [8]byte, caller Cred, mach *machCred, update bool) (clientView, nfs4.Status) {
	uid := caller.UID
	t.mu.Lock()
	defer t.mu.Unlock()
	conf := t.owners[owner]
	var replaced *client
	switch {
	case conf != nil && update:
		switch {
		case !conf.machMatch(caller):
			return clientView{}, nfs4.ErrWrongCred // knfsd: nfsd4_mach_creds_match
		case conf.principal != uid:
			return clientView{}, nfs4.ErrPerm // case 9
		case conf.verifier != verf:
			return clientView{}, nfs4.ErrNotSame // case 8
		}
		conf.renew()
		return viewOf(conf), nfs4.OK // case 6
	case conf != nil && (conf.principal != uid || !conf.machMatch(caller)):
		// Case 3, a collision: another principal using this owner. A
		// record holding state is kept (it must not be destroyed by
		// someone else); one without is replaced at once.
		if conf.hasState() {
			return clientView{}, nfs4.ErrClidInuse
		}
		replaced = conf
	case conf != nil && conf.verifier == verf:
		conf.renew()
		return viewOf(conf), nfs4.OK // case 2
	case conf == nil && update:
		return clientView{}, nfs4.ErrNoent // case 7
	}
	// Case 5 (a rebooted client: its confirmed record stays until the new
	// one is confirmed), case 4 (an unconfirmed record is replaced, even
	// by an identical request: it gets a new client id) or case 1.
	if old := t.unconfirmed[owner]; old != nil {
		t.removeClientLocked(old)
	}
	if replaced != nil {
		t.removeClientLocked(replaced)
	}
	if !t.roomForClientLocked(addr) {
		return clientView{}, nfs4.ErrDelay
	}
	c := &client{
		id: t.newClientID(), owner: owner, verifier: verf, principal: uid, addr: addr, csSeq: 1,
		sessions: make(map[[nfs4.SessionIDSize]byte]*session),
		opens:    make(map[openKey]*openState),
		mach:     mach,
	}
	c.renew()
	t.clients[c.id] = c
	t.useOf(addr).clients++
	t.unconfirmed[owner] = c
	return viewOf(c), nfs4.OK
}

func (c *client) renew() { c.renewed.Store(time.Now().UnixNano()) }

func decodeChannelAttrs(d *xdr.Decoder) channelAttrs {
	var a channelAttrs
	a.headerPad = d.Uint32()
	a.maxReq = d.Uint32()
	a.maxResp = d.Uint32()
	a.maxRespCached = d.Uint32()
	a.maxOps = d.Uint32()
	a.maxReqs = d.Uint32()
	n := d.ArrayLen(1, 4)
	for i := 0; i < n; i++ {
		d.Uint32()
	}
	return a
}

func (a channelAttrs) encode(e *xdr.Encoder) {
	e.Uint32(a.headerPad)
	e.Uint32(a.maxReq)
	e.Uint32(a.maxResp)
	e.Uint32(a.maxRespCached)
	e.Uint32(a.maxOps)
	e.Uint32(a.maxReqs)
	e.Uint32(0)
}

// minU32 returns the smaller of a and b, treating 0 from the client as "no
// preference".
func minU32(a, b uint32) uint32 {
	if a == 0 || b < a {
		return b
	}
	return a
}

func min32(a, b uint32) uint32 {
	if a < b {
		return a
	}
	return b
}

// Smallest channel attributes a session can work with, as knfsd's
// NFSD_MIN_REQ_HDR_SEQ_SZ and NFSD_MIN_RESP_HDR_SEQ_SZ: room for the RPC
// header with an empty credential, the COMPOUND header and SEQUENCE, so
// 64 bytes each way. Anything smaller is NFS4ERR_TOOSMALL (RFC 8881
// section 18.36.3); anything above may still fail single requests with
// NFS4ERR_REQ_TOO_BIG or NFS4ERR_REP_TOO_BIG, which is the client's choice.
const (
	minChannelRequest  = 64
	minChannelResponse = 64
)

// createSessionFlags are the csa_flags RFC 8881 section 18.36 defines.
const createSessionFlags = nfs4.CreateSessionPersist | nfs4.CreateSessionConnBackChan | nfs4.CreateSessionConnRDMA

func opCreateSession(c *compound) nfs4.Status {
	d := c.d
	clientID := d.Uint64()
	seq := d.Uint32()
	flags := d.Uint32()
	fore := decodeChannelAttrs(d)
	back := decodeChannelAttrs(d)
	cbProg := d.Uint32()                   // deleg: back channel
	cbSec, cbSecOK := decodeCallbackSec(d) // deleg: back channel
	if d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if flags&^createSessionFlags != 0 {
		return nfs4.ErrInval
	}
	s := c.s
	if fore.maxReq < minChannelRequest || fore.maxResp < minChannelResponse || fore.maxOps < 2 {
		return nfs4.ErrToosmall
	}
	// The back channel is checked too, though none is offered: a client
	// asking for an unusable one is told so (knfsd's
	// check_backchannel_attrs; pynfs CSESS29).
	if back.maxReq < minChannelRequest || back.maxResp < minChannelResponse || back.maxOps < 2 {
		return nfs4.ErrToosmall
	}
	max := uint32(s.MaxRecord())
	fore.headerPad = 0
	fore.maxReq = min32(fore.maxReq, max)
	fore.maxResp = min32(fore.maxResp, max)
	// 0 from the client (the Linux client sends 0) means no preference.
	fore.maxRespCached = min32(minU32(fore.maxRespCached, uint32(s.cfg.MaxCachedReply)), uint32(s.cfg.MaxCachedReply))
	fore.maxOps = min32(fore.maxOps, 64)
	fore.maxReqs = min32(minU32(fore.maxReqs, uint32(s.cfg.Slots)), uint32(s.cfg.Slots))
	if fore.maxReqs == 0 {
		return nfs4.ErrToosmall
	}
	back.headerPad = 0
	back.maxReqs = min32(back.maxReqs, 1)
	flags &^= nfs4.CreateSessionPersist | nfs4.CreateSessionConnRDMA
	return s.state.createSession(c, clientID, seq, flags, fore, back, backChannelArgs{cbProg, cbSec, cbSecOK})
}

// backChannelArgs is what CREATE_SESSION says of the back channel (deleg).
type backChannelArgs struct {
	prog  uint32
	sec   cbSec
	secOK bool
}

func (t *stateTable) createSession(c *compound, clientID uint64, seq, flags uint32, fore, back channelAttrs, cb backChannelArgs) nfs4.Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	cl := t.clients[clientID]
	if cl == nil {
		return nfs4.ErrStaleClientid
	}
	if !cl.machMatch(c.caller) {
		return nfs4.ErrWrongCred // machcred.go: spo_must_enforce
	}
	if !cl.confirmed && cl.principal != c.caller.UID {
		// RFC 8881 section 18.36.4: only the principal that made an
		// unconfirmed record may confirm it. Once confirmed, with
		// SP4_NONE any principal may add sessions (pynfs CSESS10, as
		// knfsd): AUTH_SYS uids are the client's say-so, so checking
		// them would guard nothing; the random client id does.
		return nfs4.ErrClidInuse
	}
	switch {
	case seq == cl.csSeq-1 && cl.csReply != nil:
		// A retransmit: the reply cached for this sequence id
		// (RFC 8881 section 18.36.4), whichever compound carries it.
		c.e.Fixed(cl.csReply)
		return nfs4.OK
	case seq != cl.csSeq:
		return nfs4.ErrSeqMisordered
	case len(cl.sessions) >= t.s.cfg.MaxSessionsPerClient:
		return nfs4.ErrNospc
	}
	// Checked before the sequence id moves: a refused CREATE_SESSION is
	// not one the client's retry would replay.
	if !t.s.admitsAddr(c.conn.addr) {
		// No export admits this address: its client could do nothing
		// with a session but hold memory, so its record stays
		// unconfirmed, the first to go (issue 21). NFS4ERR_PERM, the
		// error knfsd gives a client the exports refuse (its insecure
		// port check), ends a Linux mount at once.
		return nfs4.ErrPerm
	}
	fore.maxReqs = t.reserveSlotsLocked(cl.addr, fore.maxReqs, fore.maxRespCached)
	cl.csSeq++
	if !cl.confirmed {
		t.confirmLocked(cl)
	}
	cl.renew()
	sess := &session{client: cl, fore: fore, slots: make([]slot, fore.maxReqs)}
	sess.id = t.newSessionID()
	sess.drc = slotsCost(fore.maxReqs, fore.maxRespCached)
	// RFC 8881 section 18.36.4: the connection CREATE_SESSION came on is
	// bound to the new session.
	sess.bind(c.conn)
	// deleg: the back channel; CONN_BACK_CHAN binds this connection for it.
	sess.initBack(c.minor, cb.prog, cb.sec, cb.secOK)
	if flags&nfs4.CreateSessionConnBackChan != 0 {
		sess.bindBack(c.conn)
	}
	t.sessions.put(sess.id, sess)
	cl.sessions[sess.id] = sess
	start := c.e.Pos()
	c.e.Fixed(sess.id[:])
	c.e.Uint32(seq)
	c.e.Uint32(flags)
	fore.encode(c.e)
	back.encode(c.e)
	cl.csReply = append(cl.csReply[:0], c.e.Header()[start:]...)
	return nfs4.OK
}

// admitsAddr reports whether some export's client specs name a: a client
// there may use the server (the source port is checked per request).
func (s *Server) admitsAddr(a netip.Addr) bool {
	for _, e := range s.table().exports {
		if _, ok := e.access(a); ok {
			return true
		}
	}
	return false
}

// confirmLocked makes cl its owner's confirmed record; a rebooted client's
// earlier record, and its state, go now (RFC 8881 section 18.35.4 case 5).
func (t *stateTable) confirmLocked(cl *client) {
	if old := t.owners[cl.owner]; old != nil && old != cl {
		t.removeClientLocked(old)
	}
	if t.unconfirmed[cl.owner] == cl {
		delete(t.unconfirmed, cl.owner)
	}
	cl.confirmed = true
	t.owners[cl.owner] = cl
}

// maxBoundConns bounds a session's connection list; the oldest binding is
// forgotten first (a client reconnecting over and over must not grow it).
// A session used over more connections than the list holds rebinds one on
// nearly every SEQUENCE, under the session's lock, so the bound leaves
// room beyond Linux's nconnect=16 for reconnects and trunking.
const maxBoundConns = 64

// bind associates conn with the session. A connection already bound
// (every SEQUENCE but a connection's first) costs no lock.
func (sess *session) bind(conn *Conn) {
	if conn == nil || sess.boundTo(conn) {
		return
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	var old []uint64
	if p := sess.conns.Load(); p != nil {
		old = *p
	}
	if slices.Contains(old, conn.ID) {
		return
	}
	if len(old) >= maxBoundConns {
		old = old[1:]
	}
	conns := append(slices.Clip(old), conn.ID) // a new slice: readers hold the old one
	sess.conns.Store(&conns)
}

// boundTo reports whether conn is bound to the session.
func (sess *session) boundTo(conn *Conn) bool {
	if conn == nil {
		return false
	}
	p := sess.conns.Load()
	return p != nil && slices.Contains(*p, conn.ID)
}

// sequenceArgs is SEQUENCE4args (RFC 8881 section 18.46.1).
type sequenceArgs struct {
	sessionID []byte // aliases the request
	seqid     uint32
	slotID    uint32
	highest   uint32 // sa_highest_slotid
	cacheThis bool
}

func decodeSequence(d *xdr.Decoder) sequenceArgs {
	return sequenceArgs{sessionID: d.Fixed(nfs4.SessionIDSize), seqid: d.Uint32(), slotID: d.Uint32(),
		highest: d.Uint32(), cacheThis: d.Bool()}
}

func opSequence(c *compound) nfs4.Status {
	a := decodeSequence(c.d)
	sid, seq, slotID, highest, cacheThis := a.sessionID, a.seqid, a.slotID, a.highest, a.cacheThis
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	sess := c.s.state.session(sid)
	if sess == nil {
		return nfs4.ErrBadsession
	}
	// RFC 8881 section 2.10.6.4: the session's limits, checked before the
	// slot is touched.
	if c.nops > sess.fore.maxOps {
		return nfs4.ErrTooManyOps
	}
	if c.recLen > int(sess.fore.maxReq) {
		return nfs4.ErrReqTooBig
	}
	nslots := uint32(len(sess.slots))
	if slotID >= nslots {
		return nfs4.ErrBadslot
	}
	if highest >= nslots || highest < slotID {
		return nfs4.ErrBadHighSlot
	}
	if st := c.takeSlot(sess, slotID, seq); st != nfs4.OK {
		return st
	}
	if c.rep.replay.ok {
		return nfs4.OK
	}
	c.sess = sess
	c.cacheThis = cacheThis
	sess.client.renew()
	c.maxResp = int(sess.fore.maxResp)
	c.maxCached = int(sess.fore.maxRespCached)
	e := c.e
	e.Fixed(sess.id[:])
	e.Uint32(seq)
	e.Uint32(slotID)
	e.Uint32(nslots - 1)
	e.Uint32(nslots - 1)
	e.Uint32(sess.seqStatus()) // deleg: revoked delegations, back channel down
	return nfs4.OK
}

// opDestroySession destroys a session. RFC 8881 section 18.37.3: it must
// come on a connection bound to that session
// (NFS4ERR_CONN_NOT_BOUND_TO_SESSION otherwise), so knowing a session id is
// not enough to destroy another client's session.
// destroySessionArgs is DESTROY_SESSION4args.
type destroySessionArgs struct {
	sessionID []byte // aliases the request
}

func decodeDestroySession(d *xdr.Decoder) destroySessionArgs {
	return destroySessionArgs{sessionID: d.Fixed(nfs4.SessionIDSize)}
}

func opDestroySession(c *compound) nfs4.Status {
	sid := decodeDestroySession(c.d).sessionID
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	t := c.s.state
	var k [nfs4.SessionIDSize]byte
	copy(k[:], sid)
	if c.sess != nil && c.sess.id == k && c.more {
		// RFC 8881 section 18.37.3: destroying the session the COMPOUND
		// runs in, DESTROY_SESSION MUST be its last op (knfsd's
		// nfsd4_destroy_session: NFS4ERR_NOT_ONLY_OP; pynfs DSESS9004).
		return nfs4.ErrNotOnlyOp
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	sess := t.sessions.get(k)
	if sess == nil {
		return nfs4.ErrBadsession
	}
	if !sess.boundTo(c.conn) {
		return nfs4.ErrConnNotBound
	}
	if sess.client.principal != c.caller.UID || !sess.client.machMatch(c.caller) {
		return nfs4.ErrWrongCred
	}
	t.removeSessionLocked(sess)
	if c.sess == sess {
		// The reply still goes out; the slot is simply not cached.
		c.rep.slot = nil
	}
	return nfs4.OK
}

// opDestroyClientid destroys a client record without sessions. Only its
// principal may (knfsd checks the same through mach_creds_match).
// clientidArgs is the argument of the ops that take a client id alone
// (DESTROY_CLIENTID, DELEGPURGE).
type clientidArgs struct {
	clientID uint64
}

func decodeClientidArgs(d *xdr.Decoder) clientidArgs { return clientidArgs{clientID: d.Uint64()} }

func opDestroyClientid(c *compound) nfs4.Status {
	id := decodeClientidArgs(c.d).clientID
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	t := c.s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	cl := t.clients[id]
	if cl == nil {
		return nfs4.ErrStaleClientid
	}
	if cl.principal != c.caller.UID || !cl.machMatch(c.caller) {
		return nfs4.ErrWrongCred
	}
	if c.s.clientHasState(cl) {
		return nfs4.ErrClientidBusy
	}
	t.removeClientLocked(cl)
	return nfs4.OK
}

// clientHasState reports whether DESTROY_CLIENTID must answer
// NFS4ERR_CLIENTID_BUSY (RFC 8881 section 18.50.3): the client still has
// sessions, opens, locks or delegations, layouts, or an asynchronous COPY
// running (knfsd's client_has_state). Called with the state table locked.
func (s *Server) clientHasState(cl *client) bool {
	return len(cl.sessions) > 0 || len(cl.opens) > 0 || len(cl.layouts) > 0 || s.copies.runningFor(cl) > 0
}

// bindConnArgs is BIND_CONN_TO_SESSION4args (RFC 8881 section 18.34.1).
// RDMA mode is never granted: the reply's bctsr_use_conn_in_rdma_mode is
// false, as for any connection that cannot do it (section 18.34.3).
type bindConnArgs struct {
	sessID      []byte // aliases the request
	dir         uint32
	useConnRDMA bool
}

func decodeBindConn(d *xdr.Decoder) bindConnArgs {
	return bindConnArgs{sessID: d.Fixed(nfs4.SessionIDSize), dir: d.Uint32(), useConnRDMA: d.Bool()}
}

// opBindConnToSession binds the connection to a session; only the
// client's principal may (RFC 8881 section 18.34.3; with SP4_NONE the
// principal is the AUTH_SYS uid that made the client record).
func opBindConnToSession(c *compound) nfs4.Status {
	a := decodeBindConn(c.d)
	sid, dir := a.sessID, a.dir
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	sess := c.s.state.session(sid)
	if sess == nil {
		return nfs4.ErrBadsession
	}
	if dir != nfs4.CDRFore && dir != nfs4.CDRBack && dir != nfs4.CDRForeOrBoth && dir != nfs4.CDRBackOrBoth {
		return nfs4.ErrInval
	}
	if sess.client.principal != c.caller.UID || !sess.client.machMatch(c.caller) {
		return nfs4.ErrWrongCred
	}
	// deleg: a connection bound for the back channel carries callbacks;
	// the "or both" directions get both (RFC 8881 section 18.34.3).
	res := uint32(nfs4.CDRFore)
	switch dir {
	case nfs4.CDRBack:
		res = nfs4.CDRBack
	case nfs4.CDRForeOrBoth, nfs4.CDRBackOrBoth:
		res = nfs4.CDRBoth
	}
	if res != nfs4.CDRBack {
		sess.bind(c.conn)
	}
	if res != nfs4.CDRFore {
		sess.bindBack(c.conn)
	}
	c.e.Fixed(sess.id[:])
	c.e.Uint32(res)
	c.e.Bool(false)
	return nfs4.OK
}

// reclaimCompleteArgs is RECLAIM_COMPLETE4args.
type reclaimCompleteArgs struct {
	oneFS bool
}

func decodeReclaimComplete(d *xdr.Decoder) reclaimCompleteArgs {
	return reclaimCompleteArgs{oneFS: d.Bool()}
}

func opReclaimComplete(c *compound) nfs4.Status {
	oneFS := decodeReclaimComplete(c.d).oneFS
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if oneFS {
		return nfs4.OK
	}
	return c.s.state.reclaimComplete(c.sess.client)
}

// opBackchannelCtl sets the session's callback program and security
// (RFC 8881 section 18.33).
func opBackchannelCtl(c *compound) nfs4.Status {
	prog := c.d.Uint32()
	sec, ok := decodeCallbackSec(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	if !ok {
		return nfs4.ErrEncrAlgUnsupp
	}
	c.sess.setBackSec(prog, sec, ok)
	return nfs4.OK
}
