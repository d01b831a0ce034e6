package xdr

import "encoding/binary"

// Encoder builds a reply as a list of pieces: runs of header bytes it owns and
// data buffers it borrows. Nothing a caller passes to Borrow is copied; the
// engine sends Iovecs straight to the socket, so file data is never memcpy'd
// into a header buffer.
//
// Positions returned by Reserve are offsets into the header bytes; they stay
// valid however much the header grows, so a count or status written after the
// fact (READ_PLUS eof and segment count, COMPOUND status) is a Patch away.
type Encoder struct {
	hdr    []byte
	pieces []piece
	iov    [][]byte
	mark   int // start of the header run not yet closed into a piece
}

// piece is either hdr[start:end] or a borrowed buffer.
type piece struct {
	start, end int
	data       []byte
	pad        int
	borrowed   bool
}

// zeros backs XDR padding for borrowed buffers.
var zeros [8]byte

// NewEncoder returns an encoder with room for size header bytes.
func NewEncoder(size int) *Encoder {
	return &Encoder{hdr: make([]byte, 0, size), pieces: make([]piece, 0, 8)}
}

// Reset empties the encoder, keeping its memory.
func (e *Encoder) Reset() {
	e.hdr = e.hdr[:0]
	e.pieces = e.pieces[:0]
	e.iov = e.iov[:0]
	e.mark = 0
}

// Len is the number of bytes encoded so far, borrowed data and padding
// included.
func (e *Encoder) Len() int {
	n := len(e.hdr) - e.mark
	for _, p := range e.pieces {
		if p.borrowed {
			n += len(p.data) + p.pad
		} else {
			n += p.end - p.start
		}
	}
	return n
}

// Pos is the offset of the next header byte, for Patch.
func (e *Encoder) Pos() int { return len(e.hdr) }

// Header returns all header bytes written so far (borrowed data excluded).
func (e *Encoder) Header() []byte { return e.hdr }

// Uint32 appends an unsigned int.
func (e *Encoder) Uint32(v uint32) { e.hdr = binary.BigEndian.AppendUint32(e.hdr, v) }

// Int32 appends a signed int.
func (e *Encoder) Int32(v int32) { e.Uint32(uint32(v)) }

// Uint64 appends an unsigned hyper.
func (e *Encoder) Uint64(v uint64) { e.hdr = binary.BigEndian.AppendUint64(e.hdr, v) }

// Int64 appends a signed hyper.
func (e *Encoder) Int64(v int64) { e.Uint64(uint64(v)) }

// Bool appends a bool.
func (e *Encoder) Bool(v bool) {
	if v {
		e.Uint32(1)
	} else {
		e.Uint32(0)
	}
}

// Fixed appends fixed-length opaque data, copied, plus padding.
func (e *Encoder) Fixed(b []byte) {
	e.hdr = append(e.hdr, b...)
	e.hdr = append(e.hdr, zeros[:Pad(len(b))]...)
}

// Opaque appends variable-length opaque data, copied.
func (e *Encoder) Opaque(b []byte) {
	e.Uint32(uint32(len(b)))
	e.Fixed(b)
}

// String appends a string, copied.
func (e *Encoder) String(s string) {
	e.Uint32(uint32(len(s)))
	e.hdr = append(e.hdr, s...)
	e.hdr = append(e.hdr, zeros[:Pad(len(s))]...)
}

// Reserve appends a zero unsigned int and returns its position for Patch.
func (e *Encoder) Reserve() int {
	p := len(e.hdr)
	e.Uint32(0)
	return p
}

// Patch overwrites the unsigned int at pos (from Reserve or Pos).
func (e *Encoder) Patch(pos int, v uint32) { binary.BigEndian.PutUint32(e.hdr[pos:], v) }

// Patch64 overwrites the hyper at pos.
func (e *Encoder) Patch64(pos int, v uint64) { binary.BigEndian.PutUint64(e.hdr[pos:], v) }

// Truncate drops header bytes after pos; it must not cut into a closed piece.
// Used to discard a partly encoded result when an operation fails late.
func (e *Encoder) Truncate(pos int) {
	if pos < e.mark {
		panic("xdr: truncate into a closed piece")
	}
	e.hdr = e.hdr[:pos]
}

// Borrow appends b without copying, followed by its XDR padding. The caller
// keeps b alive and unchanged until the reply is sent. It returns the index
// of the piece, which SetBorrowed can later replace (for data that arrives
// after encoding, e.g. from an asynchronous read).
func (e *Encoder) Borrow(b []byte) int {
	e.closeRun()
	e.pieces = append(e.pieces, piece{data: b, pad: Pad(len(b)), borrowed: true})
	return len(e.pieces) - 1
}

// SetBorrowed replaces the buffer of piece i (from Borrow).
func (e *Encoder) SetBorrowed(i int, b []byte) {
	e.pieces[i].data = b
	e.pieces[i].pad = Pad(len(b))
}

func (e *Encoder) closeRun() {
	if len(e.hdr) > e.mark {
		e.pieces = append(e.pieces, piece{start: e.mark, end: len(e.hdr)})
		e.mark = len(e.hdr)
	}
}

// Iovecs returns the reply as a list of buffers to send in order. The slices
// alias the encoder and the borrowed buffers; they are valid until the next
// write or Reset.
func (e *Encoder) Iovecs() [][]byte {
	e.closeRun()
	e.iov = e.iov[:0]
	for _, p := range e.pieces {
		if !p.borrowed {
			e.iov = append(e.iov, e.hdr[p.start:p.end])
			continue
		}
		if len(p.data) > 0 {
			e.iov = append(e.iov, p.data)
		}
		if p.pad > 0 {
			e.iov = append(e.iov, zeros[:p.pad])
		}
	}
	return e.iov
}

// HasBorrowed reports whether any piece is borrowed data.
func (e *Encoder) HasBorrowed() bool {
	for _, p := range e.pieces {
		if p.borrowed {
			return true
		}
	}
	return false
}

// AppendTo copies the whole reply onto dst (for the reply cache and tests).
func (e *Encoder) AppendTo(dst []byte) []byte {
	for _, b := range e.Iovecs() {
		dst = append(dst, b...)
	}
	return dst
}
