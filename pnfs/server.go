package pnfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// ErrOutOfService is returned for a data server the pool has no session
// with (it did not answer, or its session was lost and not yet remade).
var ErrOutOfService = errors.New("pnfs: data server out of service")

// dataServer is one data server: the session to it, whether it is in
// service, and what must be done to it when it comes back.
type dataServer struct {
	cfg  ServerConfig
	id   nfs.DeviceID
	addr string // what clients are told: advertise=, else cfg.Addr, as an IP address

	mu         sync.Mutex
	c          *client.Client // nil while there is no session
	dir        []byte         // handle of cfg.Path
	rsize      uint32
	wsize      uint32
	avail      uint64 // space_avail of the data directory's file system, at the last probe
	availKnown bool
	inService  bool
	since      time.Time // when inService last changed
	reason     string    // why it is out of service
	holdUntil  time.Time // Failed: not back in service before this
	nextDial   time.Time
	backoff    time.Duration
	pending    map[string]repair // by data file name: what to do on return
	repairSeq  uint64
	// stale are the data files that missed writes (need resilvering),
	// with their layout's mirrors (where a good copy is).
	stale map[string][]nfs.DSFile

	probing atomic.Bool
	stats   serverStats
}

// repair is work on one data file that could not be done while the server
// was out of reach, done before it is back in service.
type repair struct {
	fh       []byte
	remove   bool
	fence    bool
	uid, gid uint32
	seq      uint64 // tells a repair from a later one for the same file
}

// session returns the client and the directory handle, or
// ErrOutOfService without a session.
func (s *dataServer) session() (*client.Client, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return nil, nil, fmt.Errorf("%w: %s (%s)", ErrOutOfService, s.cfg, s.reason)
	}
	return s.c, s.dir, nil
}

func (s *dataServer) isInService() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inService
}

func (s *dataServer) sizes() (rsize, wsize uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rsize, s.wsize
}

// faulty reports whether err says the server itself failed (no answer, the
// connection or the session gone), as opposed to an NFS error about one
// file or call, or the caller giving up.
func faulty(parent context.Context, err error) bool {
	if err == nil || parent.Err() != nil {
		return false
	}
	var se *client.StatusError
	if errors.As(err, &se) {
		return client.SessionLost(err)
	}
	return true
}

// dialServer makes a session with s as root (AUTH_SYS uid 0) and finds or
// creates the data directory. A server that speaks only NFSv4.1 is asked
// again with minor version 1.
func (p *Pool) dialServer(ctx context.Context, s *dataServer) (*client.Client, []byte, error) {
	host, _ := os.Hostname()
	opts := client.Options{
		Machine: host,
		// One owner per metadata server and data server, the same after
		// a restart of either: the data server then sees a client that
		// rebooted, not a new one (RFC 8881 section 2.4).
		Owner:        fmt.Sprintf("nfsd-uring-mds/%s/%x", host, s.id),
		Slots:        64,
		GraceWait:    5 * time.Second,
		DelayRetries: 10,
	}
	c, err := client.Dial(ctx, s.cfg.Addr, opts)
	if client.IsStatus(err, nfs4.ErrMinorVersMismatch) {
		opts.Minor = 1
		c, err = client.Dial(ctx, s.cfg.Addr, opts)
	}
	if err != nil {
		return nil, nil, err
	}
	dir, err := makeDir(ctx, c, s.cfg.Path)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("data directory %s: %w", s.cfg.Path, err)
	}
	return c, dir, nil
}

// makeDir looks up p on c's server, making each missing component (mode
// 0755: clients reach data files by handle, never by name).
func makeDir(ctx context.Context, c *client.Client, p string) ([]byte, error) {
	fh, err := c.RootFH(ctx)
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if name == "" {
			continue
		}
		next, err := c.Lookup(ctx, fh, name)
		if client.IsStatus(err, nfs4.ErrNoent) {
			next, err = c.Mkdir(ctx, fh, name, 0o755)
			if client.IsStatus(err, nfs4.ErrExist) { // made meanwhile
				next, err = c.Lookup(ctx, fh, name)
			}
		}
		if err != nil {
			return nil, err
		}
		fh = next
	}
	return fh, nil
}

// ioSizes asks the server's maxread and maxwrite, so that no READ or
// WRITE is larger than it takes.
func (p *Pool) ioSizes(ctx context.Context, c *client.Client, dir []byte) (rsize, wsize uint32) {
	rsize, wsize = p.cfg.RSize, p.cfg.WSize
	a, err := c.Getattr(ctx, dir, nfs4.BitmapOf(nfs4.AttrMaxread, nfs4.AttrMaxwrite))
	if err != nil {
		return rsize, wsize
	}
	if a.Mask.Has(nfs4.AttrMaxread) && a.Maxread > 0 {
		rsize = uint32(min(uint64(rsize), a.Maxread))
	}
	if a.Mask.Has(nfs4.AttrMaxwrite) && a.Maxwrite > 0 {
		wsize = uint32(min(uint64(wsize), a.Maxwrite))
	}
	// Leave room in a request or reply for the COMPOUND around the data.
	if room := c.ForeChannel().MaxRequest; room > 4096 {
		wsize = min(wsize, room-4096)
	}
	if room := c.ForeChannel().MaxResponse; room > 4096 {
		rsize = min(rsize, room-4096)
	}
	return rsize, wsize
}
