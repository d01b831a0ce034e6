package nfs

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestReadPlusHoleAllocatesNothing: a READ_PLUS that answers with one HOLE
// segment allocates nothing per request, like READ (it used to allocate
// its stat buffer: a hole reply cost more server CPU than a 4 KiB READ).
// The count, not a time, is asserted.
func TestReadPlusHoleAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	h := newHarness(t)
	h.session()
	h.sparse("f", 4<<20, [][2]int64{{0, 1 << 20}, {2 << 20, 3 << 20}})
	fh := h.lookupFH("f")
	for _, tc := range []struct {
		name string
		op   func(e *xdr.Encoder)
	}{
		{"READ_PLUS 1 MiB hole", func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpReadPlus)
			nfs4.AnonStateid.Encode(e)
			e.Uint64(1 << 20)
			e.Uint32(1 << 20)
		}},
		{"READ 4 KiB", func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpRead)
			nfs4.AnonStateid.Encode(e)
			e.Uint64(8192)
			e.Uint32(4096)
		}},
	} {
		rec, seqPos := benchRecord(h, fh, tc.op)
		rep := NewReply()
		conn := NewConn("alloc")
		buf := make([]byte, 1<<20)
		seq := uint32(0)
		run := func() {
			seq++
			rec[seqPos], rec[seqPos+1], rec[seqPos+2], rec[seqPos+3] = byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq)
			rep.Reset()
			h.s.Handle(conn, rec, rep)
			for k, rd := range rep.Reads {
				rep.CompleteRead(k, buf[:rd.Len])
			}
			h.s.Complete(rep)
			rep.Iovecs()
		}
		run() // warm: the extent cache, the reply's scratch
		if n := testing.AllocsPerRun(200, run); n != 0 {
			t.Errorf("%s: %.1f allocations per request, want 0", tc.name, n)
		}
	}
}
