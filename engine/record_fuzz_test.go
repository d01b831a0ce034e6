package engine

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzAssembler feeds arbitrary bytes, cut into arbitrary chunks, to the
// record assembler both engines use. Whatever the stream, it must never
// panic, never emit a record larger than its maximum, and, when the stream
// is a valid sequence of records, give back exactly those records however
// the chunks fall.
func FuzzAssembler(f *testing.F) {
	rec := func(frags ...[]byte) []byte {
		var out []byte
		for i, fr := range frags {
			h := uint32(len(fr))
			if i == len(frags)-1 {
				h |= 1 << 31
			}
			out = binary.BigEndian.AppendUint32(out, h)
			out = append(out, fr...)
		}
		return out
	}
	f.Add(rec([]byte("hello")), uint8(3))
	f.Add(append(rec([]byte("a"), []byte("bc")), rec(nil)...), uint8(1))
	f.Add(binary.BigEndian.AppendUint32(nil, 1<<31|0x7fffffff), uint8(2))
	f.Add([]byte{0x80, 0, 0, 4, 1, 2}, uint8(5))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		const max = 64 << 10
		a := assembler{max: max, pool: &recPool}
		var got [][]byte
		emit := func(r record) {
			if len(r.bytes()) > max {
				t.Fatalf("emitted a %d-byte record, max %d", len(r.bytes()), max)
			}
			got = append(got, bytes.Clone(r.bytes()))
			recPool.put(r.buf)
		}
		step := int(cut%61) + 1
		for p := stream; len(p) > 0; {
			k := min(len(p), step)
			if err := a.feed(p[:k], emit); err != nil {
				return // a stream that cannot be resynced: the connection closes
			}
			p = p[k:]
		}
		// Whatever came out must be what a one-shot parse of the stream
		// gives for its complete records.
		want := parseRecords(stream, max)
		if len(got) > len(want) {
			t.Fatalf("%d records emitted, the stream holds %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
	})
}

// parseRecords is a plain reference parser of record marking.
func parseRecords(s []byte, max int) [][]byte {
	var out [][]byte
	var cur []byte
	for len(s) >= 4 {
		h := binary.BigEndian.Uint32(s)
		n := int(h &^ (1 << 31))
		s = s[4:]
		if n > len(s) || len(cur)+n > max {
			return out
		}
		cur = append(cur, s[:n]...)
		s = s[n:]
		if h&(1<<31) != 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	return out
}
