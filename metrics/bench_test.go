package metrics

import (
	"sync/atomic"
	"testing"
)

// countRequest does what the server counts for one 4 KiB READ compound:
// SEQUENCE and PUTFH counted, READ timed from the compound's start to
// Complete, the bytes read. Two clock reads, five atomic adds.
func countRequest(sh *Shard) {
	t := Now()
	sh.Count(53, 0)
	sh.Count(22, 0)
	sh.Add(BytesRead, 4096)
	sh.Op(25, 0, Now()-t)
}

// BenchmarkCountRequest is the counting cost of one request, to set
// against the request's own cost (BenchmarkHandleRead4K in nfs).
func BenchmarkCountRequest(b *testing.B) {
	sh := New().Shard(1)
	for b.Loop() {
		countRequest(sh)
	}
}

// BenchmarkCountRequestParallel: connections on different shards, as on a
// server with one connection per loop.
func BenchmarkCountRequestParallel(b *testing.B) {
	set := New()
	var next atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		sh := set.Shard(next.Add(1))
		for pb.Next() {
			countRequest(sh)
		}
	})
}

// BenchmarkCountRequestShared is the worst case: every goroutine on one
// shard (all requests of one connection handled on several threads).
func BenchmarkCountRequestShared(b *testing.B) {
	sh := New().Shard(1)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			countRequest(sh)
		}
	})
}
