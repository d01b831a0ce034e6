package nfs

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// asCaller runs f with the thread's filesystem identity switched to the
// caller's AUTH_SYS credentials, so the kernel itself enforces permissions
// on creates, removes, renames and opens for write, and new files get the
// caller as owner, as with the kernel server. The switch is per thread
// (raw setfsuid/setfsgid/setgroups), so the goroutine is locked to its
// thread meanwhile. A server not running as root cannot switch; it then
// acts as itself.
func asCaller(cr Cred, f func() error) error {
	if !canSwitch || cr.UID == 0 && cr.GID == 0 && cr.NGIDs == 0 {
		// Not root, or the caller is root like us: nothing to switch.
		return f()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	setGroups(cr.GIDs[:cr.NGIDs])
	unix.RawSyscall(unix.SYS_SETFSGID, uintptr(cr.GID), 0, 0)
	unix.RawSyscall(unix.SYS_SETFSUID, uintptr(cr.UID), 0, 0)
	defer func() {
		unix.RawSyscall(unix.SYS_SETFSUID, 0, 0, 0)
		unix.RawSyscall(unix.SYS_SETFSGID, 0, 0, 0)
		setGroups(nil)
	}()
	return f()
}

var canSwitch = unix.Geteuid() == 0

func setGroups(g []uint32) {
	var p uintptr
	if len(g) > 0 {
		p = uintptrOf(g)
	}
	unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(g)), p, 0)
}
