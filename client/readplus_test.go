package client

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

const (
	data = 0
	hole = 1
)

func TestReadPlusDataHoleData(t *testing.T) {
	// eof=1, 3 segments: DATA(0,"abcd") HOLE(4,8) DATA(12,"xyz"+pad)
	in := w{}.u32(1, 3).
		u32(data).u64(0).opaque("abcd").
		u32(hole).u64(4, 8).
		u32(data).u64(12).opaque("xyz")
	dst := bytes.Repeat([]byte{0xee}, 16)
	d := xdr.NewDecoder(in)
	n, eof, segs, err := DecodeReadPlusRes(d, 0, 16, dst)
	if err != nil {
		t.Fatal(err)
	}
	want := "abcd\x00\x00\x00\x00\x00\x00\x00\x00xyz"
	if n != 15 || !eof || string(dst[:n]) != want {
		t.Fatalf("n=%d eof=%v dst=%q", n, eof, dst[:n])
	}
	if dst[15] != 0xee {
		t.Fatalf("byte past n written")
	}
	wantSegs := []Segment{{data, 0, 4}, {hole, 4, 8}, {data, 12, 3}}
	if len(segs) != 3 || segs[0] != wantSegs[0] || segs[1] != wantSegs[1] || segs[2] != wantSegs[2] {
		t.Fatalf("segs %+v", segs)
	}
	if d.Remaining() != 0 {
		t.Fatalf("%d bytes unread", d.Remaining())
	}
}

// TestReadPlusNoHoleFill: without filling, HOLE segments leave the buffer
// as it was; DATA is still copied and the result is the same otherwise.
func TestReadPlusNoHoleFill(t *testing.T) {
	in := w{}.u32(1, 3).
		u32(data).u64(0).opaque("abcd").
		u32(hole).u64(4, 8).
		u32(data).u64(12).opaque("xyz")
	dst := bytes.Repeat([]byte{0xee}, 16)
	n, eof, segs, err := decodeReadPlusRes(xdr.NewDecoder(in), 0, 16, dst, false)
	if err != nil || n != 15 || !eof || len(segs) != 3 {
		t.Fatalf("n=%d eof=%v segs=%v err=%v", n, eof, segs, err)
	}
	if want := "abcd" + strings.Repeat("\xee", 8) + "xyz"; string(dst[:n]) != want {
		t.Fatalf("dst=%q", dst[:n])
	}
}

func TestReadPlusCases(t *testing.T) {
	tests := []struct {
		name    string
		off     uint64
		count   uint32
		in      w
		want    string // bytes delivered, "" with n==0
		eof     bool
		errText string
	}{
		{name: "ganesha empty data", off: 0, count: 4096,
			in: w{}.u32(0, 1).u32(data).u64(0).u32(0), errText: "no progress"},
		{name: "ganesha empty data at offset", off: 8192, count: 4096,
			in: w{}.u32(0, 1).u32(data).u64(8192).u32(0), errText: "no progress"},
		{name: "no segments not eof", count: 10, in: w{}.u32(0, 0), errText: "no progress"},
		{name: "no segments eof", off: 100, count: 10, in: w{}.u32(1, 0), eof: true},
		{name: "empty data with eof", off: 4, count: 10, in: w{}.u32(1, 1).u32(data).u64(4).u32(0), eof: true},
		{name: "odd offset", off: 3, count: 5,
			in: w{}.u32(0, 2).u32(data).u64(3).opaque("abc").u32(hole).u64(6, 2), want: "abc\x00\x00"},
		{name: "short data not eof", off: 0, count: 10,
			in: w{}.u32(0, 1).u32(data).u64(0).opaque("ab"), want: "ab"},
		{name: "hole sticks out both ends", off: 4, count: 6,
			in: w{}.u32(1, 1).u32(hole).u64(0, 100), want: "\x00\x00\x00\x00\x00\x00", eof: false},
		{name: "hole then data", off: 10, count: 6,
			in: w{}.u32(1, 2).u32(hole).u64(10, 2).u32(data).u64(12).opaque("wxyz"), want: "\x00\x00wxyz", eof: true},
		{name: "gap", count: 12,
			in: w{}.u32(0, 2).u32(data).u64(0).opaque("abcd").u32(data).u64(8).opaque("efgh"), errText: "gap"},
		{name: "overlap", count: 12,
			in: w{}.u32(0, 2).u32(data).u64(0).opaque("abcd").u32(hole).u64(2, 4), errText: "overlaps"},
		{name: "out of order", off: 0, count: 12,
			in: w{}.u32(0, 2).u32(data).u64(4).opaque("efgh").u32(data).u64(0).opaque("abcd"), errText: "gap"},
		{name: "data before offset", off: 4, count: 8,
			in: w{}.u32(0, 1).u32(data).u64(0).opaque("abcdefgh"), errText: "precedes"},
		{name: "data past end", off: 0, count: 4,
			in: w{}.u32(0, 2).u32(data).u64(0).opaque("ab").u32(data).u64(2).opaque("cdef"), errText: "past the requested end"},
		{name: "data longer than count", off: 0, count: 4,
			in: w{}.u32(0, 1).u32(data).u64(0).opaque("abcdefgh"), errText: "length over limit"},
		{name: "empty hole mid reply", off: 0, count: 8,
			in: w{}.u32(0, 2).u32(data).u64(0).opaque("ab").u32(hole).u64(2, 0), errText: "empty segment"},
		{name: "hole overflow", off: 0, count: 8,
			in: w{}.u32(0, 1).u32(hole).u64(^uint64(0)-1, 4), errText: "overflows"},
		{name: "bad content type", count: 8,
			in: w{}.u32(0, 1).u32(7).u64(0, 0), errText: "unknown content type"},
		{name: "bad eof bool", count: 8, in: w{}.u32(2, 0), errText: "bad bool"},
		{name: "segment count over bytes", count: 8, in: w{}.u32(0, 1000), errText: "over limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := bytes.Repeat([]byte{0xee}, int(tc.count))
			n, eof, _, err := DecodeReadPlusRes(xdr.NewDecoder(tc.in), tc.off, tc.count, dst)
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("err %v, want %q", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(dst[:n]) != tc.want || eof != tc.eof {
				t.Fatalf("got %q eof=%v, want %q eof=%v", dst[:n], eof, tc.want, tc.eof)
			}
		})
	}
}

func TestReadPlusNoProgressIsErrNoProgress(t *testing.T) {
	in := w{}.u32(0, 1).u32(data).u64(0).u32(0)
	_, _, _, err := DecodeReadPlusRes(xdr.NewDecoder(in), 0, 8, make([]byte, 8))
	if !errors.Is(err, ErrNoProgress) {
		t.Fatalf("err %v, want ErrNoProgress", err)
	}
}

func TestReadPlusTruncatedEverywhere(t *testing.T) {
	in := w{}.u32(1, 3).
		u32(data).u64(0).opaque("abcd").
		u32(hole).u64(4, 8).
		u32(data).u64(12).opaque("xyz")
	for i := range len(in) {
		_, _, _, err := DecodeReadPlusRes(xdr.NewDecoder(in[:i]), 0, 16, make([]byte, 16))
		if err == nil {
			t.Fatalf("truncated at %d: no error", i)
		}
	}
}

func TestReadPlusSmallBuffer(t *testing.T) {
	_, _, _, err := DecodeReadPlusRes(xdr.NewDecoder(w{}.u32(1, 0)), 0, 16, make([]byte, 8))
	if err == nil {
		t.Fatal("want error for short dst")
	}
}

func FuzzReadPlusRes(f *testing.F) {
	f.Add([]byte(w{}.u32(1, 2).u32(data).u64(0).opaque("abcd").u32(hole).u64(4, 8)), uint64(0), uint32(16))
	f.Add([]byte(w{}.u32(0, 1).u32(data).u64(0).u32(0)), uint64(0), uint32(16))
	f.Add([]byte(w{}.u32(1, 1).u32(hole).u64(0, 100)), uint64(5), uint32(7))
	f.Fuzz(func(t *testing.T, in []byte, off uint64, count uint32) {
		count %= 1 << 16
		dst := make([]byte, count)
		n, eof, segs, err := DecodeReadPlusRes(xdr.NewDecoder(in), off, count, dst)
		if err != nil {
			return
		}
		if n > int(count) || (n == 0 && !eof) {
			t.Fatalf("n=%d eof=%v count=%d segs=%v", n, eof, count, segs)
		}
	})
}
