package ring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The three io_uring system calls. Errors come back as unix.Errno so callers
// can test them with errors.Is(err, unix.EINVAL) and the like.

func sysSetup(entries uint32, p *Params) (int, error) {
	if e := setupFault.Load(); e != 0 {
		return -1, unix.Errno(e)
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// sysEnter calls io_uring_enter. arg and argSize are the sigset (nil, 8) or,
// with enterExtArg, a *geteventsArg and its size.
func sysEnter(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, error) {
	return sysResult(unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit),
		uintptr(minComplete), uintptr(flags), uintptr(arg), argSize))
}

// sysEnterRaw is sysEnter without telling the Go scheduler: the calling
// goroutine keeps its P (and so blocks that P's other work) for as long as
// the call lasts. Only for calls bounded by a timeout; see
// Ring.SubmitAndWaitHeld.
func sysEnterRaw(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, error) {
	return sysResult(unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit),
		uintptr(minComplete), uintptr(flags), uintptr(arg), argSize))
}

func sysRegister(fd int, op uint32, arg unsafe.Pointer, nrArgs uint32) (int, error) {
	return sysResult(unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(op),
		uintptr(arg), uintptr(nrArgs), 0, 0))
}

// sysResult turns a system call's return into (value, error), the error a
// unix.Errno.
func sysResult(n, _ uintptr, errno unix.Errno) (int, error) {
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}

// neverTrue is never set; the compiler cannot prove that, so the store in
// kaddr keeps its argument escaping.
var (
	neverTrue  bool
	escapeSink unsafe.Pointer
)

// kaddr turns p into an address for an SQE. The kernel may use that address
// after the prep call returns, so p must not be on a goroutine stack (stacks
// move when they grow, and nothing would update the copy in the SQE). The
// dead store into escapeSink makes the compiler put everything passed here on
// the heap, where the collector does not move objects. Keeping it reachable
// until the kernel is done remains the caller's job.
func kaddr(p unsafe.Pointer) uint64 {
	if neverTrue {
		escapeSink = p
	}
	return uint64(uintptr(p))
}

// bytesAddr is kaddr for the backing array of a byte slice (0 for an empty one).
func bytesAddr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return kaddr(unsafe.Pointer(unsafe.SliceData(b)))
}
