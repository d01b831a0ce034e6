package nfs

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Parallel benchmarks of the handler (issue 10 goal 5): many clients, each
// with its own session, connection and open stateid, send SEQUENCE, PUTFH,
// READ 4 KiB at once. A lock every request takes shows up as ns/op growing
// with -cpu (run with -cpu=1,2,4,8,16: b.RunParallel starts GOMAXPROCS
// goroutines) and in -mutexprofile.

// parallelClients is how many clients the benchmarks set up; each
// goroutine of b.RunParallel takes its own.
const parallelClients = 64

// benchClient is one client of a parallel benchmark (or one connection of
// a client, see oneSession): the record it sends (a COMPOUND on one slot
// of its session) and where the slot's seqid is.
type benchClient struct {
	conn   *Conn
	rec    []byte
	seqPos int
	seq    uint32
}

// benchOp encodes the op after SEQUENCE and PUTFH, given the client's
// open stateid.
type benchOp func(e *xdr.Encoder, sid nfs4.Stateid)

func read4K(e *xdr.Encoder, sid nfs4.Stateid) {
	e.Uint32(nfs4.OpRead)
	sid.Encode(e)
	e.Uint64(8192)
	e.Uint32(4096)
}

// newBenchClients makes parallelClients clients of one server, each with
// a session and an open (read and write) of its file (file(i) names
// client i's), sending op. With oneSession, they are instead
// parallelClients connections of one client and one session, each on its
// own slot, as a Linux client with nconnect.
func newBenchClients(b *testing.B, file func(i int) string, op benchOp, oneSession bool) (*harness, []*benchClient) {
	t := &testing.T{}
	dir, state := b.TempDir(), b.TempDir()
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: state})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	h := &harness{t: t, s: s, conn: NewConn("bench"), dir: dir, state: state}
	clients := make([]*benchClient, parallelClients)
	var p *harness
	for i := range clients {
		name := file(i)
		h.sparse(name, 64<<10, [][2]int64{{0, 64 << 10}})
		if p == nil || !oneSession {
			p = h.peer(0, fmt.Sprintf("bench-%d", i))
			p.session()
		}
		st, sid := p.openFile(name, "o", nfs4.ShareAccessBoth)
		if st != nfs4.OK {
			b.Fatalf("open %s: %d", name, st)
		}
		fh := p.lookupFH(name)
		rec, seqPos := benchRecord(p, fh, func(e *xdr.Encoder) { op(e, sid) })
		clients[i] = &benchClient{conn: p.conn, rec: rec, seqPos: seqPos, seq: p.seq}
	}
	if oneSession {
		// Slot i (slot 0 is the setup's), highest slot i, connection i.
		clients[0].seq = p.seq
		for i, cl := range clients[1:] {
			slot := uint32(i + 1)
			binary.BigEndian.PutUint32(cl.rec[cl.seqPos+4:], slot)
			binary.BigEndian.PutUint32(cl.rec[cl.seqPos+8:], slot)
			cl.conn, cl.seq = NewConn(fmt.Sprintf("bench-%d", slot)), 0
		}
		// Bind every connection now, one at a time: a connection's first
		// SEQUENCE binds it under the session's lock, once, and 16
		// goroutines doing that at the same instant on 2 vCPUs showed up
		// in the mutex profile (a preempted holder) as if it were the
		// steady state.
		rep, buf := NewReply(), make([]byte, 4096)
		for _, cl := range clients {
			if st := cl.send(s, rep, buf); st != nfs4.OK {
				b.Fatalf("first request: %d", st)
			}
			rep.Reset()
		}
	}
	return h, clients
}

// send handles one request of cl as an engine would, and returns the
// COMPOUND status.
func (cl *benchClient) send(s *Server, rep *Reply, buf []byte) nfs4.Status {
	cl.seq++
	seq := cl.seq
	p := cl.rec[cl.seqPos:]
	p[0], p[1], p[2], p[3] = byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq)
	rep.Reset()
	s.Handle(cl.conn, cl.rec, rep)
	for k, rd := range rep.Reads {
		rep.CompleteRead(k, buf[:rd.Len])
	}
	s.Complete(rep)
	rep.Iovecs()
	// The body, the COMPOUND result, starts with its status.
	return nfs4.Status(binary.BigEndian.Uint32(rep.Enc.Header()[rep.bodyPos:]))
}

func benchParallel(b *testing.B, file func(i int) string, op benchOp) {
	benchParallelOn(b, file, op, false)
}

func benchParallelOn(b *testing.B, file func(i int) string, op benchOp, oneSession bool) {
	h, clients := newBenchClients(b, file, op, oneSession)
	var next atomic.Int32
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		cl := clients[int(next.Add(1)-1)%len(clients)]
		rep := NewReply()
		buf := make([]byte, 4096)
		for pb.Next() {
			if st := cl.send(h.s, rep, buf); st != nfs4.OK {
				b.Errorf("COMPOUND status %d", st)
				return
			}
		}
		rep.Reset()
	})
}

func ownFile(i int) string { return fmt.Sprintf("f%d", i) }
func oneFile(int) string   { return "f" }

// BenchmarkParallelRead: each client reads its own file, so nothing but
// server-wide state is shared between the goroutines.
func BenchmarkParallelRead(b *testing.B) { benchParallel(b, ownFile, read4K) }

// BenchmarkParallelReadOneFile: all clients read the same file, which
// adds the file's own state (descriptor cache, pins) to what is shared.
func BenchmarkParallelReadOneFile(b *testing.B) { benchParallel(b, oneFile, read4K) }

// BenchmarkParallelReadOneSession: one client, one session, a connection
// and a slot per goroutine, each reading its own file (Linux nconnect).
func BenchmarkParallelReadOneSession(b *testing.B) { benchParallelOn(b, ownFile, read4K, true) }

// BenchmarkParallelGetattr: SEQUENCE, PUTFH, GETATTR of size, change and
// times, each client on its own file.
func BenchmarkParallelGetattr(b *testing.B) {
	benchParallel(b, ownFile, func(e *xdr.Encoder, _ nfs4.Stateid) {
		e.Uint32(nfs4.OpGetattr)
		var bm nfs4.Bitmap
		for _, a := range []int{nfs4.AttrType, nfs4.AttrChange, nfs4.AttrSize, nfs4.AttrTimeModify} {
			bm.Set(a)
		}
		bm.Encode(e)
	})
}

func write4K(e *xdr.Encoder, sid nfs4.Stateid) {
	e.Uint32(nfs4.OpWrite)
	sid.Encode(e)
	e.Uint64(8192)
	e.Uint32(nfs4.Unstable4)
	e.Opaque(make([]byte, 4096))
}

// BenchmarkParallelWrite4K: SEQUENCE, PUTFH, WRITE 4 KiB UNSTABLE with the
// open stateid, each client to its own file.
func BenchmarkParallelWrite4K(b *testing.B) { benchParallel(b, ownFile, write4K) }

// BenchmarkParallelWrite4KOneFile: as BenchmarkParallelWrite4K, all
// clients to one file (the kernel's inode lock is then shared too).
func BenchmarkParallelWrite4KOneFile(b *testing.B) { benchParallel(b, oneFile, write4K) }
