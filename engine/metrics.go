package engine

import (
	"errors"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// gauge reports the open connections at every scrape.
func (g *connGate) gauge() metrics.Gauge {
	return metrics.Gauge{Name: "connections", Help: "open client connections",
		Value: func() float64 { return float64(g.open.Load()) }}
}

// countFeedError counts a record refused by the record-size limit. The
// partial-record budget counts its own refusals (partialHold.grow).
func countFeedError(set *metrics.Set, err error) {
	if errors.Is(err, xdr.ErrRecordTooBig) {
		set.Reject(metrics.RecordTooBig)
	}
}

// submitted counts SQEs handed to the kernel and refreshes the ring's CQ
// overflow count (a load from the shared ring memory): both on the loop's
// thread, so plain stores.
func (l *loop) submitted(n int, _ error) {
	if n > 0 {
		l.st.Submissions.Add(uint64(n))
	}
	l.st.CQOverflows.Set(uint64(l.r.Overflow()))
}

// countRead counts one file read by how it is done.
func (l *loop) countRead(direct bool) {
	if direct {
		l.st.ReadsDirect.Add(1)
	} else {
		l.st.ReadsBuffered.Add(1)
	}
}

// countWrite counts the parts of one write by how they are done, on a
// shard picked by descriptor: writes come from many workers, and one
// atomic add per write system call is lost in its cost.
func (f *FileIO) countWrite(fd int, parts []writePart) {
	if f.Metrics == nil {
		return
	}
	sh := f.Metrics.Shard(uint64(fd))
	for _, p := range parts {
		switch {
		case p.kind == wDirect:
			sh.Add(metrics.WritesDirect, 1)
		case p.kind == wDontcache && !f.noDontcache.Load():
			sh.Add(metrics.WritesDontcache, 1)
		default:
			sh.Add(metrics.WritesBuffered, 1)
		}
	}
}
