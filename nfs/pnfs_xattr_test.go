package nfs

import (
	"bytes"
	"testing"
)

// TestLayoutXattrRoundTrip: a layout survives encoding; garbage does not
// decode.
func TestLayoutXattrRoundTrip(t *testing.T) {
	l := FileLayout{UID: 10001, GID: 10002, StripeUnit: 1 << 20, Mirrors: []DSFile{
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
		"other version": append([]byte{2}, b[1:]...),
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
	b, _ := encodeLayout(FileLayout{UID: 1, GID: 2, Mirrors: []DSFile{{Device: DeviceID{1}, FH: []byte("fh")}}})
	f.Add(b)
	f.Add([]byte{1})
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
