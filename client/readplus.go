package client

import (
	"errors"
	"fmt"
	"math"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Segment is one READ_PLUS content segment as the server sent it.
type Segment struct {
	Type   uint32 // nfs4.ContentData or nfs4.ContentHole
	Offset uint64
	Length uint64
}

// ErrNoProgress means a READ_PLUS reply delivered no bytes yet did not
// claim end of file (NFS-Ganesha 4.3 sends a single empty DATA segment).
// Retrying the same request would loop forever.
var ErrNoProgress = errors.New("READ_PLUS: reply makes no progress and is not eof")

// maxSegments bounds the segment count of one reply.
const maxSegments = 1 << 16

// DecodeReadPlusRes reads read_plus_res4 for a request of count bytes at
// off. DATA is copied and HOLEs zero-filled into dst, the byte at off going
// to dst[0], as the Linux client places them; n is how many bytes of dst
// the segments cover. Validation is strict: segments must be in order,
// contiguous from off, DATA inside the requested range (a HOLE may stick
// out at either end and is clipped, as Linux does, which clears eof when it
// sticks out past the end), and a reply covering nothing must be eof.
func DecodeReadPlusRes(d *xdr.Decoder, off uint64, count uint32, dst []byte) (n int, eof bool, segs []Segment, err error) {
	return decodeReadPlusRes(d, off, count, dst, true)
}

// decodeReadPlusRes is DecodeReadPlusRes; fill false leaves dst as it was
// under HOLE segments (Options.NoHoleFill).
func decodeReadPlusRes(d *xdr.Decoder, off uint64, count uint32, dst []byte, fill bool) (n int, eof bool, segs []Segment, err error) {
	if len(dst) < int(count) {
		return 0, false, nil, fmt.Errorf("READ_PLUS: buffer of %d bytes for %d requested", len(dst), count)
	}
	if off > math.MaxUint64-uint64(count) {
		return 0, false, nil, fmt.Errorf("READ_PLUS: range %d+%d overflows", off, count)
	}
	eof = d.Bool()
	nsegs := d.ArrayLen(maxSegments, 16)
	if err := d.Err(); err != nil {
		return 0, false, nil, fmt.Errorf("READ_PLUS result: %w", err)
	}
	p := placer{off: off, end: off + uint64(count), pos: off, dst: dst, eof: eof, noFill: !fill}
	segs = make([]Segment, 0, nsegs)
	for i := range nsegs {
		s, data := decodeSegment(d, count)
		if err := d.Err(); err != nil {
			return 0, false, segs, fmt.Errorf("READ_PLUS segment %d: %w", i, err)
		}
		segs = append(segs, s)
		if err := p.place(i, s, data); err != nil {
			return 0, false, segs, err
		}
	}
	n = int(p.pos - off)
	if n == 0 && !p.eof {
		return 0, false, segs, ErrNoProgress
	}
	return n, p.eof, segs, nil
}

// decodeSegment reads one read_plus_content; data aliases the input.
func decodeSegment(d *xdr.Decoder, count uint32) (Segment, []byte) {
	s := Segment{Type: d.Uint32(), Offset: d.Uint64()}
	switch s.Type {
	case nfs4.ContentData:
		data := d.Opaque(int(count))
		s.Length = uint64(len(data))
		return s, data
	case nfs4.ContentHole:
		s.Length = d.Uint64()
	default:
		if d.Err() == nil {
			d.Fail(fmt.Errorf("unknown content type %d", s.Type))
		}
	}
	return s, nil
}

// placer lays segments into dst, checking each against the request.
type placer struct {
	off, end, pos uint64
	dst           []byte
	eof           bool
	noFill        bool // leave dst alone under HOLEs
}

func (p *placer) place(i int, s Segment, data []byte) error {
	if s.Length > math.MaxUint64-s.Offset {
		return fmt.Errorf("READ_PLUS segment %d: %d+%d overflows", i, s.Offset, s.Length)
	}
	if s.Length == 0 && !p.eof {
		return fmt.Errorf("READ_PLUS segment %d: empty segment at %d in a non-eof reply: %w", i, s.Offset, ErrNoProgress)
	}
	start, stop := s.Offset, s.Offset+s.Length
	if s.Type == nfs4.ContentHole {
		if i == 0 && start < p.pos && stop > p.pos {
			start = p.pos
		}
		if stop > p.end && start <= p.end {
			stop = p.end
			p.eof = false
		}
	}
	switch {
	case start < p.pos:
		return fmt.Errorf("READ_PLUS segment %d at %d overlaps or precedes offset %d", i, s.Offset, p.pos)
	case start > p.pos:
		return fmt.Errorf("READ_PLUS segment %d at %d leaves a gap after %d", i, s.Offset, p.pos)
	case stop > p.end:
		return fmt.Errorf("READ_PLUS segment %d (%d+%d) runs past the requested end %d", i, s.Offset, s.Length, p.end)
	}
	out := p.dst[start-p.off : stop-p.off]
	if s.Type == nfs4.ContentData {
		copy(out, data)
	} else if !p.noFill {
		clear(out)
	}
	p.pos = stop
	return nil
}
