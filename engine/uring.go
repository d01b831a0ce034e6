package engine

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// Uring is the io_uring engine: Options.Cores event loops, each a goroutine
// locked to its own OS thread (pinned to one CPU) that owns one ring and the
// connections handed to it. All socket and file I/O of a connection goes
// through its loop's ring: multishot RECV into a provided-buffer ring,
// reads (buffered or O_DIRECT) into mmap'd buffers, and SENDMSG of the
// reply's iovec list.
//
// Accepting: one acceptor (Serve's goroutine) accepts in Go and hands the
// socket round-robin to the loops through a queue plus an eventfd that
// each loop's ring keeps a read on. SO_REUSEPORT with a listener per loop
// would spread accepts in the kernel by a hash of the addresses, which
// measured badly unbalanced for the few long-lived connections NFS clients
// hold (16 connections over 16 listeners: the busiest got 3-5, others
// none; BENCHMARKS.md), while round-robin gives each loop its share.
// Accepts are rare next to requests, so a single acceptor costs nothing.
//
// Requests: records the handler calls quick (the READ/READ_PLUS/GETATTR
// data path, nfs.Server.Inline) are handled on the loop itself, straight
// from the receive buffer when they arrived whole. Everything else does
// blocking system calls (LOOKUP, OPEN, READDIR, WRITE), so it runs on a
// bounded pool of worker goroutines; the finished reply comes back through
// the same queue + eventfd, and the loop performs its reads and the send.
// The price is two goroutine hand-offs for those requests; the gain is
// that a slow metadata operation never stalls the other connections of
// its loop.
type Uring struct {
	h         nfs.Handler
	inline    inliner     // h, when it can tell quick records apart
	rio       *ringIO     // rings for the writes of opts.FileIO
	noZC      atomic.Bool // SENDMSG_ZC refused: plain sends only
	opts      Options
	reads     *readPolicy
	loops     []*loop
	work      *workPool
	next      atomic.Uint32 // round-robin cursor
	gate      connGate
	budget    *partialBudget
	stopSweep chan struct{}
	// extraProcs: the Ps this engine added to GOMAXPROCS for its loops'
	// held waits (addProcs).
	extraProcs int

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	serves sync.WaitGroup
}

// inliner is implemented by handlers that can say which records are quick
// enough to handle on an event loop's thread (nfs.Server.Inline).
type inliner interface {
	Inline(rec []byte) bool
}

// Defaults for the io_uring engine's limits.
const (
	minWorkers = 8
)

// NewUring returns the per-core io_uring engine, or an error saying why it
// cannot run here.
func NewUring(h nfs.Handler, opts Options) (Engine, error) {
	if err := ring.Available(); err != nil {
		return nil, fmt.Errorf("io_uring not available: %w", err)
	}
	opts.defaults()
	dio, err := parseDIO(opts.DirectIO)
	if err != nil {
		return nil, err
	}
	e := &Uring{h: h, opts: opts, reads: newReadPolicy(dio), lns: map[net.Listener]struct{}{},
		gate: connGate{max: int64(opts.MaxConns), stats: opts.Metrics}, budget: newPartialBudget(opts.MaxPartialBytes, opts.Metrics),
		stopSweep: make(chan struct{})}
	opts.Metrics.AddGauge(e.gate.gauge())
	e.inline, _ = h.(inliner)
	workers := max(minWorkers, 4*opts.Cores)
	e.work = newWorkPool(workers)
	if !opts.PlainWait {
		e.extraProcs = opts.Cores
		addProcs(e.extraProcs)
	}
	for i := range opts.Cores {
		l, err := startLoop(e, i)
		if err != nil {
			e.stopLoops()
			e.work.close()
			addProcs(-e.extraProcs)
			return nil, err
		}
		e.loops = append(e.loops, l)
	}
	if opts.FileIO != nil {
		rio, err := newRingIO(workers)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("io_uring for file writes: %w", err)
		}
		e.rio = rio
		opts.FileIO.useRings(rio)
	}
	go e.sweeper()
	return e, nil
}

// Name implements Engine.
func (e *Uring) Name() string { return "uring" }

// Serve implements Engine: it accepts in Go and hands each socket to a loop.
func (e *Uring) Serve(ln net.Listener) error {
	if !e.track(ln) {
		return nil
	}
	defer e.serves.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if e.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		remote, x := nc.RemoteAddr().String(), xprtOf(nc)
		if !e.gate.enter(e.opts.Logger, remote) {
			nc.Close()
			continue
		}
		fd, err := detach(nc)
		if err != nil {
			e.gate.leave()
			e.opts.Logger.Warn("uring: cannot take over connection", "err", err)
			continue
		}
		l := e.loops[int(e.next.Add(1))%len(e.loops)]
		l.postConn(fd, remote, x)
	}
}

// detach takes a socket away from Go's poller: it dups the descriptor,
// closes the net.Conn and makes the copy blocking. The ring never blocks on
// it (it tries MSG_DONTWAIT and then polls), but a blocking descriptor
// means io_uring never returns EAGAIN to us.
func detach(nc net.Conn) (int, error) {
	tc, ok := nc.(syscall.Conn) // TCP, or an rpctls socketpair end
	if !ok {
		nc.Close()
		return -1, fmt.Errorf("not a socket: %T", nc)
	}
	if t, ok := nc.(interface{ SetNoDelay(bool) error }); ok {
		t.SetNoDelay(true)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		nc.Close()
		return -1, err
	}
	fd := -1
	cerr := rc.Control(func(s uintptr) {
		fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	})
	nc.Close()
	if cerr != nil {
		return -1, cerr
	}
	if err != nil {
		return -1, err
	}
	unix.SetNonblock(fd, false)
	return fd, nil
}

func (e *Uring) track(ln net.Listener) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.lns[ln] = struct{}{}
	e.serves.Add(1)
	return true
}

func (e *Uring) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Close implements Engine: stop accepting, then each loop closes its
// connections, waits for their requests and frees its ring and memory.
func (e *Uring) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for ln := range e.lns {
		ln.Close()
	}
	e.mu.Unlock()
	e.serves.Wait()
	close(e.stopSweep)
	e.stopLoops()
	e.work.close()
	addProcs(-e.extraProcs)
	if e.rio != nil {
		e.opts.FileIO.useRings(nil)
		e.rio.close()
	}
	return nil
}

// sweeper asks every loop to check its connections' timeouts, every
// Options.sweepEvery, until Close.
func (e *Uring) sweeper() {
	every := e.opts.sweepEvery()
	if every == 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.stopSweep:
			return
		case <-t.C:
			for _, l := range e.loops {
				l.askSweep()
			}
		}
	}
}

func (e *Uring) stopLoops() {
	for _, l := range e.loops {
		l.stop()
	}
	for _, l := range e.loops {
		<-l.done
	}
}

// workPool runs Handle calls on a fixed set of goroutines. The queue is
// unbounded so that a loop never blocks handing work over; what bounds it
// is MaxInFlight per connection.
type workPool struct {
	mu     sync.Mutex
	cond   *sync.Cond
	q      []*ureq
	closed bool
	wg     sync.WaitGroup
}

func newWorkPool(n int) *workPool {
	p := &workPool{}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(n)
	for range n {
		go p.run()
	}
	return p
}

func (p *workPool) submit(r *ureq) {
	p.mu.Lock()
	p.q = append(p.q, r)
	p.mu.Unlock()
	p.cond.Signal()
}

func (p *workPool) run() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for len(p.q) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.q) == 0 {
			p.mu.Unlock()
			return
		}
		r := p.q[0]
		p.q[0] = nil
		p.q = p.q[1:]
		p.mu.Unlock()
		r.handle()
	}
}

// close lets queued work finish and stops the goroutines.
func (p *workPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
}

// procs counts the Ps that running engines added to GOMAXPROCS, one per
// loop that waits holding its P (loop.wait): the workers and the rest of
// the runtime keep as many Ps as they had. base is GOMAXPROCS before the
// first engine added any.
var procs struct {
	sync.Mutex
	base, added int
}

// addProcs adds n Ps to GOMAXPROCS (n < 0 takes them back).
func addProcs(n int) {
	if n == 0 {
		return
	}
	procs.Lock()
	defer procs.Unlock()
	if procs.added == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.added += n
	runtime.GOMAXPROCS(procs.base + procs.added)
}
