package ring

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Available reports whether io_uring can be used here by setting up, mapping
// and closing a small ring. The error says why not, so that callers can fall
// back to plain system calls:
//   - ENOSYS: the kernel has no io_uring (too old, or CONFIG_IO_URING=n);
//   - EPERM: disabled by the kernel.io_uring_disabled sysctl, or (with
//     EPERM or ENOSYS) blocked by a seccomp filter, as in many containers;
//   - ENOMEM: RLIMIT_MEMLOCK too low on kernels before 5.12.
//
// The returned error wraps the unix.Errno.
func Available() error {
	r, err := New(Options{Entries: 4})
	if err != nil {
		return explain(err)
	}
	return r.Close()
}

func explain(err error) error {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("io_uring unavailable: not implemented by this kernel or blocked by seccomp: %w", err)
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("io_uring unavailable: not permitted (kernel.io_uring_disabled=%s, or seccomp): %w", disabledSysctl(), err)
	case errors.Is(err, unix.ENOMEM):
		return fmt.Errorf("io_uring unavailable: out of locked memory (raise RLIMIT_MEMLOCK): %w", err)
	}
	return fmt.Errorf("io_uring unavailable: %w", err)
}

func disabledSysctl() string {
	b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
