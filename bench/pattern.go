// Package bench is nfsbench's engine: workloads (readmatrix, randread,
// ior-easy/hard, mdtest-easy/hard, io500) run over the in-repo NFSv4.2
// client against one server, or two side by side, with every byte read
// checked against the pattern it was written with.
package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// blockSize is the granularity of the data pattern and of layouts.
const blockSize = 4096

// base holds the pattern bytes; never zero, so data is not mistaken for a
// hole.
var base = func() []byte {
	b := make([]byte, 251*16+blockSize)
	rng := rand.New(rand.NewPCG(42, 4242))
	for i := range b {
		b[i] = byte(rng.Uint32()) | 1
	}
	return b
}()

// Layout says which 4 KiB blocks of a file hold data and which are holes,
// and seeds the data so that files differ.
type Layout struct {
	Name      string
	Seg       int64 // segment length of a mixed layout; 0: all data or all hole
	DataFirst bool  // a mixed layout starts with data; with Seg 0: all data
	Seed      uint64
}

// Layouts are the files of the upstream READ_PLUS evaluation.
func Layouts() []Layout {
	out := []Layout{{Name: "data", DataFirst: true}, {Name: "hole"}}
	for _, kb := range []int64{4, 8, 16, 32} {
		for _, d := range []bool{true, false} {
			name := fmt.Sprintf("mixed-%d%s", kb, map[bool]string{true: "d", false: "h"}[d])
			out = append(out, Layout{Name: name, Seg: kb << 10, DataFirst: d})
		}
	}
	for i := range out {
		out[i].Seed = uint64(i + 1)
	}
	return out
}

// LayoutByName finds one of Layouts.
func LayoutByName(name string) (Layout, error) {
	for _, l := range Layouts() {
		if l.Name == name {
			return l, nil
		}
	}
	return Layout{}, fmt.Errorf("unknown file layout %q (want data, hole or mixed-{4,8,16,32}{d,h})", name)
}

// IsData reports whether the byte at off lies in a data segment.
func (l Layout) IsData(off int64) bool {
	if l.Seg == 0 {
		return l.DataFirst
	}
	return (off/l.Seg)%2 == 0 == l.DataFirst
}

// DataSegments calls f for each data run within [off, off+n).
func (l Layout) DataSegments(off, n int64, f func(off, n int64) error) error {
	end := off + n
	for off < end {
		next := end
		if l.Seg > 0 {
			next = min(end, (off/l.Seg+1)*l.Seg)
		}
		if l.IsData(off) {
			if err := f(off, next-off); err != nil {
				return err
			}
		}
		off = next
	}
	return nil
}

// Fill writes the expected content of [off, off+len(dst)) into dst.
func (l Layout) Fill(dst []byte, off int64) {
	for len(dst) > 0 {
		in := off % blockSize
		n := min(int64(len(dst)), blockSize-in)
		if l.IsData(off) {
			l.block(dst[:n], off/blockSize, in)
		} else {
			clear(dst[:n])
		}
		dst = dst[n:]
		off += n
	}
}

// block writes bytes [in, in+len(dst)) of data block b: an 8-byte header
// naming the block and the file, then pattern bytes.
func (l Layout) block(dst []byte, b, in int64) {
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(b)^l.Seed<<48|1<<63)
	k := (b % 251) * 16
	src := base[k : k+blockSize]
	i := in
	for ; i < 8 && i-in < int64(len(dst)); i++ {
		dst[i-in] = hdr[i]
	}
	copy(dst[i-in:], src[i:in+int64(len(dst))])
}

// Verify checks got against the content expected at off, using scratch
// (grown as needed) to locate a mismatch. The check compares against the
// pattern in place, block by block, rather than building the expected
// bytes first: at 1 MiB per READ the load generator's CPU is shared with
// the server under test, and a pass less over the data is CPU the server
// gets.
func (l Layout) Verify(got []byte, off int64, scratch *[]byte) error {
	if l.matches(got, off) {
		return nil
	}
	if cap(*scratch) < len(got) {
		*scratch = make([]byte, len(got))
	}
	want := (*scratch)[:len(got)]
	l.Fill(want, off)
	for i := range got {
		if got[i] != want[i] {
			at := off + int64(i)
			kind := map[bool]string{true: "data", false: "hole"}[l.IsData(at)]
			return fmt.Errorf("data mismatch in %s at offset %d (a %s byte): got %#02x, want %#02x", l.Name, at, kind, got[i], want[i])
		}
	}
	return nil
}

// zeroBlock is a block of a hole, to compare against.
var zeroBlock = make([]byte, blockSize)

// matches reports whether got is the content expected at off (Fill's
// bytes), comparing each 4 KiB block piece with the pattern directly.
func (l Layout) matches(got []byte, off int64) bool {
	for len(got) > 0 {
		in := off % blockSize
		n := min(int64(len(got)), blockSize-in)
		piece := got[:n]
		if !l.IsData(off) {
			if !bytes.Equal(piece, zeroBlock[:n]) {
				return false
			}
		} else if !l.blockMatches(piece, off/blockSize, in) {
			return false
		}
		got = got[n:]
		off += n
	}
	return true
}

// blockMatches is block's check: bytes [in, in+len(got)) of data block b.
func (l Layout) blockMatches(got []byte, b, in int64) bool {
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(b)^l.Seed<<48|1<<63)
	i := in
	for ; i < 8 && i-in < int64(len(got)); i++ {
		if got[i-in] != hdr[i] {
			return false
		}
	}
	k := (b % 251) * 16
	return bytes.Equal(got[i-in:], base[k+i:k+in+int64(len(got))])
}
