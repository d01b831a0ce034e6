package nfs

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestAbandonedReplyFreesSlot: an engine whose connection closed before a
// reply's reads were done Resets it without Complete; the slot must be
// free again, so the client's retransmit on a new connection is answered
// (RETRY_UNCACHED_REP) instead of NFS4ERR_DELAY for ever.
func TestAbandonedReplyFreesSlot(t *testing.T) {
	h := newHarness(t)
	h.session()
	build := func(e *xdr.Encoder) {
		e.Uint32(h.xid)
		e.Uint32(nfs4.MsgCall)
		e.Uint32(2)
		e.Uint32(nfs4.ProgramNFS)
		e.Uint32(4)
		e.Uint32(nfs4.ProcCompound)
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
		e.String("tag")
		e.Uint32(2)
		e.Uint32(1)
		h.sequenceAt(e, 1)
	}
	h.xid++
	e := xdr.NewEncoder(256)
	build(e)
	rep := NewReply()
	h.s.Handle(h.conn, e.AppendTo(nil), rep)
	rep.Reset() // given up: no Complete

	h.seq = 0
	_, st, _ := h.compound(1, func(e *xdr.Encoder) { h.sequenceAt(e, 1) })
	if st != nfs4.ErrRetryUncachedRep {
		t.Fatalf("retransmit after an abandoned reply: status %d, want RETRY_UNCACHED_REP (%d)", st, nfs4.ErrRetryUncachedRep)
	}
	h.seq = 1
	if _, st, _ := h.compound(1, func(e *xdr.Encoder) { h.sequence(e) }); st != nfs4.OK {
		t.Fatalf("next request on the slot: status %d", st)
	}
}
