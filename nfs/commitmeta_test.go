package nfs

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// blockingIO's first Sync waits for release; it records every fd synced.
type blockingIO struct {
	PlainIO
	release chan struct{}
	mu      sync.Mutex
	synced  []int
	fail    int // fd whose sync fails with EIO
}

func (b *blockingIO) Sync(fd int, dataOnly bool) error {
	b.mu.Lock()
	first := len(b.synced) == 0
	b.synced = append(b.synced, fd)
	b.mu.Unlock()
	if first {
		<-b.release
	}
	if fd == b.fail {
		return unix.EIO
	}
	return nil
}

func openFile(t *testing.T, p string) int {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// Requests that arrive while a round runs share the next round, and an
// inode is synced once per round however many requests name it.
func TestMetaSyncGroupsConcurrentRequests(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	io := &blockingIO{release: make(chan struct{}), fail: -1}
	var m metaSync
	first := &syncReq{fds: []int{openFile(t, filepath.Join(dir, "a"))}}
	done := make(chan error, 100)
	go func() { done <- m.commit(io, first) }()
	waitFor(t, func() bool { io.mu.Lock(); defer io.mu.Unlock(); return len(io.synced) == 1 })

	const n = 20
	reqs := make([]*syncReq, n)
	for i := range reqs {
		// Each its own descriptor, all of the same two files.
		reqs[i] = &syncReq{fds: []int{openFile(t, filepath.Join(dir, "a")), openFile(t, filepath.Join(dir, "b"))}}
		go func() { done <- m.commit(io, reqs[i]) }()
	}
	waitFor(t, func() bool { m.mu.Lock(); defer m.mu.Unlock(); return len(m.next) == n })
	close(io.release)
	for i := 0; i < n+1; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// Round 1: a; round 2: a and b once each, for all 20 requests.
	if len(io.synced) != 3 || m.finished != 2 {
		t.Fatalf("%d fsyncs in %d rounds for %d requests, want 3 in 2", len(io.synced), m.finished, n+1)
	}
}

// A failed sync is reported to the requests whose inode it was, not to
// the others of the round.
func TestMetaSyncReportsErrorsPerRequest(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	a, b := openFile(t, filepath.Join(dir, "a")), openFile(t, filepath.Join(dir, "b"))
	io := &blockingIO{release: make(chan struct{}), fail: b}
	close(io.release)
	var m metaSync
	bad, good := &syncReq{fds: []int{b}}, &syncReq{fds: []int{a}}
	syncRound(io, []*syncReq{bad, good})
	if bad.err != unix.EIO || good.err != nil {
		t.Fatalf("errors %v, %v; want EIO for b only", bad.err, good.err)
	}
	if err := m.commit(io, &syncReq{fds: []int{a}}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond (no deadline: the test's own timeout bounds it).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		unix.Nanosleep(&unix.Timespec{Nsec: 1e6}, nil)
	}
}
