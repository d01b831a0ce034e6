package engine

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// uconn is one connection, owned by its loop for life.
//
// Flow control: a connection may have at most MaxInFlight requests alive
// (from dispatch to the end of their send) and MaxQueuedBytes of replies
// read or waiting to be sent. Over either limit its multishot receive is
// cancelled and not re-armed, so the kernel's socket buffer fills and TCP
// pushes back on the client; records already received wait in backlog (a
// few receive buffers' worth at most). Handled replies wait for queue room
// before their file reads start, so a client that does not read its
// replies pins at most about MaxQueuedBytes of buffers.
type uconn struct {
	l    *loop
	slot uint32
	fd   int
	st   *nfs.Conn
	asm  assembler

	ktls      bool // kernel TLS: no MSG_WAITALL, no zero-copy send
	recvArmed bool
	paused    bool // receiving stopped by flow control
	eof       bool // the peer will send no more
	closing   bool

	inflight  int // requests alive
	queued    int // reply bytes charged by requests (see ureq.charge)
	recBytes  int // bytes of records handed to workers and not yet handled
	tmo       timeouts
	backlog   []record
	waitReads []*ureq
	sendQ     []*ureq // sendQ[:inWire] are on the wire while sending
	sending   bool
	inWire    int
}

func (l *loop) addConn(fd int, remote string, x xprtInfo) {
	if l.stopping {
		unix.Close(fd)
		l.e.gate.leave()
		return
	}
	c := &uconn{l: l, fd: fd, st: nfs.NewConn(remote), ktls: x.ktls}
	c.st.Xprt = x.sec
	c.asm = assembler{max: l.e.h.MaxRecord(), pool: &recPool, place: writePayloadIndex, direct: c.handleDirect,
		hold: l.e.budget.hold(func() { l.postClose(c) })}
	c.st.SetSender(func(rec [][]byte) error { return l.postSend(c, rec) })
	if n := len(l.freeConns); n > 0 {
		c.slot = l.freeConns[n-1]
		l.freeConns = l.freeConns[:n-1]
		l.conns[c.slot] = c
	} else {
		c.slot = uint32(len(l.conns))
		l.conns = append(l.conns, c)
	}
	l.live++
	c.armRecv()
}

func (c *uconn) armRecv() {
	s := c.l.sqe()
	s.PrepRecvMultishot(c.fd, c.l.br.Bgid(), 0)
	s.UserData = ud(kRecv, 0, c.slot)
	c.recvArmed = true
}

func (c *uconn) onRecv(cqe ring.CQE) {
	if !cqe.More() {
		c.recvArmed = false
	}
	switch {
	case cqe.Res > 0:
		c.tmo.active.Store(true)
		bid, _ := cqe.BufferID()
		buf := c.l.rbuf.Buf(int(bid))
		if !c.closing {
			if err := c.asm.feed(buf[:cqe.Res], c.onRecord); err != nil {
				countFeedError(c.l.e.opts.Metrics, err)
				c.l.e.opts.Logger.Debug("uring: closing connection", "remote", c.st.Remote, "err", err)
				c.close()
			}
		}
		c.l.br.Add(buf, bid, 0)
		c.l.br.Advance(1)
	case cqe.Res == 0:
		c.eof = true
	case cqe.Res == -int32(unix.ENOBUFS), cqe.Res == -int32(unix.ECANCELED):
		// Out of receive buffers (re-armed below), or paused on purpose.
	default:
		c.eof = true // a reset connection: finish what is in flight, then close
	}
	c.rearm()
	c.maybeDone()
}

// rearm restarts receiving when nothing stands against it.
func (c *uconn) rearm() {
	if !c.recvArmed && !c.paused && !c.eof && !c.closing {
		c.armRecv()
	}
}

func (c *uconn) overLimit() bool {
	o := &c.l.e.opts
	return c.inflight >= o.MaxInFlight || c.queued >= o.MaxQueuedBytes || c.recBytes >= o.MaxQueuedBytes
}

func (c *uconn) onRecord(rec record) {
	if len(c.backlog) > 0 || c.overLimit() {
		c.backlog = append(c.backlog, rec)
		c.pause()
		return
	}
	c.dispatch(rec)
}

func (c *uconn) pause() {
	if c.paused {
		return
	}
	c.paused = true
	if c.recvArmed {
		c.l.cancel(ud(kRecv, 0, c.slot))
	}
}

// resume dispatches backlog records while there is room, and receives
// again once the backlog is gone.
func (c *uconn) resume() {
	if c.closing {
		return
	}
	for len(c.backlog) > 0 && !c.overLimit() {
		rec := c.backlog[0]
		c.backlog[0] = record{}
		c.backlog = c.backlog[1:]
		c.dispatch(rec)
	}
	if len(c.backlog) == 0 && c.paused && !c.overLimit() {
		c.paused = false
		c.rearm()
	}
}

// dispatch starts a request. Records the handler says are quick (the
// READ/READ_PLUS/GETATTR data path) run right here on the loop's thread:
// no hand-off to a worker and back, which is most of a 4 KiB READ's cost.
// Everything else goes to the worker pool so it cannot stall the loop.
func (c *uconn) dispatch(rec record) {
	r := c.l.newReq(c)
	r.rec = rec
	c.inflight++
	if in := c.l.e.inline; in != nil && in.Inline(rec.bytes()) {
		r.run(true)
		r.onHandled()
		return
	}
	r.recCharge = cap(*rec.buf)
	c.recBytes += r.recCharge
	c.l.e.work.submit(r)
}

// handleDirect handles a quick record (see dispatch) straight from the
// receive buffer, with no copy: the handler keeps nothing of the record
// once it returns. Anything else, or a connection that must queue, says no
// and the record takes the copying path.
func (c *uconn) handleDirect(rec []byte) bool {
	in := c.l.e.inline
	if in == nil || c.closing || len(c.backlog) > 0 || c.overLimit() || !in.Inline(rec) {
		return false
	}
	r := c.l.newReq(c)
	c.inflight++
	r.handleRecord(rec, true)
	r.onHandled()
	return true
}

// maybeDone closes a connection whose peer has finished sending once all
// its replies are out, as the portable engine does.
func (c *uconn) maybeDone() {
	if c.eof && !c.closing && c.inflight == 0 && len(c.backlog) == 0 {
		c.close()
	}
	c.maybeFree()
}

// close starts closing: drop what has not started, cancel receiving and
// shut the socket down so a send stuck on a reader that never reads fails
// now. The descriptor is closed in maybeFree once nothing refers to it.
func (c *uconn) close() {
	if c.closing {
		return
	}
	c.closing = true
	c.st.Close()
	c.asm.reset()
	for _, rec := range c.backlog {
		recPool.put(rec.buf)
	}
	c.backlog = nil
	for _, r := range c.waitReads {
		r.release()
	}
	c.waitReads = nil
	keep := 0
	if c.sending {
		keep = c.inWire // their buffers are the kernel's until the send completes
	}
	for _, r := range c.sendQ[keep:] {
		r.release()
	}
	c.sendQ = c.sendQ[:keep]
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	if c.recvArmed {
		c.l.cancel(ud(kRecv, 0, c.slot))
	}
	c.maybeFree()
}

func (c *uconn) maybeFree() {
	if !c.closing || c.recvArmed || c.inflight > 0 || c.slot == ^uint32(0) {
		return
	}
	unix.Close(c.fd)
	l := c.l
	l.conns[c.slot] = nil
	l.freeConns = append(l.freeConns, c.slot)
	c.slot = ^uint32(0)
	l.live--
	l.e.gate.leave()
}
