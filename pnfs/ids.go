package pnfs

import (
	"context"
	"math/rand/v2"
	"sync"
)

// Synthetic owner ids (RFC 8435 section 2.2) come from this range: far
// above the ids of real users and groups (which stay below 2^31 in
// practice, 65534 being nobody) and below 2^31, so tools that read ids as
// signed still see them positive. 0xFFFFFFFF is never one.
const (
	FirstSyntheticID uint32 = 0x40000000
	LastSyntheticID  uint32 = 0x7fffffff
)

// idBlock is how many ids one Registry.ReserveIDs takes: one round trip
// to the cluster store per this many creates and fences.
const idBlock = 1024

// idSource hands out synthetic ids, each at most once: from blocks the
// Registry reserves (the counter survives restarts, so ids are not reused
// while the range lasts), or without one from a random place in the range
// (tests; a restart may then, rarely, reuse an id).
type idSource struct {
	mu        sync.Mutex
	reg       Registry
	next, end uint64 // [next, end) is what is left of the current block
}

func newIDSource(reg Registry) *idSource {
	s := &idSource{reg: reg}
	if reg == nil {
		span := uint64(LastSyntheticID-FirstSyntheticID) / 2
		s.next = uint64(FirstSyntheticID) + rand.Uint64N(span)
		s.end = uint64(LastSyntheticID) + 1
	}
	return s
}

// take returns a fresh id.
func (s *idSource) take(ctx context.Context) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= s.end {
		if s.reg == nil {
			s.next = uint64(FirstSyntheticID) // wrapped: ~1e9 ids later
		} else {
			first, err := s.reg.ReserveIDs(ctx, idBlock)
			if err != nil {
				return 0, err
			}
			s.next, s.end = uint64(first), uint64(first)+idBlock
		}
	}
	id := uint32(s.next)
	s.next++
	return id, nil
}
