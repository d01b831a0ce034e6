package engine

import (
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// Write gathering: buffered WRITEs to one file that arrive while another
// is being written are queued, and whoever is writing takes the whole
// queue next, joining writes that follow one another in the file into one
// pwritev. knfsd did the same for NFSv2 ("wdelay"); here nothing waits on
// purpose, writes only gather while the file is busy anyway.
//
// Why: a buffered write holds the file's lock (i_rwsem) in ext4, XFS and
// most others, so writes to one file run one at a time whatever we do.
// Many writers on one file (IO500 ior-hard: 32 writers of 47,008 bytes
// interleaved in one file) otherwise queue up inside the kernel, each a
// thread spinning on the lock and then sleeping, and every write pays the
// lock and the filesystem's per-call work once. Gathered, the waiters
// park on a channel, the adjacent pieces go down as one call, and the
// lock changes hands once per batch.

// gatherMax bounds one gathered pwritev: IOV_MAX pieces, and enough bytes
// that one batch does not hold a file's writers up for long.
const (
	gatherMaxIov   = 1024
	gatherMaxBytes = 16 << 20
)

// gatherWrite is one queued write and, once done, its outcome.
type gatherWrite struct {
	fd   int
	data []byte
	off  int64
	n    int
	err  error
	// turn receives nil when the write is done, or a batch (starting
	// with this write) that this write's goroutine is to do next.
	turn chan []*gatherWrite
}

// fileGather is the queue of one file (one descriptor).
type fileGather struct {
	mu    sync.Mutex
	busy  bool // a goroutine is writing a batch to the file
	queue []*gatherWrite
}

// gatherer holds the queues of files with writes in flight, keyed by
// descriptor (a sync.Map: no lock shared by all files on the write path).
// A queue is dropped when it drains; a writer that found it just before
// may then write alone beside a new queue, which costs the gathering of
// that one write, not its correctness: the kernel orders the two writes
// as it would any others. A descriptor in use by a write is held open by
// it, so a reused descriptor number cannot meet a queue of the old file.
type gatherer struct {
	files sync.Map // fd -> *fileGather
	// write does one write on its own (nil: pwrite until done or an
	// error); a gathered write that falls short is redone piece by
	// piece with it. Tests replace it.
	write func(fd int, b []byte, off int64) (int, error)
	// gathered, when set, counts writes that went down joined to others.
	gathered func(fd, n int)
}

// WriteAt writes data at off to fd, gathering it with the file's other
// writes in flight, and returns the bytes written.
func (g *gatherer) WriteAt(fd int, data []byte, off int64) (int, error) {
	w := &gatherWrite{fd: fd, data: data, off: off}
	fg := g.file(fd)
	fg.mu.Lock()
	if fg.busy {
		w.turn = make(chan []*gatherWrite, 1)
		fg.queue = append(fg.queue, w)
		fg.mu.Unlock()
		if batch := <-w.turn; batch != nil {
			g.run(fd, fg, batch)
		}
		return w.n, w.err
	}
	fg.busy = true
	fg.mu.Unlock()
	g.run(fd, fg, []*gatherWrite{w})
	return w.n, w.err
}

// file returns fd's queue, creating it.
func (g *gatherer) file(fd int) *fileGather {
	if v, ok := g.files.Load(fd); ok {
		return v.(*fileGather)
	}
	v, _ := g.files.LoadOrStore(fd, &fileGather{})
	return v.(*fileGather)
}

// run writes batch (the caller's own write first) and then hands what
// queued meanwhile to the first of those writers, so that no goroutine
// writes for others for longer than one batch: its own reply is waiting.
func (g *gatherer) run(fd int, fg *fileGather, batch []*gatherWrite) {
	g.writeBatch(batch)
	for _, w := range batch[1:] {
		w.turn <- nil
	}
	fg.mu.Lock()
	next := fg.queue
	fg.queue = nil
	if len(next) == 0 {
		fg.busy = false
		g.files.CompareAndDelete(fd, fg)
		fg.mu.Unlock()
		return
	}
	fg.mu.Unlock()
	next[0].turn <- next
}

// writeBatch writes every write of batch, joining runs that are adjacent
// in the file. Writes that overlap are done one by one in the order they
// came: NFS gives concurrent writes no order, but nothing is gained by
// picking another.
func (g *gatherer) writeBatch(batch []*gatherWrite) {
	if len(batch) == 1 {
		w := batch[0]
		w.n, w.err = g.writeOne(w.fd, w.data, w.off)
		return
	}
	sorted := slices.Clone(batch)
	slices.SortStableFunc(sorted, func(a, b *gatherWrite) int {
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return 0
	})
	if overlaps(sorted) {
		for _, w := range batch {
			w.n, w.err = g.writeOne(w.fd, w.data, w.off)
		}
		return
	}
	for len(sorted) > 0 {
		k, size := 1, len(sorted[0].data)
		for k < len(sorted) && k < gatherMaxIov && size+len(sorted[k].data) <= gatherMaxBytes &&
			sorted[k].off == sorted[k-1].off+int64(len(sorted[k-1].data)) {
			size += len(sorted[k].data)
			k++
		}
		g.writeRun(sorted[:k], size)
		sorted = sorted[k:]
	}
}

// overlaps reports whether any of the writes, sorted by offset, overlap.
func overlaps(sorted []*gatherWrite) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i].off < sorted[i-1].off+int64(len(sorted[i-1].data)) {
			return true
		}
	}
	return false
}

// writeRun writes adjacent writes with one pwritev. Should it fall short,
// each write is done again on its own: rewriting what did land is
// harmless, and each write gets its own count and error.
func (g *gatherer) writeRun(run []*gatherWrite, size int) {
	if len(run) > 1 {
		iov := make([][]byte, len(run))
		for i, w := range run {
			iov[i] = w.data
		}
		n, err := pwritev(run[0].fd, iov, run[0].off)
		if err == nil && n == size {
			for _, w := range run {
				w.n = len(w.data)
			}
			if g.gathered != nil {
				g.gathered(run[0].fd, len(run))
			}
			return
		}
	}
	for _, w := range run {
		w.n, w.err = g.writeOne(w.fd, w.data, w.off)
	}
}

func (g *gatherer) writeOne(fd int, b []byte, off int64) (int, error) {
	if g.write != nil {
		return g.write(fd, b, off)
	}
	return nfs.PlainIO{}.WriteAt(nfs.File{FD: fd}, b, off)
}

// pwritev is unix.Pwritev, retried on EINTR.
func pwritev(fd int, iov [][]byte, off int64) (int, error) {
	for {
		n, err := unix.Pwritev(fd, iov, off)
		if err != unix.EINTR {
			return n, err
		}
	}
}
