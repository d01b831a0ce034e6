package xdr

import (
	"encoding/binary"
	"errors"
	"io"
	"unsafe"
)

// RPC record marking (RFC 5531 section 11): each fragment starts with a
// 4-byte header whose top bit marks the last fragment and whose low 31 bits
// give the fragment length.

const lastFragment = 1 << 31

// ErrRecordTooBig means a record exceeded the reader's limit.
var ErrRecordTooBig = errors.New("xdr: RPC record over size limit")

// RecordMark returns the header for a single-fragment record of n bytes.
func RecordMark(n int) uint32 { return lastFragment | uint32(n) }

// ParseMark splits a fragment header.
func ParseMark(h uint32) (last bool, n int) { return h&lastFragment != 0, int(h &^ lastFragment) }

// RecordReader reads whole RPC records from a byte stream, joining
// fragments. It reuses its buffer: a record is valid until the next call.
type RecordReader struct {
	r   io.Reader
	max int
	buf []byte
	hdr [4]byte

	// Place, when set and the reader can Peek (a *bufio.Reader), is asked
	// where a record of PlaceMin bytes or more should start in memory:
	// given its first bytes, the index of the record byte to put on a
	// page boundary, or -1. (The engine uses it to lay WRITE payloads out
	// for O_DIRECT without a bounce copy.)
	Place    func(head []byte) int
	PlaceMin int
}

// peeker is what Place needs of the underlying reader.
type peeker interface {
	Peek(n int) ([]byte, error)
}

const placePage = 4096

// NewRecordReader reads records of at most max bytes from r.
func NewRecordReader(r io.Reader, max int) *RecordReader {
	return &RecordReader{r: r, max: max}
}

// Next returns the next record. A record over the limit returns
// ErrRecordTooBig without reading its body: the stream cannot be resynced,
// so the caller closes the connection.
func (rr *RecordReader) Next() ([]byte, error) {
	rr.buf = rr.buf[:0]
	for frag := 0; ; frag++ {
		if _, err := io.ReadFull(rr.r, rr.hdr[:]); err != nil {
			if err == io.EOF && frag > 0 {
				// The stream ended between fragments of one record.
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		last, n := ParseMark(binary.BigEndian.Uint32(rr.hdr[:]))
		if n > rr.max-len(rr.buf) {
			return nil, ErrRecordTooBig
		}
		if frag == 0 {
			rr.place(n)
		}
		start := len(rr.buf)
		rr.buf = grow(rr.buf, n)
		if _, err := io.ReadFull(rr.r, rr.buf[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if last {
			return rr.buf, nil
		}
	}
}

// place gives a large record fresh memory laid out as Place asks.
func (rr *RecordReader) place(n int) {
	p, ok := rr.r.(peeker)
	if rr.Place == nil || !ok || n < rr.PlaceMin {
		return
	}
	head, _ := p.Peek(min(n, 512))
	k := rr.Place(head)
	if k < 0 || k >= n {
		return
	}
	b := make([]byte, n+placePage)
	addr := uintptr(unsafe.Pointer(&b[0])) + uintptr(k)
	pad := int((placePage - addr%placePage) % placePage)
	rr.buf = b[pad:pad]
}

// Detach hands the current record's memory to the caller; the next record
// gets fresh memory. Used when a record must outlive the next read, e.g.
// when requests on one connection are processed concurrently.
func (rr *RecordReader) Detach() { rr.buf = nil }

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, len(b)+n+len(b)/4)
	copy(nb, b)
	return nb
}
