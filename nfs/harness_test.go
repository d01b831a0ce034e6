package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// harness drives a Server the way an engine does, without sockets: encode a
// call, Handle it, perform the reads with pread, Complete, and return the
// reply bytes after the record marker.
type harness struct {
	t    *testing.T
	s    *Server
	conn *Conn
	dir  string
	// state is the server's state directory: a restarted server given
	// the same one accepts the handles of the first.
	state string
	xid   uint32
	sess  [16]byte
	seq   uint32
	// uid is the AUTH_SYS uid of calls, owner the EXCHANGE_ID owner
	// ("owner-1" when empty), clid the client id session() got.
	uid   uint32
	owner string
	clid  uint64
	// lastReads: the last reply record returned carried file data.
	lastReads bool
	// noReclaimComplete: session() leaves the client before its
	// RECLAIM_COMPLETE (which OPEN otherwise needs first).
	noReclaimComplete bool
	// inline: calls are handled as on an event loop (Reply.Inline), and
	// inlineSaid records what Server.Inline said of the last one.
	inline, inlineSaid bool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	state := t.TempDir()
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &harness{t: t, s: s, conn: NewConn("test"), dir: dir, state: state}
}

func (h *harness) write(name string, data []byte) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name), data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// record sends raw record bytes and returns the reply (nil when dropped).
func (h *harness) record(rec []byte) []byte {
	rep := NewReply()
	h.inlineSaid = h.s.Inline(rec)
	rep.Inline = h.inline
	h.s.Handle(h.conn, rec, rep)
	if rep.Drop {
		return nil
	}
	h.lastReads = len(rep.Reads) > 0
	for i, rd := range rep.Reads {
		buf := make([]byte, rd.Len)
		n, _ := unix.Pread(rd.FD, buf, rd.Off)
		rep.CompleteRead(i, buf[:max(n, 0)])
	}
	h.s.Complete(rep)
	var out []byte
	for _, b := range rep.Iovecs() {
		out = append(out, b...)
	}
	rep.Reset() // as an engine does once the reply is sent

	mark := uint32(out[0])<<24 | uint32(out[1])<<16 | uint32(out[2])<<8 | uint32(out[3])
	if last, n := xdr.ParseMark(mark); !last || n != len(out)-4 {
		h.t.Fatalf("bad record mark %#x for %d bytes", mark, len(out)-4)
	}
	return out[4:]
}

// callHeader writes an RPC call header with AUTH_SYS root credentials.
func callHeader(e *xdr.Encoder, xid, prog, vers, proc uint32) {
	callHeaderAs(e, xid, prog, vers, proc, 0)
}

// callHeaderAs writes an RPC call header with AUTH_SYS credentials of uid.
func callHeaderAs(e *xdr.Encoder, xid, prog, vers, proc, uid uint32) {
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(2)
	e.Uint32(prog)
	e.Uint32(vers)
	e.Uint32(proc)
	e.Uint32(nfs4.AuthSys)
	cred := xdr.NewEncoder(64)
	cred.Uint32(0)
	cred.String("test")
	cred.Uint32(uid)
	cred.Uint32(uid)
	cred.Uint32(0)
	e.Opaque(cred.Header())
	e.Uint32(nfs4.AuthNone)
	e.Uint32(0)
}

// compound sends a COMPOUND of minor version 2 whose ops build writes, and
// returns a decoder positioned at the first result plus the status and
// result count.
func (h *harness) compound(nops int, build func(e *xdr.Encoder)) (*xdr.Decoder, nfs4.Status, int) {
	h.t.Helper()
	return h.compoundMinor(2, nops, build)
}

func (h *harness) compoundMinor(minor uint32, nops int, build func(e *xdr.Encoder)) (*xdr.Decoder, nfs4.Status, int) {
	h.t.Helper()
	h.xid++
	e := xdr.NewEncoder(256)
	callHeaderAs(e, h.xid, nfs4.ProgramNFS, 4, nfs4.ProcCompound, h.uid)
	e.String("tag")
	e.Uint32(minor)
	e.Uint32(uint32(nops))
	build(e)
	d := xdr.NewDecoder(h.record(e.AppendTo(nil)))
	h.acceptedHeader(d, h.xid, nfs4.AcceptSuccess)
	status := nfs4.Status(d.Uint32())
	if tag := d.Opaque(1024); string(tag) != "tag" {
		h.t.Fatalf("tag = %q", tag)
	}
	return d, status, int(d.Uint32())
}

func (h *harness) acceptedHeader(d *xdr.Decoder, xid, stat uint32) {
	h.t.Helper()
	got := []uint32{d.Uint32(), d.Uint32(), d.Uint32(), d.Uint32(), d.Uint32(), d.Uint32()}
	want := []uint32{xid, nfs4.MsgReply, nfs4.MsgAccepted, nfs4.AuthNone, 0, stat}
	for i := range got {
		if got[i] != want[i] {
			h.t.Fatalf("reply header %v, want %v", got, want)
		}
	}
}

// opResult reads one result's op and status.
func opResult(t *testing.T, d *xdr.Decoder, op uint32, status nfs4.Status) {
	t.Helper()
	gotOp, gotSt := d.Uint32(), nfs4.Status(d.Uint32())
	if gotOp != op || gotSt != status {
		t.Fatalf("result op %d status %d, want op %d status %d", gotOp, gotSt, op, status)
	}
}

// session runs EXCHANGE_ID and CREATE_SESSION.
func (h *harness) session() {
	h.t.Helper()
	d, st, _ := h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("verifier"))
		owner := h.owner
		if owner == "" {
			owner = "owner-1"
		}
		e.String(owner)
		e.Uint32(nfs4.ExchgIDUseNonPNFS)
		e.Uint32(nfs4.SP4None)
		e.Uint32(0)
	})
	if st != nfs4.OK {
		h.t.Fatalf("EXCHANGE_ID: %d", st)
	}
	opResult(h.t, d, nfs4.OpExchangeID, nfs4.OK)
	clientID := d.Uint64()
	h.clid = clientID
	seq := d.Uint32()
	d, st, _ = h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpCreateSession)
		e.Uint64(clientID)
		e.Uint32(seq)
		e.Uint32(0)
		for _, a := range [][6]uint32{{0, 2 << 20, 2 << 20, 8192, 16, 64}, {0, 4096, 4096, 0, 2, 1}} {
			for _, v := range a {
				e.Uint32(v)
			}
			e.Uint32(0)
		}
		e.Uint32(0x40000000)
		e.Uint32(1)
		e.Uint32(nfs4.AuthNone)
	})
	if st != nfs4.OK {
		h.t.Fatalf("CREATE_SESSION: %d", st)
	}
	opResult(h.t, d, nfs4.OpCreateSession, nfs4.OK)
	copy(h.sess[:], d.Fixed(16))
	h.seq = 0
	if !h.noReclaimComplete {
		// As RECLAIM_COMPLETE on the wire would, without using a slot's
		// sequence id that tests count on.
		t := h.s.state
		t.mu.Lock()
		cl := t.clients[clientID]
		t.mu.Unlock()
		if st := t.reclaimComplete(cl); st != nfs4.OK {
			h.t.Fatalf("RECLAIM_COMPLETE: %d", st)
		}
	}
}

// sequence writes a SEQUENCE op on slot 0 with the next seqid.
func (h *harness) sequence(e *xdr.Encoder) {
	h.seq++
	h.sequenceAt(e, h.seq)
}

func (h *harness) sequenceAt(e *xdr.Encoder, seq uint32) {
	e.Uint32(nfs4.OpSequence)
	e.Fixed(h.sess[:])
	e.Uint32(seq)
	e.Uint32(0)
	e.Uint32(0)
	e.Bool(false)
}

// skipSequence reads a successful SEQUENCE result.
func skipSequence(t *testing.T, d *xdr.Decoder) {
	t.Helper()
	opResult(t, d, nfs4.OpSequence, nfs4.OK)
	d.Fixed(16)
	d.Skip(20)
}

// lookupFH returns the handle of a name in the root.
func (h *harness) lookupFH(name string) []byte {
	h.t.Helper()
	d, st, _ := h.compound(4, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String(name)
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		h.t.Fatalf("lookup %s: %d", name, st)
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpLookup, nfs4.OK)
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	return bytes.Clone(d.Opaque(128))
}
