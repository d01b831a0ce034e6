package engine

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// Portable is the engine for kernels without io_uring: a goroutine per
// connection reads records, each request runs in its own goroutine (up to
// MaxInFlight per connection, so replies may go out of order as the slot
// table allows), file data is read with pread and replies go out with
// writev. Records the handler calls quick (the data path of READ,
// READ_PLUS, GETATTR) are served by the reader itself when their file data
// is at most inlineMaxRead bytes and all in the page cache (serveInline).
//
// Its limits match the io_uring engine's: per connection MaxInFlight
// requests, MaxQueuedBytes of received records waiting to be handled and
// MaxQueuedBytes of replies read and waiting to be sent (over any, the
// connection's reader stops reading, so TCP pushes back on the client);
// the idle and partial-record timeouts; MaxConns; MaxPartialBytes.
type Portable struct {
	h      nfs.Handler
	opts   Options
	pool   bufPool
	reads  *readPolicy
	gate   connGate
	budget *partialBudget
	inline inliner // h, when it can tell quick records apart
	// handoffs counts inline records whose reads went to a goroutine
	// (cold, O_DIRECT, or over inlineMaxRead), for tests: never touched
	// by a record served inline.
	handoffs atomic.Uint64

	mu        sync.Mutex
	closed    bool
	lns       map[net.Listener]struct{}
	conns     map[*conn]struct{}
	wg        sync.WaitGroup
	stopSweep chan struct{}
	sweepDone chan struct{}
}

// NewPortable returns a portable engine serving h.
func NewPortable(h nfs.Handler, opts Options) *Portable {
	opts.defaults()
	dio, err := parseDIO(opts.DirectIO)
	if err != nil {
		dio = dioAuto // New validates the option; tools calling us directly get the default
	}
	p := &Portable{h: h, opts: opts, reads: newReadPolicy(dio), lns: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{},
		gate: connGate{max: int64(opts.MaxConns), stats: opts.Metrics}, budget: newPartialBudget(opts.MaxPartialBytes, opts.Metrics),
		stopSweep: make(chan struct{}), sweepDone: make(chan struct{})}
	p.inline, _ = h.(inliner)
	opts.Metrics.AddGauge(p.gate.gauge())
	go p.sweeper()
	return p
}

// Name implements Engine.
func (p *Portable) Name() string { return "portable" }

// Serve implements Engine.
func (p *Portable) Serve(ln net.Listener) error {
	if !p.track(ln) {
		return nil
	}
	for {
		nc, err := ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !p.gate.enter(p.opts.Logger, nc.RemoteAddr().String()) {
			nc.Close()
			continue
		}
		c := p.newConn(nc)
		if !p.addConn(c) {
			nc.Close()
			p.gate.leave()
			return nil
		}
		go p.serveConn(c)
	}
}

func (p *Portable) track(ln net.Listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.lns[ln] = struct{}{}
	return true
}

func (p *Portable) addConn(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return true
}

// Close implements Engine.
func (p *Portable) Close() error {
	p.mu.Lock()
	if !p.closed {
		close(p.stopSweep)
	}
	p.closed = true
	for ln := range p.lns {
		ln.Close()
	}
	for c := range p.conns {
		c.shutdown()
	}
	p.mu.Unlock()
	p.wg.Wait()
	<-p.sweepDone
	return nil
}

// sweeper closes the connections that overstay a timeout (see
// timeouts.verdict), checking every Options.sweepEvery until Close.
func (p *Portable) sweeper() {
	defer close(p.sweepDone)
	every := p.opts.sweepEvery()
	if every == 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stopSweep:
			return
		case now := <-t.C:
			p.sweep(now)
		}
	}
}

func (p *Portable) sweep(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		busy := c.working.Load() > 0
		why := c.tmo.verdict(now, &p.opts, busy, c.partial.Load(), c.paused.Load(), c.records.Load())
		if why != "" {
			p.opts.Logger.Debug("closing connection", "remote", c.st.Remote, "err", why)
			c.shutdown()
		}
	}
}

// conn is one client connection.
type conn struct {
	p   *Portable
	nc  net.Conn
	st  *nfs.Conn
	asm assembler // the reader goroutine's
	tmo timeouts

	wmu sync.Mutex // one reply on the wire at a time
	err error      // first write error, under wmu

	// Flow control, under fmu; fcond wakes whoever waits for room.
	fmu      sync.Mutex
	fcond    sync.Cond
	inflight int  // requests from admission to the end of their send
	recBytes int  // record bytes admitted and not yet handled
	queued   int  // reply bytes reserved and not yet sent
	shut     bool // closing: waiters give up

	// Read by the sweeper.
	working atomic.Int32  // requests in the handler or reading files
	paused  atomic.Bool   // the reader waits for flow control
	partial atomic.Bool   // the reader holds a partial record
	records atomic.Uint64 // records the reader completed

	stats *metrics.Shard
}

func (p *Portable) newConn(nc net.Conn) *conn {
	c := &conn{p: p, nc: nc, st: nfs.NewConn(nc.RemoteAddr().String())}
	c.st.Xprt = xprtOf(nc).sec
	c.stats = p.opts.Metrics.Shard(c.st.ID)
	c.fcond.L = &c.fmu
	c.asm = assembler{max: p.h.MaxRecord(), pool: &recPool, place: writePayloadIndex, hold: p.budget.hold(c.shutdown)}
	c.st.SetSender(c.sendCall)
	return c
}

// errConnGone is a callback's send on a connection that failed or closed.
var errConnGone = errors.New("engine: connection closed")

// sendCall sends a call record of nfs's back channel (a callback) between
// replies, under the same write lock.
func (c *conn) sendCall(rec [][]byte) error {
	if !c.send(rec) {
		return errConnGone
	}
	return nil
}

// shutdown closes the connection and wakes every waiter; any goroutine
// may call it, any number of times. The reader then drops its partial
// record and waits for the connection's requests.
func (c *conn) shutdown() {
	c.fmu.Lock()
	c.shut = true
	c.fmu.Unlock()
	c.fcond.Broadcast()
	c.nc.Close()
}

// stageSize is the reader's buffer for headers and small records; the
// bodies of large records are read straight into their own buffer
// (assembler.body), so an idle connection costs only this much.
const stageSize = 16 << 10

func (p *Portable) serveConn(c *conn) {
	defer p.wg.Done()
	var reqs sync.WaitGroup
	defer func() {
		// Replies to what was received still go out (a client may
		// half-close after its last request); a peer that does not read
		// them is closed by the idle timeout.
		c.asm.reset()
		reqs.Wait()
		c.shutdown()
		c.st.Close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		p.gate.leave()
	}()
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	stage := make([]byte, stageSize)
	emit := func(rec record) {
		if !c.admit(len(rec.bytes())) {
			recPool.put(rec.buf)
			return
		}
		if p.inline != nil && p.inline.Inline(rec.bytes()) {
			if !c.serveInline(rec, &reqs) {
				c.shutdown()
			}
			return
		}
		reqs.Add(1)
		go func() {
			defer reqs.Done()
			if !c.serve(rec) {
				c.shutdown()
			}
		}()
	}
	for {
		err := c.readOnce(stage, emit)
		if err != nil {
			if err != io.EOF && !errors.Is(err, net.ErrClosed) {
				p.opts.Logger.Debug("connection closed", "remote", c.st.Remote, "err", err)
			}
			return
		}
	}
}

// readOnce reads what the socket has and feeds it to the assembler, which
// calls emit for each record completed.
func (c *conn) readOnce(stage []byte, emit func(record)) error {
	dst, err := c.asm.body()
	if err != nil {
		return err
	}
	var n int
	if dst != nil {
		n, err = c.nc.Read(dst)
		if n > 0 {
			c.tmo.active.Store(true)
			c.asm.fill(n, emit)
		}
	} else {
		n, err = c.nc.Read(stage)
		if n > 0 {
			c.tmo.active.Store(true)
			if ferr := c.asm.feed(stage[:n], emit); ferr != nil {
				countFeedError(c.p.opts.Metrics, ferr)
				return ferr
			}
		}
	}
	c.partial.Store(c.asm.partial())
	c.records.Store(c.asm.records)
	if n > 0 && err == io.EOF {
		err = nil // handle what came; the next read says EOF again
	}
	return err
}

// admit waits until the connection may start a request whose record holds
// n bytes, and reports false if the connection closed meanwhile. While it
// waits the reader reads nothing, so TCP pushes back on the client.
func (c *conn) admit(n int) bool {
	o := &c.p.opts
	c.fmu.Lock()
	defer c.fmu.Unlock()
	for !c.shut && (c.inflight >= o.MaxInFlight || c.recBytes >= o.MaxQueuedBytes) {
		c.paused.Store(true)
		c.fcond.Wait()
	}
	c.paused.Store(false)
	if c.shut {
		return false
	}
	c.inflight++
	c.recBytes += n
	c.working.Add(1)
	return true
}

// reserve waits for room to queue n reply bytes (always granted when
// nothing is queued, so a reply bigger than the limit still goes out).
func (c *conn) reserve(n int) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	for !c.shut && c.queued > 0 && c.queued >= c.p.opts.MaxQueuedBytes {
		c.fcond.Wait()
	}
	if c.shut {
		return false
	}
	c.queued += n
	return true
}

// account changes the flow-control counters and wakes the waiters.
func (c *conn) account(inflight, recBytes, queued int) {
	c.fmu.Lock()
	c.inflight += inflight
	c.recBytes += recBytes
	c.queued += queued
	c.fmu.Unlock()
	c.fcond.Broadcast()
}

// serve handles one admitted record and sends its reply. It reports false
// when the connection should close.
func (c *conn) serve(rec record) bool {
	rep, charge, ok := c.handle(rec, false)
	if rep == nil {
		return ok
	}
	var local [4]*[]byte // most replies carry one read: no allocation
	return c.finish(rep, charge, local[:0], 0, nil)
}

// serveInline serves a record the handler calls quick (its Inline: the
// READ, READ_PLUS and GETATTR data path) on the connection's reader
// goroutine instead of a goroutine of its own, whose start and scheduling
// were about a third of a cached 4 KiB READ's server CPU (BENCHMARKS.md,
// "The portable engine's inline path"). Its file reads are tried with
// RWF_NOWAIT: a read that would wait for the disk, or that the read policy
// sends O_DIRECT (cold), goes with the rest of the reply to a goroutine,
// so no cold read holds up the records behind it on the connection; so
// does a reply with more than inlineMaxRead bytes of file data.
func (c *conn) serveInline(rec record, reqs *sync.WaitGroup) bool {
	rep, charge, ok := c.handle(rec, true)
	if rep == nil {
		return ok
	}
	var local [4]*[]byte
	var bufs []*[]byte
	var next *ioPlan
	done := 0
	if charge <= inlineMaxRead {
		var pl ioPlan
		bufs, done, pl = c.tryReads(rep, local[:0])
		if done == len(rep.Reads) {
			return c.finish(rep, charge, bufs, done, nil)
		}
		next = &pl
	}
	held := append([]*[]byte(nil), bufs...) // local stays on this stack
	c.p.handoffs.Add(1)
	reqs.Add(1)
	go func() {
		defer reqs.Done()
		if !c.finish(rep, charge, held, done, next) {
			c.shutdown()
		}
	}()
	return true
}

// inlineMaxRead is the most file data an inline record reads on the
// connection's reader. A larger reply goes to a goroutine whatever the
// page cache holds: copying it out of the page cache and into the socket
// takes long enough that the next records should be read and started
// meanwhile (a 1 MiB cached READ stream on one connection ran at up to
// 0.65x the MB/s read inline), and a goroutine costs little beside it.
const inlineMaxRead = 64 << 10

// handle runs the handler on an admitted record and reserves room for its
// reply's reads. A nil reply means there is nothing to send; ok then says
// whether the connection stays open.
// inline says the handler runs on the connection's reader (serveInline,
// nfs.Reply.Inline).
func (c *conn) handle(rec record, inline bool) (rep *nfs.Reply, charge int, ok bool) {
	rep = replies.Get().(*nfs.Reply)
	rep.Inline = inline
	n := len(rec.bytes())
	c.p.h.Handle(c.st, rec.bytes(), rep)
	recPool.put(rec.buf)
	c.working.Add(-1)
	c.account(0, -n, 0)
	for _, rd := range rep.Reads {
		charge += rd.Len
	}
	if rep.Drop || !c.reserve(charge) {
		// A dropped reply keeps the connection unless the handler
		// closes it; a failed reservation means it is closing.
		ok = rep.Drop && !rep.Close
		if !rep.Drop && len(rep.Reads) == 0 {
			// Nothing to read: the session slot still caches the
			// reply for the client's retransmit on a new connection.
			c.p.h.Complete(rep)
		}
		c.account(-1, 0, 0)
		rep.Reset()
		replies.Put(rep)
		return nil, 0, ok
	}
	c.working.Add(1)
	return rep, charge, true
}

// finish does rep's file reads from the from'th on (next, if not nil, is
// that one's plan; bufs holds the buffers of the reads before it), sends
// the reply and releases what handle took.
func (c *conn) finish(rep *nfs.Reply, charge int, bufs []*[]byte, from int, next *ioPlan) bool {
	bufs = c.readAll(rep, from, next, bufs)
	c.p.h.Complete(rep)
	c.working.Add(-1)
	ok := c.send(rep.Iovecs()) && !rep.Close
	for _, b := range bufs {
		c.p.pool.put(b)
	}
	c.account(-1, 0, -charge)
	rep.Reset()
	replies.Put(rep)
	return ok
}

// readAll performs the reply's reads from the from'th on with pread
// (O_DIRECT where the read policy says so; next, if not nil, is the
// from'th's plan), appending the buffers it takes to bufs.
func (c *conn) readAll(rep *nfs.Reply, from int, next *ioPlan, bufs []*[]byte) []*[]byte {
	for i := from; i < len(rep.Reads); i++ {
		rd := &rep.Reads[i]
		var pl ioPlan
		if i == from && next != nil {
			pl = c.p.reads.finish(*next, rd)
		} else {
			pl = c.p.reads.plan(rd)
		}
		b := c.p.pool.get(pl.Len)
		bufs = append(bufs, b)
		c.countRead(pl)
		rep.CompleteRead(i, c.p.reads.pread(pl, rd, *b))
	}
	return bufs
}

func (c *conn) countRead(pl ioPlan) {
	if pl.Direct {
		c.stats.Add(metrics.ReadsDirect, 1)
	} else {
		c.stats.Add(metrics.ReadsBuffered, 1)
	}
}

// tryReads performs rep's reads in order as long as each is buffered and
// all its bytes are in the page cache (RWF_NOWAIT), and returns the
// buffers taken, how many reads it did, and the plan of the first one it
// did not do. It runs on the connection's reader, which must not wait:
// a direct plan whose O_DIRECT descriptor is still to be opened (Open) is
// left to the goroutine readAll runs on, like any direct one.
func (c *conn) tryReads(rep *nfs.Reply, bufs []*[]byte) ([]*[]byte, int, ioPlan) {
	for i := range rep.Reads {
		rd := &rep.Reads[i]
		pl := c.p.reads.planLoop(rd)
		if pl.Direct || noNowait.Load() {
			return bufs, i, pl
		}
		b := c.p.pool.get(pl.Len)
		if !preadNowait(pl.FD, (*b)[:pl.Len], pl.Off) {
			c.p.pool.put(b)
			return bufs, i, pl
		}
		bufs = append(bufs, b)
		c.countRead(pl)
		rep.CompleteRead(i, (*b)[:pl.Len])
	}
	return bufs, len(rep.Reads), ioPlan{}
}

// noNowait is set once preadv2 with RWF_NOWAIT turns out to be refused
// (kernels before 4.14, filesystems without it): inline records then send
// every read to a goroutine, as before there was an inline path.
var noNowait atomic.Bool

// preadNowait reads all of buf at off if the page cache has it, without
// waiting for the disk, and reports whether it did. A short read (part of
// the range cached, or the end of the file) says false: the caller then
// reads the range the ordinary way, which handles both.
func preadNowait(fd int, buf []byte, off int64) bool {
	if len(buf) == 0 {
		return true
	}
	iov := [1][]byte{buf}
	for {
		n, err := unix.Preadv2(fd, iov[:], off, unix.RWF_NOWAIT)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EOPNOTSUPP || err == unix.EINVAL || err == unix.ENOSYS:
			noNowait.Store(true)
		}
		return err == nil && n == len(buf)
	}
}

// pread performs a planned read into buf (len pl.Len) and returns the
// bytes the reply wants. An O_DIRECT plan falls back to a buffered read
// when buf is not aligned for it or the kernel refuses it.
func (p *readPolicy) pread(pl ioPlan, rd *nfs.Read, buf []byte) []byte {
	if pl.Direct && !pageAligned(buf) {
		pl = ioPlan{FD: rd.FD, Off: rd.Off, Len: rd.Len}
	}
	n, err := preadFull(pl.FD, buf[:pl.Len], pl.Off)
	if pl.Direct && n == 0 && err == unix.EINVAL {
		p.forget(rd.FD)
		n, _ = preadFull(rd.FD, buf[:rd.Len], rd.Off)
		return buf[:n]
	}
	end := min(n, pl.Skip+rd.Len)
	return buf[min(pl.Skip, end):end]
}

// pageAligned reports whether buf starts on a page (Go's allocator gives
// the bufPool's power-of-two buffers of a page or more page alignment, but
// does not promise it).
func pageAligned(buf []byte) bool {
	return len(buf) > 0 && uintptr(unsafe.Pointer(&buf[0]))%ring.Align == 0
}

// preadFull reads until buf is full, end of file or an error, and returns
// how much it got and the error that stopped it, if any.
func preadFull(fd int, buf []byte, off int64) (int, error) {
	got := 0
	for got < len(buf) {
		n, err := unix.Pread(fd, buf[got:], off+int64(got))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return got, err
		}
		if n == 0 {
			break
		}
		got += n
	}
	return got, nil
}

func (c *conn) send(iov [][]byte) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.err != nil {
		return false
	}
	bufs := net.Buffers(iov)
	if _, err := bufs.WriteTo(c.nc); err != nil {
		c.err = err
		return false
	}
	c.tmo.active.Store(true)
	return true
}
