package ring

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Register calls run synchronously, so the Go memory they pass only has to
// live for the call; the kernel copies the tables and pins registered buffers.

// RegisterBuffers registers bufs as fixed buffers 0..len(bufs)-1 for
// PrepReadFixed/PrepWriteFixed. The kernel pins their pages; the memory must
// stay mapped until UnregisterBuffers or Close. Use AllocBuffers memory.
func (r *Ring) RegisterBuffers(bufs [][]byte) error {
	iovs := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		iovs[i].Base = unsafe.SliceData(b)
		iovs[i].SetLen(len(b))
	}
	_, err := sysRegister(r.fd, regBuffers, unsafe.Pointer(unsafe.SliceData(iovs)), uint32(len(iovs)))
	return wrap("register buffers", err)
}

// UnregisterBuffers drops all registered buffers.
func (r *Ring) UnregisterBuffers() error {
	_, err := sysRegister(r.fd, unregBuffers, nil, 0)
	return wrap("unregister buffers", err)
}

// RegisterFiles registers fds as fixed files 0..len(fds)-1; use the index as
// the fd with SQEFixedFile. An entry of -1 leaves the slot empty.
func (r *Ring) RegisterFiles(fds []int32) error {
	_, err := sysRegister(r.fd, regFiles, unsafe.Pointer(unsafe.SliceData(fds)), uint32(len(fds)))
	return wrap("register files", err)
}

// RegisterFilesSparse registers an empty file table of n slots, to fill with
// UpdateFiles or with direct opens/accepts (FileIndexAlloc).
func (r *Ring) RegisterFilesSparse(n uint32) error {
	reg := rsrcRegister{Nr: n, Flags: rsrcRegisterSparse}
	_, err := sysRegister(r.fd, regFiles2, unsafe.Pointer(&reg), uint32(unsafe.Sizeof(reg)))
	return wrap("register sparse files", err)
}

// UpdateFiles replaces slots off..off+len(fds)-1 of the file table. -1 clears
// a slot, RegisterFilesSkip leaves it. It returns how many were updated.
func (r *Ring) UpdateFiles(off uint32, fds []int32) (int, error) {
	// up.Data holds fds' address as an integer, so fds must not be on a
	// stack that could move before the call (kaddr) and must stay alive
	// through it (KeepAlive).
	up := rsrcUpdate{Offset: off, Data: kaddr(unsafe.Pointer(unsafe.SliceData(fds)))}
	n, err := sysRegister(r.fd, regFilesUpdate, unsafe.Pointer(&up), uint32(len(fds)))
	runtime.KeepAlive(fds)
	return n, wrap("update files", err)
}

// UnregisterFiles drops the file table.
func (r *Ring) UnregisterFiles() error {
	_, err := sysRegister(r.fd, unregFiles, nil, 0)
	return wrap("unregister files", err)
}

// Probe says which opcodes the running kernel supports.
type Probe struct {
	lastOp uint8
	ops    [256]probeOp
}

// probeBuf is struct io_uring_probe with room for every opcode.
type probeBuf struct {
	hdr probeHeader
	ops [256]probeOp
}

// Probe asks the kernel which opcodes it supports.
func (r *Ring) Probe() (*Probe, error) {
	buf := new(probeBuf)
	_, err := sysRegister(r.fd, regProbe, unsafe.Pointer(buf), uint32(len(buf.ops)))
	if err != nil {
		return nil, wrap("probe", err)
	}
	return &Probe{lastOp: buf.hdr.LastOp, ops: buf.ops}, nil
}

// Supports reports whether the kernel supports op.
func (p *Probe) Supports(op uint8) bool {
	return op <= p.lastOp && p.ops[op].Flags&probeOpSupported != 0
}

// LastOp is the highest opcode the kernel knows.
func (p *Probe) LastOp() uint8 { return p.lastOp }

// GetProbe sets up a small ring just to probe it.
func GetProbe() (*Probe, error) {
	r, err := New(Options{Entries: 2})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Probe()
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("io_uring %s: %w", what, err)
}
