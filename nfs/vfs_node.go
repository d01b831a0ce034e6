package nfs

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// node is a file or directory the server has handed out a handle for.
type node struct {
	exp    *export    // nil for the pseudo-root
	relMu  sync.Mutex // guards rel alone, so opens can repoint it under mu
	rel    string     // path relative to the export root, "." for the root
	fs     uint64     // filesystem id within the export (0: the export's own)
	dev    uint64     // its device: descriptors are checked by (dev, ino)
	ino    uint64
	mode   uint32 // file type bits (S_IFMT) when the node was made
	handle []byte
	gen    atomic.Uint64 // fileGen's hash of the kernel handle, 0 until asked

	mu     sync.Mutex
	fd     int // cached read descriptor, -1 until opened
	direct int // cached O_DIRECT descriptor, -1 until opened, -2 when refused
	wfd    int // cached read-write descriptor, -1 until opened
	dwfd   int // cached O_DIRECT write descriptor, -1 until opened, -2 when refused
	pfd    int // cached O_PATH descriptor (a directory's dirfd for *at calls), -1 until opened
	extent extentCache
	acl    aclCache // whether the file has a POSIX ACL (vfs_access.go)
	// size is what the last fstat of a READ, READ_PLUS or SEEK saw, for
	// opRead to skip its own (op_read.go, sizeHint); nil until then.
	size atomic.Pointer[sizeHint]
	// perm is the last caller's rights on the file, for the permission
	// check of every READ and WRITE (vfs_ioperm.go); nil until then.
	perm atomic.Pointer[ioPerm]

	used   atomic.Bool // touched since the fd cache's last sweep
	cached bool        // in the export's fd cache (under mu)

	// The hot path (pin, then readFD, directFD, writeFD or
	// directWriteFD, then unpin, of every READ and WRITE; statNode) takes
	// no lock when the file has its descriptor: pins is atomic, and pub
	// publishes the descriptors those return. Whoever closes them (under
	// mu) first withdraws pub, then checks pins, and backs off if a reply
	// pinned the node meanwhile; a reader pins first, then loads pub. So
	// a reader either sees the withdrawal and takes mu, or is seen by the
	// closer (closeUnpinnedLocked). Issue 10 goal 5: 16 goroutines
	// reading one file spent their mutex delay here once the state lock
	// was gone.
	pins atomic.Int32 // replies whose reads use the descriptors
	pub  struct{ read, direct, write, directWrite, path pubFD }
	dead atomic.Bool // dropped from the table: close the descriptors at the last unpin

	// Opens, delegations and locks are the file's, not the node's: see
	// fileState (state_file.go).

	// pl is the file's pNFS layout once loaded (pnfs_mds.go, layoutOf);
	// nil until then. layoutMu orders the changes to it (fence).
	pl       atomic.Pointer[nodeLayout]
	layoutMu sync.Mutex
}

// nodeKey names a file: export, filesystem within it, inode. Two
// filesystems under one export (crossmnt) may well reuse inode numbers.
type nodeKey struct {
	exp uint64
	fs  uint64
	ino uint64
}

func (n *node) key() nodeKey { return nodeKey{n.exp.id, n.fs, n.ino} }

func (n *node) isReg() bool { return n.mode&unix.S_IFMT == unix.S_IFREG }
func (n *node) isDir() bool { return n.mode&unix.S_IFMT == unix.S_IFDIR }

// isExportRoot reports whether n is its export's root directory (false
// for the pseudo-filesystem's nodes).
func (n *node) isExportRoot() bool {
	return n.exp != nil && n.fs == 0 && n.ino == n.exp.rootIno
}

// same reports whether two nodes stand for the same file (a node evicted
// from the table may live on in a request while a new one replaces it).
func (n *node) same(o *node) bool {
	return n == o || n != nil && o != nil && n.exp == o.exp && n.fs == o.fs && n.ino == o.ino
}

// fileTable maps handles to nodes. Lookups go by export, filesystem and
// inode, and take no lock (every PUTFH makes one); mu orders the changes
// and the walks over the table.
type fileTable struct {
	mu       sync.RWMutex
	nodes    lockFreeMap[nodeKey, *node]
	max      int
	evicting atomic.Bool
	busy     func(*node) bool // set by the server: does state refer to n?
}

// defaultMaxNodes bounds the nodes kept; past it, idle ones are forgotten
// (their handles resolve again through the kernel handle when next used).
const defaultMaxNodes = 1 << 20

func newFileTable() *fileTable {
	return &fileTable{max: defaultMaxNodes}
}

// evictIdle forgets nodes that nothing holds (no open or lock state, no
// reply in flight, no cached descriptor) until the table is at 3/4 of its
// bound. busy reports whether state refers to a node. The table's lock is
// taken per node forgotten, not for the whole scan (up to a million
// nodes): a LOOKUP on an event loop may be waiting to add one.
func (t *fileTable) evictIdle(busy func(*node) bool) {
	defer t.evicting.Store(false)
	for k, n := range t.nodes.all() {
		if t.nodes.len() <= t.max*3/4 {
			return
		}
		if n.isExportRoot() || busy(n) || !n.mu.TryLock() {
			continue
		}
		idle := n.pins.Load() == 0 && !n.cached
		n.mu.Unlock()
		if idle {
			t.mu.Lock()
			if t.nodes.get(k) == n { // not replaced since
				t.nodes.del(k)
			}
			t.mu.Unlock()
		}
	}
}

func (t *fileTable) get(k nodeKey) *node { return t.nodes.get(k) }

// put stores n unless a node for the same file exists, and returns the one
// kept. A node found under a new path (rename, hard link) is repointed.
func (t *fileTable) put(n *node) *node {
	k := n.key()
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.nodes.get(k); old != nil {
		old.setPath(n.rel)
		return old
	}
	t.nodes.put(k, n)
	if t.nodes.len() > t.max && t.evicting.CompareAndSwap(false, true) {
		go t.evictIdle(t.busy)
	}
	return n
}

func (t *fileTable) drop(n *node) {
	if n.exp == nil {
		return
	}
	t.mu.Lock()
	if t.nodes.get(n.key()) == n {
		t.nodes.del(n.key())
	}
	t.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dead.Store(true)
	n.closeUnpinnedLocked()
}

// pin keeps n's descriptors open while a reply's reads use them: a REMOVE
// racing with a READ must not close (and let the kernel reuse) a
// descriptor the engine is about to read. It takes no lock.
func (n *node) pin() { n.pins.Add(1) }

// unpin releases a pin; the last one closes the descriptors of a dropped
// node. drop stores dead before it looks at pins, and unpin looks at dead
// after its decrement, so one of the two sees the other and closes.
func (n *node) unpin() {
	if n.pins.Add(-1) == 0 && n.dead.Load() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.closeUnpinnedLocked()
	}
}

// closeUnpinnedLocked closes n's descriptors unless a reply has n pinned,
// and reports whether it did. The published descriptors are withdrawn
// before pins is read (see node): a reader that pins later finds none
// without the lock.
func (n *node) closeUnpinnedLocked() bool {
	n.withdrawLocked()
	if n.pins.Load() > 0 {
		n.publishLocked()
		return false
	}
	n.closeFDsLocked()
	return true
}

// pubFD is a descriptor published for use without the node's lock: the
// descriptor + 1, -1 when O_DIRECT was refused, 0 when there is none (or
// it is being closed): take the lock.
type pubFD struct{ v atomic.Int32 }

// set publishes fd: a descriptor, -1 (none) or -2 (refused).
func (p *pubFD) set(fd int) { p.v.Store(int32(max(fd, -2)) + 1) }

// get returns the published descriptor (-1: refused); ok is false when
// the caller must take the lock.
func (p *pubFD) get() (fd int, ok bool) {
	switch d := p.v.Load(); {
	case d > 0:
		return int(d) - 1, true
	case d < 0:
		return -1, true // refused
	}
	return -1, false
}

// publishLocked makes the cached descriptors available without the lock.
func (n *node) publishLocked() {
	read := n.fd
	if read < 0 {
		read = n.wfd // a read-write descriptor reads as well
	}
	n.pub.read.set(read)
	n.pub.direct.set(n.direct)
	n.pub.write.set(n.wfd)
	n.pub.directWrite.set(n.dwfd)
	n.pub.path.set(n.pfd)
}

// withdrawLocked unpublishes the descriptors: from now on users take mu.
func (n *node) withdrawLocked() {
	n.pub.read.set(-1)
	n.pub.direct.set(-1)
	n.pub.write.set(-1)
	n.pub.directWrite.set(-1)
	n.pub.path.set(-1)
}

func (t *fileTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, n := range t.nodes.all() {
		n.closeFDs()
		t.nodes.del(k)
	}
}

func (n *node) closeFDs() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closeFDsLocked()
}

func (n *node) closeFDsLocked() {
	n.forgetLeaseLocked() // the lease goes with its descriptor (vfs_lease.go)
	n.withdrawLocked()
	if n.fd >= 0 && n.fd != n.wfd {
		unix.Close(n.fd)
	}
	n.fd = -1
	if n.direct >= 0 {
		unix.Close(n.direct)
	}
	n.direct = -1
	if n.wfd >= 0 {
		unix.Close(n.wfd)
		n.wfd = -1
	}
	if n.dwfd >= 0 {
		unix.Close(n.dwfd)
	}
	n.dwfd = -1
	if n.pfd >= 0 {
		unix.Close(n.pfd)
	}
	n.pfd = -1
}

// pathFD returns n's cached O_PATH descriptor, opened and checked on first
// use, and pinned: the caller calls n.unpin when done with it. A directory
// that LOOKUP, CREATE, REMOVE... work in stays open between requests, so
// each of them costs its own *at call and not a confined open, an fstat
// and a close of the directory as well. Like the data descriptors it
// follows the inode, not the path: a rename does not disturb it.
func (n *node) pathFD() (int, error) {
	n.pin()
	n.used.Store(true)
	if fd, ok := n.pub.path.get(); ok && fd >= 0 {
		return fd, nil
	}
	fd, err := n.openPathFD()
	if err != nil {
		n.unpin()
	}
	return fd, err
}

// openPathFD opens (once) and publishes n's O_PATH descriptor.
func (n *node) openPathFD() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pfd < 0 {
		fd, err := n.open(unix.O_PATH, nil)
		if err != nil {
			return -1, err
		}
		n.pfd = fd
		n.exp.fds.opened(n)
		// Pinned by the caller even on a dropped node: its last unpin
		// closes the descriptor.
		n.publishLocked()
	}
	return n.pfd, nil
}

// fstatCached fills st from n's published read (or read-write)
// descriptor, without the lock; false when it has none open.
func (n *node) fstatCached(st *unix.Stat_t) (bool, error) {
	n.pin()
	defer n.unpin()
	fd, ok := n.pub.read.get()
	if !ok || fd < 0 {
		return false, nil
	}
	n.used.Store(true)
	return true, unix.Fstat(fd, st)
}

// hasOpenFD reports whether n's attributes (and a regular file's data)
// can be had through a descriptor n keeps open, with no path walk: a
// directory's O_PATH one, a regular file's read (or read-write) one. The
// answer can be stale by the time it is used (the fd cache may close the
// descriptor in between); callers use it only to choose where work runs.
func (n *node) hasOpenFD() bool {
	p := &n.pub.read
	switch {
	case n.isDir():
		p = &n.pub.path
	case !n.isReg():
		return false
	}
	fd, ok := p.get()
	return ok && fd >= 0
}

// anyFD returns a descriptor of n for calls that take any kind (paths
// through /proc/self/fd, faccessat2 with AT_EMPTY_PATH) and the function
// that releases it: one n keeps open when there is one, so the ACL checks
// of an op the event loop runs (ACCESS, READ of a file opened before)
// and a SETATTR walk no path, else a confined O_PATH open, closed by
// done.
func (n *node) anyFD() (fd int, done func(), err error) {
	n.pin()
	for _, p := range [...]*pubFD{&n.pub.path, &n.pub.read} {
		if d, ok := p.get(); ok && d >= 0 {
			return d, n.unpin, nil
		}
	}
	n.unpin()
	if fd, err = n.open(unix.O_PATH, nil); err != nil {
		return -1, nil, err
	}
	return fd, func() { unix.Close(fd) }, nil
}

// writeFD returns a cached read-write descriptor for a regular file. The
// caller has checked permission; the first open happens as the caller.
// Like readFD, a cached one comes without the lock to a caller that
// pinned n.
func (n *node) writeFD(cr Cred) (int, error) {
	if fd, ok := n.pub.write.get(); ok {
		n.touch()
		return fd, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.used.Store(true)
	if n.wfd >= 0 {
		return n.wfd, nil
	}
	if !n.isReg() {
		return -1, errNotRegular
	}
	fd, err := n.open(unix.O_RDWR, &cr)
	if err != nil {
		return -1, err
	}
	n.wfd = fd
	n.publishLocked()
	n.exp.fds.opened(n)
	return fd, nil
}

// adoptWriteFD keeps fd (read-write, just opened and checked) as n's
// cached descriptor unless it has one; it reports whether it kept it.
func (n *node) adoptWriteFD(fd int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.wfd >= 0 {
		return false
	}
	n.wfd = fd
	n.publishLocked()
	n.exp.fds.opened(n)
	return true
}

// newNode returns a node for the file of export e at rel whose attributes
// are st, not yet in the table. Nil when st's device is not part of the
// export (a mount the export does not cross). fd, when not -1, is a
// descriptor of the file, used to register a newly crossed filesystem.
func newNode(e *export, rel string, st *unix.Stat_t, fd int) *node {
	f := e.fsByDev(st.Dev, fd)
	if f == nil {
		return nil
	}
	return &node{exp: e, rel: rel, fs: f.id, dev: st.Dev, ino: st.Ino, mode: st.Mode & unix.S_IFMT,
		fd: -1, direct: -1, wfd: -1, dwfd: -1, pfd: -1}
}

func (n *node) path() string {
	n.relMu.Lock()
	defer n.relMu.Unlock()
	return n.rel
}

func (n *node) setPath(rel string) {
	n.relMu.Lock()
	n.rel = rel
	n.relMu.Unlock()
}

// readFD returns a cached read-only descriptor for a regular file. The
// caller has pinned n (or does not use the descriptor): then a cached one
// comes without the lock.
func (n *node) readFD() (int, error) {
	if fd, ok := n.pub.read.get(); ok {
		n.touch()
		return fd, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.used.Store(true)
	if n.fd >= 0 {
		return n.fd, nil
	}
	if n.wfd >= 0 {
		// A read-write descriptor reads as well: one open, not two.
		return n.wfd, nil
	}
	if !n.isReg() {
		return -1, errNotRegular
	}
	fd, err := n.open(unix.O_RDONLY, nil)
	if err != nil {
		return -1, err
	}
	n.fd = fd
	n.publishLocked()
	n.exp.fds.opened(n)
	return fd, nil
}

// touch marks n used for the fd cache's clock, writing the flag only when
// it changes: every READ of a file would otherwise store to one shared
// cache line.
func (n *node) touch() {
	if !n.used.Load() {
		n.used.Store(true)
	}
}

// directFD returns a cached O_DIRECT descriptor for reading, or -1 when
// the filesystem refuses O_DIRECT for this file. Like readFD, a cached one
// comes without the lock to a caller that pinned n.
func (n *node) directFD() int {
	if fd, ok := n.pub.direct.get(); ok {
		n.touch()
		return fd
	}
	return n.cachedDirect(&n.direct, unix.O_RDONLY)
}

// directWriteFD returns a cached O_DIRECT descriptor for writing, or -1,
// without the lock once cached, like directFD.
func (n *node) directWriteFD() int {
	if fd, ok := n.pub.directWrite.get(); ok {
		n.touch()
		return fd
	}
	return n.cachedDirect(&n.dwfd, unix.O_WRONLY)
}

// cachedDirect opens (once) an O_DIRECT descriptor kept in *slot: -1
// means not opened yet, -2 refused. The open is checked like every other
// (node.open): a path swapped since the handle was issued gives no
// descriptor.
func (n *node) cachedDirect(slot *int, flags int) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch *slot {
	case -2:
		return -1
	case -1:
	default:
		return *slot
	}
	if !n.isReg() || n.dead.Load() {
		// A dropped file gets no new descriptor: nothing would close it
		// once its last reply is gone.
		return -1
	}
	fd, err := n.open(flags|unix.O_DIRECT, nil)
	if err == unix.ESTALE {
		// Not refused for good: the file may be found again by its path.
		return -1
	}
	if err != nil {
		*slot = -2
		n.publishLocked()
		return -1
	}
	*slot = fd
	n.publishLocked()
	n.exp.fds.opened(n)
	return fd
}
