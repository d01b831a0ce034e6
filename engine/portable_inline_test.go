package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
)

// TestPortableInlineReads: the portable engine serves READ and READ_PLUS of
// up to inlineMaxRead bytes of cached data on the connection's reader (no
// hand-off), and sends a larger one, or a read the page cache cannot
// answer at once (RWF_NOWAIT), to a goroutine, buffered (--direct-reads
// off) or O_DIRECT (auto); every answer has the file's bytes.
func TestPortableInlineReads(t *testing.T) {
	for _, dio := range []string{"off", ""} {
		t.Run("dio="+dio, func(t *testing.T) {
			f := start(t, variant{name: "portable", opts: Options{DirectIO: dio}})
			p := f.eng.(*Portable)
			path := filepath.Join(f.dir, "data.bin")
			want := f.data["data.bin"]
			c := f.dial(t, client.Options{})
			ctx := ctxT(t)
			if _, err := os.ReadFile(path); err != nil { // all cached
				t.Fatal(err)
			}
			hot := func(chunk uint32) {
				t.Helper()
				got, err := c.ReadFile(ctx, "data.bin", chunk)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("hot READ chunk %d: %d bytes, err %v", chunk, len(got), err)
				}
				got, err = c.ReadFilePlus(ctx, "data.bin", chunk)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("hot READ_PLUS chunk %d: %d bytes, err %v", chunk, len(got), err)
				}
			}
			hot(4096)
			hot(inlineMaxRead)
			if n := p.handoffs.Load(); n != 0 {
				t.Fatalf("%d hand-offs for reads of a cached file", n)
			}
			hot(inlineMaxRead + 1)
			if p.handoffs.Load() == 0 {
				t.Fatal("no hand-off for reads of more than inlineMaxRead")
			}
			large := p.handoffs.Load()

			f.fsync(t, path)
			evict(t, path)
			if !uncached(fdOf(t, path), 0, 1<<20) {
				t.Skip("cannot evict here (tmpfs, or no cachestat)")
			}
			for _, chunk := range []uint32{4096, 4097} {
				evict(t, path)
				got, err := c.ReadFile(ctx, "data.bin", chunk)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("cold READ chunk %d: %d bytes, err %v", chunk, len(got), err)
				}
				evict(t, path)
				got, err = c.ReadFilePlus(ctx, "data.bin", chunk)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("cold READ_PLUS chunk %d: %d bytes, err %v", chunk, len(got), err)
				}
			}
			// With auto, cachestat makes the plan O_DIRECT, which always
			// goes to a goroutine. (A buffered RWF_NOWAIT read of an evicted
			// range starts readahead and may find it done: not asserted.)
			if dio == "" && p.handoffs.Load() == large {
				t.Fatal("no hand-off for reads of an evicted file")
			}
		})
	}
}

// TestPreadNowait: all of the range from the page cache, or false. (That
// an evicted range says false is not asserted: the attempt starts
// readahead, which a fast device may finish before it looks again.)
func TestPreadNowait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("x"), 1<<20)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fd := fdOf(t, path)
	buf := make([]byte, 64<<10)
	if !preadNowait(fd, buf, 4096) || !bytes.Equal(buf, data[:len(buf)]) {
		t.Fatal("cached range not read")
	}
	if !preadNowait(fd, nil, 0) {
		t.Fatal("empty read")
	}
	if preadNowait(fd, buf, 1<<20-100) {
		t.Fatal("a read running into the end of the file said it got everything")
	}
}
