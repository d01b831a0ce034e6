package nfs

import "net/netip"

// fairQueues keeps keys in one queue per client address, oldest first,
// at most max in all, so that one host filling a bounded record (the
// duplicate request cache, the removed 4.0 clients' stateids) pushes out
// its own entries rather than other hosts': when the record is full, the
// address holding the most gives up its oldest. A host alone may use all
// of it; a quiet host's keys go only once it is the one holding the most.
// The caller locks; the zero value (with max set) is ready.
type fairQueues[K comparable] struct {
	max int
	n   int // keys held, all addresses together
	by  map[netip.Addr]*fairQueue[K]
	big netip.Addr // the address last seen holding the most
}

type fairQueue[K comparable] struct {
	keys []K
}

// push appends k to addr's queue; out is a key pushed out to make room
// (dropped reports whether there was one), for the caller to forget.
func (f *fairQueues[K]) push(addr netip.Addr, k K) (out K, dropped bool) {
	if f.by == nil {
		f.by = make(map[netip.Addr]*fairQueue[K])
	}
	q := f.by[addr]
	if q == nil {
		q = &fairQueue[K]{}
		f.by[addr] = q
	}
	if f.n >= f.max {
		out, dropped = f.popBig()
		f.by[addr] = q // popBig removes a queue it empties: q's, when max is 1
	}
	q.keys = append(q.keys, k)
	f.n++
	if b := f.by[f.big]; b == nil || len(q.keys) > len(b.keys) {
		f.big = addr
	}
	return out, dropped
}

// popFrom removes and returns the oldest key of addr's queue q.
func (f *fairQueues[K]) popFrom(addr netip.Addr, q *fairQueue[K]) K {
	k := q.keys[0]
	var zero K
	q.keys[0] = zero
	q.keys = q.keys[1:]
	f.n--
	if len(q.keys) == 0 {
		delete(f.by, addr)
	}
	return k
}

// popBig removes and returns the oldest key of the address holding the
// most (as far as big knows: it is looked for again once its queue is
// gone); false when no key is held.
func (f *fairQueues[K]) popBig() (K, bool) {
	q := f.by[f.big]
	if q == nil {
		for a, o := range f.by {
			if q == nil || len(o.keys) > len(q.keys) {
				f.big, q = a, o
			}
		}
		if q == nil {
			var zero K
			return zero, false
		}
	}
	return f.popFrom(f.big, q), true
}

// remove drops k from addr's queue, if there.
func (f *fairQueues[K]) remove(addr netip.Addr, k K) {
	q := f.by[addr]
	if q == nil {
		return
	}
	// Most often the newest key, or near it.
	for i := len(q.keys) - 1; i >= 0; i-- {
		if q.keys[i] == k {
			q.keys = append(q.keys[:i], q.keys[i+1:]...)
			f.n--
			break
		}
	}
	if len(q.keys) == 0 {
		delete(f.by, addr)
	}
}
