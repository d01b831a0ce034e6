package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// Completion kinds, in the top byte of user_data. The low 32 bits name a
// connection (kRecv) or request (kSend, kRead) slot; bits 32..55 a read.
const (
	kIgnore uint64 = iota // cancels: nothing to do
	kWake                 // the eventfd read
	kRecv
	kSend
	kRead
)

func ud(kind uint64, sub int, slot uint32) uint64 {
	return kind<<56 | uint64(sub)<<32 | uint64(slot)
}

func splitUD(u uint64) (kind uint64, sub int, slot uint32) {
	return u >> 56, int(u>>32) & 0xffffff, uint32(u)
}

// Ring and receive-buffer sizes per loop. Received bytes are copied into a
// record right away, so receive buffers return to the ring within the same
// batch and a few suffice for many connections.
const (
	sqEntries   = 256
	cqEntries   = 8192
	recvBufs    = 64
	recvBufSize = 64 << 10
	cqeBatch    = 128
)

// loop is one event loop: a goroutine locked to an OS thread, its ring and
// everything submitted through it. Fields below mu are shared with other
// goroutines; the rest is touched only by the loop's goroutine.
type loop struct {
	e    *Uring
	id   int
	r    *ring.Ring
	br   *ring.BufRing
	rbuf *ring.Buffers // receive buffers, id = index
	efd  int
	ebuf *ring.Buffers // the eventfd read's 8 bytes
	done chan struct{}

	wake    atomic.Bool // an eventfd write is pending
	mu      sync.Mutex
	inConns []newConn
	inReqs  []*ureq
	inClose []*uconn  // connections evicted by the partial-record budget
	inSends []outCall // nfs's callbacks to send (see postSend)
	stopReq bool
	// sweepDue: the sweeper asks for a timeout check.
	sweepDue atomic.Bool
	closeDue atomic.Bool // inClose is not empty

	efdArmed  bool
	cancelled bool // the eventfd read is being cancelled
	held      bool // the next wait keeps the P (see wait)
	stopping  bool
	conns     []*uconn
	freeConns []uint32
	live      int // open connections
	reqs      []*ureq
	freeReqs  []uint32
	pool      slabPool
	cqes      []ring.CQE
	// enterFailed: an unexpected io_uring_enter error was logged.
	enterFailed bool
	st          *metrics.Loop
}

// outCall is a record nfs sends on a connection: a callback on the back
// channel.
type outCall struct {
	c   *uconn
	rec []byte
}

type newConn struct {
	fd     int
	remote string
	x      xprtInfo
}

// startLoop starts loop i and waits until its ring is set up on its thread.
func startLoop(e *Uring, i int) (*loop, error) {
	l := &loop{e: e, id: i, efd: -1, done: make(chan struct{}), cqes: make([]ring.CQE, cqeBatch),
		st: e.opts.Metrics.NewLoop()}
	errc := make(chan error, 1)
	go l.run(errc)
	if err := <-errc; err != nil {
		<-l.done
		return nil, err
	}
	return l, nil
}

// run is the loop's goroutine. It never unlocks its OS thread: the thread
// carries the CPU affinity and the ring's single-issuer identity, and Go
// ends a thread whose goroutine exits locked.
func (l *loop) run(errc chan<- error) {
	defer close(l.done)
	runtime.LockOSThread()
	// Nothing that opens a file may run here (nfs.MarkLoopThread).
	defer nfs.MarkLoopThread()()
	l.pin()
	if err := l.setup(); err != nil {
		l.teardown()
		errc <- err
		return
	}
	errc <- nil
	l.serve()
	l.teardown()
}

// pin binds the thread to CPU id mod NumCPU, so a loop's ring, its
// connections' socket work and its caches stay on one core.
func (l *loop) pin() {
	var set unix.CPUSet
	set.Set(l.id % runtime.NumCPU())
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		l.e.opts.Logger.Debug("uring: cannot pin loop", "loop", l.id, "err", err)
	}
}

func (l *loop) setup() error {
	r, err := ring.NewBest(ring.Options{Entries: sqEntries, CQEntries: cqEntries,
		Flags: ring.SetupSingleIssuer | ring.SetupDeferTaskrun | ring.SetupCoopTaskrun})
	if err != nil {
		return fmt.Errorf("io_uring setup: %w", err)
	}
	l.r = r
	l.pool.useFixed(r)
	if l.rbuf, err = ring.AllocBuffers(recvBufs, recvBufSize); err != nil {
		return err
	}
	if l.br, err = r.NewBufRing(recvBufs, 0); err != nil {
		return fmt.Errorf("io_uring provided buffers: %w", err)
	}
	for i := range recvBufs {
		l.br.Add(l.rbuf.Buf(i), uint16(i), i)
	}
	l.br.Advance(recvBufs)
	if l.ebuf, err = ring.AllocBuffers(1, 8); err != nil {
		return err
	}
	l.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	l.armWake()
	return nil
}

// teardown frees what setup made. Every request using this memory has
// completed by now (serve returns only then).
func (l *loop) teardown() {
	if l.br != nil {
		l.br.Free()
	}
	if l.r != nil {
		l.r.Close()
	}
	if l.rbuf != nil {
		l.rbuf.Free()
	}
	if l.ebuf != nil {
		l.ebuf.Free()
	}
	if l.efd >= 0 {
		unix.Close(l.efd)
	}
	l.pool.release()
}

// serve runs until stopped and every connection is gone, then cancels the
// eventfd read and waits for it, so nothing in flight refers to memory
// teardown frees.
func (l *loop) serve() {
	for {
		if l.stopping && l.live == 0 {
			if !l.efdArmed {
				return
			}
			if !l.cancelled {
				l.cancel(ud(kWake, 0, 0))
				l.cancelled = true
			}
		}
		n := l.r.PeekBatch(l.cqes)
		if n == 0 {
			l.wait()
			continue
		}
		for i := range n {
			l.complete(l.cqes[i])
		}
		l.r.Advance(uint32(n))
		l.st.Completions.Add(uint64(n))
		if l.closeDue.Load() {
			l.closePosted()
		}
	}
}

// heldWaitMax bounds one held wait (see wait): a loop that has heard
// nothing for this long is idle and next waits the ordinary way. It does
// not bound a stop-the-world (garbage collection): the runtime's
// preemption signal ends a held wait (EINTR), and wait then yields.
const heldWaitMax = 10 * time.Millisecond

// wait submits what is prepared and sleeps until a completion arrives.
// An error the ring should never give is logged once and retried after a
// pause rather than taken down with the process: the other loops, and the
// other connections, keep being served.
//
// A busy loop waits holding its P (ring.SubmitAndWaitHeld), at most
// heldWaitMax at a time: in io_uring_enter as an ordinary system call its
// P is retaken by Go's sysmon after 20 µs whenever the workers keep the
// other Ps busy, and sysmon, finding Ps to retake, polls every 20 µs: 9-12
// % of the server's CPU in the mdtest phases went to sysmon's wake-ups,
// and each wait paid for the hand-back. NewUring adds a P per loop, so the
// workers keep theirs. A held wait that ends with nothing to do means the
// loop is idle: the next wait is an ordinary one (no bound), which gives
// the P back until traffic comes.
//
// The runtime stops the world, and sysmon preempts a goroutine running
// for 10 ms, by flagging it and signalling its thread; the signal ends
// the held wait with EINTR, and runtime.Gosched gives the P up there and
// then: the path back to the next wait may make no call that checks the
// flag. The bound was 200 µs when the wait relied on it instead; with
// the yield a 10 ms bound keeps the P through the gaps of a loop whose
// connections share CPUs with their clients (most waits there outlast
// 200 µs, and each one that timed out cost an ordinary wait and a
// sysmon retake): 0.91-0.98x the server CPU per op, garbage collection
// pauses unchanged. BENCHMARKS.md, "Held waits".
func (l *loop) wait() {
	var n int
	var err error
	if l.held {
		n, err = l.r.SubmitAndWaitHeld(1, heldWaitMax)
		if errors.Is(err, unix.EINTR) {
			runtime.Gosched()
		}
		l.held = !errors.Is(err, unix.ETIME) || l.r.CQReady() > 0
	} else {
		n, err = l.r.SubmitAndWait(1)
		l.held = !l.e.opts.PlainWait
	}
	l.submitted(n, err)
	if err == nil || errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) ||
		errors.Is(err, unix.EBUSY) || errors.Is(err, unix.ETIME) {
		return
	}
	if !l.enterFailed {
		l.enterFailed = true
		l.e.opts.Logger.Error("uring: io_uring_enter failed; retrying", "loop", l.id, "err", err)
	}
	time.Sleep(10 * time.Millisecond)
}

func (l *loop) complete(c ring.CQE) {
	kind, sub, slot := splitUD(c.UserData)
	switch kind {
	case kWake:
		l.onWake(c)
	case kRecv:
		l.conns[slot].onRecv(c)
	case kSend:
		l.reqs[slot].onSend(c)
	case kRead:
		l.reqs[slot].onRead(sub, c)
	}
}

// sqe returns a free SQE, submitting to make room when the SQ is full.
func (l *loop) sqe() *ring.SQE {
	for {
		if s := l.r.GetSQE(); s != nil {
			return s
		}
		l.submitted(l.r.Submit())
	}
}

func (l *loop) cancel(target uint64) {
	s := l.sqe()
	s.PrepCancel(target, 0)
	s.UserData = ud(kIgnore, 0, 0)
}

func (l *loop) armWake() {
	s := l.sqe()
	s.PrepRead(l.efd, l.ebuf.Buf(0)[:8], 0)
	s.UserData = ud(kWake, 0, 0)
	l.efdArmed = true
}

// post* hand work to the loop from other goroutines; notify wakes it. The
// wake flag saves an eventfd write per item while the loop is busy: it is
// cleared before the inbox is drained, so an item added after the drain
// started always writes again.
func (l *loop) postConn(fd int, remote string, x xprtInfo) {
	l.mu.Lock()
	if l.stopReq {
		l.mu.Unlock()
		unix.Close(fd)
		l.e.gate.leave()
		return
	}
	l.inConns = append(l.inConns, newConn{fd, remote, x})
	l.mu.Unlock()
	l.notify()
}

// postSend queues a callback record for c's send queue; any goroutine may
// call it. The record is copied: it is one small CB_COMPOUND.
func (l *loop) postSend(c *uconn, rec [][]byte) error {
	var n int
	for _, p := range rec {
		n += len(p)
	}
	buf := make([]byte, 0, n)
	for _, p := range rec {
		buf = append(buf, p...)
	}
	l.mu.Lock()
	if l.stopReq {
		l.mu.Unlock()
		return errConnGone
	}
	l.inSends = append(l.inSends, outCall{c, buf})
	l.mu.Unlock()
	l.notify()
	return nil
}

// startSends puts posted callback records on their connections' send
// queues, as replies with nothing to read.
func (l *loop) startSends(sends []outCall) {
	for _, s := range sends {
		c := s.c
		if c.closing {
			continue // the caller's wait ends with the connection's Close
		}
		r := l.newReq(c)
		c.inflight++
		r.parts = append(r.parts[:0], s.rec)
		c.sendQ = append(c.sendQ, r)
		if !c.sending {
			c.sendNext()
		}
	}
}

func (l *loop) postReq(r *ureq) {
	l.mu.Lock()
	l.inReqs = append(l.inReqs, r)
	l.mu.Unlock()
	l.notify()
}

// postClose asks the loop to close c; any goroutine may call it. A
// stopping loop closes everything anyway, and may have closed its eventfd.
func (l *loop) postClose(c *uconn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopReq {
		l.inClose = append(l.inClose, c)
		l.closeDue.Store(true)
		l.notify()
	}
}

// closePosted closes the connections postClose named. The loop checks
// after every batch of completions as well as on a wake: evictions mostly
// come from the loop itself, and the memory they free should not wait.
func (l *loop) closePosted() {
	l.mu.Lock()
	closes := l.inClose
	l.inClose = nil
	l.closeDue.Store(false)
	l.mu.Unlock()
	for _, c := range closes {
		if !c.closing { // not closed (and freed) since
			l.e.opts.Logger.Debug("uring: closing connection", "remote", c.st.Remote, "err", errPartialBudget)
			c.close()
			c.maybeDone()
		}
	}
}

// askSweep asks the loop for a timeout sweep (see sweep).
func (l *loop) askSweep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopReq {
		l.sweepDue.Store(true)
		l.notify()
	}
}

func (l *loop) stop() {
	l.mu.Lock()
	l.stopReq = true
	l.mu.Unlock()
	l.notify()
}

var one = binary.NativeEndian.AppendUint64(nil, 1)

func (l *loop) notify() {
	if l.wake.CompareAndSwap(false, true) {
		unix.Write(l.efd, one)
	}
}

func (l *loop) onWake(c ring.CQE) {
	l.efdArmed = false
	l.wake.Store(false)
	l.mu.Lock()
	conns, reqs, sends, stop := l.inConns, l.inReqs, l.inSends, l.stopReq
	l.inConns, l.inReqs, l.inSends = nil, nil, nil
	l.mu.Unlock()
	for _, nc := range conns {
		l.addConn(nc.fd, nc.remote, nc.x)
	}
	for _, r := range reqs {
		r.onHandled()
	}
	l.startSends(sends)
	l.closePosted()
	if l.sweepDue.Swap(false) {
		l.sweep()
	}
	if stop && !l.stopping {
		l.stopping = true
		for _, c := range l.conns {
			if c != nil {
				c.close()
			}
		}
	}
	// Keep listening while connections remain: their requests come back
	// from workers through the eventfd even while stopping.
	if !l.stopping || l.live > 0 {
		l.armWake()
	}
}

// sweep closes the connections that overstayed a timeout (see
// timeouts.verdict).
func (l *loop) sweep() {
	now := time.Now()
	o := &l.e.opts
	for _, c := range l.conns {
		if c == nil || c.closing {
			continue
		}
		busy := c.inflight > 0 && !c.sending
		if why := c.tmo.verdict(now, o, busy, c.asm.partial(), c.paused, c.asm.records); why != "" {
			o.Logger.Debug("uring: closing connection", "remote", c.st.Remote, "err", why)
			c.close()
			c.maybeDone()
		}
	}
}
