package nfs

import (
	"bytes"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestLayoutXattrRoundTrip: a layout survives encoding; garbage does not
// decode.
func TestLayoutXattrRoundTrip(t *testing.T) {
	l := FileLayout{Name: "1-2-3.4", UID: 10001, GID: 10002, StripeUnit: 1 << 20, Mirrors: []DSFile{
		{Device: DeviceID{1, 2, 3}, FH: []byte("handle-one")},
		{Device: DeviceID{9}, FH: bytes.Repeat([]byte{7}, 128)},
	}}
	b, err := encodeLayout(l)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeLayout(b)
	if err != nil || got.UID != l.UID || got.GID != l.GID || got.StripeUnit != l.StripeUnit || len(got.Mirrors) != 2 ||
		got.Mirrors[1].Device != l.Mirrors[1].Device || !bytes.Equal(got.Mirrors[0].FH, l.Mirrors[0].FH) {
		t.Fatalf("decoded %+v %v", got, err)
	}
	for name, bad := range map[string][]byte{
		"empty":         nil,
		"other version": append([]byte{3}, b[1:]...),
		"v1 as v2":      append([]byte{2}, b[1:]...),
		"short":         b[:len(b)-1],
		"trailing":      append(append([]byte(nil), b...), 0),
		"no mirror":     append(append([]byte(nil), b[:17]...), 0),
	} {
		if _, err := decodeLayout(bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := encodeLayout(FileLayout{}); err == nil {
		t.Error("a layout without mirrors encoded")
	}
}

// FuzzLayoutXattr: the decoder of the stored layout never panics, and
// what it accepts encodes back to the same bytes (one encoding per
// layout: nothing else is accepted).
func FuzzLayoutXattr(f *testing.F) {
	b, _ := encodeLayout(FileLayout{Name: "n", UID: 1, GID: 2, Mirrors: []DSFile{{Device: DeviceID{1}, FH: []byte("fh")}}})
	f.Add(b)
	b2, _ := encodeLayout(stripedLayout())
	f.Add(b2)
	f.Add(b2[:len(b2)-1])
	f.Add([]byte{1})
	f.Add([]byte{2})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		l, err := decodeLayout(in)
		if err != nil {
			return
		}
		out, err := encodeLayout(l)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("accepted %x, encodes to %x (%v)", in, out, err)
		}
	})
}

// FuzzFFLayoutreturn: lrf_body (ff_layoutreturn4, client bytes) never
// makes the decoder panic or report more errors than its bound.
func FuzzFFLayoutreturn(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		r, ok := decodeFFLayoutreturn(in)
		if ok && (len(r.errors) > maxDeviceErrors*maxDeviceErrors || r.stats > maxDeviceErrors) {
			t.Fatalf("%d errors, %d stats", len(r.errors), r.stats)
		}
	})
}

// FuzzLayoutOps sends a metadata server a COMPOUND of SEQUENCE, OPEN of a
// file with a layout, then one pNFS operation with fuzzed arguments:
// every answer is a well-formed reply, never a crash.
func FuzzLayoutOps(f *testing.F) {
	ops := []uint32{nfs4.OpLayoutget, nfs4.OpLayoutreturn, nfs4.OpLayoutcommit, nfs4.OpGetdeviceinfo,
		nfs4.OpGetdevicelist, nfs4.OpLayouterror, nfs4.OpLayoutstats}
	seed := func(op byte, args func(e *xdr.Encoder)) {
		e := xdr.NewEncoder(128)
		args(e)
		f.Add(op, e.Header())
	}
	seed(0, func(e *xdr.Encoder) { // LAYOUTGET with the current stateid
		e.Bool(false)
		e.Uint32(nfs4.LayoutFlexFiles)
		e.Uint32(nfs4.LayoutIOModeRW)
		e.Uint64(0)
		e.Uint64(nfs4.LengthToEOF)
		e.Uint64(0)
		nfs4.CurrentStateid.Encode(e)
		e.Uint32(4096)
	})
	seed(1, func(e *xdr.Encoder) {
		e.Bool(false)
		e.Uint32(nfs4.LayoutFlexFiles)
		e.Uint32(nfs4.LayoutIOModeAny)
		e.Uint32(nfs4.LayoutReturnFile)
		e.Uint64(0)
		e.Uint64(nfs4.LengthToEOF)
		nfs4.CurrentStateid.Encode(e)
		e.Opaque([]byte{0, 0, 0, 1, 0, 0, 0, 0})
	})
	seed(3, func(e *xdr.Encoder) {
		e.Fixed(make([]byte, nfs4.DeviceIDSize))
		e.Uint32(nfs4.LayoutFlexFiles)
		e.Uint32(0)
		e.Uint32(0)
	})
	f.Fuzz(func(t *testing.T, which byte, args []byte) {
		h := newMDSHarness(t, newFakeDS(1))
		h.session()
		op := ops[int(which)%len(ops)]
		h.xid++
		e := xdr.NewEncoder(256)
		callHeaderAs(e, h.xid, nfs4.ProgramNFS, 4, nfs4.ProcCompound, 0)
		e.String("tag")
		e.Uint32(2)
		e.Uint32(4)
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessBoth)
		e.Uint32(nfs4.ShareDenyNone)
		e.Uint64(h.clientID())
		e.String("o")
		e.Uint32(nfs4.OpenCreate)
		e.Uint32(nfs4.CreateUnchecked)
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
		e.Uint32(nfs4.ClaimNull)
		e.String("f")
		e.Uint32(op)
		e.Fixed(args[:len(args)&^3])
		d := xdr.NewDecoder(h.record(e.AppendTo(nil)))
		h.acceptedHeader(d, h.xid, nfs4.AcceptSuccess)
		d.Uint32()
		d.Opaque(1024)
		if n := d.Uint32(); n == 0 || n > 4 || d.Err() != nil {
			t.Fatalf("%d results (%v)", n, d.Err())
		}
	})
}
