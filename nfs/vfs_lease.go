package nfs

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel leases guard delegations against the server's own filesystem
// (issue 21, finding 13). knfsd takes a lease (vfs_setlease) on each
// delegated file and is told through lm_break when a local open
// conflicts; a user-space server does the same with F_SETLEASE on one of
// the node's own descriptors: F_RDLCK on its read-only descriptor for a
// read delegation (a local open for writing, or truncate(2), breaks it),
// F_WRLCK on its read-write descriptor for a write delegation (any local
// open breaks it). The kernel holds the local opener (up to
// /proc/sys/fs/lease-break-time) and sends the process SIGIO; the signal
// does not say which descriptor, so every lease is asked (F_GETLEASE
// answers the type the breaking lease is going to) and the broken ones'
// delegations are recalled. The lease is let go when the last delegation
// on the file is returned or revoked, and the opener then proceeds.
//
// A plain lease is not broken by unlink, rename, link or chmod (only the
// kernel's own delegations, FL_DELEG, are), so an inotify watch on the
// inode (IN_ATTRIB: mode, owner, times, link count; IN_MOVE_SELF;
// IN_DELETE_SELF) recalls on those. inotify does not say who made the
// change: one made while the holder itself had such an operation under
// way here (clientChanging) is taken for the holder's own and recalls
// nothing.
//
// Leases are per open file, and any open conflicts, the server's own
// included: a lease is only taken when the server's other descriptors of
// the file can be closed, and while it is held the server opens nothing
// that would break it (leaseBeforeOpen): an O_DIRECT open is put off
// (the I/O goes buffered through the leased descriptor) and any other
// conflicting open first lets the lease go and recalls the delegations
// (the holder's own write open of a read-delegated file, a write with the
// anonymous stateid).

// leaseHold is a lease the server holds on one node's descriptor.
type leaseHold struct {
	n       *node
	fd      int // the node's descriptor the lease is on
	typ     int // unix.F_RDLCK or unix.F_WRLCK
	wd      int // inotify watch on the inode, -1 when none
	broken  bool
	onBreak func(why int) // recalls the node's delegations
}

// Why a lease's delegations are recalled (leaseHold.onBreak).
const (
	breakLease = iota // another process's open broke the lease
	breakSelf         // the server let the lease go for an open of its own
	breakWatch        // inotify saw the file renamed, unlinked or changed
)

// breakNames name the reasons for the log.
var breakNames = [...]string{breakLease: "a local open", breakSelf: "the server's own open", breakWatch: "a local rename, unlink or attribute change"}

// leaseTable is the process's leases: SIGIO and the inotify descriptor
// are the process's, shared by every Server in it. mu is a leaf lock,
// taken under node.mu (leaseBeforeOpen, takeLease, forgetLease) and on
// its own.
type leaseTable struct {
	mu     sync.Mutex
	byNode map[*node]*leaseHold
	byWD   map[int][]*leaseHold
	held   atomic.Int32 // len(byNode), read without mu by every data open
	start  sync.Once
	ifd    int // inotify descriptor, -1 when inotify is not to be had
}

var leases = leaseTable{ifd: -1}

// watchMask is what the inotify watch of a delegated file reports.
const watchMask = unix.IN_ATTRIB | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF

// startLocked starts the SIGIO and inotify readers on first use.
func (lt *leaseTable) startLocked() {
	lt.start.Do(func() {
		lt.byNode = make(map[*node]*leaseHold)
		lt.byWD = make(map[int][]*leaseHold)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, unix.SIGIO)
		go func() {
			for range sig {
				lt.scan()
			}
		}()
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			return
		}
		lt.ifd = fd
		// Nonblocking, so the runtime's poller waits for it: no thread
		// is held.
		go lt.readWatches(os.NewFile(uintptr(fd), "inotify"))
	})
}

// scan finds the leases a SIGIO broke: F_GETLEASE answers the type a
// breaking lease goes to (F_UNLCK, or F_RDLCK for a write lease a reader
// broke).
func (lt *leaseTable) scan() {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for _, h := range lt.byNode {
		if h.broken {
			continue
		}
		typ, err := unix.FcntlInt(uintptr(h.fd), unix.F_GETLEASE, 0)
		if err == nil && typ == h.typ {
			continue
		}
		h.broken = true
		go h.onBreak(breakLease)
	}
}

// readWatches reads inotify events and recalls the delegations of the
// files they name.
func (lt *leaseTable) readWatches(f *os.File) {
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		for i := 0; i+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[i]))
			i += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&watchMask == 0 {
				continue // IN_IGNORED, IN_Q_OVERFLOW
			}
			lt.mu.Lock()
			for _, h := range lt.byWD[int(ev.Wd)] {
				if !h.broken {
					go h.onBreak(breakWatch)
				}
			}
			lt.mu.Unlock()
		}
	}
}

// leaseFor returns the lease held on n, or nil.
func (lt *leaseTable) leaseFor(n *node) *leaseHold {
	if lt.held.Load() == 0 {
		return nil
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.byNode[n]
}

// conflicts reports whether opening a file with flags breaks a lease of
// type typ.
func leaseConflicts(typ, flags int) bool {
	return typ == unix.F_WRLCK || flags&unix.O_ACCMODE != unix.O_RDONLY
}

// leaseBeforeOpen is called (with n.mu held) before the server opens n
// for data with flags. Such an open would break the server's own lease
// (and, with O_NONBLOCK, fail with EWOULDBLOCK): an O_DIRECT one is put
// off (ESTALE: not now; the I/O goes buffered), any other first lets the
// lease go and recalls the file's delegations.
func (n *node) leaseBeforeOpen(flags int) error {
	lt := &leases
	if flags&unix.O_PATH != 0 || lt.held.Load() == 0 {
		return nil
	}
	lt.mu.Lock()
	h := lt.byNode[n]
	if h == nil || !leaseConflicts(h.typ, flags) {
		lt.mu.Unlock()
		return nil
	}
	if flags&unix.O_DIRECT != 0 && !h.broken {
		lt.mu.Unlock()
		return unix.ESTALE
	}
	lt.releaseLocked(h)
	lt.mu.Unlock()
	go h.onBreak(breakSelf)
	return nil
}

// releaseLocked lets h's lease go: a local opener held by its break
// proceeds.
func (lt *leaseTable) releaseLocked(h *leaseHold) {
	unix.FcntlInt(uintptr(h.fd), unix.F_SETLEASE, unix.F_UNLCK)
	lt.forgetLocked(h)
}

// forgetLocked drops h from the table (its lease is let go, or goes with
// its descriptor).
func (lt *leaseTable) forgetLocked(h *leaseHold) {
	if lt.byNode[h.n] != h {
		return
	}
	delete(lt.byNode, h.n)
	lt.held.Add(-1)
	if h.wd < 0 {
		return
	}
	list := lt.byWD[h.wd]
	for i, x := range list {
		if x == h {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) > 0 {
		lt.byWD[h.wd] = list
		return
	}
	delete(lt.byWD, h.wd)
	unix.InotifyRmWatch(lt.ifd, uint32(h.wd))
}

// releaseLease lets go of n's lease, if it has one: its last delegation
// is gone. It takes no node lock (the caller may hold the state lock):
// a descriptor is only closed after forgetLease took it off the table.
func releaseLease(n *node) {
	lt := &leases
	if lt.held.Load() == 0 {
		return
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if h := lt.byNode[n]; h != nil {
		lt.releaseLocked(h)
	}
}

// forgetLeaseLocked is called (n.mu held) before n's descriptors are
// closed: the lease goes with them, and the table must not name a
// descriptor number the kernel may give to another file.
func (n *node) forgetLeaseLocked() {
	lt := &leases
	if lt.held.Load() == 0 {
		return
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if h := lt.byNode[n]; h != nil {
		lt.forgetLocked(h)
	}
}

// leased reports whether n's descriptors carry a lease: the descriptor
// cache leaves them open.
func (n *node) leased() bool { return leases.leaseFor(n) != nil }

// takeLease takes a lease on n that guards a delegation of type typ
// (nfs4.DelegateRead: F_RDLCK; write: F_WRLCK), unless n has one that
// does already, and reports whether n is guarded. It fails when the
// server's other descriptors of the file are in use by a reply, or
// another process has the file open in a conflicting way.
func takeLease(n *node, write bool, onBreak func(int)) bool {
	typ := unix.F_RDLCK
	if write {
		typ = unix.F_WRLCK
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	lt := &leases
	lt.mu.Lock()
	lt.startLocked()
	if h := lt.byNode[n]; h != nil {
		ok := !h.broken && (h.typ == unix.F_WRLCK || typ == unix.F_RDLCK)
		lt.mu.Unlock()
		return ok
	}
	ifd := lt.ifd
	lt.mu.Unlock()
	if ifd < 0 {
		return false // no inotify: renames and unlinks would go unseen
	}
	fd, err := n.leaseFDLocked(typ)
	if err != nil {
		return false
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, typ); err != nil {
		return false // EAGAIN: another process has it open; EACCES, EINVAL
	}
	// The watch is on the inode the descriptor names. Without one (the
	// user's inotify watches used up) there is no delegation.
	wd, err := unix.InotifyAddWatch(ifd, "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
	if err != nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
		return false
	}
	h := &leaseHold{n: n, fd: fd, typ: typ, wd: wd, onBreak: onBreak}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.byWD[wd] = append(lt.byWD[wd], h)
	lt.byNode[n] = h
	lt.held.Add(1)
	return true
}

// leaseFDLocked readies n's cached descriptors for a lease of typ and
// returns the one to put it on: F_RDLCK needs a read-only descriptor and
// no write descriptor open (the server's own cached ones are closed),
// F_WRLCK a read-write one and no other open at all. The server's I/O on
// the file then goes through that descriptor (readFD falls back to the
// read-write one). Nothing is closed while a reply has n pinned.
func (n *node) leaseFDLocked(typ int) (int, error) {
	if !n.isReg() || n.dead.Load() {
		return -1, errNotRegular
	}
	n.withdrawLocked()
	defer n.publishLocked()
	if n.pins.Load() > 0 {
		return -1, unix.EBUSY
	}
	closeFD := func(p *int) {
		if *p >= 0 {
			unix.Close(*p)
			*p = -1
		}
	}
	if n.fd == n.wfd {
		n.fd = -1
	}
	if typ == unix.F_RDLCK {
		closeFD(&n.wfd)
		closeFD(&n.dwfd)
		if n.fd < 0 {
			fd, err := n.open(unix.O_RDONLY, nil)
			if err != nil {
				return -1, err
			}
			n.fd = fd
			n.exp.fds.opened(n)
		}
		return n.fd, nil
	}
	closeFD(&n.fd)
	closeFD(&n.direct)
	closeFD(&n.dwfd)
	if n.wfd < 0 {
		fd, err := n.open(unix.O_RDWR, nil)
		if err != nil {
			return -1, err
		}
		n.wfd = fd
		n.exp.fds.opened(n)
	}
	return n.wfd, nil
}

// leaseBreakTime is /proc/sys/fs/lease-break-time: how long the kernel
// holds a local opener before it breaks a lease itself.
func leaseBreakTime() time.Duration {
	b, err := os.ReadFile("/proc/sys/fs/lease-break-time")
	if err != nil {
		return 45 * time.Second
	}
	s, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || s <= 0 {
		return 45 * time.Second
	}
	return time.Duration(s) * time.Second
}
