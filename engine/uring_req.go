package engine

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// ureq is one request from dispatch to the end of its reply's send. Slots
// (and the objects in them) are reused by the loop.
type ureq struct {
	slot uint32
	c    *uconn
	rec  record
	rep  *nfs.Reply

	plans   []ioPlan
	bufs    [][]byte // read buffers, from the loop's slab pool
	got     []int
	pending int // reads in flight
	// opening: the request is on a worker to open O_DIRECT descriptors
	// for its planned reads (startReads).
	opening bool

	parts     [][]byte // reply bytes not yet sent
	iov       []unix.Iovec
	msg       unix.Msghdr
	charge    int // bytes counted in c.queued
	recCharge int // record bytes counted in c.recBytes

	zcNotifs int  // zero-copy sends whose notification is still due
	sent     bool // the reply is out; release waits for zcNotifs
}

// maxIov is IOV_MAX: a longer reply goes out in several sendmsg calls.
const maxIov = 1024

func (l *loop) newReq(c *uconn) *ureq {
	var r *ureq
	if n := len(l.freeReqs); n > 0 {
		r = l.reqs[l.freeReqs[n-1]]
		l.freeReqs = l.freeReqs[:n-1]
	} else {
		r = &ureq{slot: uint32(len(l.reqs))}
		l.reqs = append(l.reqs, r)
	}
	r.c = c
	return r
}

// handle runs on a worker goroutine: the handler may block, and so may
// the opens of openDirect.
func (r *ureq) handle() {
	if r.opening {
		r.openDirect()
	} else {
		r.run(false)
	}
	r.c.l.postReq(r)
}

// run calls the handler on the request's record and frees the record;
// inline says it runs on the loop (nfs.Reply.Inline).
func (r *ureq) run(inline bool) {
	r.handleRecord(r.rec.bytes(), inline)
	recPool.put(r.rec.buf)
	r.rec = record{}
}

// handleRecord calls the handler and keeps its reply.
func (r *ureq) handleRecord(rec []byte, inline bool) {
	rep := replies.Get().(*nfs.Reply)
	rep.Inline = inline
	r.c.l.e.h.Handle(r.c.st, rec, rep)
	r.rep = rep
}

// onHandled is back on the loop: queue the reply for its reads (or, back
// from openDirect, start them).
func (r *ureq) onHandled() {
	if r.opening {
		r.opened()
		return
	}
	c := r.c
	rep := r.rep
	c.recBytes -= r.recCharge
	r.recCharge = 0
	if c.closing || rep.Drop {
		if rep.Close {
			c.close()
		}
		if !rep.Drop && len(rep.Reads) == 0 {
			// Nothing to read: the session slot still caches the
			// reply for the client's retransmit on a new connection.
			c.l.e.h.Complete(rep)
		}
		r.release()
		c.resume()
		c.maybeDone()
		return
	}
	c.waitReads = append(c.waitReads, r)
	c.pumpReads()
}

// pumpReads starts the reads of waiting replies while the connection's
// queued bytes allow (always at least one when nothing is queued, so a
// reply bigger than the cap still goes out).
func (c *uconn) pumpReads() {
	for len(c.waitReads) > 0 && !c.closing && (c.queued == 0 || c.queued < c.l.e.opts.MaxQueuedBytes) {
		r := c.waitReads[0]
		c.waitReads[0] = nil
		c.waitReads = c.waitReads[1:]
		r.startReads()
	}
}

// startReads plans the reply's reads. A plan that needs the file's
// O_DIRECT descriptor opened first (the file's first direct read) sends
// the request to a worker to open it (openDirect): a confined open walks
// the file's path, which can wait on the disk, and nothing that can wait
// runs on the loop. The worker hands the request back, and the loop then
// starts the reads.
func (r *ureq) startReads() {
	l := r.c.l
	reads := r.rep.Reads
	r.plans = r.plans[:0]
	open := false
	for i := range reads {
		p := l.e.reads.planLoop(&reads[i])
		open = open || p.Open
		r.plans = append(r.plans, p)
	}
	if open {
		r.opening = true
		l.e.work.submit(r)
		return
	}
	r.submitReads()
}

// openDirect runs on a worker: it completes the plans left to open an
// O_DIRECT descriptor.
func (r *ureq) openDirect() {
	for i := range r.plans {
		r.plans[i] = r.c.l.e.reads.finish(r.plans[i], &r.rep.Reads[i])
	}
}

// opened is back on the loop after openDirect: start the reads.
func (r *ureq) opened() {
	r.opening = false
	c := r.c
	if c.closing {
		r.release()
		c.maybeDone()
		return
	}
	r.submitReads()
}

// submitReads takes buffers for the planned reads and submits them.
func (r *ureq) submitReads() {
	l := r.c.l
	r.bufs = r.bufs[:0]
	r.got = r.got[:0]
	for i := range r.plans {
		p := r.plans[i]
		l.countRead(p.Direct)
		buf := l.pool.get(p.Len)
		r.bufs = append(r.bufs, buf)
		r.got = append(r.got, 0)
		r.charge += len(buf)
		if p.Len == 0 || buf == nil {
			// Nothing to read, or more than any buffer class: a short
			// (empty) read is a correct, if unhelpful, answer.
			r.rep.CompleteRead(i, nil)
			continue
		}
		r.pending++
		r.submitRead(i)
	}
	r.c.queued += r.charge
	if r.pending == 0 {
		r.finish()
	}
}

func (r *ureq) submitRead(i int) {
	p := &r.plans[i]
	l := r.c.l
	s := l.sqe()
	buf, off := r.bufs[i][r.got[i]:p.Len], uint64(p.Off)+uint64(r.got[i])
	if slot, ok := l.pool.fixedSlot(r.bufs[i]); ok {
		s.PrepReadFixed(p.FD, buf, off, slot)
		l.e.reads.fixed.Add(1)
	} else {
		s.PrepRead(p.FD, buf, off)
	}
	s.UserData = ud(kRead, i, r.slot)
}

// onRead loops until the buffer is full or the file ends (a read of 0),
// then completes the reply's read with what it got.
func (r *ureq) onRead(i int, cqe ring.CQE) {
	p := &r.plans[i]
	switch {
	case cqe.Res == -int32(unix.EINTR) || cqe.Res == -int32(unix.EAGAIN):
		r.submitRead(i)
		return
	case cqe.Res == -int32(unix.EINVAL) && p.Direct && r.got[i] == 0:
		// The file or its filesystem refuses this O_DIRECT read: forget
		// the alignment we believed in and read through the page cache.
		rd := r.rep.Reads[i]
		r.c.l.e.reads.forget(rd.FD)
		*p = ioPlan{FD: rd.FD, Off: rd.Off, Len: rd.Len}
		r.submitRead(i)
		return
	case cqe.Res > 0:
		r.got[i] += int(cqe.Res)
		// An O_DIRECT read that ends off alignment has hit end of file.
		eofDirect := p.Direct && r.got[i]%ring.Align != 0
		if r.got[i] < p.Len && !eofDirect {
			r.submitRead(i)
			return
		}
	}
	end := min(r.got[i], p.Skip+r.rep.Reads[i].Len)
	r.rep.CompleteRead(i, r.bufs[i][min(p.Skip, end):end])
	r.pending--
	if r.pending == 0 {
		r.finish()
	}
}

// finish completes the reply and queues it for sending.
func (r *ureq) finish() {
	c := r.c
	c.l.e.h.Complete(r.rep) // the slot caches the reply even if it cannot be sent
	if c.closing {
		r.release()
		c.maybeDone()
		return
	}
	r.parts = append(r.parts[:0], r.rep.Iovecs()...)
	total := 0
	for _, p := range r.parts {
		total += len(p)
	}
	// Charge the whole reply now; the read buffers were charged already.
	extra := max(total-r.charge, 0)
	r.charge += extra
	c.queued += extra
	c.sendQ = append(c.sendQ, r)
	if !c.sending {
		c.sendNext()
	}
}

// sendNext puts the send queue on the wire: one SENDMSG of the iovecs of
// as many queued replies as fit in IOV_MAX (header bytes, borrowed data
// buffers, padding), no copy. With many requests in flight on a
// connection, replies that finish together leave in one system call. The
// head request's slot names the send; c.inWire counts the replies in it.
func (c *uconn) sendNext() {
	head := c.sendQ[0]
	zc := c.l.e.opts.SendZC && !c.l.e.noZC.Load() && head.charge >= zcMin && !c.ktls
	head.iov = head.iov[:0]
	c.inWire = 0
	for _, r := range c.sendQ {
		// A zero-copy send carries one reply: its notification then
		// releases exactly that reply's buffers.
		if c.inWire > 0 && (zc || len(head.iov)+len(r.parts) > maxIov) {
			break
		}
		for _, p := range r.parts {
			if len(p) > 0 && len(head.iov) < maxIov {
				head.iov = append(head.iov, unix.Iovec{Base: &p[0], Len: uint64(len(p))})
			}
		}
		c.inWire++
	}
	head.msg = unix.Msghdr{Iov: &head.iov[0]}
	head.msg.SetIovlen(len(head.iov))
	s := c.l.sqe()
	if zc {
		// No MSG_WAITALL: the kernel refuses it for zero-copy sends.
		s.PrepSendmsgZC(c.fd, &head.msg, unix.MSG_NOSIGNAL)
		head.zcNotifs++
	} else {
		// MSG_WAITALL lets io_uring retry a partial send itself; onSend
		// still copes with short results.
		s.PrepSendmsg(c.fd, &head.msg, sendFlags(c.ktls))
	}
	s.UserData = ud(kSend, 0, head.slot)
	c.sending = true
}

// zcMin is the smallest reply Options.SendZC sends with SENDMSG_ZC: below
// it pinning pages costs more than copying them.
const zcMin = 64 << 10

// onSendNotif handles a zero-copy send's notification: the kernel is done
// with the buffers, so a request whose sending is over may now let go.
func (r *ureq) onSendNotif() {
	r.zcNotifs--
	if r.zcNotifs > 0 || !r.sent {
		return
	}
	c := r.c
	r.sent = false
	r.release()
	c.pumpReads()
	c.resume()
	c.maybeDone()
}

// releaseSent releases a request whose reply is on the wire, unless a
// zero-copy send still holds its buffers (then onSendNotif does it).
func (r *ureq) releaseSent() {
	if r.zcNotifs > 0 {
		r.sent = true
		return
	}
	r.release()
}

func (r *ureq) onSend(cqe ring.CQE) {
	if cqe.Notif() {
		r.onSendNotif()
		return
	}
	if r.zcNotifs > 0 && !cqe.More() {
		r.zcNotifs-- // a zero-copy send that will bring no notification
	}
	c := r.c
	if cqe.Res == -int32(unix.EINTR) || cqe.Res == -int32(unix.EAGAIN) {
		c.sendNext()
		return
	}
	if cqe.Res == -int32(unix.EOPNOTSUPP) && c.l.e.opts.SendZC && !c.l.e.noZC.Load() {
		// This socket or kernel cannot send zero-copy: stop trying.
		c.l.e.opts.Logger.Warn("uring: zero-copy send unsupported, using plain sendmsg")
		c.l.e.noZC.Store(true)
		c.sendNext()
		return
	}
	if cqe.Res > 0 {
		c.tmo.active.Store(true)
	}
	if cqe.Res < 0 {
		c.l.e.opts.Logger.Debug("uring: send failed", "remote", c.st.Remote, "err", unix.Errno(-cqe.Res))
		c.close() // releases what was not on the wire
		c.releaseWire(c.inWire)
		c.maybeDone()
		return
	}
	// Drop the sent bytes from the replies of this send, in order.
	n, done := int(cqe.Res), 0
	for ; done < c.inWire; done++ {
		if n = c.sendQ[done].consume(n); len(c.sendQ[done].parts) > 0 {
			break
		}
	}
	if c.closing {
		done = c.inWire // nothing more goes out
	}
	closeAfter := false
	for _, q := range c.sendQ[:done] {
		closeAfter = closeAfter || (q.rep != nil && q.rep.Close) // a callback has no rep
	}
	c.releaseWire(done)
	switch {
	case closeAfter:
		c.close()
	case c.closing:
	case len(c.sendQ) > 0:
		c.sendNext()
	}
	c.pumpReads()
	c.resume()
	c.maybeDone()
}

// releaseWire ends the current send: the first done replies of the queue
// are finished and released.
func (c *uconn) releaseWire(done int) {
	c.sending, c.inWire = false, 0
	sent := c.sendQ[:done]
	c.sendQ = c.sendQ[done:]
	for i, q := range sent {
		sent[i] = nil
		q.releaseSent()
	}
}

// consume drops up to n sent bytes from parts and returns what is left of
// n for the replies after this one.
func (r *ureq) consume(n int) int {
	for n > 0 && len(r.parts) > 0 {
		k := min(n, len(r.parts[0]))
		r.parts[0] = r.parts[0][k:]
		n -= k
		if len(r.parts[0]) == 0 {
			r.parts = r.parts[1:]
		}
	}
	for len(r.parts) > 0 && len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
	}
	return n
}

// release returns everything the request holds and frees its slot. The
// caller then lets the connection move on (resume, maybeDone).
func (r *ureq) release() {
	c := r.c
	l := c.l
	for _, b := range r.bufs {
		if b != nil {
			l.pool.put(b)
		}
	}
	clear(r.bufs)
	r.bufs = r.bufs[:0]
	c.queued -= r.charge
	r.charge = 0
	c.inflight--
	if r.rec.buf != nil {
		recPool.put(r.rec.buf)
		r.rec = record{}
	}
	if r.rep != nil {
		r.rep.Reset()
		replies.Put(r.rep)
		r.rep = nil
	}
	clear(r.parts)
	r.parts = r.parts[:0]
	r.iov = r.iov[:0]
	r.msg = unix.Msghdr{}
	r.pending = 0
	r.c = nil
	l.freeReqs = append(l.freeReqs, r.slot)
}
