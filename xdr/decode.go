// Package xdr is the wire format of nfsd-uring: an allocation-free decoder
// over a byte slice and an encoder that builds a reply out of pieces (header
// bytes, borrowed data buffers, padding) with reserve/patch slots for values
// known only later.
package xdr

import (
	"encoding/binary"
	"errors"
)

// ErrShort means the input ended before the value did.
var ErrShort = errors.New("xdr: truncated input")

// ErrTooLong means a length field exceeded what the caller allows.
var ErrTooLong = errors.New("xdr: length over limit")

// ErrBadBool means a bool field held something other than 0 or 1.
var ErrBadBool = errors.New("xdr: bad bool")

// Decoder reads XDR values from a byte slice without copying or allocating.
// The first error sticks: later reads return zero values, so callers decode a
// whole structure and check Err once, like bufio.Scanner.
type Decoder struct {
	buf []byte
	off int
	err error
}

// NewDecoder returns a decoder over b. Slices it returns alias b.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// Reset points the decoder at b, clearing any error.
func (d *Decoder) Reset(b []byte) { d.buf, d.off, d.err = b, 0, nil }

// Err reports the first error met, if any.
func (d *Decoder) Err() error { return d.err }

// Offset is the number of bytes consumed so far.
func (d *Decoder) Offset() int { return d.off }

// Remaining is the number of bytes left.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

// Rest returns the unread bytes without consuming them.
func (d *Decoder) Rest() []byte { return d.buf[d.off:] }

// Fail records err unless an earlier error is already recorded.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.buf)-d.off {
		d.err = ErrShort
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

// Uint32 reads an unsigned int.
func (d *Decoder) Uint32() uint32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

// Int32 reads a signed int.
func (d *Decoder) Int32() int32 { return int32(d.Uint32()) }

// Uint64 reads an unsigned hyper.
func (d *Decoder) Uint64() uint64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Int64 reads a signed hyper.
func (d *Decoder) Int64() int64 { return int64(d.Uint64()) }

// Bool reads a bool; values other than 0 and 1 are an error.
func (d *Decoder) Bool() bool {
	v := d.Uint32()
	if v > 1 {
		d.Fail(ErrBadBool)
	}
	return v == 1
}

// Fixed reads n bytes of fixed-length opaque data plus its padding.
func (d *Decoder) Fixed(n int) []byte {
	b := d.take(n)
	d.take(Pad(n))
	if d.err != nil {
		return nil
	}
	return b
}

// Opaque reads variable-length opaque data of at most max bytes. The result
// aliases the input.
func (d *Decoder) Opaque(max int) []byte {
	n := d.Uint32()
	if d.err != nil {
		return nil
	}
	if uint64(n) > uint64(max) {
		d.Fail(ErrTooLong)
		return nil
	}
	return d.Fixed(int(n))
}

// String reads a string of at most max bytes, as a byte slice aliasing the
// input (no allocation; convert only where a string must outlive the input).
func (d *Decoder) String(max int) []byte { return d.Opaque(max) }

// Skip consumes n bytes.
func (d *Decoder) Skip(n int) { d.take(n) }

// ArrayLen reads an array length and checks it against max and against the
// bytes left, assuming each element takes at least minSize bytes. This stops
// a forged count from driving a long loop or a big allocation.
func (d *Decoder) ArrayLen(max, minSize int) int {
	n := d.Uint32()
	if d.err != nil {
		return 0
	}
	if uint64(n) > uint64(max) || (minSize > 0 && uint64(n) > uint64(d.Remaining()/minSize)) {
		d.Fail(ErrTooLong)
		return 0
	}
	return int(n)
}

// Pad returns the padding after n bytes of opaque data.
func Pad(n int) int { return (4 - n&3) & 3 }
