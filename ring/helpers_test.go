package ring

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// newRing sets up a ring for a test, skipping the test when io_uring is not
// available here.
func newRing(t testing.TB, o Options) *Ring {
	t.Helper()
	if err := Available(); err != nil {
		t.Skip(err)
	}
	if o.Entries == 0 {
		o.Entries = 64
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// requireOp skips the test when the kernel lacks op.
func requireOp(t testing.TB, r *Ring, op uint8, name string) {
	t.Helper()
	p, err := r.Probe()
	if err != nil {
		t.Fatal(err)
	}
	if !p.Supports(op) {
		t.Skipf("kernel does not support %s", name)
	}
}

// do prepares one SQE with prep, submits it and returns its completion.
func do(t testing.TB, r *Ring, prep func(*SQE)) CQE {
	t.Helper()
	sqe := r.GetSQE()
	if sqe == nil {
		t.Fatal("SQ full")
	}
	prep(sqe)
	sqe.UserData = 0xfeed
	if _, err := r.SubmitAndWait(1); err != nil {
		t.Fatal(err)
	}
	return reap(t, r)
}

// reap waits for and consumes one completion.
func reap(t testing.TB, r *Ring) CQE {
	t.Helper()
	cqe, err := r.WaitCQE()
	if err != nil {
		t.Fatal(err)
	}
	c := *cqe
	r.CQESeen()
	return c
}

// mustRes fails the test unless the completion succeeded with Res want
// (want < 0: any non-negative result).
func mustRes(t testing.TB, c CQE, want int32) {
	t.Helper()
	if c.Res < 0 {
		t.Fatalf("completion failed: %v", c.Err())
	}
	if want >= 0 && c.Res != want {
		t.Fatalf("Res = %d, want %d", c.Res, want)
	}
}

func errnoOf(c CQE) unix.Errno {
	var e unix.Errno
	if errors.As(c.Err(), &e) {
		return e
	}
	return 0
}
