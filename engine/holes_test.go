package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// TestWritesIntoHolesWhileReadPlus: writers fill holes of a sparse file
// while READ_PLUS readers go over it; every block whose WRITE was answered
// before a read was sent must come back with its bytes, never as a HOLE
// from a stale extent cache. Both engines.
func TestWritesIntoHolesWhileReadPlus(t *testing.T) {
	const (
		slot    = 64 << 10 // one block written per slot, the rest stays a hole
		block   = 16 << 10
		slots   = 128
		writers = 2
		readers = 2
		size    = slots * slot
	)
	pattern := func(i int) []byte { return bytes.Repeat([]byte{byte(i) | 1}, block) }
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			if name == "uring" {
				if err := ring.Available(); err != nil {
					t.Skipf("io_uring: %v", err)
				}
			}
			fx := &fixture{dir: t.TempDir(), data: map[string][]byte{}}
			if err := os.WriteFile(filepath.Join(fx.dir, "holes"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(fx.dir, "holes"), size); err != nil {
				t.Fatal(err)
			}
			fx.serve(t, variant{name: name, opts: Options{FileIO: NewFileIO(IODirect)}})
			c := fx.dial(t, client.Options{})
			ctx := ctxT(t)
			root, err := c.RootFH(ctx)
			if err != nil {
				t.Fatal(err)
			}
			f, err := c.Open(ctx, root, "holes", nfs4.ShareAccessBoth)
			if err != nil {
				t.Fatal(err)
			}
			// written[w] is how many of writer w's slots (w, w+writers,
			// ...) have had their WRITE answered.
			var written [writers]atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, writers+readers)
			for w := range writers {
				wg.Go(func() {
					for k, i := 0, w; i < slots; k, i = k+1, i+writers {
						if _, err := c.Write(ctx, f.FH, f.Stateid, uint64(i*slot), nfs4.Unstable4, pattern(i)); err != nil {
							errs <- err
							return
						}
						written[w].Store(int64(k + 1))
					}
				})
			}
			var stop atomic.Bool
			var rg sync.WaitGroup
			for range readers {
				rg.Go(func() {
					for !stop.Load() {
						if err := checkHoles(ctx, c, f, written[:], slot, block, pattern); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			stop.Store(true)
			rg.Wait()
			if err := checkHoles(ctx, c, f, written[:], slot, block, pattern); err != nil {
				errs <- err
			}
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// checkHoles reads the whole file with READ_PLUS and checks every slot
// whose WRITE was answered before the read started.
func checkHoles(ctx context.Context, c *client.Client, f *client.File, written []atomic.Int64, slot, block int, pattern func(int) []byte) error {
	done := make(map[int]bool)
	for w := range written {
		for k := range int(written[w].Load()) {
			done[w+k*len(written)] = true
		}
	}
	buf := make([]byte, 1<<20)
	slotsPerRead := len(buf) / slot
	for off := 0; ; off += len(buf) {
		n, eof, _, err := c.ReadPlus(ctx, f.FH, f.Stateid, uint64(off), uint32(len(buf)), buf)
		if err != nil {
			return err
		}
		for s := range n / slot {
			i := off/slot + s
			if done[i] && !bytes.Equal(buf[s*slot:s*slot+block], pattern(i)) {
				return fmt.Errorf("slot %d (written and answered before the READ_PLUS) reads back wrong", i)
			}
		}
		if eof || n < slotsPerRead*slot {
			return nil
		}
	}
}
