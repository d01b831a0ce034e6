package engine

import (
	"encoding/binary"
	"unsafe"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// assembler rebuilds RPC records (RFC 5531 record marking) from the chunks
// a stream socket delivers, however the chunks cut fragment headers and
// bodies. Each complete record is handed out in its own pooled buffer, so
// it can travel to a worker while the next one is assembled.
type assembler struct {
	max  int
	pool *bufPool
	// place, when set, is asked where a large record should start: given
	// its first bytes, the index of the record byte that should sit at a
	// page-aligned address, or -1. A WRITE's payload placed this way can go
	// to O_DIRECT without a bounce copy.
	place func(head []byte) int
	// direct, when set, is offered every record that arrives whole in one
	// chunk; if it handles the record there and then (and reports true),
	// the record is never copied out of the receive buffer.
	direct func(rec []byte) bool

	hdr  [4]byte
	nhdr int     // header bytes collected
	left int     // body bytes still due in the current fragment
	last bool    // the current fragment ends the record
	rec  *[]byte // the buffer so far, nil between records
	off  int     // where the record starts in rec (placement padding)
}

// record is a complete RPC record: bytes off.. of a pooled buffer.
type record struct {
	buf *[]byte
	off int
}

func (r record) bytes() []byte { return (*r.buf)[r.off:] }

// placeMin is the smallest record worth placing, and placeHead how much of
// its start the placement decision needs.
const (
	placeMin  = 64 << 10
	placeHead = 512
)

// feed consumes p, calling emit for every record completed; emit owns the
// buffer (return it with pool.put). It returns xdr.ErrRecordTooBig when a
// record would exceed max: the stream cannot be resynced after that.
func (a *assembler) feed(p []byte, emit func(record)) error {
	for len(p) > 0 {
		if n, ok := a.whole(p); ok && a.direct(p[4:4+n]) {
			p = p[4+n:]
			continue
		}
		if a.nhdr < 4 {
			k := copy(a.hdr[a.nhdr:], p)
			a.nhdr += k
			p = p[k:]
			if a.nhdr == 4 {
				if err := a.startFragment(p, emit); err != nil {
					return err
				}
			}
			continue
		}
		k := min(a.left, len(p))
		b := *a.rec
		*a.rec = append(b, p[:k]...)
		a.left -= k
		p = p[k:]
		if a.left == 0 {
			a.endFragment(emit)
		}
	}
	return nil
}

// whole reports whether p starts with a complete single-fragment record
// (at a record boundary) of n bytes, for direct.
func (a *assembler) whole(p []byte) (int, bool) {
	if a.direct == nil || a.nhdr != 0 || a.rec != nil || len(p) < 4 {
		return 0, false
	}
	last, n := xdr.ParseMark(binary.BigEndian.Uint32(p))
	return n, last && n <= a.max && n <= len(p)-4
}

// startFragment parses a complete header and makes room for the body;
// next is what the current chunk holds after the header.
func (a *assembler) startFragment(next []byte, emit func(record)) error {
	last, n := xdr.ParseMark(binary.BigEndian.Uint32(a.hdr[:]))
	have := 0
	if a.rec != nil {
		have = len(*a.rec)
	}
	if n > a.max-have {
		return xdr.ErrRecordTooBig
	}
	a.last, a.left = last, n
	if a.rec == nil && a.place != nil && n >= placeMin {
		a.reservePlaced(n, next)
	} else {
		a.reserve(have + n)
	}
	if n == 0 {
		a.endFragment(emit)
	}
	return nil
}

// reserve makes the record buffer hold at least n bytes without growing
// during appends. Single-fragment records (nearly all) get an exact-class
// buffer up front.
func (a *assembler) reserve(n int) {
	if a.rec == nil {
		a.rec = a.pool.get(n)
		*a.rec = (*a.rec)[:0]
		return
	}
	if cap(*a.rec) >= n {
		return
	}
	nb := a.pool.get(n)
	*nb = append((*nb)[:0], *a.rec...)
	a.pool.put(a.rec)
	a.rec = nb
}

// reservePlaced starts a large record so that the byte place names lands
// on a page boundary, when the chunk in hand shows enough of the record to
// tell; otherwise it starts it plainly.
func (a *assembler) reservePlaced(n int, next []byte) {
	k := -1
	if len(next) >= min(n, placeHead) {
		k = a.place(next[:min(len(next), n, placeHead)])
	}
	if k < 0 || k >= n {
		a.reserve(n)
		return
	}
	a.rec = a.pool.get(n + pageSize)
	base := uintptr(unsafe.Pointer(&(*a.rec)[0])) + uintptr(k)
	a.off = int((pageSize - base%pageSize) % pageSize)
	*a.rec = (*a.rec)[:a.off]
}

const pageSize = 4096

func (a *assembler) endFragment(emit func(record)) {
	a.nhdr = 0
	if !a.last {
		return
	}
	rec := record{a.rec, a.off}
	a.rec, a.off = nil, 0
	emit(rec)
}

// reset drops a partial record.
func (a *assembler) reset() {
	if a.rec != nil {
		a.pool.put(a.rec)
		a.rec = nil
	}
	a.nhdr, a.left, a.off = 0, 0, 0
}
