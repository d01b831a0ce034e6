package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Segment policy for READ_PLUS.
const (
	// minHole: a hole shorter than this between data is sent as data. A
	// HOLE segment costs the client a segment decode and us an iovec;
	// below a few pages the zeros are cheaper.
	minHole = 8 << 10
	// maxSegments keeps the iovec list of a reply well under IOV_MAX.
	maxSegments = 256
	// maxReadGap: data runs separated by less hole than this are read with
	// one read into one buffer, each DATA segment pointing into it, so a
	// fragmented file costs one read per reply, like READ.
	maxReadGap = 1 << 20
)

func opReadPlus(c *compound) nfs4.Status {
	if l := c.layoutFile(); l != nil {
		return c.proxied(func() nfs4.Status { return c.proxyRead(l, true) }) // pnfs_proxy.go
	}
	var a readPlan
	if s := c.planRead(&a); s != nfs4.OK {
		return s
	}
	if a.hinted && !c.cachedData(int64(a.off), int64(a.n)) {
		if s := c.stat(&a); s != nfs4.OK {
			return s
		}
	}
	e := c.e
	eofPos := e.Pos()
	e.Bool(a.eof)
	if a.n == 0 {
		e.Uint32(0)
		return nfs4.OK
	}
	var segs []extent
	if a.hinted {
		segs = append(c.rep.extents[:0], extent{int64(a.off), int64(a.off) + int64(a.n), false})
		c.rep.extents = segs[:0]
	} else {
		segs = c.planSegments(a.fd, &a.st, int64(a.off), int64(a.n))
	}
	e.Uint32(uint32(len(segs)))
	c.encodeSegments(a.fd, segs, eofPos)
	c.countSegments(segs)
	return nfs4.OK
}

// cachedData reports whether the file's extent cache has n bytes at off as
// data, counting the lookup as a cache hit if so. Then a READ_PLUS within
// the size hint skips its fstat, as READ does, and sends one DATA segment:
// the cache is not validated (that needs the fstat's ctime and size), and
// need not be for data, since DATA carries whatever the read finds, the
// zeros of a hole punched since included. Only a HOLE from a stale cache
// would be wrong (data written into it since), and this path sends none.
func (c *compound) cachedData(off, n int64) bool {
	cfh := c.cfh
	if !c.lockNode(cfh) {
		return false
	}
	ok := cfh.extent.cachedData(off, off+n)
	cfh.mu.Unlock()
	if ok {
		c.countExtentLookup(0)
	}
	return ok
}

// lockNode locks n.mu, or on an event loop (Reply.Inline) only tries to:
// the lock is held across opens (a path walk) elsewhere.
func (c *compound) lockNode(n *node) bool {
	if c.rep.Inline {
		return n.mu.TryLock()
	}
	n.mu.Lock()
	return true
}

// planSegments cuts [off, off+n) into DATA and HOLE segments.
func (c *compound) planSegments(fd int, st *unix.Stat_t, off, n int64) []extent {
	if c.rep.Inline {
		return c.planSegmentsLoop(st, off, n)
	}
	cfh := c.cfh
	cfh.mu.Lock()
	seeks := cfh.extent.seeks
	raw := cfh.extent.extents(fd, st, off, off+n, c.rep.extents[:0])
	seeks = cfh.extent.seeks - seeks
	cfh.mu.Unlock()
	c.countExtentLookup(seeks)
	c.rep.extents = raw[:0]
	return mergeSegments(raw)
}

// planSegmentsLoop is planSegments on an event loop, which must not wait:
// SEEK_DATA/SEEK_HOLE take the inode's lock (ext4: i_rwsem, shared),
// which writers hold across their copy, and extending O_DIRECT writes
// across their I/O: lseeks of a file being written in 8 MiB pieces
// waited 17 ms at the median and up to 360 ms (2-vCPU VM, ext4), against
// 2 µs for one on a quiet file of one extent (about an fstat), 8-15 µs
// with 4096 extents and 0.15-0.4 ms with 65,536. So the loop uses only
// what the extent cache knows; a range it does not know goes out as one
// DATA segment (the zeros of any hole in it included: always a correct
// READ_PLUS, RFC 7862 §15.10.3), and walkLater walks it on a goroutine
// for the READ_PLUS after.
func (c *compound) planSegmentsLoop(st *unix.Stat_t, off, n int64) []extent {
	cfh := c.cfh
	if cfh.mu.TryLock() {
		raw, ok := cfh.extent.known(st, off, off+n, c.rep.extents[:0])
		cfh.mu.Unlock()
		if ok {
			c.countExtentLookup(0)
			c.rep.extents = raw[:0]
			return mergeSegments(raw)
		}
	}
	cfh.walkLater(off, off+n)
	segs := append(c.rep.extents[:0], extent{off, off + n, false})
	c.rep.extents = segs[:0]
	return segs
}

// mergeSegments applies the segment policy: adjacent runs of one kind join,
// short holes between data become data, and past maxSegments everything
// left becomes data.
func mergeSegments(raw []extent) []extent {
	out := raw[:0]
	for i, r := range raw {
		if r.hole && r.end-r.off < minHole && i > 0 && i < len(raw)-1 {
			r.hole = false
		}
		if len(out) >= maxSegments-1 {
			r.hole = false
		}
		if k := len(out) - 1; k >= 0 && out[k].hole == r.hole && out[k].end == r.off {
			out[k].end = r.end
			continue
		}
		out = append(out, r)
	}
	return out
}

// encodeSegments writes the segments and plans the reads that fill the
// DATA ones: one read per group of data runs closer than maxReadGap.
func (c *compound) encodeSegments(fd int, segs []extent, eofPos int) {
	e := c.e
	for i := 0; i < len(segs); {
		s := segs[i]
		if s.hole {
			e.Uint32(nfs4.ContentHole)
			e.Uint64(uint64(s.off))
			e.Uint64(uint64(s.end - s.off))
			i++
			continue
		}
		// Group data runs [i, j) into one read.
		j := i + 1
		for j+1 < len(segs) && segs[j].hole && segs[j].end-segs[j].off < maxReadGap {
			j += 2
		}
		last := segs[j-1]
		start := s.off
		c.rep.addRead(c.cfh, fd, start, int(last.end-start))
		for k := i; k < j; k++ {
			r := segs[k]
			if r.hole {
				e.Uint32(nfs4.ContentHole)
				e.Uint64(uint64(r.off))
				e.Uint64(uint64(r.end - r.off))
				continue
			}
			e.Uint32(nfs4.ContentData)
			e.Uint64(uint64(r.off))
			countPos := e.Reserve()
			e.Patch(countPos, uint32(r.end-r.off))
			c.rep.addSeg(countPos, eofPos, int(r.off-start), int(r.end-r.off))
		}
		i = j
	}
}
