package pnfs

import (
	"context"
	"testing"
)

// BenchmarkProxyIO: the metadata server's proxied WRITE (FILE_SYNC) and
// READ through a Pool to one in-process data server, 1 MiB at a time.
func BenchmarkProxyIO(b *testing.B) {
	for _, mirrors := range []int{1, 2} {
		name := map[int]string{1: "write-1mirror", 2: "write-2mirrors"}[mirrors]
		b.Run(name, func(b *testing.B) { benchIO(b, mirrors, true) })
	}
	b.Run("read", func(b *testing.B) { benchIO(b, 1, false) })
}

func benchIO(b *testing.B, mirrors int, write bool) {
	var ds []*testDS
	for range mirrors {
		ds = append(ds, startDS(b))
	}
	p := newTestPool(b, mirrors, ds...)
	ctx := context.Background()
	l, err := p.Create(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	const span = 64 << 20
	if !write {
		for off := 0; off < span; off += len(buf) {
			if _, err := p.WriteAt(ctx, l, buf, uint64(off)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := range b.N {
		off := uint64(i*len(buf)) % span
		if write {
			_, err = p.WriteAt(ctx, l, buf, off)
		} else {
			_, _, err = p.ReadAt(ctx, l, buf, off)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
