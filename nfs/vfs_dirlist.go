package nfs

import (
	"encoding/binary"
	"math"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// READDIR cookies are the filesystem's own d_off values, as knfsd sends
// them (fs/nfsd/vfs.c nfsd_readdir): the d_off of an entry is where reading
// resumes after it, so a READDIR at cookie C opens the directory, seeks it
// to C and reads getdents64 from there. ext4 gives name hashes, tmpfs
// (Linux 6.6 and later), xfs and btrfs positions that survive creates and
// removes; a cookie stays valid while the directory changes and a listing
// costs time linear in the entries returned. Nothing is kept between calls:
// the directory is opened per READDIR and closed before the reply leaves.
//
// Filesystems whose d_off shift when the directory changes (overlayfs
// merged directories, tmpfs before Linux 6.6) may repeat or skip entries of
// a directory changed mid-listing, as they do under knfsd.

// dirent is one directory entry read from a dirSource.
type dirent struct {
	name   string
	cookie uint64
}

// dirSource yields a directory's entries in cookie order, from a cookie on.
// ok is false at the end of the directory.
type dirSource interface {
	next() (ent dirent, ok bool, err error)
}

// firstCookie is the smallest cookie a READDIR reply may carry: 0 means
// "from the start" and 1, 2 are reserved (RFC 8881 §18.23.3: "cookie values
// of 1 and 2 are reserved").
const firstCookie = 3

// direntBufs holds getdents64 buffers. 64 KiB: a reply's worth of entries
// for the largest maxcount a client is likely to send in one getdents64.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// dirStream reads a directory with getdents64.
type dirStream struct {
	fd       int
	bufp     *[]byte
	buf      []byte // the part getdents64 fills
	pos, end int
	eof      bool
	ino      uint64 // d_ino of the entry next returned last (NFSv3 READDIR)
}

// openDirStream opens directory rel of exp positioned at cookie. want is
// about how many bytes of entries the caller will take: getdents64 reads
// that much at a time (at least 4 KiB), not the whole directory. A cookie
// the directory cannot seek to gives NFS4ERR_BAD_COOKIE.
func openDirStream(dir *node, cookie uint64, want int) (*dirStream, nfs4.Status) {
	if cookie > math.MaxInt64 {
		// lseek takes a signed offset; such a cookie was never handed out.
		return nil, nfs4.ErrBadCookie
	}
	fd, err := dir.open(unix.O_RDONLY|unix.O_DIRECTORY, nil)
	if err == unix.ENOENT {
		err = unix.ESTALE
	}
	if err != nil {
		return nil, errno(err)
	}
	if cookie != 0 {
		if _, err := unix.Seek(fd, int64(cookie), unix.SEEK_SET); err != nil {
			unix.Close(fd)
			if err == unix.EINVAL {
				return nil, nfs4.ErrBadCookie
			}
			return nil, errno(err)
		}
	}
	bufp := direntBufs.Get().(*[]byte)
	size := min(max(want, 4<<10), len(*bufp))
	return &dirStream{fd: fd, bufp: bufp, buf: (*bufp)[:size]}, nfs4.OK
}

// close closes the directory and gives the buffer back.
func (ds *dirStream) close() {
	unix.Close(ds.fd)
	direntBufs.Put(ds.bufp)
	ds.bufp, ds.buf = nil, nil
}

// next returns the next entry other than "." and "..": NFSv4 never lists
// them (RFC 8881 §18.23.3).
func (ds *dirStream) next() (dirent, bool, error) {
	for {
		if ds.pos >= ds.end {
			if ds.eof {
				return dirent{}, false, nil
			}
			if err := ds.fill(); err != nil {
				return dirent{}, false, err
			}
			continue
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		rec := ds.buf[ds.pos:ds.end]
		reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
		if reclen < 20 || reclen > len(rec) {
			return dirent{}, false, unix.EIO
		}
		ds.pos += reclen
		off := binary.NativeEndian.Uint64(rec[8:16])
		name := rec[19:reclen]
		for i, b := range name {
			if b == 0 {
				name = name[:i]
				break
			}
		}
		if isDotName(name) {
			continue
		}
		ds.ino = binary.NativeEndian.Uint64(rec[0:8])
		return dirent{name: string(name), cookie: off}, true, nil
	}
}

// fill reads the next batch of entries.
func (ds *dirStream) fill() error {
	for {
		n, err := unix.Getdents(ds.fd, ds.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		ds.pos, ds.end, ds.eof = 0, n, n == 0
		return nil
	}
}

func isDotName(name []byte) bool {
	return len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.'
}
