package nfs

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func TestParseUaddr(t *testing.T) {
	for _, c := range []struct {
		netid, uaddr, want string
	}{
		{"tcp", "127.0.0.1.8.1", "127.0.0.1:2049"},
		{"tcp6", "::1.0.80", "[::1]:80"},
		{"tcp", "::1.0.80", ""},
		{"udp", "127.0.0.1.8.1", ""},
		{"tcp", "127.0.0.1.8", ""},
		{"tcp", "127.0.0.1.300.1", ""},
		{"tcp", "", ""},
		{"tcp", "..", ""},
	} {
		ap, err := parseUaddr(c.netid, c.uaddr)
		got := ""
		if err == nil {
			got = ap.String()
		}
		if got != c.want {
			t.Errorf("parseUaddr(%q, %q) = %q (%v), want %q", c.netid, c.uaddr, got, err, c.want)
		}
	}
}

// fakeCB is a 4.0 client's callback service: it answers CB_NULL, and
// CB_COMPOUND with NFS4_OK, reporting each CB_COMPOUND's minor version,
// callback_ident and first op.
type fakeCB struct {
	ln    net.Listener
	calls chan [3]uint32
}

func newFakeCB(t *testing.T) *fakeCB {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeCB{ln: ln, calls: make(chan [3]uint32, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeCB) uaddr() string {
	a := f.ln.Addr().(*net.TCPAddr)
	return fmt.Sprintf("127.0.0.1.%d.%d", a.Port>>8, a.Port&0xff)
}

func (f *fakeCB) serve(c net.Conn) {
	defer c.Close()
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		_, n := xdr.ParseMark(binary.BigEndian.Uint32(hdr[:]))
		rec := make([]byte, n)
		if _, err := io.ReadFull(c, rec); err != nil {
			return
		}
		d := xdr.NewDecoder(rec)
		xid := d.Uint32()
		d.Uint32() // CALL
		d.Uint32() // rpcvers
		d.Uint32() // prog
		d.Uint32() // vers
		proc := d.Uint32()
		d.Uint32()
		d.Opaque(400)
		d.Uint32()
		d.Opaque(400)
		e := xdr.NewEncoder(64)
		e.Reserve()
		e.Uint32(xid)
		e.Uint32(nfs4.MsgReply)
		e.Uint32(nfs4.MsgAccepted)
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
		e.Uint32(nfs4.AcceptSuccess)
		if proc == nfs4.CBProcCompound {
			d.Opaque(64) // tag
			minor, ident := d.Uint32(), d.Uint32()
			d.Uint32()
			op := d.Uint32()
			f.calls <- [3]uint32{minor, ident, op}
			e.Uint32(0) // NFS4_OK
			e.Uint32(0) // tag
			e.Uint32(1)
			e.Uint32(op)
			e.Uint32(0)
		}
		e.Patch(0, xdr.RecordMark(e.Len()-4))
		if _, err := c.Write(e.Header()); err != nil {
			return
		}
	}
}

// setclientidCB is setclientid with a callback address.
func (h *harness) setclientidCB(owner, uaddr string, ident uint32) uint64 {
	h.t.Helper()
	d, st, _ := h.c40(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpSetclientid)
		e.Fixed(make([]byte, 8))
		e.String(owner)
		e.Uint32(0x40000000)
		e.String("tcp")
		e.String(uaddr)
		e.Uint32(ident)
	})
	if st != nfs4.OK {
		h.t.Fatalf("SETCLIENTID: %d", st)
	}
	d.Uint32()
	d.Uint32()
	id := d.Uint64()
	var cv [8]byte
	copy(cv[:], d.Fixed(8))
	if st := h.confirm40(id, cv); st != nfs4.OK {
		h.t.Fatalf("SETCLIENTID_CONFIRM: %d", st)
	}
	return id
}

func (h *harness) client40Of(id uint64) *client {
	h.s.state.mu.Lock()
	defer h.s.state.mu.Unlock()
	return h.s.state.clients[id]
}

// TestV40Callback: the server dials the callback address, probes it with
// CB_NULL, then delegates; another client's conflicting OPEN recalls the
// delegation with a CB_COMPOUND of minor version 0, the client's
// callback_ident and no CB_SEQUENCE. A client whose callback address does
// not answer gets no delegation.
func TestV40Callback(t *testing.T) {
	h := newHarness(t)
	h.s.cfg.Delegations = true
	cb := newFakeCB(t)
	id := h.setclientidCB("c1", cb.uaddr(), 77)
	cl := h.client40Of(id)
	if !cl.v40.sess.cbUp(5*time.Second) || !cl.v40.sess.canCall() {
		t.Fatal("callback path not up")
	}
	h.write("f", []byte("data"))
	d, st, _ := h.c40(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(1)
		e.Uint32(nfs4.ShareAccessRead)
		e.Uint32(0)
		e.Uint64(id)
		e.String("oo")
		e.Uint32(0) // NOCREATE
		e.Uint32(nfs4.ClaimNull)
		e.String("f")
	})
	if st != nfs4.OK {
		t.Fatalf("OPEN: %d", st)
	}
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpOpen, nfs4.OK)
	nfs4.DecodeStateid(d)
	d.Skip(changeInfoLen)
	d.Uint32()
	nfs4.DecodeBitmap(d)
	if typ := d.Uint32(); typ != nfs4.DelegateRead {
		t.Fatalf("delegation %d, want a read delegation", typ)
	}
	// Another client opens for write: the delegation is recalled.
	id2 := h.setclientidCB("c2", "127.0.0.1.0.1", 1)
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		h.open40(id2, "o2", 1, "f")
	}()
	defer func() { <-opened }()
	select {
	case got := <-cb.calls:
		if got != [3]uint32{0, 77, nfs4.OpCBRecall} {
			t.Fatalf("callback minor %d ident %d op %d, want 0 77 CB_RECALL", got[0], got[1], got[2])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no CB_RECALL")
	}
	// c2's callback address (port 1) does not answer: no delegation.
	if cl2 := h.client40Of(id2); cl2.v40.sess.cbUp(2*time.Second) || callback40(cl2) != nil {
		t.Fatal("c2's callback path up")
	}
}
