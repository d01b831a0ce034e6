package xdr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"unsafe"
)

// frag is one fragment header plus body.
func frag(last bool, body string) []byte {
	h := uint32(len(body))
	if last {
		h |= 1 << 31
	}
	return append(binary.BigEndian.AppendUint32(nil, h), body...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestRecordMark(t *testing.T) {
	if RecordMark(5) != 0x80000005 {
		t.Fatal("RecordMark")
	}
	last, n := ParseMark(0x80000005)
	if !last || n != 5 {
		t.Fatal("ParseMark last")
	}
	last, n = ParseMark(0x7fffffff)
	if last || n != 0x7fffffff {
		t.Fatal("ParseMark not last")
	}
}

func TestRecordReader(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		max  int
		want []string // records, then the final error
		err  error
	}{
		{"one", frag(true, "abcd"), 100, []string{"abcd"}, io.EOF},
		{"two records", cat(frag(true, "ab"), frag(true, "cdef")), 100, []string{"ab", "cdef"}, io.EOF},
		{"multi fragment", cat(frag(false, "ab"), frag(false, "cd"), frag(true, "ef")), 100, []string{"abcdef"}, io.EOF},
		{"empty fragments", cat(frag(false, ""), frag(false, "x"), frag(true, "")), 100, []string{"x"}, io.EOF},
		{"at limit", frag(true, "12345678"), 8, []string{"12345678"}, io.EOF},
		{"over limit", frag(true, "123456789"), 8, nil, ErrRecordTooBig},
		{"over limit across fragments", cat(frag(false, "12345"), frag(true, "6789")), 8, nil, ErrRecordTooBig},
		{"huge mark", []byte{0xff, 0xff, 0xff, 0xff}, 1 << 20, nil, ErrRecordTooBig},
		{"huge mark not last", []byte{0x7f, 0xff, 0xff, 0xff}, 1 << 20, nil, ErrRecordTooBig},
		{"empty stream", nil, 100, nil, io.EOF},
		{"truncated header", []byte{0x80, 0}, 100, nil, io.ErrUnexpectedEOF},
		{"truncated body", frag(true, "abcd")[:6], 100, nil, io.ErrUnexpectedEOF},
		{"header only", frag(true, "abcd")[:4], 100, nil, io.ErrUnexpectedEOF},
		{"truncated second fragment header", cat(frag(false, "ab"), []byte{0x80}), 100, nil, io.ErrUnexpectedEOF},
		{"record after good one truncated", cat(frag(true, "ok"), frag(true, "abcd")[:5]), 100, []string{"ok"}, io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(tc.in), iotest.OneByteReader(bytes.NewReader(tc.in))} {
				checkRecords(t, NewRecordReader(r, tc.max), tc.want, tc.err)
			}
		})
	}
}

func checkRecords(t *testing.T, rr *RecordReader, want []string, wantErr error) {
	t.Helper()
	for _, w := range want {
		rec, err := rr.Next()
		if err != nil || string(rec) != w {
			t.Fatalf("record %q err %v, want %q", rec, err, w)
		}
	}
	if _, err := rr.Next(); !errors.Is(err, wantErr) {
		t.Fatalf("final err %v, want %v", err, wantErr)
	}
}

// TestRecordReaderEOFAfterFragment: the stream ends cleanly after a
// fragment that was not the last one of its record. The record is
// incomplete, so the reader must say io.ErrUnexpectedEOF; a plain io.EOF
// would pass for a clean close between records.
func TestRecordReaderEOFAfterFragment(t *testing.T) {
	rr := NewRecordReader(bytes.NewReader(frag(false, "abcd")), 100)
	_, err := rr.Next()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
}

func TestRecordReaderReuseAndDetach(t *testing.T) {
	rr := NewRecordReader(bytes.NewReader(cat(frag(true, "aaaa"), frag(true, "bbbb"), frag(true, "cccc"))), 100)
	first, _ := rr.Next()
	rr.Detach()
	second, _ := rr.Next()
	if string(first) != "aaaa" {
		t.Fatalf("detached record overwritten: %q", first)
	}
	third, _ := rr.Next()
	if string(third) != "cccc" || string(second) != "cccc" {
		t.Fatalf("without Detach the buffer is reused: %q %q", second, third)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestRecordReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	rr := NewRecordReader(io.MultiReader(bytes.NewReader(frag(false, "ab")), errReader{boom}), 100)
	if _, err := rr.Next(); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

func FuzzRecordReader(f *testing.F) {
	f.Add(frag(true, "abcd"), 64)
	f.Add(cat(frag(false, "ab"), frag(false, ""), frag(true, "cd")), 64)
	f.Add(cat(frag(true, "x"), frag(true, "yz")), 2)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0}, 1<<20)
	f.Add(frag(false, "abcd"), 8)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		max = max & 0xffff
		rr := NewRecordReader(bytes.NewReader(in), max)
		total := 0
		for {
			rec, err := rr.Next()
			if err != nil {
				return
			}
			if len(rec) > max {
				t.Fatalf("record of %d bytes over limit %d", len(rec), max)
			}
			total += len(rec)
			if total > len(in) {
				t.Fatalf("records hold %d bytes of %d input", total, len(in))
			}
		}
	})
}

func TestRecordReaderPlace(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 10000)
	stream := append(binary.BigEndian.AppendUint32(nil, 1<<31|uint32(len(body))), body...)
	rr := NewRecordReader(bufio.NewReader(bytes.NewReader(stream)), 1<<20)
	rr.Place, rr.PlaceMin = func(head []byte) int { return 77 }, 1000
	rec, err := rr.Next()
	if err != nil || !bytes.Equal(rec, body) {
		t.Fatalf("record: %v", err)
	}
	if addr := uintptr(unsafe.Pointer(&rec[77])); addr%4096 != 0 {
		t.Fatalf("byte 77 at %#x, not page aligned", addr)
	}
}
