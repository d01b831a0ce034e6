package nfs

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// export is one exported directory.
//
// Crossing rule (knfsd's, exports(5)): without crossmnt, a filesystem
// mounted inside the export is not served; its mount point shows the
// directory underneath, as on the exported filesystem itself. The server
// gets that view from a private, non-recursive clone of the export's mount
// (open_tree OPEN_TREE_CLONE): submounts simply are not in it, so no path
// can reach them. With crossmnt the export is opened as it is, submounts
// included, and each filesystem gets its own fsid, so clients see the
// crossing and make a submount of their own.
type export struct {
	id       uint64 // stable: from fsid= or the filesystem and path
	name     string
	root     string // absolute, symlinks resolved
	rootFD   int    // descriptor all opens are made beneath; not O_PATH, since open_by_handle_at needs a real one
	rootIno  uint64
	dev      uint64
	crossmnt bool
	detached bool // rootFD is a detached clone: /proc paths are relative to it
	fds      fdCache
	key      exportKey                    // what Reload compares to reuse the export
	rules    atomic.Pointer[[]ClientRule] // who may use it (admit.go); replaced by Reload

	mu       sync.Mutex
	fss      map[uint64]*filesys // by filesystem id (0: the export's own)
	byDev    map[uint64]*filesys
	lastScan time.Time
}

// filesys is one filesystem of an export: the export's own, or (crossmnt)
// one mounted inside it.
type filesys struct {
	id      uint64 // 0 for the export's own; else from statfs f_fsid
	dev     uint64
	mountFD int // a directory on it, for open_by_handle_at
	mountID int
	// noACL: the filesystem keeps no POSIX ACLs (mounted noacl, or a kind
	// without them), so the acl attribute is not offered for its files:
	// knfsd's IS_POSIXACL test in nfsd4_encode_fattr4.
	noACL bool
}

// noMountID stands for "name_to_handle_at gave no mount id".
const noMountID = -1

func newExport(e Export, canClone bool) (*export, error) {
	p, err := filepath.Abs(e.Path)
	if err != nil {
		return nil, err
	}
	p, err = filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Errorf("nfs: export %s: %w", e.Path, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("nfs: export %s: %w", e.Path, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("nfs: export %s is not a directory", e.Path)
	}
	name := e.Name
	if name == "" {
		name = filepath.Base(p)
	}
	fd, detached, err := openExportRoot(p, e.CrossMnt, canClone)
	if err != nil {
		return nil, fmt.Errorf("nfs: export %s: %w", e.Path, err)
	}
	var st unix.Stat_t
	var sfs unix.Statfs_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		unix.Close(fd)
		return nil, err
	}
	ex := &export{
		name: name, root: p, rootFD: fd, rootIno: st.Ino, dev: st.Dev,
		crossmnt: e.CrossMnt, detached: detached,
		fss: map[uint64]*filesys{}, byDev: map[uint64]*filesys{},
	}
	ex.id = exportID(e.FSID, fsidOf(&sfs, st.Dev), p)
	own := &filesys{id: 0, dev: st.Dev, mountFD: fd, mountID: mountIDOf(fd), noACL: !keepsPosixACLs(fd)}
	ex.fss[0], ex.byDev[st.Dev] = own, own
	ex.fds.max = defaultMaxOpenFiles
	return ex, nil
}

// openExportRoot opens the export's root: a non-recursive clone of its
// mount unless crossmnt (see export). Without CAP_SYS_ADMIN no clone can
// be made; then opens refuse to cross mounts (RESOLVE_NO_XDEV) instead, and
// mount points inside the export are simply not served.
func openExportRoot(p string, crossmnt, canClone bool) (fd int, detached bool, err error) {
	if !crossmnt && canClone {
		tree, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err == nil {
			// open_tree's descriptor is O_PATH; a real one keeps the clone
			// alive and serves open_by_handle_at.
			fd, err = unix.Openat2(tree, ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC})
			unix.Close(tree)
			return fd, true, err
		}
	}
	fd, err = unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return fd, false, err
}

// exportID derives the export's handle id: from fsid= when given (the
// administrator's promise that it names this export), else from the
// filesystem's fsid and the export's path. Either survives restarts and any
// reordering of the export list; a different filesystem mounted at the
// same path gets another id, so old handles go stale rather than name the
// wrong files.
func exportID(opt string, fsid uint64, path string) uint64 {
	h := sha256.New()
	if opt != "" {
		h.Write([]byte("fsid=" + opt))
	} else {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], fsid)
		h.Write(b[:])
		h.Write([]byte(path))
	}
	id := binary.BigEndian.Uint64(h.Sum(nil))
	if id == 0 {
		id = 1
	}
	return id
}

// fsidOf is a filesystem's identity from statfs: f_fsid, stable across
// reboots on disk filesystems (ext4 and xfs derive it from the UUID); the
// device number where a filesystem reports none.
func fsidOf(sfs *unix.Statfs_t, dev uint64) uint64 {
	v := uint64(uint32(sfs.Fsid.Val[0]))<<32 | uint64(uint32(sfs.Fsid.Val[1]))
	if v == 0 {
		v = dev | 1<<63
	}
	return v
}

func mountIDOf(fd int) int {
	if _, mnt, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH); err == nil {
		return mnt
	}
	return noMountID
}

// fsByID returns the export's filesystem with handle id id. An id not seen
// since the start is looked for among the mounts under the export
// (crossmnt only; at most once a second, and only for handles whose MAC
// checked).
func (e *export) fsByID(id uint64) *filesys {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.fss[id]; f != nil || !e.crossmnt {
		return f
	}
	if time.Since(e.lastScan) < time.Second {
		return nil
	}
	e.lastScan = time.Now()
	for _, mp := range mountsUnder(e.root) {
		rel := strings.TrimPrefix(mp[len(e.root):], "/")
		fd, err := e.openBeneath(rel, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || e.byDev[st.Dev] != nil {
			unix.Close(fd)
			continue
		}
		e.addFSLocked(fd, st.Dev)
	}
	return e.fss[id]
}

// fsByDev returns the filesystem of device dev, registering a crossed
// mount (crossmnt) whose root fd is (an O_PATH or real descriptor of) the
// object just found on it. nil: the device is not part of the export.
func (e *export) fsByDev(dev uint64, fd int) *filesys {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.byDev[dev]; f != nil || !e.crossmnt || fd < 0 {
		return f
	}
	// A real descriptor on the new filesystem: reopen fd through /proc,
	// which works for O_PATH descriptors too.
	rfd, err := unix.Open("/proc/self/fd/"+itoa(fd), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return e.addFSLocked(rfd, dev)
}

func (e *export) addFSLocked(fd int, dev uint64) *filesys {
	var sfs unix.Statfs_t
	if unix.Fstatfs(fd, &sfs) != nil {
		unix.Close(fd)
		return nil
	}
	id := fsidOf(&sfs, dev)
	if old := e.fss[id]; old != nil {
		// Same filesystem mounted twice under the export.
		unix.Close(fd)
		e.byDev[dev] = old
		return old
	}
	f := &filesys{id: id, dev: dev, mountFD: fd, mountID: mountIDOf(fd), noACL: !keepsPosixACLs(fd)}
	e.fss[id], e.byDev[dev] = f, f
	return f
}

// attrFsid is the fsid attribute of filesystem f of the export: the export
// id, and the filesystem's id as the minor half, so every filesystem has
// its own (the client detects crossings by it).
func (e *export) attrFsid(fsID uint64) (major, minor uint64) { return e.id, fsID }

// mountFD returns a descriptor on filesystem fsID of the export.
func (e *export) mountFD(fsID uint64) int {
	if fsID == 0 {
		return e.rootFD
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.fss[fsID]; f != nil {
		return f.mountFD
	}
	return e.rootFD
}

// aclsOn reports whether filesystem fsID of the export keeps POSIX ACLs.
func (e *export) aclsOn(fsID uint64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.fss[fsID]; f != nil {
		return !f.noACL
	}
	return !e.fss[0].noACL
}

// keepsPosixACLs reports whether the filesystem of fd keeps POSIX ACLs:
// reading a directory's access ACL is EOPNOTSUPP where it does not, and
// ENODATA (none set) or an answer where it does.
func keepsPosixACLs(fd int) bool {
	_, err := unix.Getxattr("/proc/self/fd/"+itoa(fd), xattrPosixACLAccess, nil)
	return err != unix.EOPNOTSUPP
}

func (e *export) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, f := range e.fss {
		if f.mountFD != e.rootFD {
			unix.Close(f.mountFD)
		}
	}
	unix.Close(e.rootFD)
}

// mountsUnder lists the mount points strictly under root from
// /proc/self/mountinfo.
func mountsUnder(root string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if strings.HasPrefix(mp, root+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for space...).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
