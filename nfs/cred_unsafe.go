package nfs

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSetgroups is setgroups(2) for the calling thread only. The pointer is
// converted in the call expression itself, so the runtime keeps the gid
// array alive and in place until the (assembly) syscall returns.
func rawSetgroups(g []uint32) unix.Errno {
	var p unsafe.Pointer
	if len(g) > 0 {
		p = unsafe.Pointer(&g[0])
	}
	_, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(g)), uintptr(p), 0)
	return e
}
