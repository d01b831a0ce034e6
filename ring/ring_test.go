package ring

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestAvailable(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
}

func TestNop(t *testing.T) {
	r := newRing(t, Options{Entries: 8})
	if r.SQEntries() != 8 || r.CQEntries() != 16 {
		t.Fatalf("entries = %d/%d, want 8/16", r.SQEntries(), r.CQEntries())
	}
	c := do(t, r, func(s *SQE) { s.PrepNop() })
	mustRes(t, c, 0)
	if c.UserData != 0xfeed {
		t.Fatalf("UserData = %#x", c.UserData)
	}
	if r.PeekCQE() != nil {
		t.Fatal("unexpected extra CQE")
	}
}

func TestCQSize(t *testing.T) {
	r := newRing(t, Options{Entries: 4, CQEntries: 64})
	if r.CQEntries() != 64 {
		t.Fatalf("CQEntries = %d, want 64", r.CQEntries())
	}
}

func TestGetSQEFull(t *testing.T) {
	r := newRing(t, Options{Entries: 4})
	for i := range 4 {
		if r.GetSQE() == nil {
			t.Fatalf("GetSQE %d returned nil", i)
		}
	}
	if r.GetSQE() != nil {
		t.Fatal("GetSQE on a full SQ returned an entry")
	}
	if n := r.SQReady(); n != 4 {
		t.Fatalf("SQReady = %d", n)
	}
	n, err := r.Submit()
	if err != nil || n != 4 {
		t.Fatalf("Submit = %d, %v", n, err)
	}
	if r.GetSQE() == nil {
		t.Fatal("GetSQE after Submit returned nil")
	}
}

// TestBatch64 submits 64 SQEs with one io_uring_enter and reaps them in a batch.
func TestBatch64(t *testing.T) {
	r := newRing(t, Options{Entries: 64})
	for i := range 64 {
		s := r.GetSQE()
		s.PrepNop()
		s.UserData = uint64(i)
	}
	n, err := r.SubmitAndWait(64)
	if err != nil || n != 64 {
		t.Fatalf("SubmitAndWait = %d, %v", n, err)
	}
	if r.CQReady() != 64 {
		t.Fatalf("CQReady = %d", r.CQReady())
	}
	var cqes [64]CQE
	got := r.PeekBatch(cqes[:])
	if got != 64 {
		t.Fatalf("PeekBatch = %d", got)
	}
	seen := make(map[uint64]bool)
	for _, c := range cqes[:got] {
		mustRes(t, c, 0)
		seen[c.UserData] = true
	}
	r.Advance(uint32(got))
	if len(seen) != 64 || r.CQReady() != 0 {
		t.Fatalf("distinct user data %d, left %d", len(seen), r.CQReady())
	}
}

func TestTimeout(t *testing.T) {
	r := newRing(t, Options{})
	ts := &unix.Timespec{Nsec: int64(20 * time.Millisecond)}
	start := time.Now()
	c := do(t, r, func(s *SQE) { s.PrepTimeout(ts, 0, 0) })
	if errnoOf(c) != unix.ETIME {
		t.Fatalf("Res = %d, want -ETIME", c.Res)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Fatalf("timeout fired after %v", d)
	}
}

func TestSubmitAndWaitTimeout(t *testing.T) {
	r := newRing(t, Options{})
	if r.Features()&FeatExtArg == 0 {
		t.Skip("no FeatExtArg")
	}
	_, err := r.SubmitAndWaitTimeout(1, 10*time.Millisecond)
	if !errors.Is(err, unix.ETIME) {
		t.Fatalf("err = %v, want ETIME", err)
	}
}

func TestAsyncCancel(t *testing.T) {
	r := newRing(t, Options{})
	ts := &unix.Timespec{Sec: 10}
	s := r.GetSQE()
	s.PrepTimeout(ts, 0, 0)
	s.UserData = 1
	s = r.GetSQE()
	s.PrepCancel(1, 0)
	s.UserData = 2
	if _, err := r.SubmitAndWait(2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c := reap(t, r)
		switch c.UserData {
		case 1:
			if errnoOf(c) != unix.ECANCELED {
				t.Errorf("timeout Res = %d, want -ECANCELED", c.Res)
			}
		case 2:
			mustRes(t, c, 0)
		}
	}
}

func TestLinkTimeout(t *testing.T) {
	r := newRing(t, Options{})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	buf := make([]byte, 16)
	ts := &unix.Timespec{Nsec: int64(10 * time.Millisecond)}
	s := r.GetSQE()
	s.PrepRead(p[0], buf, 0)
	s.Flags |= SQEIOLink
	s.UserData = 1
	s = r.GetSQE()
	s.PrepLinkTimeout(ts, 0)
	s.UserData = 2
	if _, err := r.SubmitAndWait(2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c := reap(t, r)
		want := map[uint64]unix.Errno{1: unix.ECANCELED, 2: unix.ETIME}[c.UserData]
		if errnoOf(c) != want {
			t.Errorf("user data %d: Res %d, want -%v", c.UserData, c.Res, want)
		}
	}
}

func TestProbe(t *testing.T) {
	r := newRing(t, Options{})
	p, err := r.Probe()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []uint8{OpNop, OpRead, OpWrite, OpReadv, OpFsync, OpTimeout, OpAsyncCancel} {
		if !p.Supports(op) {
			t.Errorf("probe says op %d unsupported", op)
		}
	}
	if p.Supports(255) {
		t.Error("probe says op 255 supported")
	}
	t.Logf("last op %d; send_zc %v, sendmsg_zc %v, read_multishot %v",
		p.LastOp(), p.Supports(OpSendZC), p.Supports(OpSendmsgZC), p.Supports(OpReadMultishot))
}

// TestNewBestSingleIssuer sets up with every task-run flag on a locked thread,
// as an event loop would, and checks that a ring so set up works.
func TestNewBestSingleIssuer(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	want := SetupSingleIssuer | SetupDeferTaskrun | SetupCoopTaskrun | SetupSubmitAll
	r, err := NewBest(Options{Entries: 16, Flags: want})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("asked %#x, got %#x", want, r.Flags())
	c := do(t, r, func(s *SQE) { s.PrepNop() })
	mustRes(t, c, 0)
	// With DEFER_TASKRUN a completion shows only after entering the kernel.
	s := r.GetSQE()
	s.PrepNop()
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	if err := r.GetEvents(); err != nil {
		t.Fatal(err)
	}
	if r.CQReady() != 1 {
		t.Fatalf("CQReady after GetEvents = %d", r.CQReady())
	}
	r.CQESeen()
}

// TestNewBestFallback asks for a flag no kernel has and checks it is dropped.
func TestNewBestFallback(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	bogus := uint32(1 << 30)
	r, err := NewBest(Options{Entries: 8, Flags: bogus | SetupSubmitAll})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Flags()&bogus != 0 || r.Flags()&SetupSubmitAll == 0 {
		t.Fatalf("flags %#x", r.Flags())
	}
}

func TestSQPoll(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	r, err := New(Options{Entries: 8, Flags: SetupSQPoll, SQThreadIdle: 10})
	if err != nil {
		t.Skip("SQPOLL not available:", err)
	}
	defer r.Close()
	for i := range 3 {
		c := do(t, r, func(s *SQE) { s.PrepNop() })
		mustRes(t, c, 0)
		time.Sleep(time.Duration(i) * 15 * time.Millisecond) // let the thread idle
	}
}

func TestLayoutFlagsRefused(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	_, err := New(Options{Entries: 4, Flags: SetupNoSQArray})
	if !errors.Is(err, unix.EINVAL) {
		t.Fatalf("err = %v, want EINVAL", err)
	}
	r, err := NewBest(Options{Entries: 4, Flags: SetupNoSQArray | SetupSubmitAll})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Flags() != SetupSubmitAll {
		t.Fatalf("flags %#x", r.Flags())
	}
	mustRes(t, do(t, r, func(s *SQE) { s.PrepNop() }), 0)
}

func TestSubmitAndWaitHeld(t *testing.T) {
	r := newRing(t, Options{})
	if r.Features()&FeatExtArg == 0 {
		t.Skip("no FeatExtArg")
	}
	// A signal (Go's preemption SIGURG, a GC's stop-the-world) ends a
	// held wait early with EINTR, returned by design (SubmitAndWaitHeld):
	// wait again for what is left of the timeout, as the loop does.
	start := time.Now()
	for {
		left := 5*time.Millisecond - time.Since(start)
		_, err := r.SubmitAndWaitHeld(1, max(left, time.Microsecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if !errors.Is(err, unix.ETIME) {
			t.Fatalf("empty ring: err = %v, want ETIME", err)
		}
		break
	}
	if d := time.Since(start); d < 4*time.Millisecond {
		t.Fatalf("empty ring: returned after %v", d)
	}
	r.GetSQE().PrepNop()
	n, err := r.SubmitAndWaitHeld(1, time.Second)
	if n != 1 || err != nil {
		t.Fatalf("NOP: n = %d, err = %v", n, err)
	}
	// The NOP was submitted (n == 1); a wait cut short by a signal before
	// its completion was seen only means waiting once more.
	for r.CQReady() == 0 {
		if _, err := r.SubmitAndWaitHeld(1, time.Second); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatalf("NOP wait: %v", err)
		}
	}
	if r.CQReady() != 1 {
		t.Fatalf("NOP: %d completions ready", r.CQReady())
	}
}

// TestHeldWaitLetsGCThrough: a goroutine that keeps waiting on an idle
// ring holding its P (the only P) must not keep a garbage collection,
// which stops every P, from finishing: each wait is bounded, and a signal
// ends it early.
func TestHeldWaitLetsGCThrough(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r, err := New(Options{Entries: 4})
		if err != nil {
			t.Error(err)
			return
		}
		defer r.Close()
		for deadline := time.Now().Add(10 * time.Second); !stop.Load() && time.Now().Before(deadline); {
			r.SubmitAndWaitHeld(1, time.Millisecond)
		}
	}()
	time.Sleep(10 * time.Millisecond)
	start := time.Now()
	for range 5 {
		runtime.GC()
	}
	stop.Store(true)
	<-done
	t.Logf("5 collections: %v", time.Since(start))
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("5 collections took %v beside a held wait", d)
	}
}
