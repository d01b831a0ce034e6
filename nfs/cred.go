package nfs

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// defaultAnonID is the id of "nobody" and "nogroup" (Config.AnonUID,
// AnonGID).
const defaultAnonID = 65534

// idRange is one line of /proc/self/uid_map or gid_map: the ids
// [first, first+count) inside this namespace are valid.
type idRange struct{ first, count uint64 }

// idSpace is the set of ids the kernel accepts in the server's user
// namespace. Outside it (an unmapped id, and always 0xFFFFFFFF, which is
// (uid_t)-1) setfsuid fails and leaves the thread's id as it was: root.
type idSpace []idRange

// validID reports whether the kernel would accept id.
func (sp idSpace) validID(id uint32) bool {
	if id == 0xFFFFFFFF {
		return false
	}
	for _, r := range sp {
		if uint64(id) >= r.first && uint64(id)-r.first < r.count {
			return true
		}
	}
	return false
}

// fullIDSpace is the initial user namespace's map: every id but -1.
var fullIDSpace = idSpace{{0, 1 << 32}}

// readIDSpace parses a uid_map or gid_map; when it cannot be read the
// whole 32-bit space is assumed (the switch is verified anyway).
func readIDSpace(path string) idSpace {
	f, err := os.Open(path)
	if err != nil {
		return fullIDSpace
	}
	defer f.Close()
	var sp idSpace
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		first, err1 := strconv.ParseUint(fields[0], 10, 32)
		count, err2 := strconv.ParseUint(fields[2], 10, 33)
		if err1 == nil && err2 == nil {
			sp = append(sp, idRange{first, count})
		}
	}
	if len(sp) == 0 {
		return fullIDSpace
	}
	return sp
}

// idMapper turns a caller's credentials into the ids the server acts as.
type idMapper struct {
	anonUID, anonGID uint32
	uids, gids       idSpace
}

func newIDMapper(cfg *Config) idMapper {
	return idMapper{
		anonUID: cfg.AnonUID,
		anonGID: cfg.AnonGID,
		uids:    readIDSpace("/proc/self/uid_map"),
		gids:    readIDSpace("/proc/self/gid_map"),
	}
}

// cred maps what the kernel would reject to the anonymous ids, as knfsd's
// nfsd_setuser does for INVALID_UID/INVALID_GID: uid or gid 0xFFFFFFFF (or
// one outside the user namespace) must never leave the server acting as
// root. AUTH_NONE callers are anonymous. Supplementary gids the kernel
// would reject are dropped: no file can carry them.
func (m *idMapper) cred(cr Cred) Cred {
	if cr.Flavor == nfs4.AuthNone {
		return Cred{UID: m.anonUID, GID: m.anonGID, Flavor: cr.Flavor}
	}
	if !m.uids.validID(cr.UID) {
		cr.UID = m.anonUID
	}
	if !m.gids.validID(cr.GID) {
		cr.GID = m.anonGID
	}
	k := 0
	for _, g := range cr.GIDs[:cr.NGIDs] {
		if m.gids.validID(g) {
			cr.GIDs[k] = g
			k++
		}
	}
	for i := k; i < cr.NGIDs; i++ {
		cr.GIDs[i] = 0
	}
	cr.NGIDs = k
	return cr
}

// asCaller runs f with the thread's filesystem identity switched to the
// caller's AUTH_SYS credentials, so the kernel itself enforces permissions
// on creates, removes, renames and opens for write, and new files get the
// caller as owner, as with the kernel server. The switch is per thread
// (raw setfsuid/setfsgid/setgroups), so the goroutine is locked to its
// thread meanwhile. A server not running as root cannot switch; it then
// acts as itself.
//
// The switch is verified: setfsuid and setfsgid report no error, and one
// the kernel refuses leaves the thread as root. When any part fails, f
// does not run and the caller gets EACCES.
func asCaller(cr Cred, f func() error) error {
	if !canSwitch || cr.UID == 0 && cr.GID == 0 && cr.NGIDs == 0 {
		// Not root, or the caller is root like us: nothing to switch.
		return f()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer restoreRoot()
	if !switchTo(cr) {
		return unix.EACCES
	}
	return f()
}

// switchTo sets the thread's groups, fsgid and fsuid and reports whether
// all three took effect.
func switchTo(cr Cred) bool {
	if !setGroups(cr.GIDs[:cr.NGIDs]) {
		return false
	}
	return setFSID(unix.SYS_SETFSGID, cr.GID) && setFSID(unix.SYS_SETFSUID, cr.UID)
}

// setFSID calls setfsuid or setfsgid (trap) and checks the result: the
// call returns the previous id and ignores an id it refuses, so a second
// call with -1 (always refused) reads back the id now in force.
func setFSID(trap uintptr, id uint32) bool {
	unix.RawSyscall(trap, uintptr(id), 0, 0)
	now, _, _ := unix.RawSyscall(trap, uintptr(0xFFFFFFFF), 0, 0)
	return uint32(now) == id
}

// restoreRoot puts the thread back to the server's own identity. As root
// (euid 0) switching back to 0 cannot be refused.
func restoreRoot() {
	unix.RawSyscall(unix.SYS_SETFSUID, 0, 0, 0)
	unix.RawSyscall(unix.SYS_SETFSGID, 0, 0, 0)
	setGroups(nil)
}

var canSwitch = unix.Geteuid() == 0

// asServerFSUID runs f with the thread's fsuid set back to the server's
// own (0) for a moment, from inside asCaller, for a change the caller was
// checked for by hand (setTimes). Outside asCaller, or not running as
// root, f runs as the thread is.
func asServerFSUID(f func() error) error {
	prev, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, uintptr(0xFFFFFFFF), 0, 0)
	if !canSwitch || uint32(prev) == 0 {
		return f()
	}
	// fsuid is only ever not 0 inside asCaller, whose thread is locked.
	if !setFSID(unix.SYS_SETFSUID, 0) {
		return unix.EPERM
	}
	defer setFSID(unix.SYS_SETFSUID, uint32(prev))
	return f()
}

// setGroups sets the thread's supplementary groups (the raw syscall is per
// thread, unlike the libc call) and reports whether the kernel took them.
func setGroups(g []uint32) bool { return rawSetgroups(g) == 0 }
