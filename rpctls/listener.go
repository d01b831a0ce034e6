package rpctls

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Config tunes a Listener.
type Config struct {
	Certs *Certs
	// NoKTLS keeps the record layer in user space even where the kernel
	// has TLS (--tls-no-ktls).
	NoKTLS bool
	// HandshakeTimeout bounds the time from accept to the end of the
	// handshake, the wait for the first record included (default 10 s).
	HandshakeTimeout time.Duration
	// MaxHandshakes bounds the connections being probed or shaking hands
	// at once (default 1024); further ones wait for a turn within their
	// HandshakeTimeout.
	MaxHandshakes int
	Logger        *slog.Logger
}

// Listener wraps a TCP listener: Accept returns plaintext connections as
// they are (*net.TCPConn), and connections that asked for TLS once their
// handshake is done, as a *TCPConn (kernel TLS) or a *UnixConn (user-space
// TLS behind a socketpair). Either has RPCTLS, and a descriptor the
// engines may take over.
type Listener struct {
	inner net.Listener
	cfg   Config
	ch    chan net.Conn
	done  chan struct{}
	err   error
	once  sync.Once
	sem   chan struct{}
	noK   atomic.Bool // kernel TLS failed once: user space from then on
	warn  sync.Once
	count Counts
}

// Counts are a Listener's connections so far, by what became of them.
type Counts struct {
	Plain   atomic.Uint64 // passed through as plaintext
	Kernel  atomic.Uint64 // TLS, the kernel holding the record layer
	User    atomic.Uint64 // TLS, pumped in user space
	Refused atomic.Uint64 // closed: handshake failed or timed out, too many at once
}

// Counts returns the listener's counters.
func (l *Listener) Counts() *Counts { return &l.count }

// Listen wraps inner (a TCP listener).
func Listen(inner net.Listener, cfg Config) *Listener {
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.MaxHandshakes <= 0 {
		cfg.MaxHandshakes = 1024
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Listener{inner: inner, cfg: cfg, ch: make(chan net.Conn), done: make(chan struct{}), sem: make(chan struct{}, cfg.MaxHandshakes)}
	if cfg.NoKTLS {
		l.noK.Store(true)
	}
	go l.acceptLoop()
	return l
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// Close implements net.Listener: it closes the inner listener and every
// connection still in its handshake.
func (l *Listener) Close() error {
	err := l.inner.Close()
	l.stop(net.ErrClosed)
	return err
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

func (l *Listener) stop(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
	})
}

func (l *Listener) acceptLoop() {
	for {
		c, err := l.inner.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			l.stop(err)
			return
		}
		go l.serve(c)
	}
}

// serve decides what c is and delivers it to Accept.
func (l *Listener) serve(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		l.deliver(c)
		return
	}
	deadline := time.Now().Add(l.cfg.HandshakeTimeout)
	t := time.NewTimer(l.cfg.HandshakeTimeout)
	select {
	case l.sem <- struct{}{}:
		t.Stop()
	case <-t.C:
		l.cfg.Logger.Warn("rpctls: too many handshakes at once, closing connection", "remote", c.RemoteAddr().String())
		l.count.Refused.Add(1)
		c.Close()
		return
	case <-l.done:
		c.Close()
		return
	}
	out, err := l.secure(tc, deadline)
	<-l.sem
	if err != nil {
		l.cfg.Logger.Info("rpctls: connection refused", "remote", c.RemoteAddr().String(), "err", err)
		l.count.Refused.Add(1)
		c.Close()
		return
	}
	switch out.(type) {
	case *TCPConn:
		l.count.Kernel.Add(1)
	case *UnixConn:
		l.count.User.Add(1)
	default:
		l.count.Plain.Add(1)
	}
	l.deliver(out)
}

func (l *Listener) deliver(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		c.Close()
	}
}

// secure peeks at tc's first record: a plaintext connection comes back
// untouched; a probe is answered, the handshake run and the connection
// returned secured.
func (l *Listener) secure(tc *net.TCPConn, deadline time.Time) (net.Conn, error) {
	probe, rec, xid, err := peekProbe(tc, deadline)
	if err != nil {
		return nil, err
	}
	if !probe {
		return tc, nil
	}
	tc.SetDeadline(deadline)
	if _, err := io.ReadFull(tc, make([]byte, rec)); err != nil {
		return nil, fmt.Errorf("reading the AUTH_TLS probe: %w", err)
	}
	if _, err := tc.Write(startTLSReply(xid)); err != nil {
		return nil, err
	}
	cfg := l.cfg.Certs.config()
	keys := &keyLog{}
	cfg.KeyLogWriter = keys
	rr := &recordReader{Conn: tc}
	conn := tls.Server(rr, cfg)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	err = conn.HandshakeContext(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	tc.SetDeadline(time.Time{})
	st := conn.ConnectionState()
	// A client offering ALPN without "sunrpc" has already failed the
	// handshake (crypto/tls: no_application_protocol). One that offers no
	// ALPN at all is let in: the Linux client's handshake agent, tlshd
	// (ktls-utils, up to its current release), sets no ALPN, and knfsd
	// does not ask for it either; refusing it refused every xprtsec=tls
	// mount of the Linux client (e2e/kernel/e2e-tlshd.sh).
	if p := st.NegotiatedProtocol; p != ALPN && p != "" {
		return nil, fmt.Errorf("TLS handshake: ALPN %q, not %q", p, ALPN)
	}
	info := Info{Mutual: len(st.VerifiedChains) > 0, State: st}
	if !l.noK.Load() {
		cs, ss := keys.secrets()
		err := enableKTLS(tc, st.CipherSuite, ss, cs)
		if err == nil {
			info.Kernel = true
			return &TCPConn{TCPConn: tc, info: info}, nil
		}
		if !errors.Is(err, errNoULP) {
			return nil, err
		}
		l.noK.Store(true)
		l.warn.Do(func() {
			l.cfg.Logger.Warn("kernel TLS unavailable: RPC-with-TLS runs in user space (a copy and a goroutine pair per connection; load the tls module for kTLS)", "reason", err.Error())
		})
	}
	rr.raw.Store(true)
	return pump(conn, rr, tc, info)
}

// peekProbe waits (until deadline) for enough of tc's first record to
// tell an AUTH_TLS probe, without consuming it (MSG_PEEK). A connection
// that sends nothing by then, or closes, is plaintext as far as it goes.
func peekProbe(tc *net.TCPConn, deadline time.Time) (probe bool, rec int, xid uint32, err error) {
	rc, err := tc.SyscallConn()
	if err != nil {
		return false, 0, 0, err
	}
	tc.SetReadDeadline(deadline)
	defer tc.SetReadDeadline(time.Time{})
	buf := make([]byte, probeHead)
	for {
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, _, rerr = unix.Recvfrom(int(fd), buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
			return rerr != unix.EAGAIN
		})
		if err != nil || rerr != nil || n == 0 {
			return false, 0, 0, nil // timeout, error or EOF: let the engine see it
		}
		probe, need, rec, xid := Probe(buf[:n])
		if need <= n {
			return probe, rec, xid, nil
		}
		if time.Now().After(deadline) {
			return false, 0, 0, nil
		}
		time.Sleep(time.Millisecond)
	}
}

// recordReader hands crypto/tls one TLS record at a time, never a byte
// past it, so that when the handshake ends every later byte (the client's
// first RPCs under the application keys) is still in the socket for the
// kernel's TLS to decrypt from sequence number 0. raw turns it into a
// plain reader (user-space TLS, after the handshake).
type recordReader struct {
	net.Conn
	raw  atomic.Bool
	hdr  [5]byte
	hn   int // header bytes read
	left int // body bytes of the current record still to read

	// Writes: between startBatch and flush (the pump's turn at
	// tls.Conn.Write) the records are gathered and go out in one write,
	// not one system call per 16 KiB record.
	wmu   sync.Mutex
	batch bool
	wbuf  []byte
}

func (r *recordReader) Write(p []byte) (int, error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if r.batch {
		r.wbuf = append(r.wbuf, p...)
		return len(p), nil
	}
	return r.Conn.Write(p)
}

func (r *recordReader) startBatch() {
	r.wmu.Lock()
	r.batch = true
	r.wmu.Unlock()
}

// flush ends a batch, writing what it gathered.
func (r *recordReader) flush() error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.batch = false
	if len(r.wbuf) == 0 {
		return nil
	}
	_, err := r.Conn.Write(r.wbuf)
	if cap(r.wbuf) > 2*pumpBuf {
		r.wbuf = nil
	} else {
		r.wbuf = r.wbuf[:0]
	}
	return err
}

func (r *recordReader) Read(p []byte) (int, error) {
	if r.raw.Load() {
		return r.Conn.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.hn < 5 {
		n, err := r.Conn.Read(p[:min(len(p), 5-r.hn)])
		copy(r.hdr[r.hn:], p[:n])
		r.hn += n
		if r.hn == 5 {
			r.left = int(r.hdr[3])<<8 | int(r.hdr[4])
			if r.left == 0 {
				r.hn = 0
			}
		}
		return n, err
	}
	n, err := r.Conn.Read(p[:min(len(p), r.left)])
	r.left -= n
	if r.left == 0 {
		r.hn = 0
	}
	return n, err
}

// Info is what a secured connection is.
type Info struct {
	// Mutual: the client showed a certificate that verified against the
	// client CAs (mutual TLS: xprtsec=mtls).
	Mutual bool
	// Kernel: the kernel holds the record layer (kTLS).
	Kernel bool
	// State is the handshake's outcome (peer certificates included).
	State tls.ConnectionState
}

// TCPConn is a connection whose TLS the kernel does: its descriptor
// carries plaintext for reads and writes. Send without MSG_WAITALL and
// without zero copy (the kernel's TLS refuses both).
type TCPConn struct {
	*net.TCPConn
	info Info
}

// RPCTLS says the connection is RPC-with-TLS: mutual TLS or not, and kTLS
// or not.
func (c *TCPConn) RPCTLS() (mutual, kernel bool) { return c.info.Mutual, true }

// TLSInfo returns the handshake's outcome.
func (c *TCPConn) TLSInfo() Info { return c.info }

// UnixConn is the engine's end of a socketpair whose other end a
// goroutine pair pumps to and from the TLS connection (user-space TLS).
// RemoteAddr and LocalAddr are the TCP connection's.
type UnixConn struct {
	*net.UnixConn
	info          Info
	remote, local net.Addr
}

// RPCTLS says the connection is RPC-with-TLS: mutual TLS or not, and kTLS
// or not.
func (c *UnixConn) RPCTLS() (mutual, kernel bool) { return c.info.Mutual, false }

// TLSInfo returns the handshake's outcome.
func (c *UnixConn) TLSInfo() Info { return c.info }

// RemoteAddr is the TCP peer's address.
func (c *UnixConn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr is the TCP connection's local address.
func (c *UnixConn) LocalAddr() net.Addr { return c.local }

// pumpBuf is each pump direction's buffer.
const pumpBuf = 256 << 10

// pump makes a socketpair, returns one end for the engine and copies
// between the other and conn until either side closes.
func pump(conn *tls.Conn, rr *recordReader, tc *net.TCPConn, info Info) (net.Conn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	mine, err := fileConn(fds[1], "rpctls-pump")
	if err != nil {
		unix.Close(fds[0])
		return nil, err
	}
	theirs, err := fileConn(fds[0], "rpctls-engine")
	if err != nil {
		mine.Close()
		return nil, err
	}
	var once sync.Once
	done := func() {
		once.Do(func() {
			conn.Close()
			mine.Close()
		})
	}
	cp := func(dst io.Writer, src io.Reader, closeWrite func()) {
		buf := make([]byte, pumpBuf)
		_, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, buf)
		if err == nil && closeWrite != nil {
			closeWrite()
			return
		}
		done()
	}
	go cp(mine, conn, func() { mine.(*net.UnixConn).CloseWrite() })
	// The engine's replies: each read's worth of records in one write.
	go func() {
		buf := make([]byte, pumpBuf)
		for {
			n, err := mine.Read(buf)
			if n > 0 {
				rr.startBatch()
				_, werr := conn.Write(buf[:n])
				if ferr := rr.flush(); werr == nil {
					werr = ferr
				}
				if werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done()
	}()
	return &UnixConn{UnixConn: theirs.(*net.UnixConn), info: info, remote: tc.RemoteAddr(), local: tc.LocalAddr()}, nil
}

func fileConn(fd int, name string) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return net.FileConn(f)
}

var _ syscall.Conn = (*UnixConn)(nil)
