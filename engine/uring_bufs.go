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
	// fixed is the loop's ring when it has a sparse fixed-buffer table
	// (useFixed): each slab is then registered as fixed buffer number
	// len(slabs) at its mapping, and reads into it use READ_FIXED. The
	// kernel pinned the pages once, so an O_DIRECT read skips pinning
	// 256 pages per MiB (gup_fast_fallback: 14% of the server's CPU on
	// cold 1 MiB READs, perf) and a buffered one copies into a bvec.
	fixed *ring.Ring
	slot  map[*byte]uint16 // first byte of a buffer -> its fixed slot
}

// maxFixedSlabs is the size of the fixed-buffer table: slabs past it are
// read into without READ_FIXED.
const maxFixedSlabs = 1024

// useFixed registers an empty fixed-buffer table on r (on the loop's
// thread: a single-issuer ring accepts register calls only from there);
// without one, reads go as plain READs.
func (p *slabPool) useFixed(r *ring.Ring) {
	if r.RegisterBuffersSparse(maxFixedSlabs) == nil {
		p.fixed, p.slot = r, map[*byte]uint16{}
	}
}

// fixedSlot returns the fixed buffer holding b, a buffer from get.
func (p *slabPool) fixedSlot(b []byte) (uint16, bool) {
	if p.fixed == nil || cap(b) == 0 {
		return 0, false
	}
	i, ok := p.slot[&b[:1][0]]
	return i, ok
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
	fixed := p.register(bufs)
	for i := range count {
		b := bufs.Buf(i)
		p.free[c] = append(p.free[c], b)
		if fixed >= 0 {
			p.slot[&b[0]] = uint16(fixed)
		}
	}
	return true
}

// register makes the new slab (the last one) a fixed buffer and returns
// its slot, or -1. A refusal (memlock limit) stops further attempts.
func (p *slabPool) register(bufs *ring.Buffers) int {
	idx := len(p.slabs) - 1
	if p.fixed == nil || idx >= maxFixedSlabs {
		return -1
	}
	if n, err := p.fixed.UpdateBuffers(uint32(idx), [][]byte{bufs.Mem()}); err != nil || n != 1 {
		p.fixed = nil
		return -1
	}
	return idx
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
	p.fixed, p.slot = nil, nil
}

// slabMapped counts the bytes of all loops' slab pools.
var slabMapped atomic.Int64

// OffHeapBytes reports the read-buffer memory the io_uring engine holds
// outside the Go heap (its slab pools, which keep their peak size until
// the engine closes), for memory accounting beside the Go heap's.
func OffHeapBytes() int64 { return slabMapped.Load() }
