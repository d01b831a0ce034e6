package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestNoOpenOnLoop (issue 21 finding 11): the io_uring engine's event
// loops never open a file. A read workload whose first READ of each file
// goes O_DIRECT (the descriptor opened on first use) runs on the uring
// engine while nfs counts every confined open made on a loop thread
// (nfs.WatchLoopOpens); the count must stay zero.
func TestNoOpenOnLoop(t *testing.T) {
	f := &fixture{dir: t.TempDir()}
	const nfiles, size = 6, 2 << 20
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 | 1)
	}
	for i := range nfiles {
		if err := os.WriteFile(filepath.Join(f.dir, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nfs.WatchLoopOpens(true)
	defer nfs.WatchLoopOpens(false)
	before, _ := nfs.LoopOpens()
	m := metrics.New()
	f.addr, _ = serve(t, "uring", nfs.Config{Exports: []nfs.Export{{Path: f.dir}}},
		engine.Options{DirectIO: "on", Metrics: m})
	c := dial(t, f)
	ctx := ctxT(t)
	buf := make([]byte, 1<<20)
	for i := range nfiles {
		fh, err := c.LookupPath(ctx, fmt.Sprintf("/f%d", i))
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 { // the first READs open, the next are inline
			for off := uint64(0); off < size; off += 1 << 20 {
				got, _, err := c.Read(ctx, fh, nfs4.Stateid{}, off, 1<<20)
				if err != nil || len(got) != 1<<20 || got[5] != data[off+5] {
					t.Fatalf("f%d round %d: READ at %d: %d bytes, %v", i, round, off, len(got), err)
				}
				if _, _, _, err := c.ReadPlus(ctx, fh, nfs4.Stateid{}, off, 1<<20, buf); err != nil {
					t.Fatalf("READ_PLUS: %v", err)
				}
			}
			if _, err := c.Getattr(ctx, fh, client.StandardAttrs); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The stat of a path walk: PUTFH of the directory, LOOKUP, GETFH,
	// GETATTR (inline when the dentry cache has the name), and ACCESS and
	// SEEK of a file read before.
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for i := range nfiles {
			err := c.Compound(ctx, func(e *xdr.Encoder) int {
				client.EncodePutfh(e, root)
				client.EncodeLookup(e, fmt.Sprintf("f%d", i))
				client.EncodeGetfh(e)
				client.EncodeGetattr(e, client.StandardAttrs)
				return 4
			}, func(r *client.Reply) error {
				if r.Status != nfs4.OK {
					return fmt.Errorf("round %d: PUTFH LOOKUP GETFH GETATTR: status %d", round, r.Status)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	fh, err := c.LookupPath(ctx, "/f0")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Access(ctx, fh, 0x3f); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Seek(ctx, fh, nfs4.Stateid{}, 0, nfs4.ContentHole); err != nil {
		t.Fatal(err)
	}
	if m.Snapshot().Counters[metrics.ReadsDirect] == 0 {
		t.Skip("no read went O_DIRECT (the filesystem refuses it?): the test tests nothing here")
	}
	if n, first := nfs.LoopOpens(); n != before {
		t.Fatalf("%d opens on an event loop thread; the first:\n%s", n-before, first)
	}
}
