package metrics

import (
	"sort"
	"sync"
	"sync/atomic"
)

// Calls of RPC programs other than NFSv4's COMPOUND (NFSv3, MOUNT, and
// whatever else the server answers) are counted by program, version,
// procedure and status: nfsd_uring_procedures_total. They are few next to
// the data path's counters, so one map (lock-free once a series exists)
// serves them all.

// ProcKey is one series of procedure counts.
type ProcKey struct {
	Prog, Vers, Proc uint32
	Status           string
}

// ProcCount is one series' count.
type ProcCount struct {
	ProcKey
	N uint64
}

// maxProcSeries bounds the series: statuses and procedure numbers come
// from a small set, but a client may send any version or procedure.
const maxProcSeries = 4096

type procCounts struct {
	m sync.Map // ProcKey -> *atomic.Uint64
	n atomic.Int64
}

func (s *Set) procs() *procCounts { return &s.procTab }

// CountProc counts one call of procedure proc of program prog, version
// vers, answered with status. A nil Set counts nothing.
func (s *Set) CountProc(prog, vers, proc uint32, status string) {
	if s == nil {
		return
	}
	p := s.procs()
	k := ProcKey{prog, vers, proc, status}
	if c, ok := p.m.Load(k); ok {
		c.(*atomic.Uint64).Add(1)
		return
	}
	if p.n.Load() >= maxProcSeries {
		return
	}
	c, loaded := p.m.LoadOrStore(k, new(atomic.Uint64))
	if !loaded {
		p.n.Add(1)
	}
	c.(*atomic.Uint64).Add(1)
}

// ProcCounts returns the procedure counts, sorted.
func (s *Set) ProcCounts() []ProcCount {
	var out []ProcCount
	s.procs().m.Range(func(k, v any) bool {
		out = append(out, ProcCount{k.(ProcKey), v.(*atomic.Uint64).Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ProcKey, out[j].ProcKey
		if a.Prog != b.Prog {
			return a.Prog < b.Prog
		}
		if a.Vers != b.Vers {
			return a.Vers < b.Vers
		}
		if a.Proc != b.Proc {
			return a.Proc < b.Proc
		}
		return a.Status < b.Status
	})
	return out
}
