package nfs

import (
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The confinement point. Every open of a stored path — a node's path, a
// directory to change, a name looked up in one — goes through the
// functions in this file. Each resolves beneath the export's root
// descriptor with openat2 (RESOLVE_BENEATH: no "..", no absolute
// symlinks, no symlink leading out; RESOLVE_NO_MAGICLINKS: no /proc
// tricks; never following a final symlink) and, when it opens a node,
// checks that what it opened is that node's file by device and inode: a
// path that now names another file (renames, a directory replaced by a
// symlink) gives ESTALE, never the other file. Opens that could block (a
// FIFO, a device) are refused before the open or made non-blocking.

// errNotRegular refuses a data open of a file that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openHow confines every open to the export.
func (e *export) openHow(flags int) *unix.OpenHow {
	how := &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if !e.crossmnt && !e.detached {
		// No private clone of the export's mount (no CAP_SYS_ADMIN):
		// refuse to cross into submounts at all.
		how.Resolve |= unix.RESOLVE_NO_XDEV
	}
	return how
}

// resolveCached is RESOLVE_CACHED (linux/openat2.h, Linux 5.12), which
// golang.org/x/sys/unix does not name: the lookup fails with EAGAIN
// where it would have to ask the filesystem.
const resolveCached = 0x20

// inCache reports whether name (one component, checked by checkName) in
// directory dirfd of the export resolves from the kernel's dentry cache
// alone, found or cached as absent, so that looking it up cannot wait on
// the disk. The probe is a confined O_PATH open with RESOLVE_CACHED,
// closed at once; EAGAIN, any other error and an older kernel's EINVAL
// all answer no.
func (e *export) inCache(dirfd int, name string) bool {
	how := e.openHow(unix.O_PATH)
	how.Resolve |= resolveCached
	fd, err := unix.Openat2(dirfd, name, how)
	if err == nil {
		unix.Close(fd)
		return true
	}
	return err == unix.ENOENT
}

// openBeneath opens rel (relative to the export root) with flags. It
// checks nothing about what it finds: callers that know which file they
// want use node.open.
func (e *export) openBeneath(rel string, flags int) (int, error) {
	return e.openAt(e.rootFD, rel, flags, 0)
}

// openAt opens rel beneath dirfd, a directory of this export.
func (e *export) openAt(dirfd int, rel string, flags int, mode uint32) (int, error) {
	checkNotLoop()
	how := e.openHow(flags)
	how.Mode = uint64(mode)
	for {
		fd, err := unix.Openat2(dirfd, rel, how)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EXDEV {
			// RESOLVE_NO_XDEV refused a mount point.
			err = unix.ENOENT
		}
		return fd, err
	}
}

// open opens n's file by its path with flags, as the caller when cr is not
// nil, and checks it is n's file. Data opens (anything but O_PATH) of a
// file that is not regular or a directory are refused: opening a FIFO or a
// device could block or have side effects.
//
// When the stored path no longer leads to n's file (another client or a
// local user renamed it, or swapped a directory on the way), the file is
// found again through its kernel handle — the path the kernel gives for
// it, itself opened and checked the same way — and n is repointed.
func (n *node) open(flags int, cr *Cred) (int, error) {
	var st unix.Stat_t
	return n.openStat(flags, cr, &st)
}

// openStat is open, leaving in st the attributes its check read.
func (n *node) openStat(flags int, cr *Cred, st *unix.Stat_t) (int, error) {
	// A delegated file's lease must not be broken by the server itself
	// (vfs_lease.go).
	if err := n.leaseBeforeOpen(flags); err != nil {
		return -1, err
	}
	rel := n.path()
	fd, err := n.openPath(rel, flags, cr, st)
	if err != unix.ESTALE && err != unix.ENOENT && err != unix.ENOTDIR || n.exp == nil {
		return fd, err
	}
	now, ferr := n.exp.refind(n)
	if ferr != nil || now == rel {
		return fd, goneStale(err)
	}
	fd, err = n.openPath(now, flags, cr, st)
	if err == nil {
		n.setPath(now)
	}
	return fd, goneStale(err)
}

// goneStale turns "no such path" for a node that its kernel handle did
// not find either into ESTALE: the file is gone, and its handle with it
// (knfsd answers such a handle NFS4ERR_STALE; NOENT would tell the client
// a name is missing, which is not the question).
func goneStale(err error) error {
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return unix.ESTALE
	}
	return err
}

// openPath opens n's file at rel and checks it, leaving its attributes in
// st.
func (n *node) openPath(rel string, flags int, cr *Cred, st *unix.Stat_t) (int, error) {
	if flags&unix.O_PATH == 0 && !n.isReg() && !n.isDir() {
		return -1, errNotRegular
	}
	// O_NONBLOCK: if the path was swapped for a FIFO since the node was
	// made, the open must not hang before the inode check catches it.
	// Regular files get it cleared again below (io_uring would otherwise
	// treat their reads as NOWAIT).
	nb := 0
	if flags&unix.O_PATH == 0 {
		nb = unix.O_NONBLOCK
	}
	var fd int
	var err error
	openIt := func() error {
		fd, err = n.exp.openBeneath(rel, flags|nb)
		return err
	}
	if cr != nil {
		err = asCaller(*cr, openIt)
	} else {
		openIt()
	}
	if err != nil {
		return -1, err
	}
	if err := n.check(fd, st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if nb != 0 && flags&unix.O_NONBLOCK == 0 {
		// F_SETFL takes only the status flags (O_DIRECT...) from flags.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// check reports whether fd is n's file: same device and inode. st gets
// fd's attributes.
func (n *node) check(fd int, st *unix.Stat_t) error {
	if err := unix.Fstat(fd, st); err != nil {
		return err
	}
	if st.Ino != n.ino || st.Dev != n.dev {
		return unix.ESTALE
	}
	return nil
}

// stat fills st for n: a directory through its kept O_PATH descriptor
// (pathFD), a file through a descriptor it keeps open, else by a confined
// O_PATH open of its path, whose check reads the attributes.
func (n *node) stat(st *unix.Stat_t) error {
	if n.isDir() {
		fd, err := n.pathFD()
		if err != nil {
			return err
		}
		defer n.unpin()
		return staleIfRemoved(st, unix.Fstat(fd, st))
	}
	if ok, err := n.fstatCached(st); ok {
		return err
	}
	fd, err := n.openStat(unix.O_PATH, nil, st)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

// staleIfRemoved turns the attributes of a directory removed since its
// descriptor was kept (no links left) into ESTALE, as a lookup by path
// would have: nothing can be made or found in it any more.
func staleIfRemoved(st *unix.Stat_t, err error) error {
	if err == nil && st.Nlink == 0 {
		return unix.ESTALE
	}
	return err
}

// dirFD returns directory n's O_PATH descriptor (checked to be n) for the
// *at syscalls that change or read it, pinned: the caller calls n.unpin
// when done with it and never closes it.
func (n *node) dirFD() (int, error) {
	if !n.isDir() {
		return -1, unix.ENOTDIR
	}
	return n.pathFD()
}

// statChild stats name (one component, checked by checkName) in directory
// dirfd of the export without following it.
func statChild(dirfd int, name string, st *unix.Stat_t) error {
	return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
}

// createIn opens (creating) name in directory dirfd of export e, as the
// caller.
//
// O_NONBLOCK while opening: an existing file another process holds a
// lease on (or the server, for a delegation: vfs_lease.go) answers
// EWOULDBLOCK (NFS4ERR_DELAY) rather than hold the worker for the break.
func (e *export) createIn(cr Cred, dirfd int, name string, flags int, mode uint32) (int, error) {
	var fd int
	err := asCaller(cr, func() error {
		var err error
		fd, err = e.openAt(dirfd, name, flags|unix.O_NONBLOCK, mode)
		return err
	})
	if err == nil && flags&unix.O_NONBLOCK == 0 {
		if _, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, err
}

// linkInto makes a hard link to n named name in directory dirfd, as the
// caller. The source is opened by the confined, checked open, then linked
// through its /proc descriptor: no stored path is followed unchecked, and
// the link needs no privilege the caller lacks.
func (n *node) linkInto(cr Cred, dirfd int, name string) error {
	fd, err := n.open(unix.O_PATH, nil)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return asCaller(cr, func() error {
		return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+itoa(fd), dirfd, name, unix.AT_SYMLINK_FOLLOW)
	})
}

// refind returns the path at which n's file now lies beneath the export,
// from its kernel handle (open_by_handle_at needs CAP_DAC_READ_SEARCH;
// without it, or without a kernel handle, the file is not looked for).
func (e *export) refind(n *node) (string, error) {
	f, ok := parseHandle(n.handle)
	if !ok {
		return "", errStale
	}
	var st unix.Stat_t
	return e.pathByHandle(f, &st)
}

// pathByHandle opens the file of handle fields f by its kernel handle
// (open_by_handle_at: the inode's generation must match too), fills st,
// checks it is f's inode on f's filesystem, and returns the path the
// kernel gives for it relative to the export root. The caller opens that
// path through the confinement point before trusting it.
func (e *export) pathByHandle(f fhFields, st *unix.Stat_t) (string, error) {
	if f.ktype == 0 || len(f.kernel) == 0 {
		return "", errStale
	}
	fs := e.fsByID(f.fs)
	if fs == nil {
		return "", errStale
	}
	checkNotLoop()
	fd, err := unix.OpenByHandleAt(fs.mountFD, unix.NewFileHandle(f.ktype, f.kernel), unix.O_PATH|unix.O_CLOEXEC)
	if err != nil {
		return "", errStale
	}
	defer unix.Close(fd)
	if unix.Fstat(fd, st) != nil || st.Ino != f.ino || st.Dev != fs.dev {
		return "", errStale
	}
	return e.relOf(fd)
}

// Event loops never open files: an open walks a path (or, by handle,
// reads an inode) and can wait on the disk, stalling every connection of
// the loop (ARCHITECTURE.md). Only export.inCache's RESOLVE_CACHED probe,
// which fails rather than wait, may run there. Engines mark their loop
// threads (MarkLoopThread); a test turns on WatchLoopOpens and checks
// LoopOpens after a workload: the opens above (openAt, pathByHandle) made
// on a marked thread are counted.
var loopThreads struct {
	mu    sync.Mutex
	ids   map[int]bool
	watch atomic.Bool
	opens atomic.Int64
	first atomic.Pointer[string] // the stack of the first counted open
}

// MarkLoopThread records the calling goroutine's OS thread, which it has
// locked (runtime.LockOSThread) for good, as an event loop's; unmark
// forgets it, before the thread ends.
func MarkLoopThread() (unmark func()) {
	tid := unix.Gettid()
	loopThreads.mu.Lock()
	if loopThreads.ids == nil {
		loopThreads.ids = map[int]bool{}
	}
	loopThreads.ids[tid] = true
	loopThreads.mu.Unlock()
	return func() {
		loopThreads.mu.Lock()
		delete(loopThreads.ids, tid)
		loopThreads.mu.Unlock()
	}
}

// WatchLoopOpens turns the count of opens made on loop threads on or off
// (off by default: a gettid per open is not free). For tests.
func WatchLoopOpens(on bool) { loopThreads.watch.Store(on) }

// LoopOpens returns how many opens ran on a marked loop thread while
// watched, and the stack of the first of them.
func LoopOpens() (n int64, first string) {
	if p := loopThreads.first.Load(); p != nil {
		first = *p
	}
	return loopThreads.opens.Load(), first
}

// checkNotLoop counts an open made on a loop thread (see loopThreads).
func checkNotLoop() {
	if !loopThreads.watch.Load() {
		return
	}
	tid := unix.Gettid()
	loopThreads.mu.Lock()
	onLoop := loopThreads.ids[tid]
	loopThreads.mu.Unlock()
	if onLoop {
		loopThreads.opens.Add(1)
		stack := string(debug.Stack())
		loopThreads.first.CompareAndSwap(nil, &stack)
	}
}
