package engine

import (
	"math/bits"
	"sync/atomic"

	"github.com/nfsd-uring/nfsd-uring/ring"
)

// slabPool hands out read buffers in power-of-two size classes from mmap'd,
// page-aligned memory (ring.AllocBuffers): the kernel writes into them (also
// with O_DIRECT) and the collector never sees them. It belongs to one event
// loop, so it has no lock. Memory is kept until the loop ends: the pool
// grows to the loop's peak concurrency and is then reused.
type slabPool struct {
	free  [maxSlabClass + 1][][]byte
	slabs []*ring.Buffers
}

const (
	minSlabClass = 12 // 4 KiB
	maxSlabClass = 23 // 8 MiB: a 1 MiB READ widened for O_DIRECT fits easily
	slabBytes    = 1 << 20
)

func slabClass(n int) int {
	if n <= 1<<minSlabClass {
		return minSlabClass
	}
	return bits.Len(uint(n - 1))
}

// get returns a buffer of len n (cap the class size), or nil when n is
// beyond the largest class or memory cannot be mapped.
func (p *slabPool) get(n int) []byte {
	c := slabClass(n)
	if c > maxSlabClass {
		return nil
	}
	if len(p.free[c]) == 0 && !p.grow(c) {
		return nil
	}
	fl := p.free[c]
	b := fl[len(fl)-1]
	p.free[c] = fl[:len(fl)-1]
	return b[:n]
}

// grow maps one more slab of class c: many small buffers or one big one.
func (p *slabPool) grow(c int) bool {
	size := 1 << c
	count := max(1, slabBytes/size)
	bufs, err := ring.AllocBuffers(count, size)
	if err != nil {
		return false
	}
	p.slabs = append(p.slabs, bufs)
	slabMapped.Add(int64(count * size))
	for i := range count {
		p.free[c] = append(p.free[c], bufs.Buf(i))
	}
	return true
}

func (p *slabPool) put(b []byte) {
	c := slabClass(cap(b))
	p.free[c] = append(p.free[c], b[:cap(b)])
}

// release unmaps everything; no buffer may be in use.
func (p *slabPool) release() {
	for _, s := range p.slabs {
		slabMapped.Add(-int64(s.Count() * s.Size()))
		s.Free()
	}
	p.slabs = nil
	p.free = [maxSlabClass + 1][][]byte{}
}

// slabMapped counts the bytes of all loops' slab pools.
var slabMapped atomic.Int64

// OffHeapBytes reports the read-buffer memory the io_uring engine holds
// outside the Go heap (its slab pools, which keep their peak size until
// the engine closes), for memory accounting beside the Go heap's.
func OffHeapBytes() int64 { return slabMapped.Load() }
