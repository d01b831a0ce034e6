package nfs

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Asynchronous COPY (RFC 7862 section 15.2.3), as knfsd's nfsd4_copy and
// nfsd4_do_async_copy: COPY answers at once with a copy stateid
// (wr_callback_id), the copy runs on its own goroutine, never on the
// shared request workers, in syncCopyMax chunks, and its end goes to the
// client in CB_OFFLOAD (section 16.1). OFFLOAD_STATUS reads its progress,
// OFFLOAD_CANCEL stops it, and it stops by itself when its client is
// destroyed or expires, or the server closes.

// Bounds on asynchronous copies running at once. A client past its own
// bound gets NFS4ERR_DELAY, as knfsd past its pending_async_copies cap,
// and sends the COPY again later. Past the server-wide bound the COPY is
// done synchronously instead, at most syncCopyMax (RFC 7862 section
// 15.2.3 lets the server do that), so that clients (or one host with many
// of them) holding every asynchronous slot cannot stop other hosts'
// copies. A copy holds two descriptors and one goroutine blocked in
// copy_file_range.
const (
	maxAsyncCopiesPerClient = 4
	maxAsyncCopies          = 32
	// maxKeptCopies bounds the finished copies remembered for
	// OFFLOAD_STATUS; each is kept for at most copyKeepTime.
	maxKeptCopies = 256
)

// cbOffloadTries bounds how often a CB_OFFLOAD that could not be delivered
// is sent again (every recallRetry); the client can still ask
// OFFLOAD_STATUS.
const cbOffloadTries = 30

// asyncCopy is one asynchronous COPY. The fields above copied are set
// before it is published and never change.
type asyncCopy struct {
	other    [nfs4.OtherSize]byte // the copy stateid's
	client   *client
	node     *node  // the destination
	cred     Cred   // the caller's, captured at COPY: the copy writes as it
	src, dst int    // the copy's own duplicates, closed when it ends
	srcOff   uint64 // from copyArgs, count clamped to the source
	dstOff   uint64
	count    uint64

	copied atomic.Uint64
	stop   chan struct{} // closed by OFFLOAD_CANCEL
	done   chan struct{} // closed once status and committed are set
	// status and committed are the copy's result, read after done.
	status    nfs4.Status
	committed uint32
	// Under copyTable.mu: cancelled by OFFLOAD_CANCEL; ended, when the
	// record is kept after its end.
	cancelled bool
	ended     time.Time
}

func (cp *asyncCopy) stateid() nfs4.Stateid { return nfs4.Stateid{Seqid: 1, Other: cp.other} }

// progress returns the bytes copied so far and, once the copy ended, its
// status.
func (cp *asyncCopy) progress() (count uint64, status nfs4.Status, ended bool) {
	select {
	case <-cp.done:
		return cp.copied.Load(), cp.status, true
	default:
		return cp.copied.Load(), 0, false
	}
}

// copyTable holds the server's asynchronous copies; its zero value is
// ready.
type copyTable struct {
	mu        sync.Mutex
	byID      map[[nfs4.OtherSize]byte]*asyncCopy
	running   int
	perClient map[*client]int // running copies of each client
	finished  []*asyncCopy    // kept for OFFLOAD_STATUS, oldest first
}

// What reserve found.
const (
	copyReserved   = iota
	copyClientFull // cl runs maxAsyncCopiesPerClient already
	copyServerFull // maxAsyncCopies run already
)

// reserve counts a new copy of cl against the bounds.
func (t *copyTable) reserve(cl *client) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.perClient[cl] >= maxAsyncCopiesPerClient:
		return copyClientFull
	case t.running >= maxAsyncCopies:
		return copyServerFull
	}
	if t.perClient == nil {
		t.perClient = make(map[*client]int)
		t.byID = make(map[[nfs4.OtherSize]byte]*asyncCopy)
	}
	t.running++
	t.perClient[cl]++
	return copyReserved
}

// unreserve undoes reserve for a copy that did not start.
func (t *copyTable) unreserve(cl *client) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releaseLocked(cl)
}

func (t *copyTable) releaseLocked(cl *client) {
	t.running--
	if t.perClient[cl]--; t.perClient[cl] <= 0 {
		delete(t.perClient, cl)
	}
}

// runningFor is how many asynchronous COPYs cl has under way.
func (t *copyTable) runningFor(cl *client) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.perClient[cl]
}

func (t *copyTable) add(cp *asyncCopy) {
	t.mu.Lock()
	t.byID[cp.other] = cp
	t.mu.Unlock()
}

func (t *copyTable) find(other [nfs4.OtherSize]byte) *asyncCopy {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[other]
}

// finish records cp's end. A copy that ended by itself is kept for
// OFFLOAD_STATUS, and its client is to be told (notify); a cancelled or
// abandoned one (keep false) is forgotten.
func (t *copyTable) finish(cp *asyncCopy, keep bool, keepFor time.Duration) (notify bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releaseLocked(cp.client)
	now := time.Now()
	t.pruneLocked(now, keepFor)
	if !keep || cp.cancelled {
		delete(t.byID, cp.other)
		return false
	}
	cp.ended = now
	t.finished = append(t.finished, cp)
	if len(t.finished) > maxKeptCopies {
		delete(t.byID, t.finished[0].other)
		t.finished[0] = nil
		t.finished = t.finished[1:]
	}
	return true
}

// pruneLocked forgets finished copies older than keepFor.
func (t *copyTable) pruneLocked(now time.Time, keepFor time.Duration) {
	n := 0
	for n < len(t.finished) && now.Sub(t.finished[n].ended) > keepFor {
		delete(t.byID, t.finished[n].other)
		t.finished[n] = nil
		n++
	}
	t.finished = t.finished[n:]
}

// cancel stops cp, waits for the chunk it is copying to end, and forgets
// it.
func (t *copyTable) cancel(cp *asyncCopy) {
	t.mu.Lock()
	if !cp.cancelled {
		cp.cancelled = true
		close(cp.stop)
	}
	t.mu.Unlock()
	<-cp.done
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byID, cp.other)
	for i, x := range t.finished {
		if x == cp {
			t.finished = append(t.finished[:i], t.finished[i+1:]...)
			break
		}
	}
}

// copyKeepTime is how long a finished copy's result stays for
// OFFLOAD_STATUS: a lease, by which time the client had its CB_OFFLOAD or
// lost its state (knfsd keeps it a few laundromat runs).
func (s *Server) copyKeepTime() time.Duration {
	return time.Duration(s.cfg.LeaseTime) * time.Second
}

// startAsyncCopy starts the copy a's checked descriptors src and dst
// describe on its own goroutine and encodes COPY's answer: the copy
// stateid, nothing copied yet, cr_synchronous false.
func (c *compound) startAsyncCopy(a *copyArgs, src, dst int) nfs4.Status {
	cl := c.sess.client
	switch c.s.copies.reserve(cl) {
	case copyClientFull:
		return nfs4.ErrDelay
	case copyServerFull:
		return c.syncCopy(a, src, dst)
	}
	cp := &asyncCopy{client: cl, node: c.cfh, cred: c.cred, srcOff: a.srcOff, dstOff: a.dstOff, count: a.count,
		src: -1, dst: -1, stop: make(chan struct{}), done: make(chan struct{})}
	var err error
	// The reply's pins keep the compound's descriptors open only until
	// it is sent; the copy outlives it with its own.
	if cp.src, err = unix.FcntlInt(uintptr(src), unix.F_DUPFD_CLOEXEC, 0); err == nil {
		cp.dst, err = unix.FcntlInt(uintptr(dst), unix.F_DUPFD_CLOEXEC, 0)
	}
	if err != nil {
		cp.closeFDs()
		c.s.copies.unreserve(cl)
		return errno(err)
	}
	t := c.s.state
	t.mu.Lock()
	cp.other = t.newOther() // from the stateid space: never an open's
	t.mu.Unlock()
	c.s.copies.add(cp)
	go c.s.runCopy(cp)
	id := cp.stateid()
	encodeWriteResponse(c.e, &id, 0, nfs4.Unstable4, c.s.bootVer[:])
	encodeCopyRequirements(c.e, false)
	return nfs4.OK
}

func (cp *asyncCopy) closeFDs() {
	if cp.src >= 0 {
		unix.Close(cp.src)
	}
	if cp.dst >= 0 {
		unix.Close(cp.dst)
	}
}

// runCopy is an asynchronous copy's goroutine: it copies, commits what it
// copied (knfsd's nfsd4_do_async_copy fsyncs the range, so CB_OFFLOAD says
// FILE_SYNC4), and tells the client with CB_OFFLOAD unless it was stopped.
func (s *Server) runCopy(cp *asyncCopy) {
	status, stopped := s.copyChunks(cp)
	cp.committed = nfs4.Unstable4
	if status == nfs4.OK && !stopped && cp.copied.Load() > 0 {
		// Straight to the kernel: the engine's FileIO would hold one of
		// the workers' rings for the whole flush.
		if err := unix.Fdatasync(cp.dst); err != nil {
			status = errno(err)
		} else {
			cp.committed = nfs4.FileSync4
		}
	}
	cp.closeFDs()
	cp.status = status
	notify := s.copies.finish(cp, !stopped, s.copyKeepTime())
	close(cp.done)
	if notify {
		s.sendCBOffload(cp)
	}
}

// copyChunks copies cp's range syncCopyMax at a time, checking between
// chunks whether it is to stop: cancelled, its client gone, the server
// closing (stopped true).
func (s *Server) copyChunks(cp *asyncCopy) (status nfs4.Status, stopped bool) {
	for done := uint64(0); done < cp.count; {
		select {
		case <-cp.stop:
			return nfs4.OK, true
		case <-s.stop:
			return nfs4.OK, true
		default:
		}
		if !s.state.alive(cp.client) {
			return nfs4.OK, true
		}
		want := min(cp.count-done, syncCopyMax)
		var n int64
		err := asCaller(cp.cred, func() error {
			var err error
			n, err = s.io.CopyRange(cp.src, int64(cp.srcOff+done), cp.dst, int64(cp.dstOff+done), int64(want))
			return err
		})
		if n < 0 || n > int64(want) {
			return nfs4.ErrIO, false // a FileIO bug: never claim bytes not copied
		}
		if n > 0 {
			done += uint64(n)
			cp.copied.Store(done)
			cp.node.extent.changed()
		}
		if err != nil {
			return errno(err), false
		}
		if n < int64(want) {
			break // the source ended early (it shrank)
		}
	}
	return nfs4.OK, false
}

// alive reports whether cl is still one of the server's clients (not
// destroyed, expired or replaced).
func (t *stateTable) alive(cl *client) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.clients[cl.id] == cl
}

// callable returns a session of cl whose back channel can call it now, or
// nil.
func (s *Server) callable(cl *client) *session {
	t := s.state
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range cl.sessions {
		if x.canCall() {
			return x
		}
	}
	return nil
}

// sendCBOffload tells cp's client how its copy ended (CB_OFFLOAD, RFC 7862
// section 16.1), sending again while it could not be delivered or the
// client answered NFS4ERR_DELAY (as knfsd's nfsd4_cb_offload_done), at
// most cbOffloadTries times and while the client lives.
func (s *Server) sendCBOffload(cp *asyncCopy) {
	for try := 0; try < cbOffloadTries && s.state.alive(cp.client); try++ {
		if sess := s.callable(cp.client); sess != nil {
			res, err := s.cbCompound(sess, 1, func(e *xdr.Encoder) { cp.encodeCBOffload(e, s.bootVer[:]) }, cbTimeout)
			if err == nil && res.status != nfs4.ErrDelay {
				s.log.Debug("CB_OFFLOAD", "client", cp.client.id, "status", res.status, "copied", cp.copied.Load())
				return
			}
		}
		select {
		case <-s.stop:
			return
		case <-time.After(recallRetry):
		}
	}
}

// encodeCBOffload writes CB_OFFLOAD4args: the destination's handle, the
// copy stateid, and offload_info4 (write_response4 on success, else the
// bytes copied); verf is the server's write verifier.
func (cp *asyncCopy) encodeCBOffload(e *xdr.Encoder, verf []byte) {
	e.Uint32(nfs4.OpCBOffload)
	e.Opaque(cp.node.handle)
	cp.stateid().Encode(e)
	e.Uint32(uint32(cp.status))
	if cp.status != nfs4.OK {
		e.Uint64(cp.copied.Load())
		return
	}
	encodeWriteResponse(e, nil, cp.copied.Load(), cp.committed, verf)
}
