package engine

import (
	"math/bits"
	"sync"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// bufPool hands out read buffers in power-of-two size classes, so a server
// streaming 1 MiB reads reuses the same few buffers instead of allocating
// per request.
type bufPool struct {
	classes [32]sync.Pool
}

const minClass = 12 // 4 KiB

func class(n int) int {
	if n <= 1<<minClass {
		return minClass
	}
	return bits.Len(uint(n - 1))
}

func (p *bufPool) get(n int) *[]byte {
	c := class(n)
	if v := p.classes[c].Get(); v != nil {
		b := v.(*[]byte)
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<c)
	return &b
}

func (p *bufPool) put(b *[]byte) {
	c := class(cap(*b))
	if 1<<c != cap(*b) {
		return
	}
	p.classes[c].Put(b)
}

// recPool holds request records (Go heap: only the handler reads them).
var recPool bufPool

// replies holds the Replies of both engines, reset between uses.
var replies = sync.Pool{New: func() any { return nfs.NewReply() }}
