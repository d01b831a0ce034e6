package ring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Prep helpers fill an SQE from GetSQE, after liburing's io_uring_prep_*.
// They leave UserData and Flags alone except where the operation needs a
// flag; set those after the prep call.
//
// Memory passed in must outlive the kernel's use of it:
//   - data buffers, the statx result, accept's address output and anything
//     else the kernel writes or sends from: until the CQE (for zero-copy sends,
//     until the notification CQE);
//   - argument structures the kernel only reads at submission (iovec arrays,
//     msghdr, timespec, paths): until Submit returns, given FeatSubmitStable;
//     with SQPOLL, until the CQE, since submission happens in another thread.
// Prefer off-heap memory (AllocBuffers) for data. Go objects passed here are
// forced onto the heap (see kaddr) but must be kept reachable by the caller.

func (s *SQE) prepRW(op uint8, fd int, addr uint64, n uint32, off uint64) {
	s.Opcode = op
	s.Fd = int32(fd)
	s.Addr = addr
	s.Len = n
	s.Off = off
}

// PrepNop prepares a request that does nothing and completes with Res 0.
func (s *SQE) PrepNop() { s.prepRW(OpNop, -1, 0, 0, 0) }

// PrepRead reads len(buf) bytes at off (off = ^uint64(0) uses the file position).
func (s *SQE) PrepRead(fd int, buf []byte, off uint64) {
	s.prepRW(OpRead, fd, bytesAddr(buf), uint32(len(buf)), off)
}

// PrepWrite writes buf at off.
func (s *SQE) PrepWrite(fd int, buf []byte, off uint64) {
	s.prepRW(OpWrite, fd, bytesAddr(buf), uint32(len(buf)), off)
}

// PrepReadv reads into the buffers described by iovs.
func (s *SQE) PrepReadv(fd int, iovs []unix.Iovec, off uint64) {
	s.prepRW(OpReadv, fd, iovecAddr(iovs), uint32(len(iovs)), off)
}

// PrepWritev writes the buffers described by iovs.
func (s *SQE) PrepWritev(fd int, iovs []unix.Iovec, off uint64) {
	s.prepRW(OpWritev, fd, iovecAddr(iovs), uint32(len(iovs)), off)
}

// PrepReadFixed reads into buf, which must lie inside registered buffer bufIndex.
func (s *SQE) PrepReadFixed(fd int, buf []byte, off uint64, bufIndex uint16) {
	s.prepRW(OpReadFixed, fd, bytesAddr(buf), uint32(len(buf)), off)
	s.BufIndex = bufIndex
}

// PrepWriteFixed writes buf, which must lie inside registered buffer bufIndex.
func (s *SQE) PrepWriteFixed(fd int, buf []byte, off uint64, bufIndex uint16) {
	s.prepRW(OpWriteFixed, fd, bytesAddr(buf), uint32(len(buf)), off)
	s.BufIndex = bufIndex
}

// PrepSplice moves up to n bytes from fdIn to fdOut, one of which must be
// a pipe (io_uring_prep_splice). offIn/offOut are file offsets, or -1 for
// a pipe or socket (its own position). flags are SPLICE_F_* flags.
func (s *SQE) PrepSplice(fdIn int, offIn int64, fdOut int, offOut int64, n uint32, flags uint32) {
	s.prepRW(OpSplice, fdOut, uint64(offIn), n, uint64(offOut))
	s.FileIndex = uint32(int32(fdIn))
	s.OpFlags = flags
}

// PrepFsync syncs fd; flags may be FsyncDatasync.
func (s *SQE) PrepFsync(fd int, flags uint32) {
	s.prepRW(OpFsync, fd, 0, 0, 0)
	s.OpFlags = flags
}

// PrepFallocate is fallocate(fd, mode, off, length).
func (s *SQE) PrepFallocate(fd int, mode uint32, off, length uint64) {
	s.prepRW(OpFallocate, fd, length, mode, off)
}

// PrepOpenat is openat(dfd, path, flags, mode); path is NUL-terminated (see
// unix.BytePtrFromString). Res is the new fd.
func (s *SQE) PrepOpenat(dfd int, path *byte, flags int, mode uint32) {
	s.prepRW(OpOpenat, dfd, kaddr(unsafe.Pointer(path)), mode, 0)
	s.OpFlags = uint32(flags)
}

// PrepClose closes fd.
func (s *SQE) PrepClose(fd int) { s.prepRW(OpClose, fd, 0, 0, 0) }

// PrepCloseFixed frees registered file slot index.
func (s *SQE) PrepCloseFixed(index uint32) {
	s.prepRW(OpClose, 0, 0, 0, 0)
	s.FileIndex = index + 1
}

// PrepStatx is statx(dfd, path, flags, mask, out).
func (s *SQE) PrepStatx(dfd int, path *byte, flags int, mask uint32, out *unix.Statx_t) {
	s.prepRW(OpStatx, dfd, kaddr(unsafe.Pointer(path)), mask, kaddr(unsafe.Pointer(out)))
	s.OpFlags = uint32(flags)
}

// PrepAccept accepts one connection; addr and addrLen may be nil. Res is the
// new fd. flags are accept4 flags such as unix.SOCK_CLOEXEC.
func (s *SQE) PrepAccept(fd int, addr *unix.RawSockaddrAny, addrLen *uint32, flags int) {
	s.prepRW(OpAccept, fd, kaddr(unsafe.Pointer(addr)), 0, kaddr(unsafe.Pointer(addrLen)))
	s.OpFlags = uint32(flags)
}

// PrepMultishotAccept keeps accepting: one CQE per connection, each with
// CQEFMore while the request stays armed. A CQE without CQEFMore ends it.
func (s *SQE) PrepMultishotAccept(fd int, flags int) {
	s.PrepAccept(fd, nil, nil, flags)
	s.Ioprio |= acceptMultishot
}

// PrepConnect connects fd to addr.
func (s *SQE) PrepConnect(fd int, addr *unix.RawSockaddrAny, addrLen uint32) {
	s.prepRW(OpConnect, fd, kaddr(unsafe.Pointer(addr)), 0, uint64(addrLen))
}

// PrepRecv receives into buf. flags are recv(2) MSG_* flags.
func (s *SQE) PrepRecv(fd int, buf []byte, flags int) {
	s.prepRW(OpRecv, fd, bytesAddr(buf), uint32(len(buf)), 0)
	s.OpFlags = uint32(flags)
}

// PrepRecvMultishot keeps receiving into buffers taken from provided-buffer
// group bgid (see BufRing): one CQE per receive, with CQEFBuffer and the
// buffer id in the top 16 bits of Flags (CQE.BufferID), Res the length, and
// CQEFMore while armed. It stops (a CQE without CQEFMore) on EOF, error, or
// when the group runs out of buffers (Res -ENOBUFS); re-arm it then.
func (s *SQE) PrepRecvMultishot(fd int, bgid uint16, flags int) {
	s.prepRW(OpRecv, fd, 0, 0, 0)
	s.OpFlags = uint32(flags)
	s.Ioprio |= RecvMultishot
	s.SetBufferGroup(bgid)
}

// SetBufferGroup makes a recv or read take its buffer from group bgid.
func (s *SQE) SetBufferGroup(bgid uint16) {
	s.Flags |= SQEBufferSelect
	s.BufIndex = bgid
}

// PrepSend sends buf.
func (s *SQE) PrepSend(fd int, buf []byte, flags int) {
	s.prepRW(OpSend, fd, bytesAddr(buf), uint32(len(buf)), 0)
	s.OpFlags = uint32(flags)
}

// PrepSendmsg is sendmsg(fd, msg, flags).
func (s *SQE) PrepSendmsg(fd int, msg *unix.Msghdr, flags int) {
	s.prepRW(OpSendmsg, fd, kaddr(unsafe.Pointer(msg)), 1, 0)
	s.OpFlags = uint32(flags)
}

// PrepRecvmsg is recvmsg(fd, msg, flags).
func (s *SQE) PrepRecvmsg(fd int, msg *unix.Msghdr, flags int) {
	s.prepRW(OpRecvmsg, fd, kaddr(unsafe.Pointer(msg)), 1, 0)
	s.OpFlags = uint32(flags)
}

// PrepSendZC sends buf without copying it. It normally posts two CQEs with the
// same UserData: first the result, with CQEFMore set; later a notification
// with CQEFNotif, after which buf may be reused. If the first CQE lacks
// CQEFMore no notification follows. zcFlags may hold SendZCReportUsage.
func (s *SQE) PrepSendZC(fd int, buf []byte, flags int, zcFlags uint16) {
	s.prepRW(OpSendZC, fd, bytesAddr(buf), uint32(len(buf)), 0)
	s.OpFlags = uint32(flags)
	s.Ioprio = zcFlags
}

// PrepSendZCFixed is PrepSendZC from registered buffer bufIndex.
func (s *SQE) PrepSendZCFixed(fd int, buf []byte, flags int, zcFlags uint16, bufIndex uint16) {
	s.PrepSendZC(fd, buf, flags, zcFlags|RecvSendFixedBuf)
	s.BufIndex = bufIndex
}

// PrepSendmsgZC is sendmsg without copying; CQEs as for PrepSendZC.
func (s *SQE) PrepSendmsgZC(fd int, msg *unix.Msghdr, flags int) {
	s.PrepSendmsg(fd, msg, flags)
	s.Opcode = OpSendmsgZC
}

// PrepTimeout completes after ts (Res -ETIME), or earlier with Res 0 once count
// other completions have posted (count 0: time only). flags: TimeoutAbs, ...
func (s *SQE) PrepTimeout(ts *unix.Timespec, count uint32, flags uint32) {
	s.prepRW(OpTimeout, -1, kaddr(unsafe.Pointer(ts)), 1, uint64(count))
	s.OpFlags = flags
}

// PrepTimeoutRemove cancels the timeout with the given user data.
func (s *SQE) PrepTimeoutRemove(userData uint64, flags uint32) {
	s.prepRW(OpTimeoutRemove, -1, userData, 0, 0)
	s.OpFlags = flags
}

// PrepLinkTimeout bounds the previous SQE, which must have SQEIOLink set: if it
// has not completed after ts it is cancelled (its Res -ECANCELED, this one's
// -ETIME); otherwise this one completes with -ECANCELED.
func (s *SQE) PrepLinkTimeout(ts *unix.Timespec, flags uint32) {
	s.prepRW(OpLinkTimeout, -1, kaddr(unsafe.Pointer(ts)), 1, 0)
	s.OpFlags = flags
}

// PrepCancel cancels the request with the given user data (or, with
// CancelFD/CancelAny/CancelAll, those matching). Res is 0 on success, -ENOENT
// if nothing matched, -EALREADY if it was already running.
func (s *SQE) PrepCancel(userData uint64, flags uint32) {
	s.prepRW(OpAsyncCancel, -1, userData, 0, 0)
	s.OpFlags = flags
}

// PrepCancelFd cancels requests on fd.
func (s *SQE) PrepCancelFd(fd int, flags uint32) {
	s.prepRW(OpAsyncCancel, fd, 0, 0, 0)
	s.OpFlags = flags | CancelFD
}

// PrepShutdown is shutdown(fd, how).
func (s *SQE) PrepShutdown(fd int, how int) { s.prepRW(OpShutdown, fd, 0, uint32(how), 0) }

func iovecAddr(iovs []unix.Iovec) uint64 {
	if len(iovs) == 0 {
		return 0
	}
	return kaddr(unsafe.Pointer(unsafe.SliceData(iovs)))
}
