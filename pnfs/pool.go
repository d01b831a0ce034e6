package pnfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Registry is where the pool keeps what is shared with other metadata
// servers and survives restarts (package cluster implements it in etcd).
type Registry interface {
	// ReserveIDs reserves n synthetic ids no one was given before and
	// returns the first; the range wraps after LastSyntheticID.
	ReserveIDs(ctx context.Context, n uint32) (first uint32, err error)
	// PutServer records a data server's state.
	PutServer(ctx context.Context, id nfs.DeviceID, r ServerRecord) error
	// PutFileState records what is owed to the data file name on server
	// id (nil: nothing), so that a restarted metadata server still
	// fences, removes and resilvers it; FileStates returns all of it.
	PutFileState(ctx context.Context, id nfs.DeviceID, name string, st *FileState) error
	FileStates(ctx context.Context) (map[nfs.DeviceID]map[string]FileState, error)
	// PutOrphan records the layout of a removed file whose data files
	// wait for the metadata server (nil: forgets it); Orphans returns
	// them all (nfs.OrphanStore).
	PutOrphan(ctx context.Context, name string, l *nfs.FileLayout) error
	Orphans(ctx context.Context) ([]nfs.FileLayout, error)
}

// FileState is what is owed to one data file on one server: a stale mark
// (it missed writes its mirrors took) and work queued while the server
// was out of reach (a fence to new owner ids, or the removal).
type FileState struct {
	Stale  bool   `json:"stale,omitempty"`
	Remove bool   `json:"remove,omitempty"`
	Fence  bool   `json:"fence,omitempty"`
	UID    uint32 `json:"uid,omitempty"`
	GID    uint32 `json:"gid,omitempty"`
	FH     []byte `json:"fh,omitempty"`
	// Mirrors are the stale file's layout mirrors, so that the pool can
	// copy a good one over it on its own (resilverLoop).
	Mirrors []MirrorRecord `json:"mirrors,omitempty"`
}

// MirrorRecord is one mirror of a stale file's layout in a FileState.
type MirrorRecord struct {
	Device []byte `json:"device"`
	FH     []byte `json:"fh"`
}

func mirrorRecords(m []nfs.DSFile) []MirrorRecord {
	var out []MirrorRecord
	for _, f := range m {
		out = append(out, MirrorRecord{Device: f.Device[:], FH: f.FH})
	}
	return out
}

// mirrors is st's Mirrors as layout mirrors; nil (a stale mark recorded
// without them) leaves the file to an explicit Resilver.
func (st FileState) mirrors() []nfs.DSFile {
	var out []nfs.DSFile
	for _, m := range st.Mirrors {
		var f nfs.DSFile
		if len(m.Device) != len(f.Device) {
			return nil
		}
		copy(f.Device[:], m.Device)
		f.FH = m.FH
		out = append(out, f)
	}
	return out
}

// ServerRecord is a data server's entry in the registry.
type ServerRecord struct {
	Addr      string    `json:"addr"`
	Advertise string    `json:"advertise,omitempty"`
	Path      string    `json:"path"`
	State     string    `json:"state"` // "in-service" or "out-of-service"
	Since     time.Time `json:"since"`
	Reason    string    `json:"reason,omitempty"`
}

// Config configures a Pool. Zero values take the defaults noted.
type Config struct {
	Servers []ServerConfig
	// Mirrors is how many data servers hold each file (default 1). A
	// file is created only when that many are in service.
	Mirrors int
	// Registry keeps the synthetic-id counter and the server states;
	// nil: ids from a random place in the range, states kept nowhere.
	Registry Registry
	Logger   *slog.Logger
	// Metrics receives the pool's gauges; nil: none.
	Metrics *metrics.Set
	// ProbeInterval is how often each server is checked (a SEQUENCE
	// alone, which also renews the lease) or redialled (default 1s).
	ProbeInterval time.Duration
	// HoldDown is how long a server reported Failed stays out of service
	// even if the metadata server reaches it (default 10s): a client that
	// cannot reach it should not get it back in its next layout at once.
	HoldDown time.Duration
	// DialTimeout bounds one connection attempt (default 3s); CallTimeout
	// one call to a server when the caller's context has no deadline
	// (default 30s).
	DialTimeout, CallTimeout time.Duration
	// RSize and WSize cap READ and WRITE sizes (default 1 MiB); each
	// server's maxread and maxwrite may lower them.
	RSize, WSize uint32
	// StripeUnit, when not 0, stripes each new file's mirrors over Width
	// data servers in units of that many bytes (ffl_stripe_unit, RFC 8435
	// section 5.1; stripe.go). Width 0 means every server: as many as
	// the servers divided by Mirrors.
	StripeUnit uint64
	Width      int
	// MinFree is the free space (space_avail, asked each probe) under
	// which a server gets no new files while enough others have more
	// (default 1 GiB; negative: never skip).
	MinFree int64
}

func (c *Config) setDefaults() {
	if c.Mirrors == 0 {
		c.Mirrors = 1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ProbeInterval == 0 {
		c.ProbeInterval = time.Second
	}
	if c.HoldDown == 0 {
		c.HoldDown = 10 * time.Second
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 3 * time.Second
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = 30 * time.Second
	}
	if c.RSize == 0 {
		c.RSize = 1 << 20
	}
	if c.WSize == 0 {
		c.WSize = 1 << 20
	}
	if c.MinFree == 0 {
		c.MinFree = 1 << 30
	}
}

// Pool implements nfs.DataServers over the configured data servers: one
// session to each (remade with backoff when lost), round-robin placement
// over those in service, and a prober that takes servers out of service
// and puts them back.
type Pool struct {
	cfg     Config
	log     *slog.Logger
	servers []*dataServer
	byID    map[nfs.DeviceID]*dataServer
	ids     *idSource
	rr      atomic.Uint64

	persistMu sync.Mutex // orders PutFileState calls

	onDown atomic.Pointer[func(nfs.DeviceID)] // OnOutOfService's f

	// Resilvering (resilver.go).
	beforeRsv          atomic.Pointer[func(context.Context, string) error] // BeforeResilver's f
	rsvKick            chan struct{}
	gateMu             sync.Mutex
	gates              map[string]*gate
	rsvFiles, rsvBytes atomic.Uint64 // mirrors copied over, and their bytes

	dirty  chan struct{} // the registry writer has states to record
	stop   chan struct{}
	wg     sync.WaitGroup
	closed sync.Once
}

var (
	_ nfs.DataServers   = (*Pool)(nil)
	_ nfs.StaleMirrors  = (*Pool)(nil)
	_ nfs.DeviceWatcher = (*Pool)(nil)
	_ nfs.SpaceOps      = (*Pool)(nil)
	_ nfs.Resilverer    = (*Pool)(nil)
	_ nfs.OrphanStore   = (*Pool)(nil)
)

// PutOrphan implements nfs.OrphanStore in the registry (nowhere without
// one).
func (p *Pool) PutOrphan(ctx context.Context, l nfs.FileLayout) error {
	if p.cfg.Registry == nil {
		return nil
	}
	return p.cfg.Registry.PutOrphan(ctx, l.Name, &l)
}

// DropOrphan implements nfs.OrphanStore.
func (p *Pool) DropOrphan(ctx context.Context, name string) error {
	if p.cfg.Registry == nil {
		return nil
	}
	return p.cfg.Registry.PutOrphan(ctx, name, nil)
}

// Orphans implements nfs.OrphanStore.
func (p *Pool) Orphans(ctx context.Context) ([]nfs.FileLayout, error) {
	if p.cfg.Registry == nil {
		return nil, nil
	}
	return p.cfg.Registry.Orphans(ctx)
}

// OnOutOfService implements nfs.DeviceWatcher: f is called, on a
// goroutine of its own, each time a server leaves service.
func (p *Pool) OnOutOfService(f func(nfs.DeviceID)) { p.onDown.Store(&f) }

// New makes a pool and tries each server once (in parallel, for
// DialTimeout at most); one that does not answer is logged and left out of
// service until the prober reaches it. Only a bad configuration is an
// error.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	cfg.setDefaults()
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("pnfs: no data servers")
	}
	if cfg.Mirrors < 1 || cfg.Mirrors > len(cfg.Servers) {
		return nil, fmt.Errorf("pnfs: %d mirrors need as many data servers (have %d)", cfg.Mirrors, len(cfg.Servers))
	}
	if err := cfg.checkStriping(); err != nil {
		return nil, err
	}
	p := &Pool{cfg: cfg, log: cfg.Logger, byID: make(map[nfs.DeviceID]*dataServer), ids: newIDSource(cfg.Registry),
		dirty: make(chan struct{}, 1), stop: make(chan struct{}), rsvKick: make(chan struct{}, 1), gates: make(map[string]*gate)}
	for _, sc := range cfg.Servers {
		s := &dataServer{cfg: sc, id: sc.ID(), rsize: cfg.RSize, wsize: cfg.WSize, since: time.Now(), reason: "not yet reached",
			pending: make(map[string]repair), stale: make(map[string][]nfs.DSFile)}
		if _, dup := p.byID[s.id]; dup {
			return nil, fmt.Errorf("pnfs: data server %s given twice", sc)
		}
		s.addr = resolveHost(ctx, sc.clientAddr())
		p.byID[s.id] = s
		p.servers = append(p.servers, s)
	}
	if err := p.loadFileStates(ctx); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for _, s := range p.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.probe(ctx, s)
		}()
	}
	wg.Wait()
	p.registerGauges(cfg.Metrics)
	p.wg.Add(3)
	go p.probeLoop()
	go p.recordLoop()
	go p.resilverLoop()
	p.markDirty()
	return p, nil
}

// Close stops the prober and ends every session.
func (p *Pool) Close() error {
	p.closed.Do(func() {
		close(p.stop)
		p.wg.Wait()
		for _, s := range p.servers {
			s.mu.Lock()
			c := s.c
			s.c = nil
			s.mu.Unlock()
			if c != nil {
				c.Close()
			}
		}
	})
	return nil
}

// Device implements nfs.DataServers.
func (p *Pool) Device(id nfs.DeviceID) (nfs.DataServer, bool) {
	s, ok := p.byID[id]
	if !ok {
		return nfs.DataServer{}, false
	}
	return p.describe(s), true
}

// Devices implements nfs.DataServers: the servers in service.
func (p *Pool) Devices() []nfs.DataServer {
	var out []nfs.DataServer
	for _, s := range p.servers {
		if s.isInService() {
			out = append(out, p.describe(s))
		}
	}
	return out
}

func (p *Pool) describe(s *dataServer) nfs.DataServer {
	r, w := s.sizes()
	return nfs.DataServer{ID: s.id, Addr: s.addr, RSize: r, WSize: w}
}

// Failed implements nfs.DataServers: the server is asked at once
// whether it answers (check); if not, it leaves service for HoldDown at
// least, then the prober decides.
func (p *Pool) Failed(id nfs.DeviceID, status nfs4.Status) {
	s, ok := p.byID[id]
	if !ok {
		return
	}
	s.stats.reported.Add(1)
	if !s.probing.CompareAndSwap(false, true) {
		return // a probe is on its way: it decides
	}
	go func() {
		defer s.probing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.DialTimeout)
		defer cancel()
		p.check(ctx, s, status)
	}()
}

// check asks s whether it still answers after a client reported status
// for it. A client's report is a claim, not a verdict: a client cut off
// from one data server, or one that lies (pynfs's FFLOR* tests report
// every error there is), must not take a server out of service for
// every other client. One that does not answer goes out for HoldDown.
func (p *Pool) check(ctx context.Context, s *dataServer, status nfs4.Status) {
	s.mu.Lock()
	c := s.c
	s.mu.Unlock()
	if c == nil {
		return // out of service already, being dialled again
	}
	err := c.Ping(ctx)
	if err == nil {
		p.log.Debug("data server reported failed still answers", "server", s.cfg.String(), "status", client.StatusName(status))
		return
	}
	s.mu.Lock()
	s.holdUntil = time.Now().Add(p.cfg.HoldDown)
	s.mu.Unlock()
	p.lost(s, c, fmt.Errorf("reported failed (%s), and no answer: %w", client.StatusName(status), err))
}

// setOutOfService takes s out of service (keeping its session).
func (p *Pool) setOutOfService(s *dataServer, reason string) {
	s.mu.Lock()
	was := s.inService
	s.inService, s.reason = false, reason
	if was {
		s.since = time.Now()
	}
	s.mu.Unlock()
	if was {
		s.stats.downs.Add(1)
		p.log.Warn("data server out of service", "server", s.cfg.String(), "reason", reason)
		p.markDirty()
		if f := p.onDown.Load(); f != nil {
			go (*f)(s.id)
		}
	}
}

// lost ends s's session c after a failure showed it broken (when c is
// still s's session) and takes s out of service; the prober redials.
func (p *Pool) lost(s *dataServer, c *client.Client, err error) {
	s.mu.Lock()
	current := s.c == c
	if current {
		s.c, s.dir = nil, nil
		s.nextDial, s.backoff = time.Now(), 0
	}
	s.mu.Unlock()
	if current {
		go c.Close()
	}
	p.setOutOfService(s, err.Error())
}

// probeLoop checks every server each ProbeInterval.
func (p *Pool) probeLoop() {
	defer p.wg.Done()
	t := time.NewTicker(p.cfg.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		for _, s := range p.servers {
			if s.probing.CompareAndSwap(false, true) {
				go func() {
					defer s.probing.Store(false)
					ctx, cancel := context.WithTimeout(context.Background(), max(p.cfg.DialTimeout, p.cfg.ProbeInterval))
					defer cancel()
					p.probe(ctx, s)
				}()
			}
		}
	}
}

// probe checks s: a session is pinged, a missing one dialled (with
// backoff from 1s to 30s between attempts). A server that answers, whose
// pending repairs are done and whose hold-down has passed, is put back in
// service.
func (p *Pool) probe(ctx context.Context, s *dataServer) {
	s.mu.Lock()
	c, due := s.c, time.Now().After(s.nextDial)
	s.mu.Unlock()
	if c != nil {
		if err := p.checkSpace(ctx, s, c); err != nil {
			if faulty(context.Background(), err) {
				p.lost(s, c, err)
			}
			return
		}
	} else {
		if !due {
			return
		}
		var err error
		if c, err = p.connect(ctx, s); err != nil {
			p.dialFailed(s, err)
			return
		}
		p.checkSpace(ctx, s, c)
	}
	// The repairs owed after a long outage may be many: they get their
	// own deadline per call, not the probe's.
	if err := p.doRepairs(context.WithoutCancel(ctx), s, c); err != nil {
		if faulty(context.Background(), err) {
			p.lost(s, c, err)
		}
		return
	}
	p.setInService(s)
}

// checkSpace asks s's free space in the data directory: the probe's
// keepalive (the COMPOUND renews the lease) and the placement's input.
func (p *Pool) checkSpace(ctx context.Context, s *dataServer, c *client.Client) error {
	s.mu.Lock()
	dir := s.dir
	s.mu.Unlock()
	if dir == nil {
		return c.Ping(ctx)
	}
	avail, ok, err := c.SpaceAvail(ctx, dir)
	if err == nil {
		s.mu.Lock()
		s.avail, s.availKnown = avail, ok
		s.mu.Unlock()
	}
	return err
}

// connect dials s and installs the session.
func (p *Pool) connect(ctx context.Context, s *dataServer) (*client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	c, dir, err := p.dialServer(dctx, s)
	if err != nil {
		return nil, err
	}
	r, w := p.ioSizes(dctx, c, dir)
	s.mu.Lock()
	select {
	case <-p.stop: // Close ran meanwhile: it will not see this session
		s.mu.Unlock()
		c.Close()
		return nil, errors.New("pnfs: pool closed")
	default:
	}
	s.c, s.dir, s.rsize, s.wsize, s.backoff = c, dir, r, w, 0
	s.mu.Unlock()
	s.stats.connects.Add(1)
	p.log.Info("data server connected", "server", s.cfg.String(), "rsize", r, "wsize", w)
	return c, nil
}

func (p *Pool) dialFailed(s *dataServer, err error) {
	s.mu.Lock()
	s.backoff = min(max(2*s.backoff, time.Second), 30*time.Second)
	s.nextDial = time.Now().Add(s.backoff)
	first := s.reason == "not yet reached"
	s.reason = "cannot connect: " + err.Error()
	s.mu.Unlock()
	if first {
		p.log.Warn("data server not reached; out of service until it answers", "server", s.cfg.String(), "err", err)
		p.markDirty()
	}
}

func (p *Pool) setInService(s *dataServer) {
	s.mu.Lock()
	if s.inService || s.c == nil || time.Now().Before(s.holdUntil) {
		s.mu.Unlock()
		return
	}
	s.inService, s.reason, s.since = true, "", time.Now()
	stale := len(s.stale)
	s.mu.Unlock()
	p.log.Info("data server in service", "server", s.cfg.String(), "stale_files", stale)
	p.markDirty()
	if stale > 0 {
		p.kickResilver()
	}
}

// markDirty asks the registry writer to record the states.
func (p *Pool) markDirty() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

// recordLoop writes every server's state to the registry when one
// changed, off the paths that change them, so a slow store never delays
// I/O. It writes all of them each time: they are few.
func (p *Pool) recordLoop() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case <-p.dirty:
		}
		if p.cfg.Registry == nil {
			continue
		}
		for _, s := range p.servers {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := p.cfg.Registry.PutServer(ctx, s.id, s.record()); err != nil {
				p.log.Warn("cannot record data server state", "server", s.cfg.String(), "err", err)
			}
			cancel()
		}
	}
}

func (s *dataServer) record() ServerRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := "out-of-service"
	if s.inService {
		state = "in-service"
	}
	return ServerRecord{Addr: s.cfg.Addr, Advertise: s.cfg.Advertise, Path: s.cfg.Path, State: state, Since: s.since, Reason: s.reason}
}

// resolveHost is the IP address form of a host:port (clients are given
// addresses, not names, in ff_device_addr4's netaddr4).
func resolveHost(ctx context.Context, hostport string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || net.ParseIP(host) != nil {
		return hostport
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return hostport
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return net.JoinHostPort(ip.String(), port)
		}
	}
	return net.JoinHostPort(ips[0].String(), port)
}

// loadFileStates reads back the stale marks and queued work a previous
// run left in the registry.
func (p *Pool) loadFileStates(ctx context.Context) error {
	if p.cfg.Registry == nil {
		return nil
	}
	all, err := p.cfg.Registry.FileStates(ctx)
	if err != nil {
		return fmt.Errorf("pnfs: registry: %w", err)
	}
	for id, files := range all {
		s, ok := p.byID[id]
		if !ok {
			p.log.Warn("registry names a data server no longer configured; its pending work is left", "id", fmt.Sprintf("%x", id), "files", len(files))
			continue
		}
		for name, st := range files {
			if st.Stale {
				s.stale[name] = st.mirrors()
			}
			if st.Remove || st.Fence {
				s.repairSeq++
				s.pending[name] = repair{fh: st.FH, remove: st.Remove, fence: st.Fence, uid: st.UID, gid: st.GID, seq: s.repairSeq}
			}
		}
	}
	return nil
}

// persist records what is owed to s's data file name in the registry.
// Calls are serialised, each writing the state as it is when it runs, so
// the last write is the latest state.
func (p *Pool) persist(s *dataServer, name string) {
	if p.cfg.Registry == nil {
		return
	}
	p.persistMu.Lock()
	defer p.persistMu.Unlock()
	s.mu.Lock()
	var st *FileState
	r, queued := s.pending[name]
	mirrors, stale := s.stale[name]
	if queued || stale {
		st = &FileState{Stale: stale, Remove: r.remove, Fence: r.fence, UID: r.uid, GID: r.gid, FH: r.fh, Mirrors: mirrorRecords(mirrors)}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.cfg.Registry.PutFileState(ctx, s.id, name, st); err != nil {
		p.log.Warn("cannot record a data file's pending work: a restart would forget it", "server", s.cfg.String(), "file", name, "err", err)
	}
}
