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

// rawCapset is capset(2) for the calling thread (pid 0 in the header):
// capabilities, like the filesystem ids, are per thread in Linux.
func rawCapset(c *threadCaps) unix.Errno {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	_, _, e := unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&c[0])), 0)
	return e
}

// rawCapget is capget(2) for the calling thread.
func rawCapget(c *threadCaps) unix.Errno {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	_, _, e := unix.RawSyscall(unix.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&c[0])), 0)
	return e
}
