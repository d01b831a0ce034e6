package xdr

import (
	"bytes"
	"errors"
	"testing"
)

func TestDecoderPrimitives(t *testing.T) {
	in := []byte{
		0xde, 0xad, 0xbe, 0xef, // Uint32
		0xff, 0xff, 0xff, 0xfe, // Int32 -2
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // Uint64
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd, // Int64 -3
		0, 0, 0, 1, // true
		0, 0, 0, 0, // false
		'a', 'b', 'c', 0, // Fixed(3)
		0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, // Opaque
		0, 0, 0, 0, // empty String
		0, 0, 0, 4, 'w', 'x', 'y', 'z', // String, no pad
		0, 0, 0, 2, // ArrayLen
		9, 9, 9, 9, 9, 9, 9, 9, // Skip 8
	}
	d := NewDecoder(in)
	if v := d.Uint32(); v != 0xdeadbeef {
		t.Errorf("Uint32 %#x", v)
	}
	if v := d.Int32(); v != -2 {
		t.Errorf("Int32 %d", v)
	}
	if v := d.Uint64(); v != 0x0102030405060708 {
		t.Errorf("Uint64 %#x", v)
	}
	if v := d.Int64(); v != -3 {
		t.Errorf("Int64 %d", v)
	}
	if !d.Bool() || d.Bool() {
		t.Error("Bool")
	}
	if v := d.Fixed(3); string(v) != "abc" {
		t.Errorf("Fixed %q", v)
	}
	if v := d.Opaque(5); string(v) != "hello" {
		t.Errorf("Opaque %q", v)
	}
	if v := d.String(10); len(v) != 0 {
		t.Errorf("empty String %q", v)
	}
	if v := d.String(4); string(v) != "wxyz" {
		t.Errorf("String %q", v)
	}
	if v := d.ArrayLen(2, 4); v != 2 {
		t.Errorf("ArrayLen %d", v)
	}
	if d.Remaining() != 8 || !bytes.Equal(d.Rest(), in[len(in)-8:]) {
		t.Errorf("Remaining %d", d.Remaining())
	}
	d.Skip(8)
	if d.Err() != nil || d.Remaining() != 0 || d.Offset() != len(in) {
		t.Fatalf("end: err %v rem %d off %d", d.Err(), d.Remaining(), d.Offset())
	}
	// Reading past the end sticks ErrShort and yields zero values.
	if d.Uint32() != 0 || !errors.Is(d.Err(), ErrShort) {
		t.Fatalf("past end: %v", d.Err())
	}
	d.Reset(in[:4])
	if d.Err() != nil || d.Uint32() != 0xdeadbeef {
		t.Fatal("Reset")
	}
}

func TestDecoderAliases(t *testing.T) {
	in := []byte{0, 0, 0, 2, 'h', 'i', 0, 0}
	b := NewDecoder(in).Opaque(10)
	in[4] = 'H'
	if string(b) != "Hi" {
		t.Fatalf("Opaque should alias input, got %q", b)
	}
}

// decodeOp is one decoder call used by the table tests and the fuzzer.
type decodeOp func(d *Decoder)

var decodeOps = []decodeOp{
	func(d *Decoder) { d.Uint32() },
	func(d *Decoder) { d.Int32() },
	func(d *Decoder) { d.Uint64() },
	func(d *Decoder) { d.Int64() },
	func(d *Decoder) { d.Bool() },
	func(d *Decoder) { d.Fixed(3) },
	func(d *Decoder) { d.Fixed(8) },
	func(d *Decoder) { d.Opaque(16) },
	func(d *Decoder) { d.String(255) },
	func(d *Decoder) { d.ArrayLen(4, 4) },
	func(d *Decoder) { d.Skip(5) },
}

func TestDecoderTruncatedEverywhere(t *testing.T) {
	// One of each value, then truncate at every byte.
	full := []byte{
		0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 2,
		0, 0, 0, 1,
		'a', 'b', 'c', 0,
		0, 0, 0, 3, 'x', 'y', 'z', 0,
		0, 0, 0, 1, 0, 0, 0, 7,
	}
	read := func(d *Decoder) {
		d.Uint32()
		d.Uint64()
		d.Bool()
		d.Fixed(3)
		d.Opaque(8)
		n := d.ArrayLen(4, 4)
		for range n {
			d.Uint32()
		}
	}
	d := NewDecoder(full)
	read(d)
	if d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("full: %v, %d left", d.Err(), d.Remaining())
	}
	for i := range len(full) {
		d := NewDecoder(full[:i])
		read(d)
		// ArrayLen reports a count the remaining bytes cannot hold as
		// ErrTooLong before any element read runs short.
		if !errors.Is(d.Err(), ErrShort) && !errors.Is(d.Err(), ErrTooLong) {
			t.Errorf("truncated at %d: err %v", i, d.Err())
		}
	}
}

func TestDecoderEachPrimitiveShort(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		op   decodeOp
	}{
		{"uint32 3 bytes", []byte{0, 0, 0}, decodeOps[0]},
		{"int32 empty", nil, decodeOps[1]},
		{"uint64 7 bytes", make([]byte, 7), decodeOps[2]},
		{"int64 4 bytes", make([]byte, 4), decodeOps[3]},
		{"bool 2 bytes", []byte{0, 0}, decodeOps[4]},
		{"fixed(3) no pad", []byte{'a', 'b', 'c'}, decodeOps[5]},
		{"fixed(8) 7 bytes", make([]byte, 7), decodeOps[6]},
		{"opaque body short", []byte{0, 0, 0, 4, 'a', 'b'}, decodeOps[7]},
		{"opaque pad missing", []byte{0, 0, 0, 1, 'a'}, decodeOps[7]},
		{"string len short", []byte{0, 0}, decodeOps[8]},
		{"arraylen short", []byte{0}, decodeOps[9]},
		{"skip short", make([]byte, 4), decodeOps[10]},
	}
	for _, tc := range tests {
		d := NewDecoder(tc.in)
		tc.op(d)
		if !errors.Is(d.Err(), ErrShort) {
			t.Errorf("%s: err %v", tc.name, d.Err())
		}
	}
}

func TestDecoderLimits(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		op   func(d *Decoder) int
		err  error
		want int
	}{
		{"opaque at max", []byte{0, 0, 0, 2, 'a', 'b', 0, 0}, func(d *Decoder) int { return len(d.Opaque(2)) }, nil, 2},
		{"opaque over max", []byte{0, 0, 0, 3, 'a', 'b', 'c', 0}, func(d *Decoder) int { return len(d.Opaque(2)) }, ErrTooLong, 0},
		{"opaque huge length", []byte{0xff, 0xff, 0xff, 0xff}, func(d *Decoder) int { return len(d.Opaque(1 << 30)) }, ErrTooLong, 0},
		{"opaque 2^31 within max", []byte{0x80, 0, 0, 0}, func(d *Decoder) int { return len(d.Opaque(1 << 40)) }, ErrShort, 0},
		{"string over max", []byte{0, 0, 1, 0}, func(d *Decoder) int { return len(d.String(255)) }, ErrTooLong, 0},
		{"bool 2", []byte{0, 0, 0, 2}, func(d *Decoder) int { d.Bool(); return 0 }, ErrBadBool, 0},
		{"bool max", []byte{0xff, 0xff, 0xff, 0xff}, func(d *Decoder) int { d.Bool(); return 0 }, ErrBadBool, 0},
		{"array at max", []byte{0, 0, 0, 1, 0, 0, 0, 0}, func(d *Decoder) int { return d.ArrayLen(1, 4) }, nil, 1},
		{"array over max", []byte{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0}, func(d *Decoder) int { return d.ArrayLen(1, 4) }, ErrTooLong, 0},
		{"array over bytes", []byte{0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0}, func(d *Decoder) int { return d.ArrayLen(10, 4) }, ErrTooLong, 0},
		{"array huge", []byte{0xff, 0xff, 0xff, 0xff}, func(d *Decoder) int { return d.ArrayLen(1<<40, 4) }, ErrTooLong, 0},
		{"array minsize 0", []byte{0, 0, 0, 9}, func(d *Decoder) int { return d.ArrayLen(10, 0) }, nil, 9},
		{"fixed negative", []byte{0, 0, 0, 0}, func(d *Decoder) int { return len(d.Fixed(-1)) }, ErrShort, 0},
		{"skip negative", []byte{0, 0, 0, 0}, func(d *Decoder) int { d.Skip(-4); return d.Offset() }, ErrShort, 0},
	}
	for _, tc := range tests {
		d := NewDecoder(tc.in)
		got := tc.op(d)
		if !errors.Is(d.Err(), tc.err) || (d.Err() == nil) != (tc.err == nil) || got != tc.want {
			t.Errorf("%s: got %d err %v, want %d err %v", tc.name, got, d.Err(), tc.want, tc.err)
		}
	}
}

func TestDecoderStickyError(t *testing.T) {
	d := NewDecoder([]byte{0, 0, 0, 5, 0, 0, 0, 1})
	d.Bool() // bad bool 5
	if !errors.Is(d.Err(), ErrBadBool) {
		t.Fatal(d.Err())
	}
	off := d.Offset()
	if d.Uint32() != 0 || d.Uint64() != 0 || d.Opaque(4) != nil || d.Fixed(1) != nil || d.ArrayLen(9, 0) != 0 {
		t.Error("reads after error returned values")
	}
	if d.Offset() != off {
		t.Error("reads after error consumed input")
	}
	d.Fail(ErrShort)
	if !errors.Is(d.Err(), ErrBadBool) {
		t.Error("Fail replaced the first error")
	}
}

// TestArrayLenMinSizeOverflow: a count the input cannot possibly hold is
// refused even when count*minSize would overflow.
func TestArrayLenMinSizeOverflow(t *testing.T) {
	d := NewDecoder([]byte{0x40, 0, 0, 0})
	n := d.ArrayLen(1<<40, 1<<40)
	if n != 0 || !errors.Is(d.Err(), ErrTooLong) {
		t.Fatalf("err %v", d.Err())
	}
}

func TestPad(t *testing.T) {
	for n, want := range []int{0, 3, 2, 1, 0, 3, 2, 1, 0} {
		if Pad(n) != want {
			t.Errorf("Pad(%d) = %d", n, Pad(n))
		}
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6}, []byte{0, 0, 0, 2, 'h', 'i', 0, 0, 0, 0, 0, 1})
	f.Add([]byte{9, 9, 7, 5}, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1})
	f.Add([]byte{}, []byte{})
	f.Add([]byte{8, 8, 8}, []byte{0, 0, 0, 3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, ops, in []byte) {
		d := NewDecoder(in)
		for _, o := range ops {
			before := d.Offset()
			decodeOps[int(o)%len(decodeOps)](d)
			if d.Offset() < before || d.Offset() > len(in) || d.Remaining() != len(in)-d.Offset() {
				t.Fatalf("offset %d -> %d of %d", before, d.Offset(), len(in))
			}
		}
		if d.Err() == nil && d.Offset()%4 != 0 && !opsUnaligned(ops) {
			t.Fatalf("aligned ops left offset %d", d.Offset())
		}
	})
}

// opsUnaligned reports whether ops include Skip(5), the only op that may
// leave the offset off a 4-byte boundary.
func opsUnaligned(ops []byte) bool {
	for _, o := range ops {
		if int(o)%len(decodeOps) == 10 {
			return true
		}
	}
	return false
}
