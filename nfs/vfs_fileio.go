package nfs

import (
	"golang.org/x/sys/unix"
)

// FileIO moves file data for the operations that change files (WRITE,
// COMMIT, ALLOCATE, DEALLOCATE, COPY, CLONE). The engine provides one that
// plans direct and buffered I/O; nfs only says what to write where.
// Methods are called from the goroutine handling the request and may block.
type FileIO interface {
	// WriteAt writes data at off of f and returns how much was written,
	// from 0 to len(data) (never the -1 of a failed syscall); less than
	// len(data) comes with the error that stopped it.
	WriteAt(f File, data []byte, off int64) (int, error)
	// Sync makes the file's data (and metadata unless dataOnly) durable.
	Sync(fd int, dataOnly bool) error
	// Fallocate is fallocate(2).
	Fallocate(fd int, mode uint32, off, n int64) error
	// CopyRange copies n bytes between files and returns how many it did.
	CopyRange(src int, srcOff int64, dst int, dstOff int64, n int64) (int64, error)
	// Clone shares n bytes (0: to EOF) between files (FICLONERANGE).
	Clone(src int, srcOff int64, dst int, dstOff int64, n int64) error
}

// File is a file to write: a buffered read-write descriptor, and an
// O_DIRECT one opened on first use.
type File struct {
	FD     int
	node   *node
	direct int // used when node is nil; 0 means none
}

// NewFile describes a file by descriptors, for tools and tests: direct is
// an O_DIRECT descriptor or -1.
func NewFile(fd, direct int) File { return File{FD: fd, direct: direct + 1} }

// Direct returns an O_DIRECT descriptor for the file, or -1 when the
// filesystem refuses O_DIRECT. It is opened once and cached.
func (f File) Direct() int {
	if f.node == nil {
		return f.direct - 1
	}
	// FileIO runs as the caller (asCallerIO), but the descriptor is the
	// server's, shared by every writer and checked for each (writeTarget):
	// opened as the caller it would be refused, for good, for a file
	// whose mode the caller's open stateid outlives.
	fd := -1
	asServerFSUID(func() error {
		fd = f.node.directWriteFD()
		return nil
	})
	return fd
}

// Dev returns the device the file is on when the server knows it without
// a system call (ok false for files made with NewFile).
func (f File) Dev() (dev uint64, ok bool) {
	if f.node == nil {
		return 0, false
	}
	return f.node.dev, true
}

// DirectMin is the smallest write that FileIO implementations send
// O_DIRECT (reads are planned by the engine alone, see Read.DirectFD).
const DirectMin = 32 << 10

// PlainIO is FileIO with plain buffered syscalls: the fallback when no
// engine supplies one (tests, tools).
type PlainIO struct{}

// WriteAt implements FileIO.
func (PlainIO) WriteAt(f File, data []byte, off int64) (int, error) {
	fd := f.FD
	done := 0
	for done < len(data) {
		n, err := unix.Pwrite(fd, data[done:], off+int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// Sync implements FileIO.
func (PlainIO) Sync(fd int, dataOnly bool) error {
	if dataOnly {
		return unix.Fdatasync(fd)
	}
	return unix.Fsync(fd)
}

// Fallocate implements FileIO.
func (PlainIO) Fallocate(fd int, mode uint32, off, n int64) error {
	return unix.Fallocate(fd, mode, off, n)
}

// CopyRange implements FileIO.
func (PlainIO) CopyRange(src int, srcOff int64, dst int, dstOff int64, n int64) (int64, error) {
	var done int64
	for done < n {
		so, do := srcOff+done, dstOff+done
		m, err := unix.CopyFileRange(src, &so, dst, &do, int(min(n-done, 1<<30)), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		if m == 0 {
			break
		}
		done += int64(m)
	}
	return done, nil
}

// Clone implements FileIO.
func (PlainIO) Clone(src int, srcOff int64, dst int, dstOff int64, n int64) error {
	return unix.IoctlFileCloneRange(dst, &unix.FileCloneRange{
		Src_fd: int64(src), Src_offset: uint64(srcOff), Src_length: uint64(n), Dest_offset: uint64(dstOff),
	})
}

// maxOffset is the largest file offset (the kernel's OFFSET_MAX): offsets
// travel as uint64 on the wire and as int64 to the kernel.
const maxOffset = 1<<63 - 1

// rangeFits reports whether n bytes at off stay within maxOffset, without
// computing off+n (which wraps near 2^64).
func rangeFits(off, n uint64) bool {
	return off <= maxOffset && n <= maxOffset-off
}

// writtenCount checks what a FileIO reported for a write of want bytes: a
// count outside [0, want] is a FileIO bug and counts as nothing written,
// and nothing written for a non-empty write always carries an error, so a
// failed write is never answered NFS4_OK.
func writtenCount(n, want int, err error) (int, error) {
	if n < 0 || n > want {
		n = 0
	}
	if n == 0 && want > 0 && err == nil {
		err = unix.EIO
	}
	return n, err
}
