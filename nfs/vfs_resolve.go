package nfs

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// errStale is returned when a handle names nothing the server can find.
var errStale = errors.New("stale file handle")

// resolve turns a handle into a node, or returns an NFS status. A handle
// the node table knows, byte for byte, is the fast path; any other must
// carry a good MAC before the server touches the filesystem for it, and
// is then found through its kernel handle — never by walking the export.
func (s *Server) resolve(h []byte) (*node, nfs4.Status) {
	if len(h) >= 2 && h[0] == fhVersion && h[1] == fhPseudo {
		t := s.table()
		if len(h) != len(pseudoHandle) || !t.pseudo {
			return nil, nfs4.ErrBadhandle
		}
		if d := t.byHandle[string(h)]; d != nil {
			return d.node, nfs4.OK
		}
		// A pseudo directory a reload removed.
		return nil, nfs4.ErrStale
	}
	f, ok := parseHandle(h)
	if !ok {
		return nil, nfs4.ErrBadhandle
	}
	if n := s.files.get(nodeKey{f.export, f.fs, f.ino}); n != nil && sameHandle(n, h) {
		return n, nfs4.OK
	}
	if !s.fhKey.valid(h) {
		return nil, nfs4.ErrBadhandle
	}
	e := s.exportByID(f.export)
	if e == nil {
		return nil, nfs4.ErrStale
	}
	if f.fs == 0 && f.ino == e.rootIno {
		if n := s.exportRoot(e); n != nil && sameHandle(n, h) {
			return n, nfs4.OK
		}
		return nil, nfs4.ErrStale
	}
	n, err := s.findLost(e, f, h)
	if err != nil {
		return nil, nfs4.ErrStale
	}
	return n, nfs4.OK
}

func (s *Server) exportByID(id uint64) *export {
	for _, e := range s.table().exports {
		if e.id == id {
			return e
		}
	}
	return nil
}

// findLost finds a file whose handle the server has not seen since it
// started (or forgot): open_by_handle_at on its filesystem, then the path
// the kernel gives for it, opened again by the confinement point and
// checked. A handle from before a restart whose file is gone, or that lies
// outside the export, is stale.
func (s *Server) findLost(e *export, f fhFields, h []byte) (*node, error) {
	var st unix.Stat_t
	rel, err := e.pathByHandle(f, &st)
	if err != nil {
		return nil, errStale
	}
	n := newNode(e, rel, &st, -1)
	if n == nil || n.fs != f.fs {
		return nil, errStale
	}
	// The path must lead, beneath the export root, to this very file.
	if err := n.stat(&st); err != nil {
		return nil, errStale
	}
	n.handle = append([]byte(nil), h...)
	return s.adopt(n), nil
}

// relOf is the path of fd relative to the export root, from /proc.
func (e *export) relOf(fd int) (string, error) {
	p, err := readlinkFD(fd)
	if err != nil {
		return "", err
	}
	if e.detached {
		// Paths in a detached clone are relative to the clone's root.
		p = e.root + p
		if p == e.root+"/" {
			p = e.root
		}
	}
	switch {
	case p == e.root:
		return ".", nil
	case strings.HasPrefix(p, e.root+"/") && !strings.HasSuffix(p, " (deleted)"):
		return p[len(e.root)+1:], nil
	}
	return "", errStale
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

// exportRoot returns the root node of export e.
func (s *Server) exportRoot(e *export) *node {
	if n := s.files.get(nodeKey{e.id, 0, e.rootIno}); n != nil {
		return n
	}
	var st unix.Stat_t
	if unix.Fstat(e.rootFD, &st) != nil {
		return nil
	}
	n := newNode(e, ".", &st, -1)
	kh, _, err := unix.NameToHandleAt(e.rootFD, "", unix.AT_EMPTY_PATH)
	n.handle = s.fhKey.makeHandle(e, 0, st.Ino, handleOrNil(kh, err))
	return s.files.put(n)
}

func handleOrNil(kh unix.FileHandle, err error) *unix.FileHandle {
	if err != nil {
		return nil
	}
	return &kh
}

// lookupChild finds name in directory dir and returns its node; st gets
// its attributes.
func (s *Server) lookupChild(dir *node, name string, st *unix.Stat_t) (*node, error) {
	dfd, err := dir.dirFD()
	if err != nil {
		return nil, err
	}
	defer dir.unpin()
	return s.lookupChildAt(dir, dfd, name, st)
}

// lookupChildAt is lookupChild with dir already open as dirfd (from
// dir.dirFD or another checked open of dir).
func (s *Server) lookupChildAt(dir *node, dirfd int, name string, st *unix.Stat_t) (*node, error) {
	if err := statChild(dirfd, name, st); err != nil {
		return nil, err
	}
	return s.nodeAt(dir, dirfd, name, st)
}

// nodeAt returns the node of the file name in dir (open as dirfd), whose
// attributes are st: the known one, repointed to this path, or a new one.
func (s *Server) nodeAt(dir *node, dirfd int, name string, st *unix.Stat_t) (*node, error) {
	e := dir.exp
	rel := joinRel(dir.path(), name)
	f := e.fsOfDev(st.Dev)
	if f == nil {
		// A filesystem crossed for the first time (crossmnt).
		fd, err := e.openAt(dirfd, name, unix.O_PATH, 0)
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
		if f = e.fsByDev(st.Dev, fd); f == nil {
			return nil, unix.ENOENT
		}
	}
	kh, _, err := unix.NameToHandleAt(dirfd, name, 0)
	khp := handleOrNil(kh, err)
	if old := s.files.get(nodeKey{e.id, f.id, st.Ino}); old != nil && old.isIncarnation(st.Mode&unix.S_IFMT, khp) {
		// The common case (a LOOKUP of a known file): no new handle to
		// sign.
		old.setPath(rel)
		return old, nil
	}
	n := &node{exp: e, rel: rel, fs: f.id, dev: st.Dev, ino: st.Ino, mode: st.Mode & unix.S_IFMT,
		fd: -1, direct: -1, wfd: -1, dwfd: -1, pfd: -1}
	n.handle = s.fhKey.makeHandle(e, f.id, st.Ino, khp)
	return s.adopt(n), nil
}

// adopt stores n, a node just made for a file found now, and returns the
// table's node for that file: the one it had (repointed to n's path), or
// n. A node with the same inode number but of another incarnation — the
// number was reused after the file was deleted: another type, or another
// kernel handle (which carries the inode's generation) — is dropped first,
// so the old file's handles go stale instead of naming the new file.
func (s *Server) adopt(n *node) *node {
	if old := s.files.get(n.key()); old != nil && !sameIncarnation(old, n) {
		s.files.drop(old)
	}
	return s.files.put(n)
}

// sameIncarnation reports whether two nodes of one inode number are the
// same file.
func sameIncarnation(a, b *node) bool {
	fb, ok := parseHandle(b.handle)
	if !ok || len(fb.kernel) == 0 {
		return a.mode == b.mode
	}
	kh := unix.NewFileHandle(fb.ktype, fb.kernel)
	return a.isIncarnation(b.mode, &kh)
}

// isIncarnation reports whether n is the file of type mode (S_IFMT bits)
// whose kernel handle is kh (nil: none known).
func (n *node) isIncarnation(mode uint32, kh *unix.FileHandle) bool {
	if n.mode != mode {
		return false
	}
	f, ok := parseHandle(n.handle)
	if !ok || len(f.kernel) == 0 || kh == nil || len(kh.Bytes()) == 0 {
		return true // no generation to tell them apart
	}
	return f.ktype == kh.Type() && string(f.kernel) == string(kh.Bytes())
}

// fsOfDev returns the export's filesystem on device dev, if known.
func (e *export) fsOfDev(dev uint64) *filesys {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byDev[dev]
}

// nodeOfPath returns the node of the directory at rel (LOOKUPP's parent:
// a path the server stored, resolved beneath the export root like any
// other; whatever directory is there now is the parent).
func (s *Server) nodeOfPath(e *export, rel string) (*node, error) {
	fd, err := e.openBeneath(rel, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	n := newNode(e, rel, &st, fd)
	if n == nil {
		return nil, unix.ENOENT
	}
	kh, _, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
	n.handle = s.fhKey.makeHandle(e, n.fs, st.Ino, handleOrNil(kh, err))
	return s.adopt(n), nil
}
