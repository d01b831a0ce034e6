package nfs

import (
	"bytes"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func TestMinorVersionZero(t *testing.T) {
	h := newHarness(t)
	for _, minor := range []uint32{3, 100} {
		d, st, n := h.compoundMinor(minor, 1, func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) })
		if st != nfs4.ErrMinorVersMismatch || n != 0 || d.Remaining() != 0 {
			t.Fatalf("minor %d: status %d, %d results", minor, st, n)
		}
	}
}

func TestOpNotInSession(t *testing.T) {
	h := newHarness(t)
	d, st, n := h.compound(1, func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) })
	if st != nfs4.ErrOpNotInSession || n != 1 {
		t.Fatalf("status %d, %d results", st, n)
	}
	opResult(t, d, nfs4.OpPutrootfh, nfs4.ErrOpNotInSession)
}

func TestUnknownAndUnsupportedOps(t *testing.T) {
	h := newHarness(t)
	h.session()
	d, st, n := h.compound(2, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(9999)
	})
	if st != nfs4.ErrOpIllegal || n != 2 {
		t.Fatalf("status %d, %d results", st, n)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpIllegal, nfs4.ErrOpIllegal)

	d, st, _ = h.compound(2, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpLayoutget)
	})
	skipSequence(t, d)
	opResult(t, d, nfs4.OpLayoutget, nfs4.ErrNotsupp)
	if st != nfs4.ErrNotsupp {
		t.Fatalf("status %d", st)
	}
	// A 4.2 operation in a 4.1 COMPOUND does not exist there.
	d, _, _ = h.compoundMinor(1, 2, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpReadPlus)
	})
	skipSequence(t, d)
	opResult(t, d, nfs4.OpIllegal, nfs4.ErrOpIllegal)
}

func TestTruncatedOpArgs(t *testing.T) {
	h := newHarness(t)
	h.session()
	d, st, _ := h.compound(3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.Uint32(200) // name length with no name after it
	})
	if st != nfs4.ErrBadXDR {
		t.Fatalf("status %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpLookup, nfs4.ErrBadXDR)
}

func TestSequenceReplayAndMisorder(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("data"))
	build := func(seq uint32) func(e *xdr.Encoder) {
		return func(e *xdr.Encoder) {
			h.sequenceAt(e, seq)
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpGetattr)
			nfs4.BitmapOf(nfs4.AttrType, nfs4.AttrFileid).Encode(e)
		}
	}
	d1, st, _ := h.compound(3, build(1))
	first := bytes.Clone(d1.Rest())
	if st != nfs4.OK {
		t.Fatalf("status %d", st)
	}
	d2, _, _ := h.compound(3, build(1))
	if !bytes.Equal(first, d2.Rest()) {
		t.Fatalf("replay differs:\n%x\n%x", first, d2.Rest())
	}
	d3, st, _ := h.compound(3, build(5))
	if st != nfs4.ErrSeqMisordered {
		t.Fatalf("misordered: status %d", st)
	}
	opResult(t, d3, nfs4.OpSequence, nfs4.ErrSeqMisordered)
}

func TestSequenceReplayOfRead(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("some file data"))
	fh := h.lookupFH("f")
	seq := h.seq + 1
	build := func(e *xdr.Encoder) {
		h.sequenceAt(e, seq)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpRead)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(5)
		e.Uint32(100)
	}
	d1, _, _ := h.compound(3, build)
	first := bytes.Clone(d1.Rest())
	d2, _, _ := h.compound(3, build)
	if !bytes.Equal(first, d2.Rest()) {
		t.Fatalf("replayed READ differs:\n%x\n%x", first, d2.Rest())
	}
	skipSequence(t, d2)
	opResult(t, d2, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d2, nfs4.OpRead, nfs4.OK)
	if eof := d2.Bool(); !eof {
		t.Fatal("eof not set")
	}
	if data := d2.Opaque(100); string(data) != "file data" {
		t.Fatalf("data %q", data)
	}
}

func TestForgedHandles(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("x"))
	good := h.lookupFH("f")
	forged := bytes.Clone(good)
	forged[20] ^= 0xff // another inode number, the MAC left as it was
	flipped := bytes.Clone(good)
	flipped[len(flipped)-1] ^= 1 // a bit of the MAC
	// A well-signed handle of an export this server does not have.
	other := h.s.fhKey.makeHandle(&export{id: 12345}, 0, 99, nil)
	cases := []struct {
		fh   []byte
		want nfs4.Status
	}{
		{[]byte{1, 2, 3}, nfs4.ErrBadhandle},
		{make([]byte, 16), nfs4.ErrBadhandle},
		{append([]byte{1, 1, 9, 0}, make([]byte, 12)...), nfs4.ErrBadhandle}, // version 1
		{forged, nfs4.ErrBadhandle},
		{flipped, nfs4.ErrBadhandle},
		{good[:len(good)-1], nfs4.ErrBadhandle},
		{other, nfs4.ErrStale},
		{pseudoHandle, nfs4.ErrBadhandle}, // single export: no pseudo-root
	}
	for _, tc := range cases {
		d, st, _ := h.compound(2, func(e *xdr.Encoder) {
			h.sequence(e)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(tc.fh)
		})
		skipSequence(t, d)
		opResult(t, d, nfs4.OpPutfh, tc.want)
		if st != tc.want {
			t.Fatalf("fh %x: status %d want %d", tc.fh, st, tc.want)
		}
	}
	// An over-long handle is bad XDR for PUTFH (limit 128 bytes).
	d, st, _ := h.compound(2, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(make([]byte, 200))
	})
	skipSequence(t, d)
	if st != nfs4.ErrBadhandle && st != nfs4.ErrBadXDR {
		t.Fatalf("long handle: %d", st)
	}
}

func TestLookupEscapes(t *testing.T) {
	h := newHarness(t)
	h.session()
	for _, name := range []string{"..", ".", "a/b", ""} {
		d, st, _ := h.compound(3, func(e *xdr.Encoder) {
			h.sequence(e)
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpLookup)
			e.String(name)
		})
		skipSequence(t, d)
		if st == nfs4.OK {
			t.Fatalf("LOOKUP %q succeeded", name)
		}
	}
}

func TestCreateSessionReplay(t *testing.T) {
	h := newHarness(t)
	h.session()
	// A second EXCHANGE_ID with the same owner and verifier is the same
	// client, now confirmed.
	d, _, _ := h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("verifier"))
		e.String("owner-1")
		e.Uint32(0)
		e.Uint32(nfs4.SP4None)
		e.Uint32(0)
	})
	opResult(t, d, nfs4.OpExchangeID, nfs4.OK)
	d.Uint64()
	d.Uint32()
	if flags := d.Uint32(); flags&nfs4.ExchgIDConfirmedR == 0 {
		t.Fatalf("flags %#x: not confirmed", flags)
	}
}
