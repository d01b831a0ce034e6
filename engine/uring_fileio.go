package engine

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/ring"
)

// ringIO lets FileIO write, sync and allocate through io_uring. Writes
// happen inside Handle, on worker goroutines that may run on any thread,
// so they cannot use the loops' single-issuer rings; instead a small pool
// of plain rings is shared, one borrowed per operation. The gain over
// pwrite is that the parts of a split write (buffered head, O_DIRECT
// middle, buffered tail) go in one submission and run concurrently.
type ringIO struct {
	free chan *ring.Ring
	all  []*ring.Ring
}

// newRingIO makes n rings of a few entries each.
func newRingIO(n int) (*ringIO, error) {
	r := &ringIO{free: make(chan *ring.Ring, n)}
	for range n {
		rg, err := ring.New(ring.Options{Entries: 8})
		if err != nil {
			r.close()
			return nil, err
		}
		r.all = append(r.all, rg)
		r.free <- rg
	}
	return r, nil
}

func (r *ringIO) close() {
	for _, rg := range r.all {
		rg.Close()
	}
}

// run prepares n operations with prep(i, sqe), submits them in one call
// and returns each one's result (bytes, or -errno).
//
// The kernel runs each operation with the credentials of the thread that
// submitted it (io-wq takes them at submission; retries run as task work
// on that thread, which waits here for every completion). nfs calls
// FileIO on a thread switched to the client's user (asCaller: its fsuid,
// and no CAP_SYS_RESOURCE, so root's reserved blocks stop it), so these
// rings must stay without SQPOLL, whose kernel thread would submit with
// the credentials of the ring's creator.
func (r *ringIO) run(n int, prep func(i int, s *ring.SQE), res []int32) []int32 {
	rg := <-r.free
	defer func() { r.free <- rg }()
	for i := range n {
		s := rg.GetSQE()
		prep(i, s)
		s.UserData = uint64(i)
	}
	res = res[:0]
	for range n {
		res = append(res, -int32(unix.EIO))
	}
	for got := 0; got < n; {
		c, err := rg.WaitCQE()
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break
		}
		res[c.UserData] = c.Res
		rg.CQESeen()
		got++
	}
	return res
}

// errOf turns a negative CQE result into an error.
func errOf(res int32) error {
	if res < 0 {
		return unix.Errno(-res)
	}
	return nil
}
