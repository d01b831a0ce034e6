package engine

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/ring"
)

// Spliced reads (Options.SpliceReads): the data of a cached READ or
// READ_PLUS goes from the page cache to the socket without passing
// through user memory, as knfsd sends it. The request's read splices the
// file's pages into a pipe (IORING_OP_SPLICE, file -> pipe: page
// references, no copy); the reply's header goes out with SENDMSG as usual,
// then a second SPLICE moves the pipe's pages to the socket, then the
// rest of the reply. The request still takes a pool buffer of the read's
// length, which it never touches: the reply borrows it as the data's
// place (nfs sees a read like any other), the connection's queue charges
// it as before, and the send path recognises the part by its address.
//
// Not spliced (read into a buffer as before): O_DIRECT plans, reads below
// spliceMin, replies with more than one read or whose read is not one
// whole piece of the reply (nfs.Reply.ReadIsOnePiece: READ_PLUS with
// holes inside, retransmits answered from the slot cache), and whenever
// the loop has no pipe to spare. A splice the file refuses before moving
// anything falls back to a plain read; one the socket refuses drains the
// pipe into the buffer and sends that.

// parseSplice reads Options.SpliceReads.
func parseSplice(s string) (bool, error) {
	switch s {
	case "", "auto", "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("engine: SpliceReads %q: want auto, on or off", s)
}

// spliceMin is the smallest read that is spliced: below it the two
// splices (each run by an io-wq worker: io_uring never splices inline)
// cost more than the copies they save.
const spliceMin = 64 << 10

// pipeSizes are what each pipe asks for (F_SETPIPE_SZ), in turn: a 1 MiB
// read at an offset that is not page-aligned spans 257 pages, one pipe
// slot each, which only CAP_SYS_RESOURCE may ask for past
// /proc/sys/fs/pipe-max-size (1 MiB by default). A read that would not fit
// is copied.
var pipeSizes = []int{2 << 20, 1 << 20}

// maxPipes bounds each loop's pipes (two descriptors each); past it reads
// are copied.
const maxPipes = 64

// pipe is one pipe of a loop's pool. A pipe returns to the pool empty; one
// that may hold bytes (a connection closed mid-reply) is closed instead.
type pipe struct {
	r, w int
	room int // bytes it holds at least (F_GETPIPE_SZ)
}

// pipes is a loop's pool of pipes; only the loop's goroutine uses it.
type pipes struct {
	free []*pipe
	n    int // pipes open, in use or free
}

// get returns an empty pipe with room for n bytes, or nil.
func (ps *pipes) get(n int) *pipe {
	if k := len(ps.free); k > 0 {
		p := ps.free[k-1]
		if p.room < n {
			return nil
		}
		ps.free = ps.free[:k-1]
		return p
	}
	if ps.n >= maxPipes {
		return nil
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil
	}
	room, err := 0, error(nil)
	for _, size := range pipeSizes {
		if room, err = unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, size); err == nil {
			break
		}
	}
	if err != nil {
		room, err = unix.FcntlInt(uintptr(fds[1]), unix.F_GETPIPE_SZ, 0)
	}
	p := &pipe{r: fds[0], w: fds[1], room: room}
	ps.n++
	if err != nil || room < n {
		ps.put(p, false)
		return nil
	}
	return p
}

// put returns p to the pool, or closes it when it may not be empty.
func (ps *pipes) put(p *pipe, empty bool) {
	if empty {
		ps.free = append(ps.free, p)
		return
	}
	unix.Close(p.r)
	unix.Close(p.w)
	ps.n--
}

func (ps *pipes) close() {
	for _, p := range ps.free {
		ps.put(p, false)
	}
	ps.free = nil
}

// trySplice takes a pipe for the request's only read, planned p, when it
// qualifies (see the top of this file).
func (r *ureq) trySplice(p ioPlan) bool {
	l := r.c.l
	if !l.e.splice || l.e.noSplice.Load() || p.Direct || p.Skip != 0 || p.Len < spliceMin ||
		len(r.rep.Reads) != 1 || p.Len != r.rep.Reads[0].Len || !r.rep.ReadIsOnePiece(0) {
		return false
	}
	// One pipe slot per page the range touches.
	pg := int64(pageSize)
	r.pipe = l.pipes.get(int((p.Off+int64(p.Len)+pg-1)/pg-p.Off/pg) * pageSize)
	return r.pipe != nil
}

// submitSplice moves the rest of read i from the file into the pipe.
func (r *ureq) submitSplice(i int) {
	p := &r.plans[i]
	if syncSplice {
		off := p.Off + int64(r.got[i])
		n, err := unix.Splice(p.FD, &off, r.pipe.w, nil, p.Len-r.got[i], 0)
		r.c.l.synth = append(r.c.l.synth, ring.CQE{UserData: ud(kSplice, i, r.slot), Res: res(n, err)})
		return
	}
	s := r.c.l.sqe()
	s.PrepSplice(p.FD, p.Off+int64(r.got[i]), r.pipe.w, -1, uint32(p.Len-r.got[i]), 0)
	s.UserData = ud(kSplice, i, r.slot)
}

// onSplice is submitRead's onRead for a spliced read: it loops until the
// pipe holds the whole range or the file ends, then completes the read
// with the (untouched) buffer of that length. A file that refuses to
// splice at once is read into the buffer instead.
func (r *ureq) onSplice(i int, cqe ring.CQE) {
	switch {
	case cqe.Res == -int32(unix.EINTR) || cqe.Res == -int32(unix.EAGAIN):
		r.submitSplice(i)
		return
	case cqe.Res < 0 && r.got[i] == 0:
		r.c.l.pipes.put(r.pipe, true)
		r.pipe = nil
		r.submitRead(i)
		return
	case cqe.Res > 0:
		r.got[i] += int(cqe.Res)
		r.inPipe += int(cqe.Res)
		if r.got[i] < r.plans[i].Len {
			r.submitSplice(i)
			return
		}
	}
	r.c.l.e.reads.spliced.Add(1)
	r.rep.CompleteRead(i, r.bufs[i][:r.got[i]])
	r.pending--
	if r.pending == 0 {
		r.finish()
	}
}

// inPipe says whether part p of the reply is (the rest of) the spliced
// data, whose bytes are in the pipe and not in the buffer.
func (r *ureq) fromPipe(p []byte) bool {
	if r.pipe == nil || len(p) == 0 || r.inPipe == 0 {
		return false
	}
	b := r.bufs[0]
	base, at := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	return at >= base && at < base+uintptr(len(b))
}

// sendPipe sends the head reply's next part, which is in its pipe.
func (c *uconn) sendPipe(head *ureq) {
	flags := uint32(0)
	if len(head.parts) > 1 {
		flags = unix.SPLICE_F_MORE // the rest of the reply follows at once
	}
	c.inWire = 1
	c.sending = true
	if syncSplice {
		n, err := unix.Splice(head.pipe.r, nil, c.fd, nil, len(head.parts[0]), int(flags))
		c.l.synth = append(c.l.synth, ring.CQE{UserData: ud(kSend, sendSplice, head.slot), Res: res(n, err)})
		return
	}
	s := c.l.sqe()
	s.PrepSplice(head.pipe.r, -1, c.fd, -1, uint32(len(head.parts[0])), flags)
	s.UserData = ud(kSend, sendSplice, head.slot)
}

// EXPERIMENT: splice with system calls on the loop's thread, not io-wq.
var syncSplice = os.Getenv("NFSD_SPLICE_SYNC") == "1"

func res(n int64, err error) int32 {
	if err != nil {
		return -int32(err.(unix.Errno))
	}
	return int32(n)
}

// sendSplice marks a send that is a splice from the head reply's pipe.
const sendSplice = 1

// unsplice moves the head reply's piped bytes into its buffer, where the
// part expects them, when the socket refuses splices: the reply then goes
// out as a copied one.
func (r *ureq) unsplice() bool {
	p := r.parts[0]
	for len(p) > 0 {
		n, err := unix.Read(r.pipe.r, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		p = p[n:]
		r.inPipe -= n
	}
	return r.inPipe == 0
}

// releasePipe gives the request's pipe back, or closes it if bytes may
// be left in it.
func (r *ureq) releasePipe() {
	if r.pipe != nil {
		r.c.l.pipes.put(r.pipe, r.inPipe == 0)
		r.pipe, r.inPipe = nil, 0
	}
}
