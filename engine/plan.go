package engine

import (
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// This file is the one place that decides how a file read is done: through
// the page cache or O_DIRECT. nfs states what it needs (nfs.Read: file,
// offset, length, and DirectFD for an O_DIRECT descriptor opened on first
// use); both engines ask readPolicy.plan.

// dioMode is the O_DIRECT policy for file reads (Options.DirectIO).
type dioMode int

const (
	// dioAuto: O_DIRECT for ranges that are not in the page cache (cold),
	// buffered for those that are (hot). See readPolicy.cold.
	dioAuto dioMode = iota
	// dioOn uses O_DIRECT whenever the file has a direct descriptor and the
	// request is aligned, or large enough (dioMin) to widen to alignment.
	dioOn
	// dioOff never uses O_DIRECT.
	dioOff
)

// dioMin is the smallest misaligned request worth widening to an O_DIRECT
// read: below it the extra bytes read cost more than the copy a buffered
// read makes.
const dioMin = 32 << 10

// Why auto is "cold ranges direct": a buffered read of cached data never
// touches the device and costs one copy, while O_DIRECT always goes to the
// device (BenchmarkEngines, 2-vCPU VM, virtio disk, cached file: 1 MiB
// READs at 1745 MB/s buffered vs 429 MB/s O_DIRECT). A buffered read of
// uncached data costs the device read plus page-cache insertion, LRU work,
// the copy and later reclaim, all on the server's CPUs; O_DIRECT into our
// aligned buffers costs the device read only. cachestat(2) tells the two
// apart for about a syscall.

func parseDIO(s string) (dioMode, error) {
	switch s {
	case "", "auto":
		return dioAuto, nil
	case "on":
		return dioOn, nil
	case "off":
		return dioOff, nil
	}
	return 0, fmt.Errorf("engine: DirectIO %q: want auto, on or off", s)
}

// dioAlign is what O_DIRECT needs of a file (statx STATX_DIOALIGN): memory
// and file-offset alignment. Zero offset alignment means no O_DIRECT.
type dioAlign struct {
	mem, off int
}

// usable reports whether page-aligned buffers can serve O_DIRECT here.
func (a dioAlign) usable() bool {
	return a.off > 0 && a.mem > 0 && ring.Align%a.mem == 0
}

// ioPlan is how one nfs.Read is performed: read Len bytes at Off from FD
// into a buffer; the data the reply wants starts Skip bytes into it.
// Open marks a direct plan made on an event loop whose O_DIRECT
// descriptor is still to be opened (FD -1): see planLoop.
type ioPlan struct {
	Direct bool
	Open   bool
	FD     int
	Off    int64
	Len    int
	Skip   int
}

// readPolicy plans reads for one engine. It is safe for concurrent use.
type readPolicy struct {
	mode dioMode
	// files: buffered descriptor -> *fileInfo, so statx runs once per
	// file. A descriptor number reused for another file on a filesystem
	// with other alignment is caught by the read failing with EINVAL, which
	// falls back to a buffered read and forgets the entry (forget).
	files sync.Map
	// cold reports whether a range is (mostly) not in the page cache;
	// tests replace it.
	cold func(fd int, off int64, n int) bool

	// Counters for tests and measurements (stats); fixed counts reads
	// the io_uring engine made into registered buffers.
	direct, buffered, probes, fixed atomic.Uint64
}

func newReadPolicy(mode dioMode) *readPolicy {
	return &readPolicy{mode: mode, cold: uncached}
}

// plan picks buffered or O_DIRECT for rd. A misaligned O_DIRECT read is
// widened to aligned bounds; the reply then points into the middle of the
// buffer (Skip), so no byte is copied. The O_DIRECT descriptor is asked for
// (and opened, once per file) only when the answer is direct. The open
// can block: event loops call planLoop.
func (p *readPolicy) plan(rd *nfs.Read) ioPlan {
	return p.finish(p.planLoop(rd), rd)
}

// planLoop is plan for an event loop's thread, where nothing may walk a
// path or open a file (ARCHITECTURE.md; a cold dentry or inode waits on
// the disk, stalling every connection of the loop). When the read should
// go direct but the file's O_DIRECT descriptor was never opened, the plan
// comes back with Open set and FD -1: the caller has finish complete it
// off the loop. Everything planLoop itself calls works on an open
// descriptor: statx (AT_EMPTY_PATH) once per file, cachestat.
func (p *readPolicy) planLoop(rd *nfs.Read) ioPlan {
	buffered := ioPlan{FD: rd.FD, Off: rd.Off, Len: rd.Len}
	if p.mode == dioOff || rd.Len <= 0 || rd.Off < 0 {
		return buffered
	}
	fi := p.info(rd.FD)
	al := fi.al
	if !al.usable() {
		p.buffered.Add(1)
		return buffered
	}
	a := int64(al.off)
	aligned := rd.Off%a == 0 && int64(rd.Len)%a == 0
	if !aligned && rd.Len < dioMin {
		p.buffered.Add(1)
		return buffered
	}
	if p.mode == dioAuto && !p.isCold(fi, rd) {
		p.buffered.Add(1)
		return buffered
	}
	start := rd.Off - rd.Off%a
	end := (rd.Off + int64(rd.Len) + a - 1) / a * a
	direct := ioPlan{Direct: true, FD: -1, Off: start, Len: int(end - start), Skip: int(rd.Off - start)}
	dfd, ok := rd.CachedDirectFD()
	if !ok {
		direct.Open = true
		return direct
	}
	if dfd < 0 {
		p.buffered.Add(1)
		return buffered
	}
	p.direct.Add(1)
	direct.FD = dfd
	return direct
}

// finish completes a plan planLoop left Open: it opens the file's O_DIRECT
// descriptor (Read.DirectFD), or falls back to a buffered read when the
// file has none. Not on an event loop: the open walks the file's path.
func (p *readPolicy) finish(pl ioPlan, rd *nfs.Read) ioPlan {
	if !pl.Open {
		return pl
	}
	pl.Open = false
	if pl.FD = rd.DirectFD(); pl.FD < 0 {
		p.buffered.Add(1)
		return ioPlan{FD: rd.FD, Off: rd.Off, Len: rd.Len}
	}
	p.direct.Add(1)
	return pl
}

// fileInfo is what the policy knows of one open file.
type fileInfo struct {
	al dioAlign
	// skip counts reads left to send buffered without asking cachestat:
	// set after a probe found the range cached. A file that was hot stays
	// mostly hot, and the probe costs about a syscall, which on a 4 KiB
	// cached READ is several per cent of the server's CPU (profiled); a
	// read wrongly sent buffered costs what it cost before this policy.
	skip atomic.Int32
}

// hotSkip is how many reads of a file found hot go buffered unprobed.
const hotSkip = 15

// info returns what is known of the file open as fd.
func (p *readPolicy) info(fd int) *fileInfo {
	if v, ok := p.files.Load(fd); ok {
		return v.(*fileInfo)
	}
	fi := &fileInfo{al: statxAlign(fd)}
	v, _ := p.files.LoadOrStore(fd, fi)
	return v.(*fileInfo)
}

// isCold probes (or, for a file recently found hot, assumes hot).
func (p *readPolicy) isCold(fi *fileInfo, rd *nfs.Read) bool {
	if fi.skip.Add(-1) >= 0 {
		return false
	}
	p.probes.Add(1)
	if p.cold(rd.FD, rd.Off, rd.Len) {
		fi.skip.Store(0)
		return true
	}
	fi.skip.Store(hotSkip)
	return false
}

// forget drops what is known of fd (an O_DIRECT read of it failed with
// EINVAL).
func (p *readPolicy) forget(fd int) { p.files.Delete(fd) }

func statxAlign(fd int) dioAlign {
	var st unix.Statx_t
	err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &st)
	if err != nil || st.Mask&unix.STATX_DIOALIGN == 0 {
		return dioAlign{}
	}
	return dioAlign{mem: int(st.Dio_mem_align), off: int(st.Dio_offset_align)}
}

// noCachestat is set once cachestat(2) turns out to be missing (kernels
// before 6.5, or seccomp): auto then reads everything buffered, as it did
// before it could tell cold from hot.
var noCachestat atomic.Bool

// uncached reports whether most of [off, off+n) of fd is not in the page
// cache, from cachestat(2). Dirty or writeback pages make it false: an
// O_DIRECT read would first have to wait for them to reach the disk.
func uncached(fd int, off int64, n int) bool {
	if noCachestat.Load() {
		return false
	}
	var cs unix.Cachestat_t
	rg := unix.CachestatRange{Off: uint64(off), Len: uint64(n)}
	if err := unix.Cachestat(uint(fd), &rg, &cs, 0); err != nil {
		if err == unix.ENOSYS || err == unix.EPERM {
			noCachestat.Store(true)
		}
		return false
	}
	if cs.Dirty > 0 || cs.Writeback > 0 {
		return false
	}
	pages := (uint64(n) + pageSize - 1) / pageSize
	return cs.Cache*2 < pages
}

// readStats counts an engine's read plans since start: Direct and
// Buffered reads, Probes (cachestat calls made by --direct-reads auto) and
// Fixed (submissions into registered buffers).
type readStats struct {
	Direct, Buffered, Probes, Fixed uint64
}

func (p *readPolicy) stats() readStats {
	return readStats{Direct: p.direct.Load(), Buffered: p.buffered.Load(), Probes: p.probes.Load(), Fixed: p.fixed.Load()}
}
