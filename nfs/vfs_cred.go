package nfs

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// defaultAnonID is the id of "nobody" and "nogroup" (Config.AnonUID,
// AnonGID).
const defaultAnonID = exports.AnonID

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
	names            *idNames // owner strings both ways (idmap.go)
}

func newIDMapper(cfg *Config) idMapper {
	return idMapper{
		anonUID: cfg.AnonUID,
		anonGID: cfg.AnonGID,
		uids:    readIDSpace("/proc/self/uid_map"),
		gids:    readIDSpace("/proc/self/gid_map"),
		names:   newIDNames(cfg.IdmapDomain, cfg.IdmapNames),
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
// caller as owner, as with the kernel server. For a caller other than root
// it also drops CAP_SYS_RESOURCE (see needsShed), so what f writes or
// allocates stops at the blocks the filesystem reserves for root and at
// quotas, as the caller's own writes would locally. The switch is per thread
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

// asCallerIO runs file I/O for the caller (asCaller): WRITE, ALLOCATE,
// COPY and CLONE write with the caller's ids and, for users, without
// CAP_SYS_RESOURCE, as knfsd writes. ext4 grants the blocks it reserves to
// fsuid 0 (the default resuid) and to CAP_SYS_RESOURCE: writing as root,
// a client's uid 1000 wrote 111 MiB into a filesystem with 50 % reserved
// where it writes 47 MiB locally. The engines' io_uring writes are
// covered too: the kernel runs a request with the credentials of the
// thread that submits it, and FileIO submits and waits on this thread.
func (c *compound) asCallerIO(f func() error) error { return asCaller(c.cred, f) }

// switchTo sets the thread's groups, fsgid and fsuid, and for a caller
// other than root drops CAP_SYS_RESOURCE, and reports whether all of it
// took effect. The capability goes first, while the fsuid is still 0:
// capset writes the whole effective set, and done after setfsuid it would
// give back the filesystem capabilities (CAP_DAC_OVERRIDE...) that the
// kernel takes away when the fsuid leaves 0.
func switchTo(cr Cred) bool {
	if needsShed(cr) && rawCapset(&callerCaps) != 0 {
		return false
	}
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
	if shedsReserve {
		// Raising what is still permitted cannot be refused either.
		rawCapset(&serverCaps)
	}
}

var canSwitch = unix.Geteuid() == 0

// asServerFSUID runs f with the thread's fsuid set back to the server's
// own (0) for a moment, from inside asCaller: for a change the caller was
// checked for by hand (setTimes), or a descriptor the server keeps for
// all callers (File.Direct). The kernel gives the filesystem capabilities
// back with fsuid 0; CAP_SYS_RESOURCE stays dropped. Outside asCaller, or
// not running as root, f runs as the thread is.
func asServerFSUID(f func() error) error {
	if !canSwitch {
		return f()
	}
	prev, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, uintptr(0xFFFFFFFF), 0, 0)
	if uint32(prev) == 0 {
		return f()
	}
	// fsuid is only ever not 0 inside asCaller, whose thread is locked.
	if !setFSID(unix.SYS_SETFSUID, 0) {
		return unix.EPERM
	}
	defer setFSID(unix.SYS_SETFSUID, uint32(prev))
	return f()
}

// threadCaps is a thread's capability sets as capget/capset (version 3)
// read and write them: two words of effective, permitted and inheritable.
type threadCaps [2]unix.CapUserData

// has reports whether capability cp is in the effective set.
func (c *threadCaps) has(cp int) bool { return c[cp/32].Effective&(1<<(cp%32)) != 0 }

// without returns c with capability cp taken out of the effective set (it
// stays permitted, so it can be raised again).
func (c threadCaps) without(cp int) threadCaps {
	c[cp/32].Effective &^= 1 << (cp % 32)
	return c
}

// serverCaps are the server's capabilities as it started (every thread
// has them: threads are cloned with their creator's, and Go clones new
// threads from a clean template thread while a locked thread is
// switched), and callerCaps the same without CAP_SYS_RESOURCE.
// shedsReserve is false when the server does not hold CAP_SYS_RESOURCE at
// all (the systemd unit leaves it out): then there is nothing to shed.
var serverCaps, callerCaps, shedsReserve = readServerCaps()

func readServerCaps() (threadCaps, threadCaps, bool) {
	var c threadCaps
	if rawCapget(&c) != 0 || !c.has(unix.CAP_SYS_RESOURCE) {
		return c, c, false
	}
	return c, c.without(unix.CAP_SYS_RESOURCE), true
}

// needsShed reports whether asCaller must drop CAP_SYS_RESOURCE for cr:
// knfsd's nfsd_setuser drops it (with the rest of CAP_NFSD_SET) for every
// caller but root, so that the blocks ext4 reserves for root (tune2fs -m;
// granted to fsuid 0, the default resuid, or to CAP_SYS_RESOURCE) and
// quota limits stop a client's user where they stop the same user
// locally. Root keeps it, as on knfsd.
func needsShed(cr Cred) bool { return shedsReserve && cr.UID != 0 }

// setGroups sets the thread's supplementary groups (the raw syscall is per
// thread, unlike the libc call) and reports whether the kernel took them.
func setGroups(g []uint32) bool { return rawSetgroups(g) == 0 }
