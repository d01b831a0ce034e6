package nfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// File handle layout (opaque to clients, at most NFS4_FHSIZE bytes):
//
//	[0]     version (fhVersion)
//	[1]     kind: fhPseudo or fhObject
//	[2]     export id
//	[3]     reserved, zero
//	[4:12]  inode number
//	[12:16] kernel handle type (name_to_handle_at), 0 if none
//	[16:]   kernel handle bytes (at most 64)
//
// The inode number makes the handle stable across server restarts; the
// kernel handle, when the filesystem gives one, lets a restarted server
// reopen the file with open_by_handle_at without walking the export.
const (
	fhVersion   = 1
	fhPseudo    = 0
	fhObject    = 1
	fhHeader    = 16
	fhMaxKernel = 64
)

// node is a file or directory the server has handed out a handle for.
type node struct {
	exp    *export // nil for the pseudo-root
	rel    string  // path relative to the export root, "." for the root
	ino    uint64
	handle []byte

	mu     sync.Mutex
	fd     int // cached read descriptor, -1 until opened
	direct int // cached O_DIRECT descriptor, -1 until opened, -2 when refused
	wfd    int // cached read-write descriptor, -1 until opened
	dwfd   int // cached O_DIRECT write descriptor, -1 until opened, -2 when refused
	extent extentCache
	dir    *dirListing
	acl    aclCache // whether the file has a POSIX ACL (access.go)

	used   atomic.Bool // touched since the fd cache's last sweep
	cached bool        // in the export's fd cache (under mu)
	pins   int         // replies whose reads use the descriptors
	dead   bool        // dropped from the table: close the descriptors at the last unpin

	// Guarded by stateTable.mu, not mu.
	opens []*openState
	locks []lockRange
}

type nodeKey struct {
	exp int
	ino uint64
}

// same reports whether two nodes stand for the same file (a node evicted
// from the table may live on in a request while a new one replaces it).
func (n *node) same(o *node) bool {
	return n == o || n != nil && o != nil && n.exp == o.exp && n.ino == o.ino
}

// fileTable maps handles to nodes. Lookups go by export and inode.
type fileTable struct {
	mu       sync.RWMutex
	nodes    map[nodeKey]*node
	max      int
	evicting atomic.Bool
	busy     func(*node) bool // set by the server: does state refer to n?
}

// defaultMaxNodes bounds the nodes kept; past it, idle ones are forgotten
// (their handles resolve again through the kernel handle when next used).
const defaultMaxNodes = 1 << 20

func newFileTable() *fileTable {
	return &fileTable{nodes: make(map[nodeKey]*node), max: defaultMaxNodes}
}

// evictIdle forgets nodes that nothing holds (no open or lock state, no
// reply in flight, no cached descriptor) until the table is at 3/4 of its
// bound. busy reports whether state refers to a node.
func (t *fileTable) evictIdle(busy func(*node) bool) {
	defer t.evicting.Store(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, n := range t.nodes {
		if len(t.nodes) <= t.max*3/4 {
			return
		}
		if n.ino == n.exp.rootIno || busy(n) || !n.mu.TryLock() {
			continue
		}
		idle := n.pins == 0 && !n.cached
		n.mu.Unlock()
		if idle {
			delete(t.nodes, k)
		}
	}
}

func (t *fileTable) get(k nodeKey) *node {
	t.mu.RLock()
	n := t.nodes[k]
	t.mu.RUnlock()
	return n
}

// put stores n unless a node for the same file exists, and returns the one
// kept. A node found under a new path (rename, hard link) is repointed.
func (t *fileTable) put(n *node) *node {
	k := nodeKey{n.exp.id, n.ino}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.nodes[k]; old != nil {
		old.mu.Lock()
		old.rel = n.rel
		old.mu.Unlock()
		return old
	}
	t.nodes[k] = n
	if len(t.nodes) > t.max && t.evicting.CompareAndSwap(false, true) {
		go t.evictIdle(t.busy)
	}
	return n
}

func (t *fileTable) drop(n *node) {
	if n.exp == nil {
		return
	}
	t.mu.Lock()
	if t.nodes[nodeKey{n.exp.id, n.ino}] == n {
		delete(t.nodes, nodeKey{n.exp.id, n.ino})
	}
	t.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dead = true
	if n.pins == 0 {
		n.closeFDsLocked()
	}
}

// pin keeps n's descriptors open while a reply's reads use them: a REMOVE
// racing with a READ must not close (and let the kernel reuse) a
// descriptor the engine is about to read.
func (n *node) pin() {
	n.mu.Lock()
	n.pins++
	n.mu.Unlock()
}

// unpin releases a pin; the last one closes the descriptors of a dropped
// node.
func (n *node) unpin() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pins--
	if n.pins == 0 && n.dead {
		n.closeFDsLocked()
	}
}

func (t *fileTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, n := range t.nodes {
		n.closeFDs()
		delete(t.nodes, k)
	}
}

func (n *node) closeFDs() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closeFDsLocked()
}

func (n *node) closeFDsLocked() {
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
}

// writeFD returns a cached read-write descriptor for a regular file. The
// caller has checked permission; the first open happens as the caller.
func (n *node) writeFD(cr Cred) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.used.Store(true)
	if n.wfd >= 0 {
		return n.wfd, nil
	}
	var fd int
	err := asCaller(cr, func() error {
		var err error
		fd, err = n.exp.open(n.rel, unix.O_RDWR|unix.O_NOFOLLOW)
		return err
	})
	if err != nil {
		return -1, err
	}
	if err := n.sameFile(fd); err != nil {
		return -1, err
	}
	n.wfd = fd
	n.exp.fds.opened(n)
	return fd, nil
}

// sameFile checks that fd, just opened by n's path, is n's file; if the
// path now names another file the handle is stale, and fd is closed.
func (n *node) sameFile(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Ino != n.ino {
		unix.Close(fd)
		return unix.ESTALE
	}
	return nil
}

// adoptWriteFD keeps fd (read-write, just opened) as n's cached
// descriptor unless it has one; it reports whether it kept it.
func (n *node) adoptWriteFD(fd int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.wfd >= 0 {
		return false
	}
	n.wfd = fd
	n.exp.fds.opened(n)
	return true
}

// newNode returns a node for a file of export e, not yet in the table.
func newNode(e *export, rel string, ino uint64) *node {
	return &node{exp: e, rel: rel, ino: ino, fd: -1, direct: -1, wfd: -1, dwfd: -1}
}

func (n *node) path() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.rel
}

// openHow confines every open to the export: no "..", no absolute symlinks,
// no symlink that leads outside, no /proc magic links.
func openHow(flags int) *unix.OpenHow {
	return &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
}

// open opens rel inside the export with flags.
func (e *export) open(rel string, flags int) (int, error) { return e.openMode(rel, flags, 0) }

// openMode is open with a creation mode.
func (e *export) openMode(rel string, flags int, mode uint32) (int, error) {
	how := openHow(flags)
	how.Mode = uint64(mode)
	for {
		fd, err := unix.Openat2(e.rootFD, rel, how)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// stat returns the attributes of rel without following a final symlink.
func (e *export) stat(rel string, st *unix.Stat_t) error {
	fd, err := e.open(rel, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fstat(fd, st)
}

// readFD returns a cached read-only descriptor for a regular file.
func (n *node) readFD() (int, error) {
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
	fd, err := n.exp.open(n.rel, unix.O_RDONLY|unix.O_NOFOLLOW)
	if err != nil {
		return -1, err
	}
	if err := n.sameFile(fd); err != nil {
		return -1, err
	}
	n.fd = fd
	n.exp.fds.opened(n)
	return fd, nil
}

// directFD returns a cached O_DIRECT descriptor for reading, or -1 when
// the filesystem refuses O_DIRECT for this file.
func (n *node) directFD() int { return n.cachedDirect(&n.direct, unix.O_RDONLY) }

// directWriteFD returns a cached O_DIRECT descriptor for writing, or -1.
func (n *node) directWriteFD() int { return n.cachedDirect(&n.dwfd, unix.O_WRONLY) }

// cachedDirect opens (once) an O_DIRECT descriptor kept in *slot: -1
// means not opened yet, -2 refused.
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
	fd, err := n.exp.open(n.rel, flags|unix.O_NOFOLLOW|unix.O_DIRECT)
	if err != nil {
		*slot = -2
		return -1
	}
	*slot = fd
	n.exp.fds.opened(n)
	return fd
}

// makeHandle builds the handle for a file of export e.
func makeHandle(e *export, rel string, ino uint64) []byte {
	h := make([]byte, fhHeader, fhHeader+fhMaxKernel)
	h[0], h[1], h[2] = fhVersion, fhObject, byte(e.id)
	binary.BigEndian.PutUint64(h[4:], ino)
	kh, mnt, err := unix.NameToHandleAt(e.rootFD, rel, 0)
	if err == nil && mnt == e.mountID && len(kh.Bytes()) <= fhMaxKernel {
		binary.BigEndian.PutUint32(h[12:], uint32(kh.Type()))
		h = append(h, kh.Bytes()...)
	}
	return h
}

var pseudoHandle = []byte{fhVersion, fhPseudo, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// errStale is returned when a handle names nothing the server can find.
var errStale = errors.New("stale file handle")

// resolve turns a handle into a node, or returns an NFS status.
func (s *Server) resolve(h []byte) (*node, uint32) {
	if len(h) < fhHeader || h[0] != fhVersion || h[3] != 0 {
		return nil, nfs4.ErrBadhandle
	}
	switch h[1] {
	case fhPseudo:
		if !s.pseudo || len(h) != fhHeader {
			return nil, nfs4.ErrBadhandle
		}
		return s.pseudoRoot, nfs4.OK
	case fhObject:
	default:
		return nil, nfs4.ErrBadhandle
	}
	id := int(h[2])
	if id < 1 || id > len(s.exports) {
		return nil, nfs4.ErrStale
	}
	e := s.exports[id-1]
	ino := binary.BigEndian.Uint64(h[4:])
	if n := s.files.get(nodeKey{id, ino}); n != nil {
		// Handles are unique: any other bytes naming this inode are not
		// one we issued (or name an earlier file with a reused inode).
		if !bytes.Equal(n.handle, h) {
			return nil, nfs4.ErrStale
		}
		return n, nfs4.OK
	}
	rel, err := s.findLost(e, h, ino)
	if err != nil {
		return nil, nfs4.ErrStale
	}
	n := newNode(e, rel, ino)
	n.handle = append([]byte(nil), h...)
	return s.files.put(n), nfs4.OK
}

// findLost finds the path of a file whose handle the server has not seen
// since it started: by the kernel handle when it may, else by walking the
// export for the inode (slow, once per file after a restart, and only when
// the kernel could not answer: a kernel that says "stale" is believed, so
// forged handles cannot make the server walk the export over and over).
func (s *Server) findLost(e *export, h []byte, ino uint64) (string, error) {
	if ino == e.rootIno {
		return ".", nil
	}
	rel, err := e.byKernelHandle(h)
	switch {
	case err == nil:
		return rel, nil
	case err != errNoKernelHandle:
		return "", errStale
	}
	return e.walkFor(ino)
}

// errNoKernelHandle means the handle carries no kernel handle or the kernel
// would not resolve it for us (no CAP_DAC_READ_SEARCH).
var errNoKernelHandle = errors.New("no usable kernel handle")

// byKernelHandle reopens a file with open_by_handle_at (needs
// CAP_DAC_READ_SEARCH) and checks that it lies inside the export, so a
// forged handle never reaches a file outside it.
func (e *export) byKernelHandle(h []byte) (string, error) {
	typ := int32(binary.BigEndian.Uint32(h[12:]))
	if typ == 0 || len(h) <= fhHeader {
		return "", errNoKernelHandle
	}
	fd, err := unix.OpenByHandleAt(e.rootFD, unix.NewFileHandle(typ, h[fhHeader:]), unix.O_PATH|unix.O_CLOEXEC)
	if err == unix.EPERM || err == unix.EOPNOTSUPP {
		return "", errNoKernelHandle
	}
	if err != nil {
		return "", errStale
	}
	defer unix.Close(fd)
	p, err := readlinkFD(fd)
	if err != nil {
		return "", errStale
	}
	if p == e.root {
		return ".", nil
	}
	if !strings.HasPrefix(p, e.root+"/") {
		return "", errStale
	}
	return p[len(e.root)+1:], nil
}

// walkFor searches the export for an inode.
// One walk at a time per export: a client sending forged handles slows
// only the lookups of lost handles, not the server.
func (e *export) walkFor(ino uint64) (string, error) {
	e.walkMu.Lock()
	defer e.walkMu.Unlock()
	var found string
	err := filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Ino == ino {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	if err != nil || found == "" {
		return "", errStale
	}
	rel, err := filepath.Rel(e.root, found)
	if err != nil {
		return "", errStale
	}
	return rel, nil
}

func readlinkFD(fd int) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlink("/proc/self/fd/"+itoa(fd), buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func itoa(v int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// lookupChild finds name in directory dir and returns its node.
func (s *Server) lookupChild(dir *node, name string, st *unix.Stat_t) (*node, error) {
	rel := joinRel(dir.path(), name)
	if err := dir.exp.stat(rel, st); err != nil {
		return nil, err
	}
	if n := s.files.get(nodeKey{dir.exp.id, st.Ino}); n != nil {
		n.mu.Lock()
		n.rel = rel
		n.mu.Unlock()
		return n, nil
	}
	n := newNode(dir.exp, rel, st.Ino)
	n.handle = makeHandle(dir.exp, rel, st.Ino)
	return s.files.put(n), nil
}

func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// parentRel returns the parent of rel, "." for top-level names.
func parentRel(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "."
	}
	return rel[:i]
}

// checkName validates a component name from the wire.
func checkName(name []byte) uint32 {
	if len(name) == 0 {
		return nfs4.ErrInval
	}
	if len(name) > nfs4.MaxNameLen {
		return nfs4.ErrNametoolong
	}
	if string(name) == "." || string(name) == ".." {
		return nfs4.ErrBadname
	}
	for _, c := range name {
		if c == '/' || c == 0 {
			return nfs4.ErrBadchar
		}
	}
	return nfs4.OK
}

// errno maps a syscall error to an NFS status.
func errno(err error) uint32 {
	var en unix.Errno
	if !errors.As(err, &en) {
		if errors.Is(err, errStale) {
			return nfs4.ErrStale
		}
		return nfs4.ErrIO
	}
	switch en {
	case unix.EPERM:
		return nfs4.ErrPerm
	case unix.ENOENT:
		return nfs4.ErrNoent
	case unix.EACCES:
		return nfs4.ErrAccess
	case unix.EEXIST:
		return nfs4.ErrExist
	case unix.EXDEV:
		return nfs4.ErrXdev
	case unix.ENOTDIR:
		return nfs4.ErrNotdir
	case unix.EISDIR:
		return nfs4.ErrIsdir
	case unix.EINVAL:
		return nfs4.ErrInval
	case unix.EFBIG:
		return nfs4.ErrFbig
	case unix.ENOSPC:
		return nfs4.ErrNospc
	case unix.EROFS:
		return nfs4.ErrRofs
	case unix.EMLINK:
		return nfs4.ErrMlink
	case unix.ENAMETOOLONG:
		return nfs4.ErrNametoolong
	case unix.ENOTEMPTY:
		return nfs4.ErrNotempty
	case unix.EDQUOT:
		return nfs4.ErrDquot
	case unix.ESTALE:
		return nfs4.ErrStale
	case unix.ELOOP:
		return nfs4.ErrSymlink
	case unix.ENXIO:
		return nfs4.ErrNxio
	case unix.EOPNOTSUPP:
		return nfs4.ErrNotsupp
	}
	return nfs4.ErrIO
}
