package engine

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// TestDirectWritesNeedNoCopy: both engines lay WRITE records out so the
// O_DIRECT part of a large write goes from the receive buffer to the disk
// with no bounce copy, aligned and misaligned (split) alike.
func TestDirectWritesNeedNoCopy(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			fio := NewFileIO(IODirect)
			v := variant{name: name, opts: Options{FileIO: fio}}
			f := &fixture{dir: t.TempDir(), data: map[string][]byte{}}
			f.serve(t, v)
			c := f.dial(t, client.Options{})
			ctx := ctxT(t)
			root, err := c.RootFH(ctx)
			if err != nil {
				t.Fatal(err)
			}
			file, err := c.OpenCreate(ctx, root, "w", 0o644)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			want := make([]byte, 3<<20)
			for _, w := range []struct{ off, n int }{{0, 1 << 20}, {1<<20 + 100, 600000}, {2 << 20, 1 << 20}} {
				b := random(rng, w.n)
				copy(want[w.off:], b)
				if _, err := c.Write(ctx, file.FH, file.Stateid, uint64(w.off), nfs4.Unstable4, b); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := os.ReadFile(filepath.Join(f.dir, "w"))
			if !bytes.Equal(got, want) {
				t.Fatal("file content differs")
			}
			if n := fio.bounces.Load(); n != 0 {
				t.Fatalf("%d O_DIRECT payloads were copied for alignment", n)
			}
		})
	}
}
