package nfs

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NFSv4.0 callbacks (RFC 7530 section 3.3.3 and 16.33): the server opens a
// TCP connection of its own to the address SETCLIENTID named and sends
// CB_NULL, then CB_COMPOUND (minor version 0, no CB_SEQUENCE, the
// callback_ident SETCLIENTID gave) over it. The connection is a Conn like a
// 4.1 back channel's, bound to the client's session holder (v40State.sess),
// so the probe, the recall loop and CB_GETATTR are 4.1's.
//
// The server dials only the address the client called from (the IP of the
// connection SETCLIENTID came on; any port): a client cannot make the
// server open connections to other hosts. A client whose callback
// address is elsewhere, or does not answer CB_NULL, gets no delegations.

// cbDialTimeout bounds the TCP connect to a client's callback address.
const cbDialTimeout = 5 * time.Second

// maxCBRecord bounds a callback reply record read from a client.
const maxCBRecord = 1 << 20

// parseUaddr reads a universal address (RFC 5665 section 5.2.3.3:
// "h1.h2.h3.h4.p1.p2" for tcp, an IPv6 address and ".p1.p2" for tcp6).
func parseUaddr(netid, uaddr string) (netip.AddrPort, error) {
	i := strings.LastIndexByte(uaddr, '.')
	if i <= 0 {
		return netip.AddrPort{}, fmt.Errorf("bad uaddr %q", uaddr)
	}
	j := strings.LastIndexByte(uaddr[:i], '.')
	if j <= 0 {
		return netip.AddrPort{}, fmt.Errorf("bad uaddr %q", uaddr)
	}
	p1, err1 := strconv.ParseUint(uaddr[j+1:i], 10, 8)
	p2, err2 := strconv.ParseUint(uaddr[i+1:], 10, 8)
	if err1 != nil || err2 != nil {
		return netip.AddrPort{}, fmt.Errorf("bad uaddr port %q", uaddr)
	}
	ip, err := netip.ParseAddr(uaddr[:j])
	if err != nil {
		return netip.AddrPort{}, err
	}
	switch netid {
	case "tcp":
		if !ip.Is4() {
			return netip.AddrPort{}, fmt.Errorf("netid tcp with address %s", ip)
		}
	case "tcp6":
		if !ip.Is6() {
			return netip.AddrPort{}, fmt.Errorf("netid tcp6 with address %s", ip)
		}
	default:
		return netip.AddrPort{}, fmt.Errorf("netid %q", netid)
	}
	return netip.AddrPortFrom(ip, uint16(p1<<8|p2)), nil
}

// v40Conn is a callback connection the server opened.
type v40Conn struct {
	conn *Conn
	nc   net.Conn
	once sync.Once
}

func (vc *v40Conn) close() {
	vc.once.Do(func() {
		vc.conn.Close()
		vc.nc.Close()
	})
}

// v40Dial, when set (tests), replaces the TCP dial of callback addresses.
var v40Dial func(addr netip.AddrPort) (net.Conn, error)

// probe40 sets cl's callback path up as SETCLIENTID (confirmed) named it:
// a new connection, then CB_NULL on it (probeLocked), in the background.
// Until the probe answers, cl gets no delegation.
func (s *Server) probe40(cl *client) {
	v := cl.v40
	v.mu.Lock()
	cb := v.cb
	from := cl.addr
	v.mu.Unlock()
	// The probe is pending from now: an OPEN right after the confirm
	// waits for it (cbUp) rather than find no callback path yet.
	b := &v.sess.cb
	done := make(chan struct{})
	b.mu.Lock()
	b.probeGen++
	b.probeDone = done
	b.probe.Store(probePending)
	b.mu.Unlock()
	go func() {
		defer close(done)
		s.dial40(cl, cb, from)
	}()
}

// dial40 connects to cl's callback address and probes it, returning once
// the probe has its answer.
func (s *Server) dial40(cl *client, cb v40Callback, from netip.Addr) {
	sess := cl.v40.sess
	ap, err := parseUaddr(cb.netid, cb.uaddr)
	if err == nil && ap.Addr().Unmap() != from.Unmap() && from.IsValid() {
		err = fmt.Errorf("callback address %s is not the client's %s", ap.Addr(), from)
	}
	var nc net.Conn
	if err == nil {
		if v40Dial != nil {
			nc, err = v40Dial(ap)
		} else {
			nc, err = net.DialTimeout("tcp", ap.String(), cbDialTimeout)
		}
	}
	if err != nil {
		s.log.Debug("NFSv4.0 callback path down", "client", cl.id, "err", err)
		sess.initBack(0, cb.prog, cb.sec, false)
		sess.cb.probe.Store(probeDown)
		s.replaceConn40(cl, nil)
		return
	}
	conn := NewConn(nc.RemoteAddr().String())
	vc := &v40Conn{conn: conn, nc: nc}
	var wmu sync.Mutex
	conn.SetSender(func(rec [][]byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		_ = nc.SetWriteDeadline(time.Now().Add(cbTimeout))
		bufs := net.Buffers(append([][]byte(nil), rec...))
		_, err := bufs.WriteTo(nc)
		return err
	})
	go readCallbacks(vc)
	if !s.replaceConn40(cl, vc) {
		vc.close() // the client went away meanwhile
		return
	}
	sess.initBack(0, cb.prog, cb.sec, true)
	sess.bindBack(conn)
	sess.cb.mu.Lock()
	probed := sess.cb.probeDone
	sess.cb.mu.Unlock()
	<-probed
}

// replaceConn40 makes vc cl's callback connection, closing the one
// before; false when cl is gone.
func (s *Server) replaceConn40(cl *client, vc *v40Conn) bool {
	t := s.state
	t.mu.Lock()
	live := t.clients[cl.id] == cl
	t.mu.Unlock()
	v := cl.v40
	v.mu.Lock()
	old := v.conn
	if live {
		v.conn = vc
	}
	v.mu.Unlock()
	if old != nil && old != vc {
		old.close()
	}
	return live
}

// readCallbacks reads the records the client sends back on a callback
// connection and hands the replies to the calls waiting for them.
func readCallbacks(vc *v40Conn) {
	defer vc.close()
	var hdr [4]byte
	var rec []byte
	for {
		if _, err := io.ReadFull(vc.nc, hdr[:]); err != nil {
			return
		}
		last, n := xdr.ParseMark(binary.BigEndian.Uint32(hdr[:]))
		if n > maxCBRecord || len(rec)+n > maxCBRecord {
			return
		}
		start := len(rec)
		rec = append(rec, make([]byte, n)...)
		if _, err := io.ReadFull(vc.nc, rec[start:]); err != nil {
			return
		}
		if !last {
			continue
		}
		if isReply(rec) {
			vc.conn.deliver(rec)
		}
		rec = rec[:0]
	}
}

// cbCompound40 is cbCompound for a 4.0 client: CB_COMPOUND4args with
// minor version 0 and the client's callback_ident, the nops operations
// args encodes and no CB_SEQUENCE.
func (s *Server) cbCompound40(sess *session, nops uint32, args func(e *xdr.Encoder), timeout time.Duration) (cbResult, error) {
	b := &sess.cb
	b.mu.Lock()
	conn := b.backConnLocked()
	prog, sec, secOK := b.prog, b.sec, b.secOK
	b.mu.Unlock()
	if conn == nil || !secOK {
		return cbResult{}, errNoBackChannel
	}
	v := sess.client.v40
	v.mu.Lock()
	ident := v.cb.ident
	v.mu.Unlock()
	xid := cbXIDs.Add(1)
	e := xdr.NewEncoder(256)
	encodeCBCall(e, xid, prog, nfs4.CBProcCompound, sec)
	e.Uint32(0) // tag
	e.Uint32(0) // minorversion
	e.Uint32(ident)
	e.Uint32(nops)
	args(e)
	e.Patch(0, xdr.RecordMark(e.Len()-4))
	rep, err := conn.call(xid, [][]byte{e.Header()}, timeout)
	if err != nil {
		return cbResult{}, err
	}
	d, err := decodeRPCReply(xdr.NewDecoder(rep), xid)
	if err != nil {
		return cbResult{}, err
	}
	status := nfs4.Status(d.Uint32())
	d.Opaque(maxTag)
	d.Uint32()
	if d.Err() != nil {
		return cbResult{}, fmt.Errorf("nfs: callback reply: %w", d.Err())
	}
	return cbResult{status: status, d: d}, nil
}

// callback40 returns cl's 4.0 callback session when its path works, for
// the recall and CB_GETATTR loops that look for a session of the client.
func callback40(cl *client) *session {
	if cl.v40 == nil || !cl.v40.sess.canCall() {
		return nil
	}
	return cl.v40.sess
}
