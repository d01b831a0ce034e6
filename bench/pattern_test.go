package bench

import "testing"

func TestLayoutFillAndVerify(t *testing.T) {
	l, err := LayoutByName("mixed-4h")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5*blockSize+100)
	l.Fill(buf, 1000)
	var scratch []byte
	if err := l.Verify(buf, 1000, &scratch); err != nil {
		t.Fatal(err)
	}
	// Piecewise fill agrees with the whole.
	part := make([]byte, 3000)
	l.Fill(part, 1000+blockSize*3+50)
	if err := l.Verify(part, 1000+blockSize*3+50, &scratch); err != nil {
		t.Fatal(err)
	}
	for i := range 3096 {
		if buf[i] != 0 { // offsets 1000..4095 are in the first hole
			t.Fatalf("byte %d of a hole is %#x", 1000+i, buf[i])
		}
	}
	if buf[3096] == 0 {
		t.Fatal("data block starts with zero")
	}
	buf[4000] ^= 1
	if err := l.Verify(buf, 1000, &scratch); err == nil {
		t.Fatal("corruption not detected")
	}
	// Two files differ.
	d1, _ := LayoutByName("data")
	d2 := d1
	d2.Seed = 99
	a, b := make([]byte, 64), make([]byte, 64)
	d1.Fill(a, 0)
	d2.Fill(b, 0)
	if string(a) == string(b) {
		t.Fatal("seeds do not change the data")
	}
}

func TestDataSegments(t *testing.T) {
	l, _ := LayoutByName("mixed-8d")
	var got [][2]int64
	l.DataSegments(4096, 40<<10, func(off, n int64) error {
		got = append(got, [2]int64{off, n})
		return nil
	})
	want := [][2]int64{{4096, 4096}, {16384, 8192}, {32768, 8192}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
}

// TestMatchesAgreesWithFill checks the in-place comparison against Fill's
// bytes for every layout at odd offsets and lengths, and that a flipped
// byte anywhere (header, pattern or hole) is caught.
func TestMatchesAgreesWithFill(t *testing.T) {
	for _, l := range Layouts() {
		for _, c := range [][2]int64{{0, 1}, {3, 5}, {7, 2}, {0, blockSize}, {100, 3 * blockSize}, {4090, 47008}, {12345, 70000}} {
			off, n := c[0], c[1]
			buf := make([]byte, n)
			l.Fill(buf, off)
			if !l.matches(buf, off) {
				t.Fatalf("%s [%d,+%d): Fill's bytes do not match", l.Name, off, n)
			}
			for i := int64(0); i < n; i += max(1, n/97) {
				buf[i] ^= 0x80
				if l.matches(buf, off) {
					t.Fatalf("%s [%d,+%d): flipped byte %d not caught", l.Name, off, n, i)
				}
				buf[i] ^= 0x80
			}
		}
	}
}

func BenchmarkVerify1M(b *testing.B) {
	l, _ := LayoutByName("data")
	buf := make([]byte, 1<<20)
	l.Fill(buf, 0)
	var scratch []byte
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if err := l.Verify(buf, 0, &scratch); err != nil {
			b.Fatal(err)
		}
	}
}
