package ring

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// io_uring_register opcodes for a buffer table that grows.
const (
	regBuffers2      = 15
	regBuffersUpdate = 16
)

// rsrcUpdate2 is struct io_uring_rsrc_update2.
type rsrcUpdate2 struct {
	Offset uint32
	Resv   uint32
	Data   uint64
	Tags   uint64
	Nr     uint32
	Resv2  uint32
}

// RegisterBuffersSparse registers an empty table of n fixed buffers, to
// fill with UpdateBuffers as memory is mapped. With a single-issuer ring
// this (like every register call) must run on the submitting thread.
func (r *Ring) RegisterBuffersSparse(n uint32) error {
	reg := rsrcRegister{Nr: n, Flags: rsrcRegisterSparse}
	_, err := sysRegister(r.fd, regBuffers2, unsafe.Pointer(&reg), uint32(unsafe.Sizeof(reg)))
	return wrap("register sparse buffers", err)
}

// UpdateBuffers sets fixed buffers off..off+len(bufs)-1 (an empty slice
// clears a slot). The kernel pins the pages; the memory must stay mapped
// until the slot is cleared or the ring closed. It returns how many slots
// were updated.
func (r *Ring) UpdateBuffers(off uint32, bufs [][]byte) (int, error) {
	iovs := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		iovs[i].Base = unsafe.SliceData(b)
		iovs[i].SetLen(len(b))
	}
	up := &rsrcUpdate2{Offset: off, Data: kaddr(unsafe.Pointer(unsafe.SliceData(iovs))), Nr: uint32(len(iovs))}
	n, err := sysRegister(r.fd, regBuffersUpdate, unsafe.Pointer(up), uint32(unsafe.Sizeof(*up)))
	runtime.KeepAlive(iovs)
	return n, wrap("update buffers", err)
}
