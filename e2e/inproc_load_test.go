package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// loadScale sizes TestHostileLoad: a short run in make test, a long one
// with NFSD_LOAD=long.
type loadScale struct {
	idle, partial, floods int
	hostile               time.Duration
}

func scale() loadScale {
	if os.Getenv("NFSD_LOAD") == "long" {
		return loadScale{idle: 1000, partial: 400, floods: 8, hostile: 20 * time.Second}
	}
	return loadScale{idle: 1000, partial: 200, floods: 2, hostile: 3 * time.Second}
}

// loadOptions are the limits under test, with the timeouts shortened so a
// test sees them act.
//
// The idle timeout is longer than the attack: on 2 shared CPUs under the
// race detector a loop saturated by hostile bytes can leave the good
// client's reply unsent for over 2 s, and the sweep would then (by design)
// call it idle. TestIdleTimeout checks idle closing on its own.
func loadOptions() engine.Options {
	return engine.Options{
		IdleTimeout:     30 * time.Second,
		RecordTimeout:   200 * time.Millisecond,
		MaxPartialBytes: 32 << 20,
		MaxQueuedBytes:  2 << 20,
	}
}

// memBound is what the server may hold beyond its quiet state while under
// attack: the 32 MiB partial-record budget, 2+2 MiB per flooding
// connection, the stacks and read buffers of 1,000 idle connections, and
// what the churn of evicted partial records leaves for the collector
// (measured peaks on 2 shared CPUs: portable 38-207 MiB, uring 76-154 MiB).
// Without the limits the 200 partial records alone hold 200 MiB, for as
// long as their clients like, and 1,000 idle portable connections 64 MiB
// more.
const memBound = 256 << 20

// TestHostileLoad runs a well-behaved client beside a hostile one, on
// each engine: 1,000 idle connections, connections that stall half way
// through 1 MiB records, record marks announcing 2 GiB, and connections
// that flood 1 MiB READs and NULL calls without reading replies. The good
// client must see no error, and the server's memory (Go heap and stacks
// plus the io_uring engine's off-heap buffers) must stay under memBound
// above its quiet level. Latencies are logged, not asserted.
func TestHostileLoad(t *testing.T) {
	sc := scale()
	raiseNoFile(t, uint64(2*sc.idle+2*sc.partial+256))
	for _, name := range engine.Names {
		t.Run(name, func(t *testing.T) {
			f := startWith(t, name, loadOptions())
			ctx := ctxT(t)
			gnc, err := net.Dial("tcp", f.addr)
			if err != nil {
				t.Fatal(err)
			}
			good, err := client.NewConn(ctx, gnc, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer good.Close()
			small, err := good.LookupPath(ctx, "small.txt")
			if err != nil {
				t.Fatal(err)
			}
			// The good client works without pause from here on: with the
			// short idle timeout a pause would (rightly) close it.
			var phase atomic.Int32 // 0 quiet, 1 under attack, 2 done
			var quiet, loaded timings
			worked := make(chan struct{})
			go func() {
				defer close(worked)
				for p := phase.Load(); p < 2; p = phase.Load() {
					tm := &quiet
					if p == 1 {
						tm = &loaded
					}
					tm.add(func() error { return goodWork(ctx, t, good, f, small) })
				}
			}()
			rec := replayRead(t, f, "data.bin")
			time.Sleep(300 * time.Millisecond)
			base := liveMemory()

			h := &hostile{addr: f.addr, stop: make(chan struct{})}
			phase.Store(1)
			h.idle(sc.idle)
			h.partials(sc.partial)
			h.hugeMarks()
			for range sc.floods {
				h.flood(rec)
				h.flood(fragmentOf(nullRecord(1<<16), 1))
			}
			peak := int64(0)
			for end := time.Now().Add(sc.hostile); time.Now().Before(end); {
				time.Sleep(100 * time.Millisecond)
				m := liveMemory() - base
				peak = max(peak, m)
			}
			h.end()
			phase.Store(2)
			<-worked
			errs := loaded.errs
			qm, lm := median(quiet.lat), median(loaded.lat)
			t.Logf("%s: good client %d ops, median %v quiet, %v under attack (x%.1f); errors %d quiet, %d under attack",
				name, len(loaded.lat), qm, lm, float64(lm)/float64(max(qm, 1)), quiet.errs, errs)
			t.Logf("%s: memory beyond quiet: peak %d MiB (bound %d MiB); idle connections closed by the server %d/%d; partial-record connections closed %d; huge marks refused %d; hostile dials refused %d",
				name, peak>>20, memBound>>20, h.idleClosed.Load(), sc.idle, h.partialClosed.Load(), h.hugeClosed.Load(), h.dialFailed.Load())
			if quiet.errs+errs > 0 || len(loaded.lat) == 0 {
				t.Errorf("good client %v saw %d errors, the first: %v", gnc.LocalAddr(), quiet.errs+errs, loaded.first)
			}
			if peak > memBound {
				t.Errorf("server held %d MiB beyond its quiet level, bound %d MiB", peak>>20, memBound>>20)
			}
		})
	}
}

// startWith serves the test export with engine name and opts.
func startWith(t *testing.T, name string, opts engine.Options) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir()}
	f.makeFiles(t)
	f.addr, _ = serve(t, name, nfs.Config{Exports: []nfs.Export{{Path: f.dir}}}, opts)
	return f
}

// raiseNoFile lifts the soft descriptor limit to n where the hard limit
// allows, and skips the test where it does not.
func raiseNoFile(t *testing.T, n uint64) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Cur >= n {
		return
	}
	if rl.Max < n {
		t.Skipf("RLIMIT_NOFILE hard limit %d, need %d", rl.Max, n)
	}
	old := rl
	rl.Cur = n
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("raise RLIMIT_NOFILE: %v", err)
	}
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_NOFILE, &old) })
}

// goodWork is one unit of the good client's work: a GETATTR and a 64 KiB
// READ, checked.
func goodWork(ctx context.Context, t *testing.T, c *client.Client, f *fixture, small []byte) error {
	if _, err := c.Getattr(ctx, small, client.StandardAttrs); err != nil {
		return err
	}
	got, err := c.ReadFile(ctx, "small.txt", 64<<10)
	if err == nil && !bytes.Equal(got, f.file("small.txt")) {
		t.Errorf("small.txt read back wrong")
	}
	return err
}

type timings struct {
	lat   []time.Duration
	errs  int
	first error
}

func (tm *timings) add(work func() error) {
	start := time.Now()
	if err := work(); err != nil {
		if tm.errs == 0 {
			tm.first = err
		}
		tm.errs++
		return
	}
	tm.lat = append(tm.lat, time.Since(start))
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// liveMemory is the memory the process holds live: the Go heap after a
// collection (pooled buffers included) and goroutine stacks, plus the
// io_uring engine's off-heap buffers. Collecting first keeps the
// collector's pacing slack out of the measure.
func liveMemory() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc+ms.StackInuse) + engine.OffHeapBytes()
}

// hostile runs the misbehaving connections until stop closes.
type hostile struct {
	addr  string
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn

	idleClosed, partialClosed, hugeClosed, dialFailed atomic.Int64
}

func (h *hostile) stopped() bool {
	select {
	case <-h.stop:
		return true
	default:
		return false
	}
}

// run runs f in a goroutine until stop; f's connections close with it.
func (h *hostile) run(f func()) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
}

func (h *hostile) dial() net.Conn {
	var nc net.Conn
	for !h.stopped() {
		var err error
		if nc, err = net.Dial("tcp", h.addr); err == nil {
			break
		}
		// A full accept queue refuses or resets: the hostile side's
		// problem, it tries again.
		h.dialFailed.Add(1)
		time.Sleep(10 * time.Millisecond)
	}
	if nc == nil {
		return nil
	}
	h.mu.Lock()
	h.conns = append(h.conns, nc)
	h.mu.Unlock()
	return nc
}

// end stops the hostile side and waits for it.
func (h *hostile) end() {
	close(h.stop)
	h.mu.Lock()
	for _, nc := range h.conns {
		nc.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// closedByServer waits until the server closes nc (or stop) and reports
// whether the server did.
func (h *hostile) closedByServer(nc net.Conn) bool {
	_, err := io.Copy(io.Discard, nc)
	return !h.stopped() && (err == nil || !strings.Contains(err.Error(), "use of closed"))
}

// idle opens n connections that never send.
func (h *hostile) idle(n int) {
	for range n {
		nc := h.dial()
		if nc == nil {
			return
		}
		h.run(func() {
			if h.closedByServer(nc) {
				h.idleClosed.Add(1)
			}
		})
	}
}

// partials keeps n connections each stalled 900 KiB into a 1 MiB record,
// reconnecting when the server closes one.
func (h *hostile) partials(n int) {
	rec := fragmentOf(nullRecord(1<<20-64), 1)[:900<<10]
	for range n {
		h.run(func() {
			for !h.stopped() {
				nc := h.dial()
				if nc == nil {
					return
				}
				nc.Write(rec)
				if h.closedByServer(nc) {
					h.partialClosed.Add(1)
				}
				nc.Close()
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// hugeMarks keeps announcing records of 2 GiB.
func (h *hostile) hugeMarks() {
	h.run(func() {
		for !h.stopped() {
			nc := h.dial()
			if nc == nil {
				return
			}
			nc.Write(append(binary.BigEndian.AppendUint32(nil, 0xffffffff), make([]byte, 64)...))
			if h.closedByServer(nc) {
				h.hugeClosed.Add(1)
			}
			nc.Close()
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// flood writes rec again and again on one connection and never reads.
func (h *hostile) flood(rec []byte) {
	h.run(func() {
		nc := h.dial()
		for nc != nil && !h.stopped() {
			if _, err := nc.Write(rec); err != nil {
				return
			}
		}
	})
}

// nullRecord is an RPC NULL call to NFSv4 with pad bytes of ignored
// arguments.
func nullRecord(pad int) []byte {
	b := make([]byte, 0, 40+pad)
	for _, w := range []uint32{1, 0, 2, 100003, 4, 0, 0, 0, 0, 0} {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return append(b, make([]byte, pad)...)
}

// fragmentOf record-marks rec as one fragment, n times over.
func fragmentOf(rec []byte, n int) []byte {
	var out []byte
	for range n {
		out = binary.BigEndian.AppendUint32(out, xdr.RecordMark(len(rec)))
		out = append(out, rec...)
	}
	return out
}

// replayRead returns a record-marked SEQUENCE + PUTFH + READ of 1 MiB that
// c has sent once: each copy is a retransmit the server answers by
// re-executing the READ, so a few hundred bytes ask for 1 MiB.
func replayRead(t *testing.T, f *fixture, name string) []byte {
	t.Helper()
	ctx := ctxT(t)
	// Its own client, not closed at the end: the idle timeout closes it.
	c, err := client.Dial(ctx, f.addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	file, err := c.OpenPath(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	slot, seq, err := c.AcquireSlot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := c.CallRecord(c.NextXID(), 2, func(e *xdr.Encoder) int {
		client.EncodeSequence(e, c.SessionID(), seq, slot, c.HighestSlot(), true)
		client.EncodePutfh(e, file.FH)
		client.EncodeRead(e, file.Stateid, 0, 1<<20)
		return 3
	})
	rep, err := c.RawCall(ctx, rec)
	if err != nil || len(rep) < 1<<20 {
		t.Fatalf("first READ: %d bytes, err %v", len(rep), err)
	}
	return fragmentOf(rec, 1)
}
