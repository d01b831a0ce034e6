package nfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// The back channel (RFC 8881 section 2.10.3.1). An NFSv4.1 server calls
// its client back over a connection the client opened: one that
// CREATE_SESSION (CREATE_SESSION4_FLAG_CONN_BACK_CHAN) or
// BIND_CONN_TO_SESSION bound for back-channel use. The engine installs a
// sender on each connection (Conn.SetSender) and hands nfs every record
// whose msg_type is REPLY (Server.Handle), which is matched here by xid to
// the callback waiting for it.

var (
	errNoBackChannel = errors.New("nfs: no usable back channel")
	errCBTimeout     = errors.New("nfs: callback timed out")
	errConnClosed    = errors.New("nfs: connection closed")
)

// connCalls is the callback side of a Conn: how to send a record on it,
// and the calls sent on it that wait for their replies.
type connCalls struct {
	mu      sync.Mutex
	send    func(rec [][]byte) error
	pending map[uint32]chan []byte
	closed  atomic.Bool
}

// SetSender installs how nfs sends a record (an RPC CALL, record mark
// included) on the connection: the engine writes the pieces in order, as
// one record, between its replies. It may be called from any goroutine;
// an error means the record did not go out. The pieces are nfs's until
// the function returns (the engine copies or finishes with them first).
func (c *Conn) SetSender(send func(rec [][]byte) error) {
	c.calls.mu.Lock()
	c.calls.send = send
	c.calls.mu.Unlock()
}

// Close tells nfs the connection is gone: callbacks waiting on it fail
// now, and it is no longer used for new ones. Engines call it once the
// transport is closed.
func (c *Conn) Close() {
	c.calls.closed.Store(true)
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	for xid, ch := range c.calls.pending {
		close(ch)
		delete(c.calls.pending, xid)
	}
}

// usable reports whether callbacks can be sent on c.
func (c *Conn) usable() bool {
	if c == nil || c.calls.closed.Load() {
		return false
	}
	c.calls.mu.Lock()
	defer c.calls.mu.Unlock()
	return c.calls.send != nil
}

// call sends rec, a CALL record with the given xid, and waits up to
// timeout for its reply. The reply is a copy the caller owns.
func (c *Conn) call(xid uint32, rec [][]byte, timeout time.Duration) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.calls.mu.Lock()
	send := c.calls.send
	if send == nil || c.calls.closed.Load() {
		c.calls.mu.Unlock()
		return nil, errConnClosed
	}
	if c.calls.pending == nil {
		c.calls.pending = make(map[uint32]chan []byte)
	}
	c.calls.pending[xid] = ch
	c.calls.mu.Unlock()
	defer c.forget(xid)
	if err := send(rec); err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, errConnClosed
		}
		return r, nil
	case <-t.C:
		return nil, errCBTimeout
	}
}

func (c *Conn) forget(xid uint32) {
	c.calls.mu.Lock()
	delete(c.calls.pending, xid)
	c.calls.mu.Unlock()
}

// deliver hands a REPLY record to the call waiting for its xid; a reply
// nobody waits for (late, or made up) is dropped.
func (c *Conn) deliver(rec []byte) {
	xid := binary.BigEndian.Uint32(rec)
	c.calls.mu.Lock()
	ch := c.calls.pending[xid]
	delete(c.calls.pending, xid)
	c.calls.mu.Unlock()
	if ch != nil {
		ch <- append([]byte(nil), rec...) // the engine reuses rec
	}
}

// isReply reports whether rec is an RPC REPLY record.
func isReply(rec []byte) bool {
	return len(rec) >= 8 && binary.BigEndian.Uint32(rec[4:]) == nfs4.MsgReply
}

// cbSec is the security the client asked callbacks to carry
// (callback_sec_parms4): AUTH_NONE, or AUTH_SYS with the authsys_parms
// body as the client gave it. RPCSEC_GSS is not offered.
type cbSec struct {
	flavor uint32
	body   []byte
}

// decodeCallbackSec reads callback_sec_parms4<> and returns the first
// entry the server can use; ok is false when there is none.
func decodeCallbackSec(d *xdr.Decoder) (sec cbSec, ok bool) {
	n := d.ArrayLen(16, 4)
	for i := 0; i < n && d.Err() == nil; i++ {
		switch flavor := d.Uint32(); flavor {
		case nfs4.AuthNone:
			if !ok {
				sec, ok = cbSec{flavor: nfs4.AuthNone}, true
			}
		case nfs4.AuthSys:
			start, rest := d.Offset(), d.Rest()
			d.Uint32()
			d.Opaque(255)
			d.Uint32()
			d.Uint32()
			m := d.ArrayLen(maxAuxGIDs, 4)
			d.Skip(4 * m)
			if !ok && d.Err() == nil {
				sec, ok = cbSec{flavor: nfs4.AuthSys, body: append([]byte(nil), rest[:d.Offset()-start]...)}, true
			}
		case 6: // RPCSEC_GSS: gss_cb_handles4
			d.Uint32()
			d.Opaque(nfs4.OpaqueLimit)
			d.Opaque(nfs4.OpaqueLimit)
		default:
			d.Fail(xdr.ErrTooLong)
		}
	}
	return sec, ok
}

// backChannel is a session's way back to its client: the program number
// and security to call with, the connections bound for callbacks and the
// back channel's one slot.
type backChannel struct {
	// conn is the most recently bound back-channel connection. SEQUENCE
	// reads it on every request (SEQ4_STATUS_CB_PATH_DOWN_SESSION), so it
	// is atomic.
	conn atomic.Pointer[Conn]
	// wanted: the client asked for a back channel (CONN_BACK_CHAN, a
	// back-channel BIND_CONN_TO_SESSION or BACKCHANNEL_CTL).
	wanted atomic.Bool

	mu    sync.Mutex
	minor uint32 // CB_COMPOUND's minorversion: the session's
	prog  uint32
	sec   cbSec
	secOK bool
	conns []*Conn // bound for callbacks, most recent last
	slot  chan struct{}
	seq   uint32 // the slot's next sequenceid

	// probe is the state of the CB_NULL sent when the back channel was
	// last bound or changed (probeNone, probePending, probeUp,
	// probeDown); SEQUENCE reads it, so it is atomic. probeGen tells a
	// stale probe's answer from the current one's; probeDone is closed
	// when the current probe has its answer.
	probe     atomic.Int32
	probeGen  uint32
	probeDone chan struct{}
}

// The states of a back channel's CB_NULL probe.
const (
	probeNone    = iota // no back channel bound yet
	probePending        // CB_NULL sent, no answer yet
	probeUp             // the client answered
	probeDown           // no answer within cbProbeTimeout, or an error
)

// cbProbeTimeout bounds the wait for CB_NULL's reply. A client that
// answers at all does so within milliseconds; knfsd waits about lease/10
// (9 s at the default lease).
const cbProbeTimeout = 5 * time.Second

// initBack sets the back channel up from CREATE_SESSION's arguments.
func (sess *session) initBack(minor, prog uint32, sec cbSec, secOK bool) {
	b := &sess.cb
	b.mu.Lock()
	defer b.mu.Unlock()
	b.minor = minor
	b.prog, b.sec, b.secOK = prog, sec, secOK
	b.slot = make(chan struct{}, 1)
	b.seq = 1
}

// setBackSec is BACKCHANNEL_CTL: a new program and security.
func (sess *session) setBackSec(prog uint32, sec cbSec, secOK bool) {
	b := &sess.cb
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prog, b.sec, b.secOK = prog, sec, secOK
	if b.wanted.Load() {
		b.probeLocked()
	}
}

// bindBack binds conn for callbacks.
func (sess *session) bindBack(conn *Conn) {
	if conn == nil {
		return
	}
	b := &sess.cb
	b.mu.Lock()
	defer b.mu.Unlock()
	b.conns = pruneConns(b.conns, conn)
	if len(b.conns) >= maxBoundConns {
		b.conns = b.conns[1:]
	}
	b.conns = append(b.conns, conn)
	b.conn.Store(conn)
	b.wanted.Store(true)
	b.probeLocked()
}

// probeLocked sends CB_NULL over the back channel as it now is (RFC 8881
// section 18.36.3: the server tests a new back channel; knfsd's
// nfsd4_probe_callback), on its own goroutine: the request that bound
// it is not held up. Until the client answers, OPEN grants no
// delegation (cbUp); a probe that fails sets SEQ4_STATUS_CB_PATH_DOWN,
// and the client's next BIND_CONN_TO_SESSION or BACKCHANNEL_CTL probes
// again (pynfs CSESS20, CSESS21: the probe carries the client's program
// number and the callback version).
func (b *backChannel) probeLocked() {
	b.probeGen++
	gen := b.probeGen
	done := make(chan struct{})
	b.probeDone = done
	conn := b.backConnLocked()
	prog, sec, secOK := b.prog, b.sec, b.secOK
	b.probe.Store(probePending)
	go func() {
		state := int32(probeDown)
		if conn != nil && secOK && cbNull(conn, prog, sec, cbProbeTimeout) == nil {
			state = probeUp
		}
		b.mu.Lock()
		if b.probeGen == gen {
			b.probe.Store(state)
		}
		b.mu.Unlock()
		close(done)
	}()
}

// cbUp reports whether the session's back channel answered its CB_NULL
// probe, waiting up to wait for a probe still under way: an OPEN right
// after CREATE_SESSION should not lose its delegation to the probe's
// round trip, and a client whose callbacks cannot reach it gets none.
func (sess *session) cbUp(wait time.Duration) bool {
	b := &sess.cb
	if b.probe.Load() == probePending {
		b.mu.Lock()
		done := b.probeDone
		b.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	return b.probe.Load() == probeUp
}

// cbNull sends CB_NULL (procedure 0 of the callback program) on conn and
// waits up to timeout for an accepted, successful reply.
func cbNull(conn *Conn, prog uint32, sec cbSec, timeout time.Duration) error {
	xid := cbXIDs.Add(1)
	e := xdr.NewEncoder(128)
	encodeCBCall(e, xid, prog, nfs4.CBProcNull, sec)
	e.Patch(0, xdr.RecordMark(e.Len()-4))
	rep, err := conn.call(xid, [][]byte{e.Header()}, timeout)
	if err != nil {
		return err
	}
	_, err = decodeRPCReply(xdr.NewDecoder(rep), xid)
	return err
}

// pruneConns drops conn and closed connections from list.
func pruneConns(list []*Conn, conn *Conn) []*Conn {
	out := list[:0]
	for _, c := range list {
		if c != conn && !c.calls.closed.Load() {
			out = append(out, c)
		}
	}
	clear(list[len(out):])
	return out
}

// backConn returns a live back-channel connection, most recent first.
func (b *backChannel) backConnLocked() *Conn {
	for i := len(b.conns) - 1; i >= 0; i-- {
		if b.conns[i].usable() {
			return b.conns[i]
		}
	}
	return nil
}

// canCall reports whether callbacks can reach the session's client now.
func (sess *session) canCall() bool {
	b := &sess.cb
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.secOK && b.slot != nil && b.backConnLocked() != nil
}

// pathDown reports whether the client asked for a back channel that has
// no live connection now (SEQ4_STATUS_CB_PATH_DOWN_SESSION), so that it
// binds a new one. It runs on every SEQUENCE: two atomic loads.
func (sess *session) pathDown() bool {
	if !sess.cb.wanted.Load() {
		return false
	}
	c := sess.cb.conn.Load()
	return c == nil || c.calls.closed.Load()
}

var cbXIDs atomic.Uint32

// cbResult is a CB_COMPOUND reply: its status and a decoder at the
// results after CB_SEQUENCE's.
type cbResult struct {
	status nfs4.Status
	d      *xdr.Decoder
}

// cbCompound sends CB_COMPOUND (CB_SEQUENCE, then the nops operations
// args encodes) to the session's client and waits up to timeout for the
// reply. Callbacks of a session take turns on its one slot.
func (s *Server) cbCompound(sess *session, nops uint32, args func(e *xdr.Encoder), timeout time.Duration) (cbResult, error) {
	if sess.client != nil && sess.client.v40 != nil {
		return s.cbCompound40(sess, nops, args, timeout) // v40_callback.go
	}
	b := &sess.cb
	b.mu.Lock()
	slot := b.slot
	b.mu.Unlock()
	if slot == nil {
		return cbResult{}, errNoBackChannel
	}
	deadline := time.Now().Add(timeout)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case slot <- struct{}{}:
	case <-t.C:
		return cbResult{}, errCBTimeout
	}
	defer func() { <-slot }()
	b.mu.Lock()
	conn := b.backConnLocked()
	minor, prog, sec, secOK, seq := b.minor, b.prog, b.sec, b.secOK, b.seq
	b.mu.Unlock()
	if conn == nil || !secOK {
		return cbResult{}, errNoBackChannel
	}
	xid := cbXIDs.Add(1)
	e := xdr.NewEncoder(256)
	encodeCBCall(e, xid, prog, nfs4.CBProcCompound, sec)
	e.Uint32(0) // tag
	e.Uint32(minor)
	e.Uint32(0) // callback_ident: unused in 4.1
	e.Uint32(nops + 1)
	e.Uint32(nfs4.OpCBSequence)
	e.Fixed(sess.id[:])
	e.Uint32(seq)
	e.Uint32(0)   // csa_slotid
	e.Uint32(0)   // csa_highest_slotid
	e.Bool(false) // csa_cachethis
	e.Uint32(0)   // csa_referring_call_lists
	args(e)
	e.Patch(0, xdr.RecordMark(e.Len()-4))
	rep, err := conn.call(xid, [][]byte{e.Header()}, time.Until(deadline))
	if err != nil && err != errCBTimeout {
		return cbResult{}, err
	}
	// A reply, or a timeout after which the client may have run the
	// call: the slot moves on either way (RFC 8881 section 2.10.6.1 lets
	// the next call's sequenceid tell a stale slot from a fresh one).
	b.mu.Lock()
	b.seq++
	b.mu.Unlock()
	if err != nil {
		return cbResult{}, err
	}
	return decodeCBReply(rep, xid)
}

// encodeCBCall writes the record mark placeholder and the RPC header of a
// callback (proc: CB_NULL or CB_COMPOUND) with the session's callback
// security.
func encodeCBCall(e *xdr.Encoder, xid, prog, proc uint32, sec cbSec) {
	e.Reserve()
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(nfs4.RPCVersion)
	e.Uint32(prog)
	e.Uint32(nfs4.CBVersion)
	e.Uint32(proc)
	e.Uint32(sec.flavor)
	e.Opaque(sec.body)
	e.Uint32(nfs4.AuthNone)
	e.Uint32(0)
}

// decodeRPCReply reads a callback's RPC reply header up to its results,
// and fails unless the call was accepted and ran.
func decodeRPCReply(d *xdr.Decoder, xid uint32) (*xdr.Decoder, error) {
	if d.Uint32() != xid || d.Uint32() != nfs4.MsgReply {
		return nil, fmt.Errorf("nfs: callback reply: bad header")
	}
	if st := d.Uint32(); st != nfs4.MsgAccepted {
		return nil, fmt.Errorf("nfs: callback denied (%d)", d.Uint32())
	}
	d.Uint32()
	d.Opaque(nfs4.MaxAuthBytes)
	if as := d.Uint32(); as != nfs4.AcceptSuccess {
		return nil, fmt.Errorf("nfs: callback not accepted (%d)", as)
	}
	if d.Err() != nil {
		return nil, fmt.Errorf("nfs: callback reply: %w", d.Err())
	}
	return d, nil
}

// decodeCBReply reads the RPC reply and CB_COMPOUND4res up to the result
// after CB_SEQUENCE's.
func decodeCBReply(rec []byte, xid uint32) (cbResult, error) {
	d, err := decodeRPCReply(xdr.NewDecoder(rec), xid)
	if err != nil {
		return cbResult{}, err
	}
	status := nfs4.Status(d.Uint32())
	d.Opaque(maxTag)
	n := d.Uint32()
	if d.Err() != nil {
		return cbResult{}, fmt.Errorf("nfs: callback reply: %w", d.Err())
	}
	if n == 0 {
		return cbResult{status: status, d: d}, nil
	}
	op, st := d.Uint32(), nfs4.Status(d.Uint32())
	if op != nfs4.OpCBSequence {
		return cbResult{}, fmt.Errorf("nfs: callback reply starts with op %d", op)
	}
	if st == nfs4.OK {
		d.Skip(nfs4.SessionIDSize + 16)
	}
	if d.Err() != nil {
		return cbResult{}, fmt.Errorf("nfs: callback reply: %w", d.Err())
	}
	if st != nfs4.OK {
		return cbResult{status: st, d: d}, nil
	}
	return cbResult{status: status, d: d}, nil
}
