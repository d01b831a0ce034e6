// Package nfs is the protocol layer of nfsd-uring: ONC RPC, NFSv4.1/4.2
// COMPOUND processing, client/session/open state, file handles and exports.
// It decides what to read and how to encode it; the engine moves the bytes
// (see Read and Reply).
package nfs

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Config configures a Server.
type Config struct {
	Exports []Export
	// MaxIO is the largest READ/WRITE payload (default 1 MiB).
	MaxIO int
	// Slots is the fore-channel slot count offered per session (default 128).
	Slots int
	// LeaseTime is the lease in seconds (default 90).
	LeaseTime uint32
	// GraceTime is the grace period after a restart in seconds (default:
	// the lease time), during which clients of the previous boot reclaim
	// their state (state_grace.go).
	GraceTime uint32
	// StateDir keeps what must survive a restart: the key that signs file
	// handles. Empty: a key for this process only (tests).
	StateDir string
	// ClientRecords, when set, keeps the clients that may reclaim after a
	// restart instead of StateDir's clients file (state_store.go).
	ClientRecords ClientRecordStore
	// Caps on per-client state (defaults in state_limits.go). Past them a
	// client gets an NFS error, never more of the server's memory.
	MaxClients             int // client records (EXCHANGE_ID answers NFS4ERR_DELAY past it)
	MaxClientsPerAddress   int // client records from one IP address (0: MaxClients/8, at least 16; NFS4ERR_DELAY past it, for that address only)
	MaxSessionsPerClient   int // CREATE_SESSION answers NFS4ERR_NOSPC past it
	MaxOpensPerClient      int // open and lock stateids (NFS4ERR_RESOURCE past it)
	MaxLockRangesPerClient int // byte-range locks held (NFS4ERR_RESOURCE past it)
	// MaxCachedReply is the ca_maxresponsesize_cached offered: what a slot
	// keeps of a reply, file data excluded.
	MaxCachedReply int
	// ReplyCacheMemory bounds the reply caches of all sessions together;
	// sessions made when it runs low get fewer slots.
	ReplyCacheMemory int64
	Logger           *slog.Logger
	// IO performs file writes; nil means PlainIO. Engines supply one that
	// plans direct and buffered I/O.
	IO FileIO
	// Metrics receives the server's counters; nil: a private set.
	Metrics *metrics.Set
	// AnonUID and AnonGID are the ids the server acts as for callers it
	// cannot act as: AUTH_NONE, and uid or gid 0xFFFFFFFF or one outside
	// the server's user namespace (0 means 65534, nobody and nogroup).
	AnonUID, AnonGID uint32
	// Delegations lets OPEN grant read and write delegations to clients
	// whose back channel answered CB_NULL (state_deleg.go). A kernel lease and
	// an inotify watch on each delegated file recall them when another
	// process opens, renames, unlinks or changes it (vfs_lease.go). The
	// command turns it on by default, as knfsd; the zero Config leaves it
	// off.
	Delegations bool
	// UnlinkSweep is how often the descriptors the server keeps are
	// checked for files whose last link is gone, to close them and make
	// their handles stale (vfs_fdcache.go, sweepUnlinked). 0: 2s.
	UnlinkSweep time.Duration
	// DataServers, when set, makes the server a pNFS flexible-files
	// metadata server over them (pnfs.go): regular files created through
	// NFS keep their data there. nil: an ordinary server (EXCHANGE_ID
	// answers USE_NON_PNFS).
	DataServers DataServers
	// IdmapDomain is the NFSv4 domain of owner strings ("user@domain";
	// idmap.go). Empty: the host's DNS domain, else "localdomain".
	IdmapDomain string
	// IdmapNames sends names ("user@domain") rather than numeric owner
	// strings to AUTH_SYS callers too (RPCSEC_GSS callers always get names).
	IdmapNames bool
	// Takeover, when set, makes the server the active metadata server of
	// a cluster with a standby (standby.go): shared handle key, owner and
	// layout ledger, and a lease on the role it serves only while valid.
	Takeover *Takeover
	// GSS accepts RPCSEC_GSS Kerberos contexts (rpc_gss.go); nil: only
	// AUTH_SYS and AUTH_NONE.
	GSS *gss.Acceptor
	// NSMName is the server's name in NLM callbacks and in the SM_NOTIFY
	// it sends after a restart (nsm.go): the name or address clients
	// mounted it by. Empty: the host name.
	NSMName string
	// NSMRPCBindPort is the port of the clients' rpcbind the server asks
	// for their lockd and statd ports (0: 111).
	NSMRPCBindPort int
}

// Handler is what an engine drives. For each RPC record the engine takes a
// Reply (NewReply, or one Reset for reuse), calls Handle, performs every
// Read Handle left in rep.Reads and hands each one's data to
// rep.CompleteRead, calls Complete, sends rep.Iovecs() and then calls
// rep.Reset. ARCHITECTURE.md, "A request's life", follows these steps
// through both engines.
//
// Handle decodes and executes one record into rep. rec is valid only
// until Handle returns: the engine may reuse it at once (it may be the
// receive buffer itself), so Handle keeps nothing of it; what must
// outlive the call is copied (the slot cache keeps the encoded reply,
// never the request; a callback's reply is copied by Conn.deliver).
// Handle may block (WRITE, OPEN, fsync) unless Inline said the record is
// quick; an engine calls it from many goroutines at once, for many
// records of one Conn too. A reply with Drop set has nothing to send: the
// engine calls neither Complete nor Iovecs and only Resets it.
//
// After Handle, the engine owns rep until Reset. The buffers passed to
// CompleteRead must stay unchanged until the reply is sent, since Iovecs
// points into them instead of copying; the descriptors in rep.Reads stay
// open (their files are pinned) until Reset, and not after it.
//
// Complete is called at most once for a reply Handle did not Drop, after
// all of its reads have completed and before Iovecs. It releases the
// session slot and caches the reply there for a retransmit, so an engine
// calls it even when the connection closed and the reply will never be
// sent, whenever the reads are done (or there are none). A reply given up
// before its reads only Resets: Reset frees its slot without a cached
// reply (the retransmit answers NFS4ERR_RETRY_UNCACHED_REP).
//
// MaxRecord is the largest record the engine should accept; a longer one
// closes the connection.
type Handler interface {
	Handle(c *Conn, rec []byte, rep *Reply)
	Complete(rep *Reply)
	MaxRecord() int
}

// Conn is the protocol state of one transport connection: its id (for
// session binding) and, when the engine installed a sender, the way to
// call the client back on it (state_callback.go).
type Conn struct {
	ID     uint64
	Remote string
	calls  connCalls
	addr   netip.Addr // Remote parsed once, for the exports' client specs
	port   uint16
	// Xprt is the connection's transport security (RPC-with-TLS), set by
	// the engine before the first request; zero: plaintext.
	Xprt XprtSec
}

var connIDs atomic.Uint64

// NewConn returns protocol state for a new connection from remote
// ("ip:port").
func NewConn(remote string) *Conn {
	c := &Conn{ID: connIDs.Add(1), Remote: remote}
	c.addr, c.port = parseRemote(remote)
	return c
}

// Server is the NFSv4.1/4.2 protocol engine-independent core.
type Server struct {
	cfg     Config
	log     *slog.Logger
	io      FileIO
	ids     idMapper                    // caller credentials to the ids the server acts as
	tab     atomic.Pointer[exportTable] // the exports; replaced whole by Reload
	boot    uint32
	bootVer [8]byte
	start   time.Time

	state *stateTable
	nlm   *nlmState // NLM and NSM (nlm.go)
	files *fileTable
	fhKey *handleKey
	owner []byte // server_owner4's so_major_id and server_scope (serverOwner)
	stop  chan struct{}

	copies copyTable // asynchronous COPYs (state_copy.go)

	mds *mds // the metadata-server role (pnfs_mds.go); nil when off

	sb standbyState // the active server of a cluster with a standby (standby.go)

	reloadMu sync.Mutex
	retired  []*export // dropped by a reload; kept open until Close (nodes may still refer to them)
	stats    *metrics.Set
	gss      *gssServer // RPCSEC_GSS contexts (rpc_gss.go); nil without Config.GSS
	v3       v3State    // NFSv3 and MOUNT (nfs3.go, mount3.go, nfs3_drc.go)
}

// NewServer checks the exports and returns a server.
func NewServer(cfg Config) (*Server, error) {
	if len(cfg.Exports) == 0 {
		return nil, fmt.Errorf("nfs: no export configured")
	}
	if cfg.MaxIO <= 0 {
		cfg.MaxIO = 1 << 20
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 128
	}
	if cfg.LeaseTime == 0 {
		cfg.LeaseTime = 90
	}
	if cfg.GraceTime == 0 {
		cfg.GraceTime = cfg.LeaseTime
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IO == nil {
		cfg.IO = PlainIO{}
	}
	if cfg.AnonUID == 0 {
		cfg.AnonUID = defaultAnonID
	}
	if cfg.AnonGID == 0 {
		cfg.AnonGID = defaultAnonID
	}
	if cfg.UnlinkSweep <= 0 {
		cfg.UnlinkSweep = defaultUnlinkSweep
	}
	cfg.applyLimitDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger, io: cfg.IO, start: time.Now()}
	if cfg.DataServers != nil {
		s.mds = newMDS(cfg.DataServers)
	}
	key, err := s.handleKeyFor(cfg)
	if err != nil {
		return nil, err
	}
	s.fhKey = newHandleKey(key)
	s.owner = serverOwner(key)
	s.ids = newIDMapper(&cfg)
	s.gss = newGSSServer(cfg.GSS, cfg.AnonUID, cfg.AnonGID)
	tab, err := s.buildTable(cfg.Exports)
	if err != nil {
		return nil, err
	}
	for i, e := range tab.exports {
		e.setRules(cfg.Exports[i].Clients, cfg.AnonUID, cfg.AnonGID)
	}
	s.tab.Store(tab)
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	// The boot epoch goes into every stateid and session id, so state from
	// an earlier server instance is recognised as stale, not as bad.
	s.boot = uint32(time.Now().Unix()) ^ binary.BigEndian.Uint32(b[:4])
	if s.boot == 0 || s.boot == ^uint32(0) {
		s.boot = 2 // never a special stateid's, nor client id 0's
	}
	copy(s.bootVer[:], b[4:])
	s.state = newStateTable(s)
	prev, err := s.state.store.load()
	if err != nil {
		return nil, err
	}
	s.state.startGrace(prev, time.Duration(cfg.GraceTime)*time.Second)
	s.files = newFileTable()
	s.files.busy = s.state.holds
	s.stop = make(chan struct{})
	if s.stats = cfg.Metrics; s.stats == nil {
		s.stats = metrics.New()
	}
	s.registerGauges(s.stats)
	s.registerGSSGauges(s.stats)
	if err := s.startNLM(); err != nil {
		return nil, err
	}
	if s.mds != nil {
		s.registerLayoutGauges(s.stats)
		s.watchDataServers(cfg.DataServers)
	}
	if err := s.startTakeover(key); err != nil {
		return nil, err
	}
	go s.reapLeases()
	go s.sweepUnlinked(cfg.UnlinkSweep)
	return s, nil
}

// MaxRecord is the largest RPC record accepted: a maximal WRITE plus room
// for the COMPOUND around it.
func (s *Server) MaxRecord() int { return s.cfg.MaxIO + 64<<10 }

// Close releases cached file descriptors.
func (s *Server) Close() {
	s.halt()
	s.files.closeAll()
	for _, e := range s.table().exports {
		e.close()
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	for _, e := range s.retired {
		e.close()
	}
}

// pseudoRootIno is the fileid of the synthetic root above several exports.
const pseudoRootIno = 1

// root returns the node clients see as "/".
func (s *Server) root() *node {
	t := s.table()
	if t.pseudo {
		return t.root.node
	}
	return s.exportRoot(t.exports[0])
}

// Handle processes one RPC record. See Handler.
func (s *Server) Handle(c *Conn, rec []byte, rep *Reply) {
	rep.markPos = rep.Enc.Reserve()
	if s.refusing() {
		rep.Drop = true // deposed: standby.go
		return
	}
	d := &rep.dec
	d.Reset(rec)
	call, ok := decodeCall(d)
	if !ok {
		// A reply to one of our callbacks, or not even a call header:
		// either way there is nothing to answer.
		if isReply(rec) {
			c.deliver(rec)
		}
		rep.Drop = true
		return
	}
	rep.xid = call.xid
	if call.cred.Flavor == nfs4.AuthGSS {
		s.handleGSS(c, &call, d, rec, rep)
		return
	}
	switch {
	case call.rpcvers != nfs4.RPCVersion:
		encodeRPCMismatch(rep.Enc, call.xid)
	case call.authErr != nfs4.AuthOK:
		encodeAuthError(rep.Enc, call.xid, call.authErr)
	case call.prog == progMount || call.prog == nfs4.ProgramNFS && call.vers == nfs3Version:
		s.handleV3(c, &call, d, rep) // nfs3.go, mount3.go
	case call.prog == NLMProgram || call.prog == NSMProgram:
		s.lockCall(c, &call, d, rep) // NFSv3 locking: nlm.go
	case call.prog != nfs4.ProgramNFS:
		encodeAccepted(rep.Enc, call.xid, nfs4.AcceptProgUnavail)
	case call.vers != nfs4.NFSVersion:
		encodeAccepted(rep.Enc, call.xid, nfs4.AcceptProgMismatch)
		rep.Enc.Uint32(nfs3Version)
		rep.Enc.Uint32(nfs4.NFSVersion)
	case call.proc == nfs4.ProcNull:
		encodeAccepted(rep.Enc, call.xid, nfs4.AcceptSuccess)
	case call.proc == nfs4.ProcCompound:
		s.compound(c, &call, d, rec, rep)
	default:
		encodeAccepted(rep.Enc, call.xid, nfs4.AcceptProcUnavail)
	}
}

// Complete finishes a reply once its reads are done: the session slot
// caches it for retransmits.
func (s *Server) Complete(rep *Reply) {
	s.countComplete(rep)
	if rep.slot != nil {
		s.state.finishSlot(rep)
	}
	if rep.gss.ctx != nil {
		s.gssComplete(rep)
	}
}

// reapLeases drops the state of clients that stopped renewing their lease.
func (s *Server) reapLeases() {
	// Often enough that unconfirmed clients go about unconfirmedTTL after
	// their EXCHANGE_ID.
	t := time.NewTicker(min(time.Duration(s.cfg.LeaseTime)*time.Second/2, unconfirmedTTL))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.state.expire(now)
			s.state.revokeOverdue(now)
			s.state.layoutsOverdue(now)
			s.state.syncRecords()
		}
	}
}
