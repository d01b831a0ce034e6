package ring

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// setupFault, when not zero, is the errno every io_uring_setup fails with
// before reaching the kernel.
var setupFault atomic.Uintptr

// FailSetup makes io_uring_setup fail with errno until the returned
// function is called. Tests use it to act out a kernel or a seccomp
// profile that refuses io_uring (Docker's default profile answers EPERM),
// and check that --engine auto falls back to the portable engine.
func FailSetup(errno unix.Errno) (restore func()) {
	setupFault.Store(uintptr(errno))
	return func() { setupFault.Store(0) }
}
