package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Server-side COPY (RFC 7862 section 15.2) on the engine the suite runs on
// (NFSD_ENGINE): a synchronous COPY is capped at 4 MiB per request, an
// asynchronous one ends with CB_OFFLOAD on the client's back channel, and
// neither holds the request workers another client's OPEN needs (issue 21,
// finding 3).

// copyServer serves a directory holding src, size bytes of random data.
func copyServer(t *testing.T, size int) (addr, dir string, data []byte) {
	t.Helper()
	dir = t.TempDir()
	data = make([]byte, size)
	rand.NewChaCha8([32]byte{7}).Read(data)
	if err := os.WriteFile(filepath.Join(dir, "src"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	addr, _ = serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}}, engine.Options{})
	return addr, dir, data
}

// copyTarget opens the source for reading and creates dst, returning the
// arguments of a COPY of the whole source onto it.
func copyTarget(t *testing.T, c *client.Client, size int, dst string) client.CopyArgs {
	t.Helper()
	ctx := ctxT(t)
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src, err := c.Open(ctx, root, "src", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.OpenCreate(ctx, root, dst, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return client.CopyArgs{SrcFH: src.FH, DstFH: out.FH, SrcStateid: src.Stateid, DstStateid: out.Stateid, Count: uint64(size)}
}

func sameFile(t *testing.T, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, differing from the source's %d at %d", filepath.Base(p), len(got), len(want), firstDiff(got, want))
	}
}

// A synchronous COPY of 10 MiB copies 4 MiB and says so; the client sends
// the rest. An asynchronous COPY answers with a copy stateid at once and
// its end comes in CB_OFFLOAD; OFFLOAD_STATUS then reports it complete.
func TestCopySyncAndAsync(t *testing.T) {
	const size = 10<<20 + 3
	addr, dir, data := copyServer(t, size)
	c := dialDeleg(t, addr, client.Options{BackChannel: true})
	ctx := ctxT(t)

	a := copyTarget(t, c, size, "sync")
	a.Synchronous = true
	res, err := c.Copy(ctx, &a)
	if err != nil {
		t.Fatal(err)
	}
	if res.CallbackID != nil || !res.Synchronous || res.Count != 4<<20 {
		t.Fatalf("synchronous COPY of %d bytes: %+v, want 4 MiB copied at once", size, res)
	}
	if n, err := c.CopyAll(ctx, a); err != nil || n != size {
		t.Fatalf("CopyAll: %d bytes, %v", n, err)
	}
	sameFile(t, filepath.Join(dir, "sync"), data)

	a = copyTarget(t, c, size, "async")
	res, err = c.Copy(ctx, &a)
	if err != nil {
		t.Fatal(err)
	}
	if res.CallbackID == nil || res.Synchronous {
		t.Fatalf("asynchronous COPY: %+v, want a copy stateid", res)
	}
	off, err := c.WaitOffload(ctx, *res.CallbackID)
	if err != nil {
		t.Fatal(err)
	}
	if off.Status != nfs4.OK || off.Count != size || !bytes.Equal(off.FH, a.DstFH) {
		t.Fatalf("CB_OFFLOAD %+v; want OK, %d bytes, the destination", off, size)
	}
	sameFile(t, filepath.Join(dir, "async"), data)
	count, complete, err := c.OffloadStatus(ctx, a.DstFH, *res.CallbackID)
	if err != nil || count != size || complete == nil || *complete != nfs4.OK {
		t.Fatalf("OFFLOAD_STATUS after CB_OFFLOAD: %d, %v, %v", count, complete, err)
	}
	if err := c.OffloadCancel(ctx, a.DstFH, nfs4.Stateid{Other: [12]byte{9}}); !client.IsStatus(err, nfs4.ErrBadStateid) {
		t.Fatalf("OFFLOAD_CANCEL of an unknown copy: %v, want NFS4ERR_BAD_STATEID", err)
	}
}

// While sixteen large copies run (two clients with four asynchronous
// COPYs each, one with eight loops of synchronous ones: as many as the
// io_uring engine has workers), another client's
// OPEN(create)+CLOSE stays fast. Issue 21 measured 2.74 s with eight
// COPYs of 150 MiB in flight (against 1-12 ms idle); the copies now leave
// the workers free. The measurement is logged; the bound asserted is
// loose (500 ms, against an aim of 50) so that a loaded two-CPU machine
// does not fail it.
func TestCopyLeavesOpensFast(t *testing.T) {
	if testing.Short() {
		t.Skip("copies 64 MiB files for a while")
	}
	const size = 64 << 20
	addr, _, _ := copyServer(t, size)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var started atomic.Int32
	errs := make(chan error, 16)
	copier := func(c *client.Client, a client.CopyArgs, synchronous bool) {
		defer wg.Done()
		for first := true; ; first = false {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			if synchronous {
				_, err = c.CopyAll(ctx, a)
			} else {
				err = asyncCopy(ctx, c, a, func() {
					if first {
						started.Add(1)
					}
				})
			}
			if synchronous && first {
				started.Add(1)
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}
	n := 0
	for i := 0; i < 3; i++ {
		c := dialDeleg(t, addr, client.Options{BackChannel: true})
		for j := 0; j < 4+4*(i/2); j++ {
			a := copyTarget(t, c, size, fmt.Sprintf("dst%d.%d", i, j))
			wg.Add(1)
			n++
			go copier(c, a, i == 2)
		}
	}
	// Measure once every copier has a copy under way (a synchronous one
	// counts after its first whole file).
	for deadline := time.Now().Add(time.Minute); started.Load() < int32(n) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	other := dialDeleg(t, addr, client.Options{})
	root, err := other.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var took []time.Duration
	for i := 0; i < 40; i++ {
		t0 := time.Now()
		f, err := other.OpenCreate(ctx, root, fmt.Sprintf("new%d", i), 0o644)
		if err == nil {
			err = other.CloseFile(ctx, f.FH, f.Stateid)
		}
		if err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(t0))
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("copy: %v", err)
	}
	slices.Sort(took)
	median, worst := took[len(took)/2], took[len(took)-1]
	t.Logf("OPEN(create)+CLOSE while %d copies of 64 MiB ran (%d had started): median %v, max %v", n, started.Load(), median, worst)
	if worst > 500*time.Millisecond {
		t.Errorf("OPEN(create)+CLOSE took up to %v while copies ran (median %v); want well under 500 ms", worst, median)
	}
}

// asyncCopy runs one asynchronous COPY to its end (CB_OFFLOAD), calling
// running once the server has answered COPY.
func asyncCopy(ctx context.Context, c *client.Client, a client.CopyArgs, running func()) error {
	res, err := c.Copy(ctx, &a)
	if err != nil {
		return err
	}
	running()
	if res.CallbackID == nil {
		return fmt.Errorf("COPY done synchronously: %+v", res)
	}
	off, err := c.WaitOffload(ctx, *res.CallbackID)
	if err != nil {
		return err
	}
	if off.Status != nfs4.OK || off.Count != a.Count {
		return fmt.Errorf("CB_OFFLOAD %+v, want OK and %d bytes", off, a.Count)
	}
	return nil
}
