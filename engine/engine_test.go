package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// variant is one engine configuration under test.
type variant struct {
	name string // engine.New name
	opts Options
}

// variants are every engine in Names, plus the io_uring engine forced to
// O_DIRECT so the widened-read path is exercised on real files, and with
// two loops so connections are spread, and with the loops' ordinary waits
// only (no held waits).
func variants() []variant {
	var vs []variant
	for _, n := range Names {
		vs = append(vs, variant{name: n})
	}
	return append(vs, variant{name: "uring", opts: Options{DirectIO: "on"}},
		variant{name: "uring", opts: Options{Cores: 2}},
		variant{name: "uring", opts: Options{SendZC: true}},
		variant{name: "uring", opts: Options{PlainWait: true}})
}

func (v variant) label() string {
	s := v.name
	if v.opts.DirectIO != "" {
		s += "-dio-" + v.opts.DirectIO
	}
	if v.opts.Cores > 1 {
		s += fmt.Sprintf("-cores%d", v.opts.Cores)
	}
	if v.opts.SendZC {
		s += "-sendzc"
	}
	if v.opts.PlainWait {
		s += "-plainwait"
	}
	return s
}

// forEach runs f as a subtest per variant, skipping io_uring where the
// kernel refuses it.
func forEach(t *testing.T, f func(t *testing.T, v variant)) {
	for _, v := range variants() {
		t.Run(v.label(), func(t *testing.T) {
			if v.name == "uring" {
				if err := ring.Available(); err != nil {
					t.Skipf("io_uring: %v", err)
				}
			}
			f(t, v)
		})
	}
}

type fixture struct {
	dir  string
	addr string
	eng  Engine
	data map[string][]byte
	stop func()
}

func random(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32() | 1)
	}
	return b
}

// start serves a temp dir of test files with engine v on 127.0.0.1.
func start(t testing.TB, v variant) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), data: map[string][]byte{}}
	rng := rand.New(rand.NewPCG(1, 2))
	f.add(t, "data.bin", random(rng, 3<<20+123))
	f.add(t, "small.txt", []byte("hello, world\n"))
	f.add(t, "empty", nil)
	sparse := make([]byte, 4<<20)
	copy(sparse[1<<20+5:], random(rng, 70000))
	f.addSparse(t, "sparse.bin", sparse)
	f.serve(t, v)
	return f
}

func (f *fixture) serve(t testing.TB, v variant) {
	t.Helper()
	cfg := nfs.Config{Exports: []nfs.Export{{Path: f.dir}}}
	if v.opts.FileIO != nil {
		cfg.IO = v.opts.FileIO
	}
	srv, err := nfs.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(v.name, srv, v.opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	var once sync.Once
	f.stop = func() {
		once.Do(func() {
			closeWithin(t, eng, 10*time.Second)
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			srv.Close()
		})
	}
	t.Cleanup(f.stop)
	f.addr, f.eng = ln.Addr().String(), eng
}

func closeWithin(t testing.TB, eng Engine, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { eng.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: Close did not return within %v", eng.Name(), d)
	}
}

func (f *fixture) add(t testing.TB, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	f.data[name] = data
}

// addSparse writes only the non-zero 64 KiB blocks of data.
func (f *fixture) addSparse(t testing.TB, name string, data []byte) {
	t.Helper()
	fl, err := os.Create(filepath.Join(f.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	const blk = 64 << 10
	for off := 0; off < len(data); off += blk {
		b := data[off:min(off+blk, len(data))]
		if bytes.Count(b, []byte{0}) != len(b) {
			if _, err := fl.WriteAt(b, int64(off)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := fl.Truncate(int64(len(data))); err != nil {
		t.Fatal(err)
	}
	f.data[name] = data
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (f *fixture) dial(t testing.TB, opts client.Options) *client.Client {
	t.Helper()
	c, err := client.Dial(ctxT(t), f.addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestReadFiles(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		c := f.dial(t, client.Options{})
		ctx := ctxT(t)
		for name, want := range f.data {
			for _, chunk := range []uint32{1 << 20, 64 << 10, 4097} {
				got, err := c.ReadFile(ctx, name, chunk)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("READ %s chunk %d: %d bytes (want %d), err %v", name, chunk, len(got), len(want), err)
				}
				got, err = c.ReadFilePlus(ctx, name, chunk)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("READ_PLUS %s chunk %d: %d bytes (want %d), err %v", name, chunk, len(got), len(want), err)
				}
			}
		}
		root, err := c.RootFH(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := c.Readdir(ctx, root)
		if err != nil || len(ents) != len(f.data) {
			t.Errorf("READDIR: %d entries, err %v", len(ents), err)
		}
	})
}

// TestOddRanges reads at offsets and lengths that are not block-aligned,
// around and past end of file: buffered and widened O_DIRECT must agree.
func TestOddRanges(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		c := f.dial(t, client.Options{})
		ctx := ctxT(t)
		data := f.data["data.bin"]
		file, err := c.OpenPath(ctx, "data.bin")
		if err != nil {
			t.Fatal(err)
		}
		size := uint64(len(data))
		offs := []uint64{0, 1, 511, 4095, 4097, 65537, 1<<20 - 3, size - 40000, size - 1, size, size + 10}
		lens := []uint32{1, 7, 4096, 32<<10 - 1, 32<<10 + 3, 100000, 1 << 20}
		for _, off := range offs {
			for _, n := range lens {
				got, eof, err := c.Read(ctx, file.FH, file.Stateid, off, n)
				want := data[min(off, size):min(off+uint64(n), size)]
				if err != nil || !bytes.Equal(got, want) || eof != (off+uint64(n) >= size) {
					t.Errorf("READ %d@%d: %d bytes eof %v (want %d), err %v", n, off, len(got), eof, len(want), err)
				}
			}
		}
	})
}

// TestConcurrent runs many reads in flight on several connections.
func TestConcurrent(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		data := f.data["data.bin"]
		var wg sync.WaitGroup
		for ci := range 4 {
			c := f.dial(t, client.Options{})
			file, err := c.OpenPath(ctxT(t), "data.bin")
			if err != nil {
				t.Fatal(err)
			}
			for g := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(ci), uint64(g)))
					for range 20 {
						off := rng.Uint64N(uint64(len(data)))
						n := uint32(rng.IntN(300<<10) + 1)
						got, _, err := c.Read(context.Background(), file.FH, file.Stateid, off, n)
						want := data[off:min(off+uint64(n), uint64(len(data)))]
						if err != nil || !bytes.Equal(got, want) {
							t.Errorf("READ %d@%d: %d bytes, err %v", n, off, len(got), err)
							return
						}
					}
				}()
			}
		}
		wg.Wait()
	})
}

// TestBigRecords sends 1 MiB records (NULL calls padded with arguments
// the server ignores; COMPOUND tags are capped at 1 KiB) between 1 MiB
// READs on one connection, so requests span many receive buffers and
// replies many sends.
func TestBigRecords(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		c := f.dial(t, client.Options{})
		ctx := ctxT(t)
		for i := range 3 {
			xid := c.NextXID()
			if _, err := c.RawCall(ctx, nullCall(xid, 1<<20+i*4)); err != nil {
				t.Fatalf("1 MiB NULL call: %v", err)
			}
			got, err := c.ReadFile(ctx, "data.bin", 1<<20)
			if err != nil || !bytes.Equal(got, f.data["data.bin"]) {
				t.Errorf("READ: %d bytes, err %v", len(got), err)
			}
		}
	})
}

// nullCall is an RPC NULL call to NFSv4 with AUTH_NONE, plus pad bytes of
// arguments the server ignores.
func nullCall(xid uint32, pad int) []byte {
	b := make([]byte, 0, 40+pad)
	for _, w := range []uint32{xid, 0, 2, 100003, 4, 0, 0, 0, 0, 0} {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return append(b, make([]byte, pad)...)
}

// fragments record-marks rec in fragments of the given sizes (the last
// takes the rest).
func fragments(rec []byte, sizes ...int) []byte {
	var out []byte
	for first := true; first || len(rec) > 0; first = false {
		n := len(rec)
		if len(sizes) > 0 {
			n, sizes = min(sizes[0], n), sizes[1:]
		}
		mark := uint32(n)
		if n == len(rec) {
			mark |= 1 << 31
		}
		out = binary.BigEndian.AppendUint32(out, mark)
		out = append(out, rec[:n]...)
		rec = rec[n:]
	}
	return out
}

// readReply reads one single-fragment reply record and returns its xid.
func readReply(t testing.TB, nc net.Conn) (uint32, error) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		return 0, err
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:])&^(1<<31))
	if _, err := io.ReadFull(nc, body); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(body), nil
}

// TestFragments sends multi-fragment records, in odd-sized writes that cut
// headers, as well as back-to-back records in one write.
func TestFragments(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		nc, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		var stream []byte
		stream = append(stream, fragments(nullCall(1, 1<<20), 3, 70000, 1, 500000)...)
		stream = append(stream, fragments(nullCall(2, 0), 2, 2)...)
		stream = append(stream, fragments(nullCall(3, 5000))...)
		go func() {
			for len(stream) > 0 {
				n := min(len(stream), 1+len(stream)%7919)
				nc.Write(stream[:n])
				stream = stream[n:]
			}
		}()
		for want := uint32(1); want <= 3; want++ {
			xid, err := readReply(t, nc)
			if err != nil {
				t.Fatalf("reply %d: %v", want, err)
			}
			if xid < 1 || xid > 3 {
				t.Errorf("reply xid %d", xid)
			}
		}
	})
}

// TestBadRecords: an oversize record closes its connection, garbage is
// dropped; other connections carry on.
func TestBadRecords(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		good := f.dial(t, client.Options{})
		ctx := ctxT(t)

		big, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer big.Close()
		big.Write(binary.BigEndian.AppendUint32(nil, 1<<31|64<<20))
		big.Write(make([]byte, 1000))
		if _, err := readReply(t, big); err == nil {
			t.Errorf("oversize record got a reply")
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("oversize record: connection not closed")
		}

		junk, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer junk.Close()
		junk.Write(fragments(random(rand.New(rand.NewPCG(3, 4)), 3000)))
		junk.Write(fragments(nullCall(7, 0)))

		got, err := good.ReadFile(ctx, "data.bin", 1<<20)
		if err != nil || !bytes.Equal(got, f.data["data.bin"]) {
			t.Errorf("good connection: %d bytes, err %v", len(got), err)
		}
	})
}

// gateConn blocks reads once closed is set, standing for a client that
// stops reading its replies.
type gateConn struct {
	net.Conn
	gate chan struct{}
	hold bool
	mu   sync.Mutex
}

func (g *gateConn) Read(b []byte) (int, error) {
	g.mu.Lock()
	hold := g.hold
	g.mu.Unlock()
	if hold {
		<-g.gate
	}
	return g.Conn.Read(b)
}

func (g *gateConn) stall() {
	g.mu.Lock()
	g.hold = true
	g.mu.Unlock()
}

// TestSlowReader: a client with many 1 MiB reads outstanding that does
// not read replies must not stop another connection being served, and
// gets its data once it reads again.
func TestSlowReader(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		// Fewer requests allowed in flight than the client sends, so the
		// engine has to stop receiving from it, as well as hold replies.
		v.opts.MaxInFlight = 8
		f := start(t, v)
		ctx := ctxT(t)
		nc, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		gc := &gateConn{Conn: nc, gate: make(chan struct{})}
		slow, err := client.NewConn(ctx, gc, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		data := f.data["data.bin"]
		file, err := slow.OpenPath(ctx, "data.bin")
		if err != nil {
			t.Fatal(err)
		}
		gc.stall()
		var wg sync.WaitGroup
		for i := range 48 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				off := uint64(i%3) << 20
				got, _, err := slow.Read(ctx, file.FH, file.Stateid, off, 1<<20)
				if err != nil || !bytes.Equal(got, data[off:off+1<<20]) {
					t.Errorf("slow READ @%d: %d bytes, err %v", off, len(got), err)
				}
			}()
		}
		time.Sleep(200 * time.Millisecond)
		fast := f.dial(t, client.Options{})
		for range 3 {
			got, err := fast.ReadFile(ctx, "data.bin", 1<<20)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("fast connection: %d bytes, err %v", len(got), err)
			}
		}
		close(gc.gate)
		wg.Wait()
	})
}

// TestCloseWithClients closes the engine while connections are busy.
func TestCloseWithClients(t *testing.T) {
	forEach(t, func(t *testing.T, v variant) {
		f := start(t, v)
		var wg sync.WaitGroup
		for range 3 {
			c := f.dial(t, client.Options{})
			file, err := c.OpenPath(ctxT(t), "data.bin")
			if err != nil {
				t.Fatal(err)
			}
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						if _, _, err := c.Read(context.Background(), file.FH, file.Stateid, 0, 1<<20); err != nil {
							return
						}
					}
				}()
			}
		}
		// An idle raw connection and one that stalls mid-record.
		idle, _ := net.Dial("tcp", f.addr)
		defer idle.Close()
		half, _ := net.Dial("tcp", f.addr)
		defer half.Close()
		half.Write([]byte{0x80, 0, 1, 0, 1, 2})
		time.Sleep(100 * time.Millisecond)
		f.stop()
		wg.Wait()
	})
}

// TestHeldWaitProcs: an io_uring engine adds a P per loop for the loops'
// held waits while it runs, and takes them back when it closes; with
// PlainWait it adds none.
func TestHeldWaitProcs(t *testing.T) {
	if err := ring.Available(); err != nil {
		t.Skipf("io_uring: %v", err)
	}
	base := runtime.GOMAXPROCS(0)
	for _, plain := range []bool{false, true} {
		e, err := New("uring", nil, Options{Cores: 2, PlainWait: plain})
		if err != nil {
			t.Fatal(err)
		}
		want := base + 2
		if plain {
			want = base
		}
		if got := runtime.GOMAXPROCS(0); got != want {
			t.Errorf("PlainWait %v: GOMAXPROCS %d while running, want %d", plain, got, want)
		}
		e.Close()
		if got := runtime.GOMAXPROCS(0); got != base {
			t.Errorf("PlainWait %v: GOMAXPROCS %d after Close, want %d", plain, got, base)
		}
	}
}
