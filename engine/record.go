package engine

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// assembler rebuilds RPC records (RFC 5531 record marking) from the chunks
// a stream socket delivers, however the chunks cut fragment headers and
// bodies. Each complete record is handed out in its own pooled buffer, so
// it can travel to a worker while the next one is assembled.
//
// Memory: a record's buffer grows with the bytes that actually arrived
// (see room), never to the size a header merely announces, and every byte
// of it is charged to hold, the server-wide partialBudget, until the
// record is complete.
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
	// hold, when set, is charged for the partial record's buffer.
	hold *partialHold

	hdr     [4]byte
	nhdr    int     // header bytes collected
	left    int     // body bytes still due in the current fragment
	last    bool    // the current fragment ends the record
	rec     *[]byte // the buffer so far, nil between records (and before the first body byte)
	off     int     // where the record starts in rec (placement padding)
	due     int     // record bytes known so far: received plus announced by the current fragment
	placeAt int     // record byte to put on a page boundary, or -1
	records uint64  // records completed, for the partial-record timeout
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

// growMin is the least a record buffer starts at (unless the record is
// smaller), and growFactor how much it grows by when more bytes arrive.
// Growing by 4 rather than 2 costs fewer copies (a 1 MiB WRITE arriving in
// 64 KiB receives is copied at 64 KiB and 256 KiB: a third more copying
// than the receive itself, against a whole extra copy for doubling) while a
// client still holds at most about 4 times what it has sent.
const (
	growMin    = 16 << 10
	growFactor = 4
)

// errPartialBudget closes a connection whose partial record cannot grow:
// the server-wide partial-record budget is spent and its record is the
// oldest.
var errPartialBudget = errors.New("partial-record memory limit reached")

// feed consumes p, calling emit for every record completed; emit owns the
// buffer (return it with pool.put). It returns xdr.ErrRecordTooBig when a
// record would exceed max: the stream cannot be resynced after that.
func (a *assembler) feed(p []byte, emit func(record)) error {
	for len(p) > 0 {
		if n, ok := a.whole(p); ok && a.direct(p[4:4+n]) {
			p = p[4+n:]
			a.records++
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
		if err := a.room(k); err != nil {
			return err
		}
		*a.rec = append(*a.rec, p[:k]...)
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

// partial reports whether a record has begun and not ended.
func (a *assembler) partial() bool { return a.nhdr > 0 || a.rec != nil }

// startFragment parses a complete header; next is what the current chunk
// holds after it. No memory is taken here: room does that as the body
// arrives.
func (a *assembler) startFragment(next []byte, emit func(record)) error {
	last, n := xdr.ParseMark(binary.BigEndian.Uint32(a.hdr[:]))
	have := a.have()
	if n > a.max-have {
		return xdr.ErrRecordTooBig
	}
	if have == 0 && a.rec == nil {
		a.placeAt = -1
		if a.place != nil && n >= placeMin && len(next) >= min(n, placeHead) {
			a.placeAt = a.place(next[:min(len(next), n, placeHead)])
			if a.placeAt >= n {
				a.placeAt = -1
			}
		}
	}
	a.last, a.left, a.due = last, n, have+n
	if n == 0 {
		a.endFragment(emit)
	}
	return nil
}

// have is how many record bytes have arrived.
func (a *assembler) have() int {
	if a.rec == nil {
		return 0
	}
	return len(*a.rec) - a.off
}

// room makes the record buffer able to take k more bytes without growing
// during the append. The buffer is sized by what has arrived (k bytes in
// hand, growFactor times what came before, at least growMin) and never
// past what is due, so a header announcing 1 MiB followed by 4 bytes
// costs growMin, not 1 MiB.
func (a *assembler) room(k int) error {
	if a.rec != nil && cap(*a.rec)-len(*a.rec) >= k {
		return nil
	}
	have := a.have()
	size := min(a.due, max(have+k, growFactor*have, growMin))
	pad := 0
	if a.placeAt >= 0 {
		pad = pageSize
	}
	var old int
	if a.rec != nil {
		old = cap(*a.rec)
	}
	whole := have == 0 && a.last && k == a.left // all of it in hand
	if a.hold != nil && !whole && !a.hold.grow(1<<class(size+pad)-old) {
		return errPartialBudget
	}
	nb := a.pool.get(size + pad)
	off := 0
	if a.placeAt >= 0 {
		base := uintptr(unsafe.Pointer(&(*nb)[:1][0])) + uintptr(a.placeAt)
		off = int((pageSize - base%pageSize) % pageSize)
	}
	*nb = (*nb)[:off]
	if a.rec != nil {
		*nb = append(*nb, (*a.rec)[a.off:]...)
		a.pool.put(a.rec)
	}
	a.rec, a.off = nb, off
	return nil
}

// body returns where the next body bytes of the current fragment can be
// received straight into the record buffer (growing it as room does), or
// nil when the assembler is between fragments or the fragment's rest is
// small; fill then says how many bytes were written there. The portable
// engine uses this to read large records with no staging copy.
func (a *assembler) body() ([]byte, error) {
	if a.nhdr < 4 || a.left < bodyMin {
		return nil, nil
	}
	if err := a.room(min(a.left, growMin)); err != nil {
		return nil, err
	}
	b := *a.rec
	return b[len(b):min(cap(b), len(b)+a.left)], nil
}

// bodyMin is the least fragment rest body reads straight into the record.
const bodyMin = 4 << 10

// fill takes n bytes received into the slice body returned.
func (a *assembler) fill(n int, emit func(record)) {
	*a.rec = (*a.rec)[:len(*a.rec)+n]
	a.left -= n
	if a.left == 0 {
		a.endFragment(emit)
	}
}

const pageSize = 4096

func (a *assembler) endFragment(emit func(record)) {
	a.nhdr = 0
	if !a.last {
		return
	}
	if a.rec == nil { // an empty record
		a.rec = a.pool.get(0)
		*a.rec = (*a.rec)[:0]
	}
	rec := record{a.rec, a.off}
	a.rec, a.off, a.due = nil, 0, 0
	a.records++
	if a.hold != nil {
		a.hold.done()
	}
	emit(rec)
}

// reset drops a partial record. Its buffer goes to the collector, not
// back to the pool: records dropped half way are what an attack leaves
// behind, and a pool refilled by them would keep their memory live past
// the partial-record budget.
func (a *assembler) reset() {
	if a.rec != nil && cap(*a.rec) <= growMin {
		a.pool.put(a.rec)
	}
	a.rec = nil
	if a.hold != nil {
		a.hold.done()
	}
	a.nhdr, a.left, a.off, a.due = 0, 0, 0, 0
}
