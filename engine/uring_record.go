package engine

import (
	"encoding/binary"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// assembler rebuilds RPC records (RFC 5531 record marking) from the chunks
// a stream socket delivers, however the chunks cut fragment headers and
// bodies. Each complete record is handed out in its own pooled buffer, so
// it can travel to a worker while the next one is assembled.
type assembler struct {
	max  int
	pool *bufPool

	hdr  [4]byte
	nhdr int     // header bytes collected
	left int     // body bytes still due in the current fragment
	last bool    // the current fragment ends the record
	rec  *[]byte // the record so far, nil between records
}

// feed consumes p, calling emit for every record completed; emit owns the
// buffer (return it with pool.put). It returns xdr.ErrRecordTooBig when a
// record would exceed max: the stream cannot be resynced after that.
func (a *assembler) feed(p []byte, emit func(*[]byte)) error {
	for len(p) > 0 {
		if a.nhdr < 4 {
			k := copy(a.hdr[a.nhdr:], p)
			a.nhdr += k
			p = p[k:]
			if a.nhdr == 4 {
				if err := a.startFragment(emit); err != nil {
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

// startFragment parses a complete header and makes room for the body.
func (a *assembler) startFragment(emit func(*[]byte)) error {
	last, n := xdr.ParseMark(binary.BigEndian.Uint32(a.hdr[:]))
	have := 0
	if a.rec != nil {
		have = len(*a.rec)
	}
	if n > a.max-have {
		return xdr.ErrRecordTooBig
	}
	a.last, a.left = last, n
	a.reserve(have + n)
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

func (a *assembler) endFragment(emit func(*[]byte)) {
	a.nhdr = 0
	if !a.last {
		return
	}
	rec := a.rec
	a.rec = nil
	emit(rec)
}

// reset drops a partial record.
func (a *assembler) reset() {
	if a.rec != nil {
		a.pool.put(a.rec)
		a.rec = nil
	}
	a.nhdr, a.left = 0, 0
}
