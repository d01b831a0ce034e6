package nfs

import (
	"sort"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// extent is a run of a file known to be all data or all hole.
type extent struct {
	off, end int64
	hole     bool
}

// extentCache remembers what SEEK_DATA/SEEK_HOLE said about a file, so
// READ_PLUS on a file read sequentially costs a few lseeks per file rather
// than two per reply. It is valid while the file's ctime and size are
// unchanged and no change made by this server came since it was walked;
// any of those drops it. Extents are sorted and disjoint but need not be
// contiguous: ranges nobody read are simply absent.
//
// ctime alone is not enough: without multigrain timestamps (kernels
// before 6.13) a write into a hole within one clock tick leaves ctime and
// size as they were, and a stale HOLE would hand readers zeros. So every
// operation of ours that changes data or allocation (WRITE, ALLOCATE,
// DEALLOCATE, COPY, CLONE, a size change) calls changed() after the change
// and before replying.
type extentCache struct {
	ctime unix.Timespec
	size  int64
	runs  []extent
	// gen counts changes (atomic: writers do not take the node's lock);
	// walked is gen as read before the runs were walked. A walk that ran
	// concurrently with a change is stored under the older generation, so
	// the next lookup drops it rather than reinstalling a stale map.
	gen    atomic.Uint64
	walked uint64
	// seeks counts the lseeks walks made (under the node's lock), for the
	// metrics: lseeks per READ_PLUS and the cache's hit rate.
	seeks uint64
	// walking: a walk for the event loop is under way (walkLater).
	walking atomic.Bool
}

// changed records that the file's data or allocation changed.
func (x *extentCache) changed() { x.gen.Add(1) }

// fixedCtime, when set (tests), is the ctime the cache is validated with
// instead of the file's: a kernel with coarse timestamps. A variable of a
// plain value, not a function: calling a function variable with st would
// make every READ_PLUS's stat buffer escape to the heap (an allocation per
// reply, profiled).
var fixedCtime *unix.Timespec

// maxExtents bounds a file's cache; a file fragmented beyond it is walked
// again as needed.
const maxExtents = 1 << 16

// lookahead is how far past a request a walk goes, so the next sequential
// READ_PLUS finds its extents cached.
const lookahead = 4 << 20

// fragmentedRun is how many small holes in a row make walk give up on a
// window.
const fragmentedRun = 32

// seeker is lseek; tests replace it to force failures.
var seeker = unix.Seek

// extents returns the runs covering [off, end) of the file open as fd,
// whose attributes are st. Callers hold n.mu. On any lseek surprise it
// reports the rest as data: never a hole that is not one.
func (x *extentCache) extents(fd int, st *unix.Stat_t, off, end int64, out []extent) []extent {
	out, _ = x.lookup(fd, st, off, end, out)
	return out
}

// known is extents without a walk, for the event loop: ok is false when
// part of the range was never walked (or the cache went stale), and out
// then says nothing. Callers hold n.mu.
func (x *extentCache) known(st *unix.Stat_t, off, end int64, out []extent) ([]extent, bool) {
	return x.lookup(-1, st, off, end, out)
}

// lookup is extents, walking what is missing with fd, or, when fd is -1,
// giving up (ok false) instead.
func (x *extentCache) lookup(fd int, st *unix.Stat_t, off, end int64, out []extent) ([]extent, bool) {
	ctime, gen := st.Ctim, x.gen.Load()
	if fixedCtime != nil {
		ctime = *fixedCtime
	}
	if x.ctime != ctime || x.size != st.Size || x.walked != gen {
		x.ctime, x.size, x.walked, x.runs = ctime, st.Size, gen, x.runs[:0]
	}
	for off < end {
		i := x.search(off)
		if i < len(x.runs) && x.runs[i].off <= off {
			r := x.runs[i]
			out = append(out, extent{off, min(r.end, end), r.hole})
			off = min(r.end, end)
			continue
		}
		if fd < 0 {
			return out, false
		}
		gapEnd := st.Size
		if i < len(x.runs) {
			gapEnd = x.runs[i].off
		}
		walkEnd := min(gapEnd, end+lookahead)
		added := x.walk(fd, off, walkEnd, gapEnd)
		if len(added) == 0 {
			// Could not learn anything: treat the rest as data.
			out = append(out, extent{off, end, false})
			return out, true
		}
		x.insert(i, added)
	}
	return out, true
}

// covers reports whether the runs, as of the last walk, cover [off, end)
// up to the size the walk saw, and no change of ours came since.
// Callers hold n.mu.
func (x *extentCache) covers(off, end int64) bool {
	if x.ctime == (unix.Timespec{}) || x.walked != x.gen.Load() {
		return false // never walked, or changed by us since
	}
	end = min(end, x.size)
	for i := x.search(off); off < end; i++ {
		if i >= len(x.runs) || x.runs[i].off > off {
			return false
		}
		off = x.runs[i].end
	}
	return true
}

// search returns the index of the first run ending after off.
func (x *extentCache) search(off int64) int {
	return sort.Search(len(x.runs), func(i int) bool { return x.runs[i].end > off })
}

// cachedData reports whether the runs cover [off, end) with data, without
// validating them (see compound.cachedData). Callers hold n.mu.
func (x *extentCache) cachedData(off, end int64) bool {
	for i := x.search(off); off < end; i++ {
		if i >= len(x.runs) || x.runs[i].off > off || x.runs[i].hole {
			return false
		}
		off = x.runs[i].end
	}
	return true
}

// walk finds the runs from off up to at least limit (and at most max, the
// start of the next known run or EOF), using SEEK_DATA and SEEK_HOLE.
//
// A finely fragmented region (many holes in a row too small to be sent as
// holes, see minHole) costs two lseeks per few KiB and gains nothing, since
// those holes go out as data anyway: after fragmentedRun of them the rest
// of the window is recorded as data, so READ_PLUS there costs what READ
// does.
func (x *extentCache) walk(fd int, off, limit, max int64) []extent {
	var runs []extent
	small := 0
	for off < limit {
		if small >= fragmentedRun {
			runs = append(runs, extent{off, limit, false})
			return runs
		}
		x.seeks++
		d, err := seeker(fd, off, unix.SEEK_DATA)
		if err == unix.ENXIO {
			// No data after off: a hole up to EOF.
			runs = append(runs, extent{off, max, true})
			return runs
		}
		if err != nil || d < off {
			return runs
		}
		if d > off {
			runs = append(runs, extent{off, min(d, max), true})
			if d >= max {
				return runs
			}
			if d-off < minHole {
				small++
			} else {
				small = 0
			}
		}
		x.seeks++
		h, err := seeker(fd, d, unix.SEEK_HOLE)
		if err != nil || h <= d {
			return runs
		}
		runs = append(runs, extent{d, min(h, max), false})
		off = h
	}
	return runs
}

// insert places new runs before index i, merging with neighbours of the
// same kind, and drops everything if the cache grew too big.
func (x *extentCache) insert(i int, added []extent) {
	x.runs = append(x.runs[:i], append(added, x.runs[i:]...)...)
	if len(x.runs) > maxExtents {
		x.runs = x.runs[:0]
	}
}

// walkLater walks n's extents over [off, end) (and the lookahead) on a
// goroutine, for a READ_PLUS on an event loop that found them unknown
// (planSegmentsLoop): the next READ_PLUS of the range finds them cached.
// One walk per file at a time; a file with no read descriptor open is
// left for a worker's READ_PLUS to walk.
func (n *node) walkLater(off, end int64) {
	if !n.extent.walking.CompareAndSwap(false, true) {
		return
	}
	n.pin()
	go func() {
		defer n.extent.walking.Store(false)
		defer n.unpin()
		fd, ok := n.pub.read.get()
		var st unix.Stat_t
		if !ok || fd < 0 || unix.Fstat(fd, &st) != nil {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		n.extent.extents(fd, &st, off, end, nil)
	}()
}
