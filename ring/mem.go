package ring

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Align is the alignment of every buffer from AllocBuffers: a page, which
// also satisfies O_DIRECT's logical-block alignment.
const Align = 4096

// Buffers are fixed-size buffers carved out of one anonymous mapping, outside
// the Go heap, so the collector never scans or moves them and the kernel can
// write into them at any time. Free must not be called while any request
// that uses one of them is in flight: the kernel would write into memory
// that is gone, or worse, reused.
type Buffers struct {
	mem    []byte
	size   int
	stride int
	count  int
}

// AllocBuffers maps count buffers of size bytes each. Each buffer starts on
// an Align boundary (size is rounded up to a multiple of Align for spacing).
func AllocBuffers(count, size int) (*Buffers, error) {
	if count <= 0 || size <= 0 {
		return nil, fmt.Errorf("ring: AllocBuffers(%d, %d): count and size must be positive", count, size)
	}
	stride := (size + Align - 1) &^ (Align - 1)
	mem, err := unix.Mmap(-1, 0, count*stride, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("ring: mmap %d bytes: %w", count*stride, err)
	}
	return &Buffers{mem: mem, size: size, stride: stride, count: count}, nil
}

// Buf returns buffer i, with length and capacity Size().
func (b *Buffers) Buf(i int) []byte {
	off := i * b.stride
	return b.mem[off : off+b.size : off+b.size]
}

// Count is the number of buffers.
func (b *Buffers) Count() int { return b.count }

// Size is the size of each buffer.
func (b *Buffers) Size() int { return b.size }

// Mem is the whole mapping, e.g. to register it as one fixed buffer.
func (b *Buffers) Mem() []byte { return b.mem }

// Free unmaps the buffers. See the type comment for when that is safe.
func (b *Buffers) Free() error {
	if b.mem == nil {
		return nil
	}
	err := unix.Munmap(b.mem)
	b.mem = nil
	return err
}
