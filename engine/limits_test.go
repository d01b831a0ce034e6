package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestAssemblerGrowsWithBytes: a header announcing 1 MiB followed by 4
// bytes takes growMin of memory, not 1 MiB, and the budget is charged
// only for what is held; the completed record is intact and the charge
// returns.
func TestAssemblerGrowsWithBytes(t *testing.T) {
	b := newPartialBudget(64<<20, nil)
	a := assembler{max: 2 << 20, pool: &recPool, hold: b.hold(func() { t.Fatal("evicted") })}
	body := random(rand.New(rand.NewPCG(7, 8)), 1<<20)
	stream := append(binary.BigEndian.AppendUint32(nil, 1<<31|1<<20), body...)
	var got []byte
	emit := func(r record) { got = append([]byte{}, r.bytes()...); recPool.put(r.buf) }
	if err := a.feed(stream[:8], emit); err != nil {
		t.Fatal(err)
	}
	if c := cap(*a.rec); c > growMin {
		t.Fatalf("4 bytes of a 1 MiB record hold a %d-byte buffer", c)
	}
	if n := b.inUse(); n > growMin {
		t.Fatalf("budget charged %d bytes for 4", n)
	}
	for p := stream[8:]; len(p) > 0; {
		k := min(len(p), 60000)
		if err := a.feed(p[:k], emit); err != nil {
			t.Fatal(err)
		}
		if a.rec != nil && cap(*a.rec) > growFactor*max(a.have(), growMin) {
			t.Fatalf("%d bytes received hold a %d-byte buffer", a.have(), cap(*a.rec))
		}
		p = p[k:]
	}
	if !bytes.Equal(got, body) {
		t.Fatal("record differs")
	}
	if n := b.inUse(); n != 0 {
		t.Fatalf("budget still charged %d bytes after the record completed", n)
	}
}

// TestAssemblerBodyReads drives the assembler the way the portable engine
// does: large bodies received straight into the record (body, fill),
// everything else through a small staging buffer.
func TestAssemblerBodyReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	recs := [][]byte{random(rng, 300<<10), []byte("small"), {}, random(rng, 70000), random(rng, 5000)}
	var stream []byte
	for i, r := range recs {
		stream = append(stream, fragments(r, 1000*i+3, 40000)...)
	}
	a := assembler{max: 1 << 20, pool: &recPool}
	var got [][]byte
	emit := func(r record) { got = append(got, append([]byte{}, r.bytes()...)); recPool.put(r.buf) }
	src := bytes.NewReader(stream)
	stage := make([]byte, 1000)
	for src.Len() > 0 {
		dst, err := a.body()
		if err != nil {
			t.Fatal(err)
		}
		if dst != nil {
			n, _ := src.Read(dst[:min(len(dst), 30000)])
			a.fill(n, emit)
			continue
		}
		n, _ := src.Read(stage)
		if err := a.feed(stage[:n], emit); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(recs) {
		t.Fatalf("%d records, want %d", len(got), len(recs))
	}
	for i := range recs {
		if !bytes.Equal(got[i], recs[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
}

// TestPartialBudget: past the budget the oldest holder is evicted; the
// oldest holder itself is refused.
func TestPartialBudget(t *testing.T) {
	b := newPartialBudget(100, nil)
	var evicted []string
	h1 := b.hold(func() { evicted = append(evicted, "h1") })
	h2 := b.hold(func() { evicted = append(evicted, "h2") })
	if !h1.grow(60) || !h2.grow(30) {
		t.Fatal("grow within budget refused")
	}
	if !h2.grow(30) || len(evicted) != 1 || evicted[0] != "h1" {
		t.Fatalf("over budget: evicted %v, want [h1]", evicted)
	}
	if h1.grow(1) {
		t.Fatal("an evicted holder may grow")
	}
	if b.inUse() != 60 {
		t.Fatalf("in use %d, want 60", b.inUse())
	}
	if h2.grow(50) {
		t.Fatal("the oldest holder grew past the budget")
	}
	h2.done()
	h3 := b.hold(func() {})
	if !h3.grow(100) || b.inUse() != 100 {
		t.Fatalf("after done: in use %d", b.inUse())
	}
}

// TestTimeoutsVerdict walks the timeout rules with a fake clock.
func TestTimeoutsVerdict(t *testing.T) {
	o := &Options{IdleTimeout: 10 * time.Second, RecordTimeout: 3 * time.Second}
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var tm timeouts
	steps := []struct {
		s                     int
		active, busy, partial bool
		paused                bool
		records               uint64
		want                  string
	}{
		{0, true, false, false, false, 0, ""},
		{2, true, false, true, false, 0, ""}, // a record begins
		{4, true, false, true, false, 1, ""}, // one completed, the next begun
		{6, true, false, true, true, 1, ""},  // paused: not the client's time
		{8, true, false, true, false, 1, ""}, // reading again: the clock restarts
		{11, true, false, true, false, 1, "record not completed in time"},
	}
	for _, s := range steps {
		tm.active.Store(s.active)
		if got := tm.verdict(at(s.s), o, s.busy, s.partial, s.paused, s.records); got != s.want {
			t.Fatalf("at %ds: %q, want %q", s.s, got, s.want)
		}
	}
	var idle timeouts
	idle.verdict(at(0), o, false, false, false, 0)
	if got := idle.verdict(at(9), o, true, false, false, 0); got != "" {
		t.Fatalf("busy: %q", got)
	}
	if got := idle.verdict(at(10), o, true, false, false, 0); got != "" {
		t.Fatalf("busy at the idle limit: %q", got)
	}
	if got := idle.verdict(at(10), o, false, false, false, 0); got != "idle" {
		t.Fatalf("idle: %q", got)
	}
}

// waitClosed reports whether the server closes nc within d (reading and
// dropping whatever it sends first).
func waitClosed(nc net.Conn, d time.Duration) bool {
	nc.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// shortLimits are limits small enough to hit in a test.
func shortLimits(o Options) Options {
	o.IdleTimeout = 300 * time.Millisecond
	o.RecordTimeout = 300 * time.Millisecond
	return o
}

// TestIdleTimeout: a connection that sends nothing is closed after the
// idle timeout, one half way through a record after the record timeout
// even while it trickles bytes; a client that keeps working is not.
func TestIdleTimeout(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		v.opts = shortLimits(v.opts)
		f := start(t, v)
		busy := f.dial(t, client.Options{})
		idle, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		slow, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		slow.Write([]byte{0x80, 0, 1, 0})
		stop := make(chan struct{})
		go func() { // a byte every 50 ms: never idle, never done
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
					slow.Write([]byte{1})
				}
			}
		}()
		defer close(stop)
		ctx := ctxT(t)
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := busy.RawCall(ctx, nullCall(busy.NextXID(), 0)); err != nil {
				t.Fatalf("working client: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !waitClosed(idle, 10*time.Second) {
			t.Error("idle connection not closed")
		}
		if !waitClosed(slow, 10*time.Second) {
			t.Error("connection stuck mid-record not closed")
		}
		if _, err := busy.RawCall(ctx, nullCall(busy.NextXID(), 0)); err != nil {
			t.Fatalf("working client after the timeouts: %v", err)
		}
	})
}

// TestMaxConns: connections past MaxConns are closed at accept; one comes
// in again once another leaves.
func TestMaxConns(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		v.opts.MaxConns = 3
		f := start(t, v)
		var conns []net.Conn
		for range 3 {
			nc, err := net.Dial("tcp", f.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			conns = append(conns, nc)
		}
		// A round trip on each proves the server has counted them.
		for i, nc := range conns {
			nc.Write(fragments(nullCall(uint32(i+1), 0)))
			if _, err := readReply(t, nc); err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
		}
		extra, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer extra.Close()
		if !waitClosed(extra, 10*time.Second) {
			t.Fatal("connection over the cap not closed")
		}
		conns[0].Close()
		for try := 0; ; try++ {
			nc, err := net.Dial("tcp", f.addr)
			if err != nil {
				t.Fatal(err)
			}
			nc.Write(fragments(nullCall(9, 0)))
			_, err = readReply(t, nc)
			nc.Close()
			if err == nil {
				break
			}
			if try == 100 {
				t.Fatal("no connection accepted after one left")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestPartialRecordBudget: two connections each hold most of a 1 MiB
// record; with a 1 MiB budget the older one is closed and the newer one
// completes its record and gets its reply.
func TestPartialRecordBudget(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		v.opts.MaxPartialBytes = 1 << 20
		f := start(t, v)
		rec := fragments(nullCall(5, 1<<20-64))
		first, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		first.Write(rec[:700<<10])
		time.Sleep(100 * time.Millisecond) // let the server take it in
		second, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer second.Close()
		second.Write(rec[:700<<10])
		if !waitClosed(first, 10*time.Second) {
			t.Fatal("the older partial record was not evicted")
		}
		second.Write(rec[700<<10:])
		if xid, err := readReply(t, second); err != nil || xid != 5 {
			t.Fatalf("newer record: xid %d, err %v", xid, err)
		}
	})
}

// replayRecord returns a record-marked SEQUENCE + PUTFH + READ of 1 MiB of
// name that c has sent once: every copy of it is a retransmit the server
// answers by re-executing the READ, so a raw connection can ask for
// megabytes of replies with a few hundred bytes.
func replayRecord(t testing.TB, c *client.Client, name string) []byte {
	t.Helper()
	ctx := ctxT(t)
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
	return fragments(rec)
}

// heldMemory is the Go heap in use plus the io_uring engine's off-heap
// read buffers.
func heldMemory() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse) + OffHeapBytes()
}

// TestFloodWithoutReading: a connection asks for 1 MiB READs as fast as
// it can and never reads a reply; another connection (on the same loop:
// one core) is served throughout, and the memory the server holds for the
// flooder stays near its MaxQueuedBytes rather than MaxInFlight replies.
func TestFloodWithoutReading(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		v.opts.MaxQueuedBytes = 2 << 20
		f := start(t, v)
		good := f.dial(t, client.Options{})
		rec := replayRecord(t, f.dial(t, client.Options{}), "data.bin")
		runtime.GC()
		before := heldMemory()
		flood, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer flood.Close()
		stop := make(chan struct{})
		done := make(chan int64)
		go func() {
			var peak int64
			for {
				select {
				case <-stop:
					done <- peak
					return
				case <-time.After(20 * time.Millisecond):
					peak = max(peak, heldMemory()-before)
				}
			}
		}()
		go func() {
			flood.SetWriteDeadline(time.Now().Add(20 * time.Second))
			for range 4096 {
				if _, err := flood.Write(rec); err != nil {
					return
				}
			}
		}()
		ctx := ctxT(t)
		for range 5 {
			got, err := good.ReadFile(ctx, "data.bin", 1<<20)
			if err != nil || !bytes.Equal(got, f.data["data.bin"]) {
				t.Fatalf("good connection: %d bytes, err %v", len(got), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		close(stop)
		peak := <-done
		t.Logf("memory held beyond the start while flooded: %d MiB", peak>>20)
		// 2 MiB of queued replies plus what the good client and the
		// collector's slack take; 128 READs of 1 MiB held for the flooder
		// would be far more.
		if peak > 64<<20 {
			t.Fatalf("server held %d MiB for a client that does not read", peak>>20)
		}
	})
}
