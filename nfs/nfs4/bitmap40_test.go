package nfs4

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestLongBitmap: a bitmap of many words is read, the words past ours
// ignored; one over MaxBitmapWords is refused.
func TestLongBitmap(t *testing.T) {
	for _, n := range []int{4, 100, MaxBitmapWords, MaxBitmapWords + 1} {
		e := xdr.NewEncoder(64)
		e.Uint32(uint32(n))
		for i := 0; i < n; i++ {
			e.Uint32(1)
		}
		d := xdr.NewDecoder(e.Header())
		b := DecodeBitmap(d)
		if ok := d.Err() == nil; ok != (n <= MaxBitmapWords) {
			t.Fatalf("%d words: err %v", n, d.Err())
		}
		if n <= MaxBitmapWords && (b != Bitmap{1, 1, 1} || d.Remaining() != 0) {
			t.Fatalf("%d words: %v, %d left", n, b, d.Remaining())
		}
	}
}
