// Package rpcbind is a small portmapper (version 2) client: it tells the
// local rpcbind which port serves which RPC program, so NFSv3 clients that
// ask it (mount without port= and mountport=) find the server. PMAPPROC_SET
// and PMAPPROC_UNSET only: over rpcbind's local socket (/run/rpcbind.sock,
// where rpcbind knows the caller is root; a default rpcbind refuses SET
// over the network, even from 127.0.0.1, unless started with -L), then over
// TCP and UDP to 127.0.0.1:111.
package rpcbind

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// Portmapper protocol constants (RFC 1833 section 3).
const (
	pmapProg    = 100000
	pmapVers    = 2
	procSet     = 1
	procUnset   = 2
	IPProtoTCP  = 6
	IPProtoUDP  = 17
	DefaultAddr = "127.0.0.1:111"
	// DefaultSocket is rpcbind's local (AF_UNIX) socket.
	DefaultSocket = "/run/rpcbind.sock"
)

// Mapping is one program's registration: program, version, protocol
// (IPProtoTCP or IPProtoUDP) and port.
type Mapping struct {
	Prog, Vers, Prot uint32
	Port             uint16
}

// Client talks to the portmapper at Socket, else at Addr.
type Client struct {
	Addr    string        // DefaultAddr when empty
	Socket  string        // DefaultSocket when empty; "-": none
	Timeout time.Duration // per call; 2s when 0
}

var xids atomic.Uint32

func init() { xids.Store(uint32(time.Now().UnixNano())) }

// Set registers m. rpcbind refuses a program and version already
// registered for m's protocol: Unset them first (once: an UNSET removes
// the registrations of every protocol, so one between the TCP and UDP
// SETs of a program would undo the first).
func (c *Client) Set(m Mapping) error {
	ok, err := c.call(procSet, m)
	if err == nil && !ok {
		err = fmt.Errorf("rpcbind: refused to register program %d version %d", m.Prog, m.Vers)
	}
	return err
}

// Unset removes the registrations of m's program and version.
func (c *Client) Unset(m Mapping) error {
	_, err := c.call(procUnset, m)
	return err
}

// ErrNoRpcbind means nothing answered at the portmapper's address.
var ErrNoRpcbind = errors.New("rpcbind: no portmapper running")

// call sends one PMAPPROC call with m as its argument and returns the
// boolean result.
func (c *Client) call(proc uint32, m Mapping) (bool, error) {
	addr := c.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	xid := xids.Add(1)
	msg := encodeCall(xid, proc, m)
	sock := c.Socket
	if sock == "" {
		sock = DefaultSocket
	}
	if sock != "-" {
		res, err := callStream("unix", sock, msg, timeout)
		if err == nil {
			return decodeReply(xid, res)
		}
		if !isRefused(err) {
			return false, err
		}
	}
	res, err := callStream("tcp", addr, msg, timeout)
	if err != nil {
		var ne net.Error
		if isRefused(err) || errors.As(err, &ne) && ne.Timeout() {
			// Some portmappers listen on UDP only.
			res, err = callUDP(addr, msg, timeout)
		}
		if err != nil {
			if isRefused(err) {
				return false, ErrNoRpcbind
			}
			return false, err
		}
	}
	return decodeReply(xid, res)
}

func isRefused(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial" || errors.Is(err, errRefused)
}

var errRefused = errors.New("connection refused")

// encodeCall builds an RPC call to the portmapper with AUTH_NONE.
func encodeCall(xid, proc uint32, m Mapping) []byte {
	w := []uint32{xid, 0, 2, pmapProg, pmapVers, proc, 0, 0, 0, 0, m.Prog, m.Vers, m.Prot, uint32(m.Port)}
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.BigEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// decodeReply reads an accepted reply carrying a bool.
func decodeReply(xid uint32, b []byte) (bool, error) {
	u := func(i int) uint32 { return binary.BigEndian.Uint32(b[4*i:]) }
	if len(b) < 24 || u(0) != xid || u(1) != 1 {
		return false, fmt.Errorf("rpcbind: malformed reply")
	}
	if u(2) != 0 {
		return false, fmt.Errorf("rpcbind: call denied")
	}
	// verifier: flavor, opaque body
	vlen := int(u(4))
	if vlen > 400 || vlen%4 != 0 || len(b) < 28+vlen {
		return false, fmt.Errorf("rpcbind: malformed reply")
	}
	i := 5 + vlen/4
	if st := u(i); st != 0 {
		return false, fmt.Errorf("rpcbind: call not accepted (%d)", st)
	}
	return u(i+1) != 0, nil
}

// callStream makes one call over a stream connection (record marking).
func callStream(network, addr string, msg []byte, timeout time.Duration) ([]byte, error) {
	conn, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	rec := make([]byte, 4+len(msg))
	binary.BigEndian.PutUint32(rec, 1<<31|uint32(len(msg)))
	copy(rec[4:], msg)
	if _, err := conn.Write(rec); err != nil {
		return nil, err
	}
	var out []byte
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return nil, err
		}
		mark := binary.BigEndian.Uint32(hdr[:])
		n := int(mark &^ (1 << 31))
		if n > 64<<10 || len(out)+n > 64<<10 {
			return nil, fmt.Errorf("rpcbind: reply too long")
		}
		frag := make([]byte, n)
		if _, err := io.ReadFull(conn, frag); err != nil {
			return nil, err
		}
		out = append(out, frag...)
		if mark&(1<<31) != 0 {
			return out, nil
		}
	}
}

func callUDP(addr string, msg []byte, timeout time.Duration) ([]byte, error) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(msg); err != nil {
		return nil, err
	}
	buf := make([]byte, 1024)
	n, err := conn.Read(buf)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "read" && !oe.Timeout() {
			return nil, errRefused // ICMP port unreachable
		}
		return nil, err
	}
	return buf[:n], nil
}
