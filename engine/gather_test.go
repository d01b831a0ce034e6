package engine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// gatherFixture is a file and a gatherer whose first lone write waits
// until want other writes have queued behind it, so that they gather.
type gatherFixture struct {
	f        *os.File
	g        *gatherer
	release  chan struct{}
	joined   atomic.Int64
	lone     atomic.Int64
	firstOne sync.Once
}

func newGatherFixture(t *testing.T) *gatherFixture {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fx := &gatherFixture{f: f, release: make(chan struct{})}
	fx.g = &gatherer{
		write: func(fd int, b []byte, off int64) (int, error) {
			fx.firstOne.Do(func() { <-fx.release })
			fx.lone.Add(1)
			return unix.Pwrite(fd, b, off)
		},
		gathered: func(_, n int) { fx.joined.Add(int64(n)) },
	}
	return fx
}

// queued reports how many writes wait behind the one being written.
func (fx *gatherFixture) queued() int {
	v, ok := fx.g.files.Load(int(fx.f.Fd()))
	if !ok {
		return 0
	}
	fg := v.(*fileGather)
	fg.mu.Lock()
	defer fg.mu.Unlock()
	return len(fg.queue)
}

// busy reports whether a write to the file is under way.
func (fx *gatherFixture) busy() bool {
	v, ok := fx.g.files.Load(int(fx.f.Fd()))
	if !ok {
		return false
	}
	fg := v.(*fileGather)
	fg.mu.Lock()
	defer fg.mu.Unlock()
	return fg.busy
}

// writeAll starts one goroutine per write, holds the first until the rest
// have queued, and returns each write's count and error.
func (fx *gatherFixture) writeAll(t *testing.T, pieces [][]byte, offs []int64) ([]int, []error) {
	t.Helper()
	ns, errs := make([]int, len(pieces)), make([]error, len(pieces))
	var wg sync.WaitGroup
	start := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns[i], errs[i] = fx.g.WriteAt(int(fx.f.Fd()), pieces[i], offs[i])
		}()
	}
	// Each write is started once the one before it is held or queued, so
	// that the queue holds them in index order.
	for i := range pieces {
		start(i)
		deadline := time.Now().Add(10 * time.Second)
		for !fx.busy() || fx.queued() < i {
			if time.Now().After(deadline) {
				t.Fatalf("write %d never queued", i)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	close(fx.release)
	wg.Wait()
	return ns, errs
}

// TestGatherJoinsAdjacentWrites: writes queued behind a busy file go down
// joined where adjacent, and the file holds what each wrote.
func TestGatherJoinsAdjacentWrites(t *testing.T) {
	fx := newGatherFixture(t)
	const n, size = 24, 47008 // ior-hard's transfer: neither page nor block aligned
	pieces, offs := make([][]byte, n), make([]int64, n)
	for i := range n {
		pieces[i] = bytes.Repeat([]byte{byte(i + 1)}, size)
		// Arrival order is not file order; piece 0 stands alone.
		offs[i] = int64((n-i)%n) * size
	}
	ns, errs := fx.writeAll(t, pieces, offs)
	for i := range n {
		if errs[i] != nil || ns[i] != size {
			t.Fatalf("write %d: %d, %v", i, ns[i], errs[i])
		}
	}
	if fx.joined.Load() < n-2 {
		t.Errorf("%d of %d queued writes were joined", fx.joined.Load(), n-1)
	}
	got, err := os.ReadFile(fx.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !bytes.Equal(got[offs[i]:offs[i]+size], pieces[i]) {
			t.Fatalf("piece %d at %d is not in the file", i, offs[i])
		}
	}
	if _, ok := fx.g.files.Load(int(fx.f.Fd())); ok {
		t.Error("the file's queue outlived its writes")
	}
}

// TestGatherOverlapKeepsArrivalOrder: overlapping writes are not joined
// and land in the order they came.
func TestGatherOverlapKeepsArrivalOrder(t *testing.T) {
	fx := newGatherFixture(t)
	pieces := [][]byte{[]byte("held"), bytes.Repeat([]byte{'a'}, 100), bytes.Repeat([]byte{'b'}, 100)}
	offs := []int64{1000, 50, 0}
	_, errs := fx.writeAll(t, pieces, offs)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(fx.f.Name())
	if want := append(bytes.Repeat([]byte{'b'}, 100), bytes.Repeat([]byte{'a'}, 50)...); !bytes.Equal(got[:150], want) {
		t.Fatalf("got %q, want the later write on top", got[:150])
	}
	if fx.joined.Load() != 0 {
		t.Errorf("%d overlapping writes joined", fx.joined.Load())
	}
}

// TestGatherFailedRunEachOwnResult: when the joined write fails, every
// write is redone on its own and gets its own outcome.
func TestGatherFailedRunEachOwnResult(t *testing.T) {
	r, w, err := os.Pipe() // pwritev on a pipe fails with ESPIPE
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fx := &gatherFixture{f: w, release: make(chan struct{})}
	var calls atomic.Int64
	fx.g = &gatherer{write: func(fd int, b []byte, off int64) (int, error) {
		fx.firstOne.Do(func() { <-fx.release })
		fx.lone.Add(1)
		if calls.Add(1) == 3 {
			return 1, unix.ENOSPC
		}
		return len(b), nil
	}}
	pieces := [][]byte{make([]byte, 10), make([]byte, 10), make([]byte, 10), make([]byte, 10)}
	ns, errs := fx.writeAll(t, pieces, []int64{0, 10, 20, 30})
	var failed int
	for i := range pieces {
		switch {
		case errs[i] == unix.ENOSPC && ns[i] == 1:
			failed++
		case errs[i] != nil || ns[i] != 10:
			t.Errorf("write %d: %d, %v", i, ns[i], errs[i])
		}
	}
	if failed != 1 || calls.Load() != 4 {
		t.Errorf("%d writes failed, %d calls; want 1 failed of 4", failed, calls.Load())
	}
}

// TestGatherManyWriters: many goroutines on a few files, without holding
// anyone: every byte lands and no queue is left behind (run with -race).
func TestGatherManyWriters(t *testing.T) {
	dir := t.TempDir()
	g := &gatherer{}
	files := make([]*os.File, 3)
	for i := range files {
		f, err := os.Create(filepath.Join(dir, string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	const writers, each, size = 16, 50, 3000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				f := files[(w+k)%len(files)]
				off := int64(k*writers+w) * size
				b := bytes.Repeat([]byte{byte(w + 1)}, size)
				if n, err := g.WriteAt(int(f.Fd()), b, off); n != size || err != nil {
					t.Errorf("write: %d, %v", n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, f := range files {
		got, _ := os.ReadFile(f.Name())
		for w := range writers {
			for k := range each {
				if (w+k)%len(files) != i {
					continue
				}
				off := (k*writers + w) * size
				if !bytes.Equal(got[off:off+size], bytes.Repeat([]byte{byte(w + 1)}, size)) {
					t.Fatalf("file %d: writer %d's piece %d missing", i, w, k)
				}
			}
		}
		if _, ok := g.files.Load(int(f.Fd())); ok {
			t.Errorf("file %d's queue outlived its writes", i)
		}
	}
}
