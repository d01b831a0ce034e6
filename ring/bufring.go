package ring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BufRing is a provided-buffer ring (IORING_REGISTER_PBUF_RING): a ring of
// buffer descriptors in memory shared with the kernel, from which requests
// with SQEBufferSelect (e.g. PrepRecvMultishot) take a buffer when data
// arrives. The CQE says which one: CQE.BufferID, with Res bytes in it. Hand
// a buffer back with Add and Advance once you are done with its data.
type BufRing struct {
	r        *Ring
	mem      []byte
	bufs     []bufEntry
	tailWord *uint32 // bytes 12..15: bufs[0].Bid and the ring tail
	tail     uint16  // our tail; published by Advance
	mask     uint16
	bgid     uint16
}

// NewBufRing registers an empty buffer ring of entries slots (a power of two,
// at most 32768) as buffer group bgid. The ring lives in its own anonymous
// mapping, page-aligned as the kernel requires. Fill it with Add, Advance.
func (r *Ring) NewBufRing(entries uint16, bgid uint16) (*BufRing, error) {
	if entries == 0 || entries&(entries-1) != 0 || entries > 32768 {
		return nil, fmt.Errorf("ring: buffer ring entries %d: need a power of two up to 32768", entries)
	}
	size := int(entries) * int(unsafe.Sizeof(bufEntry{}))
	size = (size + Align - 1) &^ (Align - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("ring: mmap buffer ring: %w", err)
	}
	reg := bufReg{RingAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), RingEntries: uint32(entries), Bgid: bgid}
	if _, err := sysRegister(r.fd, regPbufRing, unsafe.Pointer(&reg), 1); err != nil {
		unix.Munmap(mem)
		return nil, wrap("register buffer ring", err)
	}
	return &BufRing{
		r:        r,
		mem:      mem,
		bufs:     unsafe.Slice((*bufEntry)(unsafe.Pointer(&mem[0])), entries),
		tailWord: (*uint32)(unsafe.Pointer(&mem[12])),
		mask:     entries - 1,
		bgid:     bgid,
	}, nil
}

// Add puts buf, with id bid, in the slot offset places past the tail; the
// kernel sees it after Advance. Adding n buffers is Add with offsets 0..n-1,
// then Advance(n). buf should be off-heap (AllocBuffers): the kernel may
// write into it whenever a request picks it, until the group is freed.
func (br *BufRing) Add(buf []byte, bid uint16, offset int) {
	e := &br.bufs[(br.tail+uint16(offset))&br.mask]
	e.Addr = bytesAddr(buf)
	e.Len = uint32(len(buf))
	e.Bid = bid
}

// Advance publishes n buffers added since the last Advance.
func (br *BufRing) Advance(n int) {
	br.tail += uint16(n)
	// The tail is a 16-bit field sharing a word with slot 0's bid; Go has no
	// 16-bit atomic store, so store the whole word (we are slot 0's only
	// writer, so its bid is rewritten unchanged). The store is a release:
	// the slots above become visible to the kernel before the tail does.
	bid0 := uint32(br.bufs[0].Bid)
	atomic.StoreUint32(br.tailWord, bid0|uint32(br.tail)<<16)
}

// Bgid is the buffer group id to use in SQEs.
func (br *BufRing) Bgid() uint16 { return br.bgid }

// Entries is the number of slots.
func (br *BufRing) Entries() int { return len(br.bufs) }

// Free unregisters the group and unmaps the ring (not the buffers in it).
// No request may be using the group. After the Ring is closed it only unmaps.
func (br *BufRing) Free() error {
	if br.mem == nil {
		return nil
	}
	var err error
	if br.r.fd >= 0 {
		reg := bufReg{Bgid: br.bgid}
		_, err = sysRegister(br.r.fd, unregPbufRing, unsafe.Pointer(&reg), 1)
	}
	unix.Munmap(br.mem)
	br.mem, br.bufs, br.tailWord = nil, nil, nil
	return wrap("unregister buffer ring", err)
}
