package nfs

import (
	"iter"
	"sync"
	"sync/atomic"
)

// lockFreeMap is a map whose lookups take no lock, for what every request
// looks up: sessions (SEQUENCE), open, lock and delegation stateids (READ,
// WRITE) and nodes (PUTFH). Writes happen under the owner's lock
// (stateTable.mu, fileTable.mu), so the logic around it is unchanged;
// only the hot path's reads stop taking that server-wide lock. Issue 10 goal 5: with 16 goroutines reading, the
// lookups under stateTable.mu were 97% of the mutex profile's delay
// (BENCHMARKS.md, "Goal 5: no shared lock on the hot path").
type lockFreeMap[K comparable, V any] struct {
	m sync.Map
	n atomic.Int64 // entries, for the state gauges
}

// get returns the value stored under k, or V's zero value.
func (m *lockFreeMap[K, V]) get(k K) V {
	if v, ok := m.m.Load(k); ok {
		return v.(V)
	}
	var zero V
	return zero
}

// put stores v under k. The caller holds the owner's lock.
func (m *lockFreeMap[K, V]) put(k K, v V) {
	if _, loaded := m.m.Swap(k, v); !loaded {
		m.n.Add(1)
	}
}

// del removes k. The caller holds the owner's lock.
func (m *lockFreeMap[K, V]) del(k K) {
	if _, loaded := m.m.LoadAndDelete(k); loaded {
		m.n.Add(-1)
	}
}

// len returns how many entries the map holds.
func (m *lockFreeMap[K, V]) len() int { return int(m.n.Load()) }

// all ranges over the entries; del may be called during it. An entry put
// or removed meanwhile may or may not be seen.
func (m *lockFreeMap[K, V]) all() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		m.m.Range(func(k, v any) bool { return yield(k.(K), v.(V)) })
	}
}
