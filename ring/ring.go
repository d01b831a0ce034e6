package ring

import (
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Options say how to set up a ring.
type Options struct {
	// Entries is the SQ size; the kernel rounds it up to a power of two.
	Entries uint32
	// CQEntries, when non-zero, sets IORING_SETUP_CQSIZE. Zero gives the
	// kernel default of twice the SQ size.
	CQEntries uint32
	// Flags are extra Setup* flags, e.g. SetupSingleIssuer|SetupDeferTaskrun.
	// SetupCQSize is added by CQEntries. The flags in layoutFlags change the
	// ring layout this package assumes and are refused with EINVAL.
	Flags uint32
	// SQThreadIdle is the SQPOLL thread's idle time in milliseconds.
	SQThreadIdle uint32
	// SQThreadCPU pins the SQPOLL thread (needs SetupSQAff).
	SQThreadCPU uint32
}

// Ring is one io_uring instance. It is not safe for concurrent use: one
// goroutine submits and reaps. With SetupSingleIssuer (and so with
// SetupDeferTaskrun) that goroutine must also stay on the OS thread that
// created the ring: call runtime.LockOSThread before New and keep it locked for
// the ring's life, or the kernel fails submissions with EEXIST. The same lock
// is advisable with SetupCoopTaskrun, whose completions are run only when the
// submitting thread enters the kernel.
type Ring struct {
	fd       int
	flags    uint32
	features uint32
	sq       subQueue
	cq       compQueue
	sqRing   []byte // SQ ring mapping (also the CQ ring with FeatSingleMmap)
	cqRing   []byte // separate CQ ring mapping, nil with FeatSingleMmap
	sqeMem   []byte // SQE array mapping
	extArg   geteventsArg
	extTs    unix.Timespec
}

type subQueue struct {
	khead   *uint32 // written by the kernel as it consumes SQEs
	ktail   *uint32 // written by us to publish SQEs
	kflags  *uint32
	mask    uint32
	entries uint32
	sqes    []SQE
	// sqeHead..sqeTail are SQEs handed out by GetSQE but not yet published.
	sqeHead uint32
	sqeTail uint32
}

type compQueue struct {
	khead     *uint32 // written by us as we consume CQEs
	ktail     *uint32 // written by the kernel as it posts CQEs
	koverflow *uint32
	mask      uint32
	entries   uint32
	cqes      []CQE
}

// layoutFlags change the SQE/CQE size or how the rings are mapped.
const layoutFlags = SetupSQE128 | SetupCQE32 | SetupNoMmap | SetupNoSQArray | SetupRegisteredFD

// New sets up a ring with exactly the options given. A flag the kernel does
// not know fails with EINVAL; see NewBest for falling back.
func New(o Options) (*Ring, error) {
	if o.Flags&layoutFlags != 0 {
		return nil, fmt.Errorf("ring: setup flags %#x not supported: %w", o.Flags&layoutFlags, unix.EINVAL)
	}
	p := Params{Flags: o.Flags, SQThreadIdle: o.SQThreadIdle, SQThreadCPU: o.SQThreadCPU}
	if o.CQEntries != 0 {
		p.Flags |= SetupCQSize
		p.CQEntries = o.CQEntries
	}
	fd, err := sysSetup(o.Entries, &p)
	if err != nil {
		return nil, fmt.Errorf("io_uring_setup(entries=%d flags=%#x): %w", o.Entries, p.Flags, err)
	}
	r := &Ring{fd: fd, flags: p.Flags, features: p.Features}
	if err := r.mapRings(&p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// preferred is the order NewBest tries optional flags in: SQPOLL first since
// it excludes the task-run flags; SINGLE_ISSUER before DEFER_TASKRUN, which
// needs it.
var preferred = []uint32{SetupSQPoll, SetupSingleIssuer, SetupDeferTaskrun, SetupCoopTaskrun, SetupTaskrunFlag, SetupSubmitAll}

// NewBest sets up a ring with as many of o.Flags as the kernel accepts. It
// first tries them all; if that fails with EINVAL it adds the flags one at a
// time, keeping each that the kernel accepts. Flags() on the result reports
// which took. Errors other than EINVAL are returned as they are.
func NewBest(o Options) (*Ring, error) {
	r, err := New(o)
	if err == nil || !errors.Is(err, unix.EINVAL) {
		return r, err
	}
	want := o.Flags
	o.Flags = 0
	for _, f := range flagOrder(want) {
		try := o
		try.Flags |= f
		t, err := New(try)
		if err == nil {
			t.Close()
			o.Flags |= f
		} else if !errors.Is(err, unix.EINVAL) {
			return nil, err
		}
	}
	return New(o)
}

// flagOrder lists the bits of want, preferred ones first.
func flagOrder(want uint32) []uint32 {
	var out []uint32
	for _, f := range preferred {
		if want&f != 0 {
			out = append(out, f)
			want &^= f
		}
	}
	for want != 0 {
		f := uint32(1) << bits.TrailingZeros32(want)
		out = append(out, f)
		want &^= f
	}
	return out
}

// mapRings maps the SQ ring, CQ ring and SQE array and points the queues into them.
func (r *Ring) mapRings(p *Params) error {
	sqSize := int(p.SQOff.Array + p.SQEntries*4)
	cqSize := int(p.CQOff.CQEs + p.CQEntries*uint32(unsafe.Sizeof(CQE{})))
	single := p.Features&FeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqRing, err = mmapRing(r.fd, offSQRing, sqSize); err != nil {
		return err
	}
	cqMem := r.sqRing
	if !single {
		if r.cqRing, err = mmapRing(r.fd, offCQRing, cqSize); err != nil {
			return err
		}
		cqMem = r.cqRing
	}
	if r.sqeMem, err = mmapRing(r.fd, offSQEs, int(p.SQEntries)*int(unsafe.Sizeof(SQE{}))); err != nil {
		return err
	}
	r.sq.init(r.sqRing, r.sqeMem, p)
	r.cq.init(cqMem, p)
	return nil
}

func mmapRing(fd int, off int64, size int) ([]byte, error) {
	b, err := unix.Mmap(fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap io_uring offset %#x: %w", off, err)
	}
	return b, nil
}

func u32At(mem []byte, off uint32) *uint32 {
	return (*uint32)(unsafe.Pointer(&mem[off]))
}

func (q *subQueue) init(ring, sqeMem []byte, p *Params) {
	q.khead = u32At(ring, p.SQOff.Head)
	q.ktail = u32At(ring, p.SQOff.Tail)
	q.kflags = u32At(ring, p.SQOff.Flags)
	q.mask = *u32At(ring, p.SQOff.RingMask)
	q.entries = *u32At(ring, p.SQOff.RingEntries)
	q.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&sqeMem[0])), q.entries)
	// Map SQ slot i to SQE i once, as liburing does, so that publishing an
	// SQE is only a tail store.
	array := unsafe.Slice(u32At(ring, p.SQOff.Array), q.entries)
	for i := range array {
		array[i] = uint32(i)
	}
	q.sqeHead = atomic.LoadUint32(q.ktail)
	q.sqeTail = q.sqeHead
}

func (q *compQueue) init(ring []byte, p *Params) {
	q.khead = u32At(ring, p.CQOff.Head)
	q.ktail = u32At(ring, p.CQOff.Tail)
	q.koverflow = u32At(ring, p.CQOff.Overflow)
	q.mask = *u32At(ring, p.CQOff.RingMask)
	q.entries = *u32At(ring, p.CQOff.RingEntries)
	q.cqes = unsafe.Slice((*CQE)(unsafe.Pointer(&ring[p.CQOff.CQEs])), q.entries)
}

// Close unmaps the rings and closes the ring fd. The kernel cancels requests
// still in flight, but does so asynchronously: reap or cancel everything that
// uses memory you are about to free before calling Close.
func (r *Ring) Close() error {
	for _, m := range [][]byte{r.sqeMem, r.cqRing, r.sqRing} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	r.sqeMem, r.cqRing, r.sqRing = nil, nil, nil
	r.sq, r.cq = subQueue{}, compQueue{}
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// Fd is the ring's file descriptor.
func (r *Ring) Fd() int { return r.fd }

// Flags are the setup flags the ring was created with.
func (r *Ring) Flags() uint32 { return r.flags }

// Features are the IORING_FEAT_* bits the kernel reported.
func (r *Ring) Features() uint32 { return r.features }

// SQEntries and CQEntries are the ring sizes the kernel chose.
func (r *Ring) SQEntries() uint32 { return r.sq.entries }

// CQEntries is the completion queue size.
func (r *Ring) CQEntries() uint32 { return r.cq.entries }

// GetSQE returns the next free SQE, zeroed, or nil when the SQ is full (submit
// and try again). The SQE is published to the kernel by the next Submit.
func (r *Ring) GetSQE() *SQE {
	q := &r.sq
	// Acquire: the kernel must be done reading a slot before we reuse it.
	head := atomic.LoadUint32(q.khead)
	if q.sqeTail-head >= q.entries {
		return nil
	}
	sqe := &q.sqes[q.sqeTail&q.mask]
	q.sqeTail++
	*sqe = SQE{}
	return sqe
}

// SQReady is the number of SQEs prepared but not yet taken by the kernel.
func (r *Ring) SQReady() uint32 {
	return r.sq.sqeTail - atomic.LoadUint32(r.sq.khead)
}

// SQSpace is the number of SQEs GetSQE can still hand out.
func (r *Ring) SQSpace() uint32 { return r.sq.entries - r.SQReady() }

// flush publishes the SQEs handed out since the last flush and returns how
// many SQEs the kernel has yet to consume, which includes any an earlier
// Submit left behind after an error.
func (r *Ring) flush() uint32 {
	q := &r.sq
	if q.sqeHead != q.sqeTail {
		q.sqeHead = q.sqeTail
		// Release: the SQE contents must be visible before the new tail.
		atomic.StoreUint32(q.ktail, q.sqeTail)
	}
	return q.sqeTail - atomic.LoadUint32(q.khead)
}

// Submit hands all prepared SQEs to the kernel in one io_uring_enter and
// returns how many it took. With SQPOLL it only wakes the poll thread when
// needed. On EAGAIN or EBUSY (no resources, or a completion backlog) nothing
// was taken: reap completions and call Submit again.
func (r *Ring) Submit() (int, error) {
	return r.submit(0, nil)
}

// SubmitAndWait submits like Submit and then waits until at least n
// completions are ready to be peeked.
func (r *Ring) SubmitAndWait(n uint32) (int, error) {
	return r.submit(n, nil)
}

// SubmitAndWaitTimeout is SubmitAndWait giving up after d; it then returns
// unix.ETIME. It needs FeatExtArg (Linux 5.11).
func (r *Ring) SubmitAndWaitTimeout(n uint32, d time.Duration) (int, error) {
	ts := unix.NsecToTimespec(int64(d))
	return r.submit(n, &ts)
}

// SubmitAndWaitHeld is SubmitAndWaitTimeout made as one raw system call:
// the goroutine keeps its P while the thread sleeps in the kernel, so the
// scheduler neither retakes the P (Go's sysmon does that to a system call
// older than 20 µs, and keeps polling at that rate while it does) nor has
// to find one when the wait ends. The price is that the P runs nothing
// else meanwhile. A signal (the runtime's preemption signal, sent for a
// stop-the-world) ends the wait early with EINTR, which is returned, not
// retried: the caller should then yield (runtime.Gosched), since its way
// back to the next wait may check no preemption flag, and a stop-the-world
// would otherwise wait for d. Not for SQPOLL rings, which take the
// ordinary path. Needs FeatExtArg (Linux 5.11).
func (r *Ring) SubmitAndWaitHeld(n uint32, d time.Duration) (int, error) {
	if r.flags&SetupSQPoll != 0 {
		return r.SubmitAndWaitTimeout(n, d)
	}
	toSubmit := r.flush()
	r.extTs = unix.NsecToTimespec(int64(d))
	r.extArg = geteventsArg{Ts: uint64(uintptr(unsafe.Pointer(&r.extTs)))}
	return sysEnterRaw(r.fd, toSubmit, n, enterGetEvents|enterExtArg,
		unsafe.Pointer(&r.extArg), unsafe.Sizeof(r.extArg))
}

func (r *Ring) submit(wait uint32, ts *unix.Timespec) (int, error) {
	toSubmit := r.flush()
	var flags uint32
	if r.flags&SetupSQPoll != 0 {
		// The poll thread consumes the SQ itself; enter only to wake it.
		if atomic.LoadUint32(r.sq.kflags)&sqNeedWakeup != 0 {
			flags |= enterSQWakeup
		}
		submitted := int(toSubmit)
		toSubmit = 0
		if wait == 0 && flags == 0 && !r.cqNeedsFlush() {
			return submitted, nil
		}
		_, err := r.enter(0, wait, flags, ts)
		return submitted, err
	}
	if toSubmit == 0 && wait == 0 && !r.cqNeedsFlush() {
		return 0, nil
	}
	return r.enter(toSubmit, wait, flags, ts)
}

// cqNeedsFlush reports that completions are held in the kernel (an overflow
// backlog, or task work to run) and only an enter with GETEVENTS brings them
// into the CQ ring.
func (r *Ring) cqNeedsFlush() bool {
	return atomic.LoadUint32(r.sq.kflags)&(sqCQOverflow|sqTaskrun) != 0
}

// enter calls io_uring_enter, retrying on EINTR (the Go runtime signals its
// threads often), and when waiting keeps going until wait CQEs are ready.
func (r *Ring) enter(toSubmit, wait, flags uint32, ts *unix.Timespec) (int, error) {
	if wait > 0 || r.cqNeedsFlush() {
		flags |= enterGetEvents
	}
	arg, argSize := unsafe.Pointer(nil), uintptr(8) // no sigmask; 8 is _NSIG/8
	if ts != nil {
		// The argument lives in the Ring, on the heap: a stack copy could
		// move between taking its address and the system call.
		r.extTs = *ts
		r.extArg = geteventsArg{Ts: uint64(uintptr(unsafe.Pointer(&r.extTs)))}
		arg, argSize, flags = unsafe.Pointer(&r.extArg), unsafe.Sizeof(r.extArg), flags|enterExtArg
	}
	submitted := 0
	for {
		n, err := sysEnter(r.fd, toSubmit, wait, flags, arg, argSize)
		switch {
		case err == unix.EINTR:
			// Returned only when nothing was submitted: retry as is.
			continue
		case (err == unix.EAGAIN || err == unix.EBUSY) && wait > 0 && r.CQReady() > 0:
			// The caller can make progress by reaping what is there.
			return submitted, nil
		case err != nil:
			return submitted, err
		}
		submitted += n
		toSubmit -= min(toSubmit, uint32(n))
		if wait == 0 || ts != nil || r.CQReady() >= wait {
			return submitted, nil
		}
	}
}

// GetEvents enters the kernel to flush completions without waiting. With
// SetupDeferTaskrun completions are only posted when the ring's thread does
// this (or waits), so PeekCQE alone can find nothing.
func (r *Ring) GetEvents() error {
	r.flush()
	_, err := r.enter(0, 0, enterGetEvents, nil)
	return err
}

// CQReady is the number of CQEs ready to be peeked.
func (r *Ring) CQReady() uint32 {
	// Acquire: CQE contents are visible once we see the tail move past them.
	return atomic.LoadUint32(r.cq.ktail) - *r.cq.khead
}

// PeekCQE returns the next completion without a system call, or nil if there
// is none. The pointer is into the CQ ring and valid until CQESeen or Advance.
func (r *Ring) PeekCQE() *CQE {
	q := &r.cq
	head := *q.khead // only we write the head
	if atomic.LoadUint32(q.ktail) == head {
		return nil
	}
	return &q.cqes[head&q.mask]
}

// PeekBatch copies up to len(dst) ready completions into dst without a system
// call and returns how many. It does not consume them: call Advance(n).
func (r *Ring) PeekBatch(dst []CQE) int {
	q := &r.cq
	head := *q.khead
	n := min(int(atomic.LoadUint32(q.ktail)-head), len(dst))
	for i := range n {
		dst[i] = q.cqes[(head+uint32(i))&q.mask]
	}
	return n
}

// WaitCQE returns the next completion, entering the kernel to wait if none is
// ready. Like PeekCQE the result is valid until CQESeen.
func (r *Ring) WaitCQE() (*CQE, error) {
	for {
		if cqe := r.PeekCQE(); cqe != nil {
			return cqe, nil
		}
		if _, err := r.submit(1, nil); err != nil {
			return nil, err
		}
	}
}

// CQESeen marks one completion consumed, freeing its CQ slot.
func (r *Ring) CQESeen() { r.Advance(1) }

// Advance marks n completions consumed.
func (r *Ring) Advance(n uint32) {
	// Release: we are done reading the CQEs before the kernel may reuse them.
	atomic.StoreUint32(r.cq.khead, *r.cq.khead+n)
}

// Overflow is the kernel's count of completions dropped for lack of CQ space
// (with FeatNoDrop it stays 0; the backlog is kept in the kernel instead).
func (r *Ring) Overflow() uint32 { return atomic.LoadUint32(r.cq.koverflow) }

// BufferID returns the provided buffer the kernel picked for this completion.
func (c *CQE) BufferID() (uint16, bool) {
	return uint16(c.Flags >> cqeBufferShift), c.Flags&CQEFBuffer != 0
}

// More reports that the request stays armed and will post more CQEs
// (multishot requests, and the first CQE of a zero-copy send).
func (c *CQE) More() bool { return c.Flags&CQEFMore != 0 }

// Notif reports a zero-copy send notification: the kernel no longer uses the
// buffer of the send with the same UserData.
func (c *CQE) Notif() bool { return c.Flags&CQEFNotif != 0 }

// Err returns the CQE's error as a unix.Errno, or nil if Res is not negative.
func (c *CQE) Err() error {
	if c.Res < 0 {
		return unix.Errno(-c.Res)
	}
	return nil
}
