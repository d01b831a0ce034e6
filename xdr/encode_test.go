package xdr

import (
	"bytes"
	"testing"
)

func TestEncoderPrimitives(t *testing.T) {
	e := NewEncoder(0)
	e.Uint32(0xdeadbeef)
	e.Int32(-2)
	e.Uint64(0x0102030405060708)
	e.Int64(-3)
	e.Bool(true)
	e.Bool(false)
	e.Fixed([]byte("abc"))
	e.Opaque([]byte("hello"))
	e.String("")
	e.String("wxyz")
	e.Opaque(nil)
	want := []byte{
		0xde, 0xad, 0xbe, 0xef,
		0xff, 0xff, 0xff, 0xfe,
		1, 2, 3, 4, 5, 6, 7, 8,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd,
		0, 0, 0, 1,
		0, 0, 0, 0,
		'a', 'b', 'c', 0,
		0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0,
		0, 0, 0, 0,
		0, 0, 0, 4, 'w', 'x', 'y', 'z',
		0, 0, 0, 0,
	}
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
	if e.Len() != len(want) || e.Pos() != len(want) || !bytes.Equal(e.Header(), want) || e.HasBorrowed() {
		t.Fatalf("Len %d Pos %d", e.Len(), e.Pos())
	}
	// Encoder output decodes back.
	d := NewDecoder(want)
	if d.Uint32() != 0xdeadbeef || d.Int32() != -2 || d.Uint64() != 0x0102030405060708 || d.Int64() != -3 ||
		!d.Bool() || d.Bool() || string(d.Fixed(3)) != "abc" || string(d.Opaque(5)) != "hello" ||
		len(d.String(1)) != 0 || string(d.String(4)) != "wxyz" || len(d.Opaque(0)) != 0 || d.Err() != nil {
		t.Fatal("round trip")
	}
}

func TestEncoderPadding(t *testing.T) {
	for n := range 9 {
		e := NewEncoder(16)
		e.Opaque(bytes.Repeat([]byte{'x'}, n))
		got := e.AppendTo(nil)
		if len(got) != 4+n+Pad(n) || len(got)%4 != 0 {
			t.Errorf("opaque %d: %d bytes", n, len(got))
		}
		for _, b := range got[4+n:] {
			if b != 0 {
				t.Errorf("opaque %d: non-zero pad %x", n, got)
			}
		}
	}
}

func TestEncoderBorrow(t *testing.T) {
	data := []byte("hello") // 5 bytes, 3 pad
	e := NewEncoder(32)
	e.Uint32(1)
	countPos := e.Reserve()
	e.Uint32(uint32(len(data)))
	i := e.Borrow(data)
	e.Uint32(2)
	tailPos := e.Reserve()
	e.Patch(countPos, 0xaa) // patch before the borrowed piece, after Borrow
	e.Patch(tailPos, 0xbb)  // patch after the borrowed piece
	if !e.HasBorrowed() {
		t.Fatal("HasBorrowed")
	}
	want := []byte{0, 0, 0, 1, 0, 0, 0, 0xaa, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0xbb}
	if e.Len() != len(want) {
		t.Fatalf("Len %d want %d", e.Len(), len(want))
	}
	iov := e.Iovecs()
	if len(iov) != 4 || &iov[1][0] != &data[0] || len(iov[2]) != 3 {
		t.Fatalf("iovecs %q", iov)
	}
	if got := bytes.Join(iov, nil); !bytes.Equal(got, want) {
		t.Fatalf("iovecs %x\nwant    %x", got, want)
	}
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("AppendTo %x", got)
	}
	// Not copied: a change to the buffer shows.
	data[0] = 'J'
	if got := e.AppendTo(nil); got[12] != 'J' {
		t.Fatal("Borrow copied its buffer")
	}
	// SetBorrowed swaps the buffer and its padding.
	e.SetBorrowed(i, []byte("abcdefgh"))
	got := e.AppendTo(nil)
	if e.Len() != len(want)+0 || !bytes.Contains(got, []byte("abcdefgh\x00\x00\x00\x02")) {
		t.Fatalf("SetBorrowed: len %d %q", e.Len(), got)
	}
	// Writes after Iovecs keep going.
	e.Uint32(3)
	if got := e.AppendTo(nil); !bytes.HasSuffix(got, []byte{0, 0, 0, 0xbb, 0, 0, 0, 3}) || e.Len() != len(got) {
		t.Fatalf("after Iovecs %x", got)
	}
}

func TestEncoderBorrowEdgeCases(t *testing.T) {
	e := NewEncoder(0)
	e.Borrow(nil)
	e.Borrow([]byte("abcd"))
	e.Borrow([]byte("x"))
	if got := e.AppendTo(nil); string(got) != "abcdx\x00\x00\x00" || e.Len() != 8 {
		t.Fatalf("%q len %d", got, e.Len())
	}
	for _, b := range e.Iovecs() {
		if len(b) == 0 {
			t.Fatal("empty iovec")
		}
	}
}

func TestEncoderReserveGrowth(t *testing.T) {
	// Positions stay valid when the header outgrows its first buffer.
	e := NewEncoder(4)
	pos := e.Reserve()
	e.Borrow([]byte("data"))
	for i := range 100 {
		e.Uint64(uint64(i))
	}
	e.Patch(pos, 7)
	p64 := e.Pos()
	e.Uint64(0)
	e.Patch64(p64, 0x1122334455667788)
	got := e.AppendTo(nil)
	if got[3] != 7 || !bytes.HasSuffix(got, []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}) {
		t.Fatalf("%x", got)
	}
}

func TestEncoderTruncate(t *testing.T) {
	e := NewEncoder(16)
	e.Uint32(1)
	mark := e.Pos()
	e.Uint32(2)
	e.Truncate(mark)
	e.Uint32(3)
	if got := e.AppendTo(nil); !bytes.Equal(got, []byte{0, 0, 0, 1, 0, 0, 0, 3}) {
		t.Fatalf("%x", got)
	}
	e.Borrow([]byte("abcd"))
	defer func() {
		if recover() == nil {
			t.Fatal("Truncate into a closed piece did not panic")
		}
	}()
	e.Truncate(mark)
}

func TestEncoderReset(t *testing.T) {
	e := NewEncoder(8)
	e.Uint32(1)
	e.Borrow([]byte("abc"))
	e.Iovecs()
	e.Reset()
	if e.Len() != 0 || e.Pos() != 0 || e.HasBorrowed() || len(e.Iovecs()) != 0 {
		t.Fatal("Reset left state")
	}
	e.String("ok")
	if got := e.AppendTo(nil); string(got) != "\x00\x00\x00\x02ok\x00\x00" {
		t.Fatalf("%q", got)
	}
}

// TestIovecsEqualsAppendTo checks the two outputs over many mixes of header
// writes, borrows and patches.
func TestIovecsEqualsAppendTo(t *testing.T) {
	for seed := range 200 {
		e := NewEncoder(seed % 16)
		var reserved []int
		for step := range 1 + seed%13 {
			switch (seed + step*7) % 5 {
			case 0:
				e.Uint32(uint32(step))
			case 1:
				e.Borrow(bytes.Repeat([]byte{byte(step)}, (seed+step)%9))
			case 2:
				reserved = append(reserved, e.Reserve())
			case 3:
				e.Opaque(bytes.Repeat([]byte{'o'}, step%5))
			case 4:
				e.Iovecs()
			}
		}
		for i, p := range reserved {
			e.Patch(p, uint32(1000+i))
		}
		joined := bytes.Join(e.Iovecs(), nil)
		appended := e.AppendTo([]byte("prefix"))
		if !bytes.Equal(appended[6:], joined) || string(appended[:6]) != "prefix" || len(joined) != e.Len() || len(joined)%4 != 0 {
			t.Fatalf("seed %d: iovecs %x appendto %x len %d", seed, joined, appended, e.Len())
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	e := NewEncoder(512)
	data := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		e.Reset()
		e.Uint32(0x12345678)
		e.Uint32(1)
		status := e.Reserve()
		e.String("tag")
		e.Uint64(1 << 40)
		e.Opaque([]byte("fh-bytes"))
		e.Borrow(data)
		e.Uint32(0)
		e.Patch(status, 0)
		e.Iovecs()
	}
}

func BenchmarkDecode(b *testing.B) {
	e := NewEncoder(512)
	e.Uint32(0x12345678)
	e.Uint64(1 << 40)
	e.Bool(true)
	e.String("a-file-name")
	e.Opaque(make([]byte, 128))
	e.Uint32(3)
	for i := range 3 {
		e.Uint32(uint32(i))
	}
	in := e.AppendTo(nil)
	d := NewDecoder(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		d.Reset(in)
		d.Uint32()
		d.Uint64()
		d.Bool()
		d.String(255)
		d.Opaque(1024)
		for range d.ArrayLen(8, 4) {
			d.Uint32()
		}
		if d.Err() != nil {
			b.Fatal(d.Err())
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	for _, bench := range []func(*testing.B){BenchmarkEncode, BenchmarkDecode} {
		if r := testing.Benchmark(bench); r.AllocsPerOp() != 0 {
			t.Errorf("%d allocs/op", r.AllocsPerOp())
		}
	}
}
