package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// IOMode is the write policy, knfsd's three I/O modes as one flag.
type IOMode int

const (
	// IODirect: aligned writes of smallMax or more go O_DIRECT; a
	// misaligned write of splitMin or more splits into a buffered head, an
	// O_DIRECT middle and a buffered tail (head and tail stay in the page
	// cache, where the read-modify-write of their pages is cheap); smaller
	// writes go plain buffered; on a filesystem without O_DIRECT, writes
	// of smallMax or more go RWF_DONTCACHE. The default.
	IODirect IOMode = iota
	// IODontcache: every write buffered with RWF_DONTCACHE (uncached
	// buffered I/O, Linux 6.14+), plain buffered where unsupported.
	IODontcache
	// IOBuffered: plain buffered writes.
	IOBuffered
)

// ParseIOMode reads the --io-mode flag.
func ParseIOMode(s string) (IOMode, error) {
	switch s {
	case "", "direct":
		return IODirect, nil
	case "dontcache":
		return IODontcache, nil
	case "buffered":
		return IOBuffered, nil
	}
	return 0, fmt.Errorf("io mode %q: want buffered, dontcache or direct", s)
}

func (m IOMode) String() string {
	return [...]string{"direct", "dontcache", "buffered"}[m]
}

// writeKind is how one part of a write is issued.
type writeKind int

const (
	wBuffered  writeKind = iota // plain pwrite
	wDontcache                  // pwritev2 with RWF_DONTCACHE
	wDirect                     // pwrite on the O_DIRECT descriptor
)

// writePart is a piece of a write: bytes [start, end) of the payload.
type writePart struct {
	kind       writeKind
	start, end int
}

// smallMax: direct mode writes anything smaller plain buffered, aligned or
// not (no alignment is even looked up). With RWF_DONTCACHE instead, 16 KiB
// writes measured 0.55x the MB/s at 2.4x the server CPU per GiB on
// ior-hard, 0.79x at 1.4x on ior-easy (BENCHMARKS.md, "Small writes"):
// each small uncached write starts its own writeback and drops its pages,
// which the next write to the same page brings back.
const smallMax = nfs.DirectMin

// splitMin is the smallest misaligned write that direct mode splits into a
// buffered head, an O_DIRECT middle and a buffered tail. Below it the whole
// write goes through the page cache: for IO500 ior-hard's 47008-byte
// transfers the split measured 3.8x slower than plain buffered writes (and
// 2x slower than whole RWF_DONTCACHE writes) on this project's machines,
// since each ~40 KiB O_DIRECT middle is a synchronous, file-extending
// device write while the neighbours' edges share its boundary pages
// (BENCHMARKS.md, "Write I/O modes").
const splitMin = 256 << 10

// planWrite cuts a write of n bytes at off into parts. align is the file's
// O_DIRECT offset alignment (0: no O_DIRECT); split false keeps misaligned
// large writes whole (buffered, RWF_DONTCACHE) instead of splitting them.
func planWrite(mode IOMode, split bool, off int64, n, align int) []writePart {
	aligned := align > 0 && off%int64(align) == 0 && n%align == 0
	switch {
	case n == 0:
		return nil
	case mode == IOBuffered:
		return []writePart{{wBuffered, 0, n}}
	case mode == IODontcache:
		return []writePart{{wDontcache, 0, n}}
	case n < smallMax:
		return []writePart{{wBuffered, 0, n}} // small: the page cache absorbs it
	case align == 0:
		return []writePart{{wDontcache, 0, n}} // no O_DIRECT here
	case aligned:
		return []writePart{{wDirect, 0, n}}
	case !split:
		return []writePart{{wDontcache, 0, n}}
	case n < splitMin:
		return []writePart{{wBuffered, 0, n}}
	}
	a := int64(align)
	midStart := (off + a - 1) / a * a
	midEnd := (off + int64(n)) / a * a
	var parts []writePart
	if h := int(midStart - off); h > 0 {
		parts = append(parts, writePart{wBuffered, 0, h})
	}
	parts = append(parts, writePart{wDirect, int(midStart - off), int(midEnd - off)})
	if t := int(midEnd - off); t < n {
		parts = append(parts, writePart{wBuffered, t, n})
	}
	return parts
}

// FileIO is the engines' nfs.FileIO: it plans each write by IOMode and the
// file's O_DIRECT alignment (statx STATX_DIOALIGN).
type FileIO struct {
	nfs.PlainIO
	Mode IOMode
	// NoSplit keeps misaligned large writes whole in direct mode (for
	// measuring what the head/middle/tail split buys).
	NoSplit bool
	// Metrics, when set, counts writes by kind (direct, buffered, dontcache).
	Metrics *metrics.Set

	aligns      sync.Map    // device -> dioAlignment
	noDontcache atomic.Bool // RWF_DONTCACHE refused once: stop trying
	bufs        sync.Pool   // aligned bounce buffers for unaligned payloads
	rings       atomic.Pointer[ringIO]
	bounces     atomic.Int64 // O_DIRECT payloads copied for alignment
	// WritebackAfter, when above 0, starts writeback of a file once this
	// many bytes were written to it through the page cache since the
	// last start (see dirty). NewFileIO sets DefaultWritebackAfter.
	WritebackAfter int64
	dirtied        sync.Map // fd -> *atomic.Int64: page-cache bytes since the last start
}

type dioAlignment struct{ mem, off int }

// NewFileIO returns a FileIO writing in mode.
func NewFileIO(mode IOMode) *FileIO {
	return &FileIO{Mode: mode, WritebackAfter: DefaultWritebackAfter}
}

// DefaultWritebackAfter is FileIO.WritebackAfter's default. ior-hard (one
// shared file, 1 GiB in 47,008-byte writes), three alternating runs of
// each: 2, 8, 32 and 128 MiB all took the COMMIT from 0.53 s to 2-19 ms;
// 32 MiB gave the best write phase (1.08x the MB/s of none, medians),
// smaller ones rewrite more partly filled pages at the writers' front.
const DefaultWritebackAfter = 32 << 20

// WriteAt implements nfs.FileIO. It returns the bytes written, from 0 to
// len(data): a part that comes back short is resumed, and the first error
// ends the write with what was written before it.
func (f *FileIO) WriteAt(file nfs.File, data []byte, off int64) (int, error) {
	al := dioAlignment{}
	if f.Mode == IODirect && len(data) >= nfs.DirectMin {
		al = f.alignment(file)
	}
	parts := planWrite(f.Mode, !f.NoSplit, off, len(data), al.off)
	f.countWrite(file.FD, parts)
	// One part goes out as a plain pwrite from this worker goroutine: the
	// ring would only hand it to an io-wq thread (buffered writes block on
	// the file's lock) and wake us again, two more context switches per
	// WRITE (ior-hard, 47008-byte writes to one shared file: 60 % of the
	// server's samples were in io-wq threads). Several parts gain from
	// running concurrently.
	if r := f.rings.Load(); r != nil && len(parts) > 1 {
		return f.writeRing(r, file, parts, data, off, al)
	}
	done := 0
	for _, p := range parts {
		n, err := f.finish(file, p, data, off, al)
		done += n
		if p.kind == wBuffered {
			f.dirty(file.FD, n)
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// dirty counts n bytes written to fd through the page cache and, past
// WritebackAfter since the last time, starts writing the file's dirty
// pages back (sync_file_range SYNC_FILE_RANGE_WRITE: it starts the I/O and
// does not wait for it). An UNSTABLE write is followed by a COMMIT that
// waits for all of it; started early, the disk works while the client is
// still sending, instead of all at once when it commits (ior-hard's
// shared file: the COMMIT was 28 % of the write phase). The kernel's own
// writeback would only start at the dirty background limit, gigabytes on
// a server. Counts are kept per descriptor number, so the map is bounded
// by the descriptors open; a number reused by another file only starts
// that file's writeback a little early.
func (f *FileIO) dirty(fd, n int) {
	if f.WritebackAfter <= 0 || n <= 0 {
		return
	}
	v, ok := f.dirtied.Load(fd)
	if !ok {
		v, _ = f.dirtied.LoadOrStore(fd, new(atomic.Int64))
	}
	c := v.(*atomic.Int64)
	if c.Add(int64(n)) < f.WritebackAfter {
		return
	}
	c.Store(0)
	// Only a head start: an error here leaves the work to the COMMIT.
	unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// finish writes bytes [p.start, p.end) of data (the payload of a write at
// off) with plain syscalls, resuming after short writes, and returns how
// many it wrote: never negative, even when the syscall said -1.
func (f *FileIO) finish(file nfs.File, p writePart, data []byte, off int64, al dioAlignment) (int, error) {
	done := 0
	for p.start+done < p.end {
		at := p.start + done
		n, err := f.writePart(file, p, data[at:p.end], off+int64(at), al)
		done += max(n, 0)
		if err != nil {
			return done, err
		}
		if n <= 0 {
			return done, unix.EIO // no progress and no error: do not spin
		}
	}
	return done, nil
}

func (f *FileIO) writePart(file nfs.File, p writePart, b []byte, off int64, al dioAlignment) (int, error) {
	switch p.kind {
	case wDirect:
		if fd := file.Direct(); fd >= 0 {
			n, err := f.writeDirect(fd, b, off, al)
			if err != unix.EINVAL {
				return n, err
			}
			// EINVAL: this piece is not aligned after all (a resumed
			// short write); the page cache takes it.
		}
	case wDontcache:
		if !f.noDontcache.Load() {
			n, err := unix.Pwritev2(file.FD, [][]byte{b}, off, unix.RWF_DONTCACHE)
			if err != unix.EOPNOTSUPP {
				return n, err
			}
			// Kernels before 6.14 and filesystems without uncached
			// buffered I/O refuse the flag: stop asking.
			f.noDontcache.Store(true)
		}
	}
	return f.PlainIO.WriteAt(file, b, off)
}

// writeDirect writes through O_DIRECT, bouncing the payload through an
// aligned buffer when its memory is not aligned as the device needs.
func (f *FileIO) writeDirect(fd int, b []byte, off int64, al dioAlignment) (int, error) {
	if bp := f.alignedCopy(b, al); bp != nil {
		defer f.bufs.Put(bp)
		b = (*bp)[:len(b)]
	}
	return unix.Pwrite(fd, b, off)
}

// bounce returns a 4 KiB-aligned buffer of at least n bytes.
func (f *FileIO) bounce(n int) *[]byte {
	if v := f.bufs.Get(); v != nil {
		if bp := v.(*[]byte); cap(*bp) >= n {
			*bp = (*bp)[:n]
			return bp
		}
	}
	raw := make([]byte, n+4096)
	skip := (4096 - int(uintptr(unsafe.Pointer(&raw[0]))%4096)) % 4096
	b := raw[skip : skip+n]
	return &b
}

// alignment returns the O_DIRECT alignment of file's filesystem, cached
// per device (the server's node knows the device: no fstat per write).
func (f *FileIO) alignment(file nfs.File) dioAlignment {
	dev, ok := file.Dev()
	if !ok {
		var st unix.Stat_t
		if unix.Fstat(file.FD, &st) != nil {
			return dioAlignment{}
		}
		dev = st.Dev
	}
	if v, ok := f.aligns.Load(dev); ok {
		return v.(dioAlignment)
	}
	var sx unix.Statx_t
	al := dioAlignment{}
	if unix.Statx(file.FD, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &sx) == nil && sx.Mask&unix.STATX_DIOALIGN != 0 {
		al = dioAlignment{mem: int(sx.Dio_mem_align), off: int(sx.Dio_offset_align)}
	}
	f.aligns.Store(dev, al)
	return al
}

// writeRing submits all parts of a write at once through io_uring; a part
// that comes back short or refused is finished with plain syscalls.
func (f *FileIO) writeRing(r *ringIO, file nfs.File, parts []writePart, data []byte, off int64, al dioAlignment) (int, error) {
	bufs := make([][]byte, len(parts))
	fds := make([]int, len(parts))
	for i, p := range parts {
		bufs[i], fds[i] = data[p.start:p.end], file.FD
		if p.kind == wDirect {
			if fds[i] = file.Direct(); fds[i] < 0 {
				fds[i], parts[i].kind = file.FD, wBuffered
			} else if bp := f.alignedCopy(bufs[i], al); bp != nil {
				defer f.bufs.Put(bp)
				bufs[i] = (*bp)[:len(bufs[i])]
			}
		}
	}
	dontcache := !f.noDontcache.Load()
	var resBuf [3]int32
	res := r.run(len(parts), func(i int, s *ring.SQE) {
		s.PrepWrite(fds[i], bufs[i], uint64(off)+uint64(parts[i].start))
		if parts[i].kind == wDontcache && dontcache {
			s.OpFlags = unix.RWF_DONTCACHE
		}
	}, resBuf[:0])
	done := 0
	for i, p := range parts {
		n := int(max(res[i], 0))
		if n < len(bufs[i]) {
			if res[i] == -int32(unix.EOPNOTSUPP) && p.kind == wDontcache {
				f.noDontcache.Store(true)
			}
			// Finish (or redo) this part the plain way: a real error
			// (ENOSPC, EFBIG...) comes back again from the syscall.
			m, err := f.finish(file, writePart{p.kind, p.start + n, p.end}, data, off, al)
			n += m
			if err != nil {
				return done + n, err
			}
		}
		done += n
	}
	return done, nil
}

// alignedCopy returns an aligned copy of b when its memory is not aligned
// as O_DIRECT needs, or nil when b can be used as it is.
func (f *FileIO) alignedCopy(b []byte, al dioAlignment) *[]byte {
	if al.mem == 0 || uintptr(unsafe.Pointer(&b[0]))%uintptr(al.mem) == 0 {
		return nil
	}
	f.bounces.Add(1)
	bp := f.bounce(len(b))
	copy(*bp, b)
	return bp
}

// Sync implements nfs.FileIO: fsync or fdatasync through the ring when
// there is one.
func (f *FileIO) Sync(fd int, dataOnly bool) error {
	r := f.rings.Load()
	if r == nil {
		return f.PlainIO.Sync(fd, dataOnly)
	}
	var flags uint32
	if dataOnly {
		flags = ring.FsyncDatasync
	}
	var resBuf [1]int32
	res := r.run(1, func(_ int, s *ring.SQE) { s.PrepFsync(fd, flags) }, resBuf[:0])
	return errOf(res[0])
}

// Fallocate implements nfs.FileIO through the ring when there is one.
func (f *FileIO) Fallocate(fd int, mode uint32, off, n int64) error {
	r := f.rings.Load()
	if r == nil {
		return f.PlainIO.Fallocate(fd, mode, off, n)
	}
	var resBuf [1]int32
	res := r.run(1, func(_ int, s *ring.SQE) { s.PrepFallocate(fd, mode, uint64(off), uint64(n)) }, resBuf[:0])
	return errOf(res[0])
}

// useRings makes the file I/O go through r (nil: plain syscalls again).
func (f *FileIO) useRings(r *ringIO) { f.rings.Store(r) }

// writePayloadIndex is the record placement for WRITEs: the index of the
// payload byte that starts the O_DIRECT middle (the first page boundary of
// the file range), or -1 for records that are not a WRITE.
func writePayloadIndex(head []byte) int {
	dataOff, fileOff, ok := nfs.WriteAlign(head)
	if !ok {
		return -1
	}
	return dataOff + int((pageSize-fileOff%pageSize)%pageSize)
}
