package nfs

import "unsafe"

// uintptrOf passes a gid list to setgroups; the slice stays reachable in
// the caller for the syscall's duration.
func uintptrOf(g []uint32) uintptr { return uintptr(unsafe.Pointer(&g[0])) }
