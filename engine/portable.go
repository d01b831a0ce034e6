package engine

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Portable is the engine for kernels without io_uring: a goroutine per
// connection reads records, each request runs in its own goroutine (up to
// MaxInFlight per connection, so replies may go out of order as the slot
// table allows), file data is read with pread and replies go out with
// writev.
type Portable struct {
	h    nfs.Handler
	opts Options
	pool bufPool

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewPortable returns a portable engine serving h.
func NewPortable(h nfs.Handler, opts Options) *Portable {
	opts.defaults()
	return &Portable{h: h, opts: opts, lns: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}
}

// Name implements Engine.
func (p *Portable) Name() string { return "portable" }

// Serve implements Engine.
func (p *Portable) Serve(ln net.Listener) error {
	if !p.track(ln) {
		return nil
	}
	for {
		c, err := ln.Accept()
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
		if !p.addConn(c) {
			c.Close()
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

func (p *Portable) addConn(c net.Conn) bool {
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
	p.closed = true
	for ln := range p.lns {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// conn is one client connection.
type conn struct {
	p   *Portable
	nc  net.Conn
	st  *nfs.Conn
	wmu sync.Mutex // one reply on the wire at a time
	err error      // first write error, under wmu
}

func (p *Portable) serveConn(nc net.Conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, nc)
		p.mu.Unlock()
		nc.Close()
	}()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &conn{p: p, nc: nc, st: nfs.NewConn(nc.RemoteAddr().String())}
	rr := xdr.NewRecordReader(bufio.NewReaderSize(nc, 64<<10), p.h.MaxRecord())
	rr.Place, rr.PlaceMin = writePayloadIndex, placeMin
	sem := make(chan struct{}, p.opts.MaxInFlight)
	var reqs sync.WaitGroup
	defer reqs.Wait()
	for {
		rec, err := rr.Next()
		if err != nil {
			if err != io.EOF && !errors.Is(err, net.ErrClosed) {
				p.opts.Logger.Debug("connection closed", "remote", c.st.Remote, "err", err)
			}
			return
		}
		rr.Detach()
		sem <- struct{}{}
		reqs.Add(1)
		go func() {
			defer func() { <-sem; reqs.Done() }()
			if !c.serve(rec) {
				nc.Close()
			}
		}()
	}
}

var replies = sync.Pool{New: func() any { return nfs.NewReply() }}

// serve handles one record and sends its reply. It reports false when the
// connection should close.
func (c *conn) serve(rec []byte) bool {
	rep := replies.Get().(*nfs.Reply)
	defer func() { rep.Reset(); replies.Put(rep) }()
	c.p.h.Handle(c.st, rec, rep)
	if rep.Drop {
		return !rep.Close
	}
	var local [4]*[]byte // most replies carry one read: no allocation
	bufs := c.readAll(rep, local[:0])
	defer func() {
		for _, b := range bufs {
			c.p.pool.put(b)
		}
	}()
	c.p.h.Complete(rep)
	return c.send(rep.Iovecs()) && !rep.Close
}

// readAll performs the reply's reads with pread, appending the buffers it
// takes to bufs.
func (c *conn) readAll(rep *nfs.Reply, bufs []*[]byte) []*[]byte {
	for i := range rep.Reads {
		rd := &rep.Reads[i]
		b := c.p.pool.get(rd.Len)
		bufs = append(bufs, b)
		n := preadFull(rd.FD, *b, rd.Off)
		rep.CompleteRead(i, (*b)[:n])
	}
	return bufs
}

// preadFull reads until buf is full, end of file or an error, and returns
// how much it got.
func preadFull(fd int, buf []byte, off int64) int {
	got := 0
	for got < len(buf) {
		n, err := unix.Pread(fd, buf[got:], off+int64(got))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		got += n
	}
	return got
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
	return true
}
