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
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Export is one exported directory.
type Export struct {
	// Name is the export's name under the pseudo-root when there are several
	// exports. With one export it is ignored: the export is the root.
	Name string
	Path string
}

// Config configures a Server.
type Config struct {
	Exports []Export
	// MaxIO is the largest READ/WRITE payload (default 1 MiB).
	MaxIO int
	// Slots is the fore-channel slot count offered per session (default 128).
	Slots int
	// LeaseTime is the lease in seconds (default 90).
	LeaseTime uint32
	// Caps on per-client state (defaults in limits.go). Past them a
	// client gets an NFS error, never more of the server's memory.
	MaxClients             int // client records (EXCHANGE_ID answers NFS4ERR_DELAY past it)
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
}

// Handler is what an engine drives: Handle decodes and executes one RPC
// record into rep (possibly leaving Reads for the engine), and Complete is
// called once those reads are done, before the reply is sent.
type Handler interface {
	Handle(c *Conn, rec []byte, rep *Reply)
	Complete(rep *Reply)
	MaxRecord() int
}

// Conn is the protocol state of one transport connection. Nothing is
// bound to connections yet (there is no back channel); engines pass it so
// connection binding can be added without changing them.
type Conn struct {
	ID     uint64
	Remote string
}

var connIDs atomic.Uint64

// NewConn returns protocol state for a new connection.
func NewConn(remote string) *Conn { return &Conn{ID: connIDs.Add(1), Remote: remote} }

// Server is the NFSv4.1/4.2 protocol engine-independent core.
type Server struct {
	cfg     Config
	log     *slog.Logger
	io      FileIO
	exports []*export
	pseudo  bool // several exports under a synthetic root
	boot    uint32
	bootVer [8]byte
	start   time.Time

	state      *stateTable
	files      *fileTable
	pseudoRoot *node
	stop       chan struct{}
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
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.IO == nil {
		cfg.IO = PlainIO{}
	}
	cfg.applyLimitDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger, io: cfg.IO, start: time.Now(), pseudo: len(cfg.Exports) > 1}
	names := map[string]bool{}
	for i, e := range cfg.Exports {
		ex, err := newExport(i+1, e)
		if err != nil {
			return nil, err
		}
		if s.pseudo {
			if ex.name == "" || names[ex.name] {
				return nil, fmt.Errorf("nfs: export %s needs a unique name", e.Path)
			}
			names[ex.name] = true
		}
		s.exports = append(s.exports, ex)
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	// The boot epoch goes into every stateid and session id, so state from
	// an earlier server instance is recognised as stale, not as bad.
	s.boot = uint32(time.Now().Unix()) ^ binary.BigEndian.Uint32(b[:4])
	copy(s.bootVer[:], b[4:])
	s.state = newStateTable(s)
	s.files = newFileTable()
	s.files.busy = s.state.holds
	s.pseudoRoot = &node{rel: "/", ino: pseudoRootIno, handle: pseudoHandle, fd: -1, direct: -1, wfd: -1, dwfd: -1}
	s.stop = make(chan struct{})
	go s.reapLeases()
	return s, nil
}

// MaxRecord is the largest RPC record accepted: a maximal WRITE plus room
// for the COMPOUND around it.
func (s *Server) MaxRecord() int { return s.cfg.MaxIO + 64<<10 }

// Close releases cached file descriptors.
func (s *Server) Close() {
	close(s.stop)
	s.files.closeAll()
	for _, e := range s.exports {
		unix.Close(e.rootFD)
	}
}

// pseudoRootIno is the fileid of the synthetic root above several exports.
const pseudoRootIno = 1

// root returns the node clients see as "/".
func (s *Server) root() *node {
	if s.pseudo {
		return s.pseudoRoot
	}
	return s.exportRoot(s.exports[0])
}

// exportRoot returns the root node of export e.
func (s *Server) exportRoot(e *export) *node {
	if n := s.files.get(nodeKey{e.id, e.rootIno}); n != nil {
		return n
	}
	n := newNode(e, ".", e.rootIno)
	n.handle = makeHandle(e, ".", e.rootIno)
	return s.files.put(n)
}

type export struct {
	id      int
	name    string
	root    string // absolute, symlinks resolved
	rootFD  int    // descriptor all opens are made beneath; not O_PATH, since open_by_handle_at needs a real one
	rootIno uint64
	dev     uint64
	mountID int
	fsid    uint64
	walkMu  sync.Mutex
	fds     fdCache
}

func newExport(id int, e Export) (*export, error) {
	p, err := filepath.Abs(e.Path)
	if err != nil {
		return nil, err
	}
	p, err = filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Errorf("nfs: export %s: %w", e.Path, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("nfs: export %s: %w", e.Path, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("nfs: export %s is not a directory", e.Path)
	}
	name := e.Name
	if name == "" {
		name = filepath.Base(p)
	}
	if id > 255 {
		return nil, fmt.Errorf("nfs: at most 255 exports")
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("nfs: export %s: %w", e.Path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	ex := &export{id: id, name: name, root: p, rootFD: fd, rootIno: st.Ino, dev: st.Dev, mountID: -1}
	ex.fds.max = defaultMaxOpenFiles
	if _, mnt, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH); err == nil {
		ex.mountID = mnt
	}
	// fsid: the export id in the major half keeps exports apart for the
	// client even when they share a filesystem.
	ex.fsid = uint64(id)
	return ex, nil
}

// Handle processes one RPC record. See Handler.
func (s *Server) Handle(c *Conn, rec []byte, rep *Reply) {
	rep.markPos = rep.Enc.Reserve()
	d := &rep.dec
	d.Reset(rec)
	call, ok := decodeCall(d)
	if !ok {
		// Not even a call header: there is no xid to answer to.
		rep.Drop = true
		return
	}
	rep.xid = call.xid
	switch {
	case call.rpcvers != nfs4.RPCVersion:
		encodeRPCMismatch(rep.Enc, call.xid)
	case call.authErr != nfs4.AuthOK:
		encodeAuthError(rep.Enc, call.xid, call.authErr)
	case call.prog != nfs4.ProgramNFS:
		encodeAccepted(rep.Enc, call.xid, nfs4.AcceptProgUnavail)
	case call.vers != nfs4.NFSVersion:
		encodeAccepted(rep.Enc, call.xid, nfs4.AcceptProgMismatch)
		rep.Enc.Uint32(nfs4.NFSVersion)
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
	if rep.slot != nil {
		s.state.finishSlot(rep)
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
		}
	}
}
