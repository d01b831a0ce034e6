package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"golang.org/x/sys/unix"
)

// ReadMatrix reads each layout's file sequentially with READ and with
// READ_PLUS, uncached and cached, checking every byte.
func ReadMatrix(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	layouts, err := pickLayouts(cfg.Layouts)
	if err != nil {
		return nil, err
	}
	modes := cacheModes(cfg, t)
	var out []*Phase
	for _, l := range layouts {
		if err := ensureFile(ctx, cfg, t, l, l.Name); err != nil {
			return nil, fmt.Errorf("preparing %s: %w", l.Name, err)
		}
		for _, mode := range modes {
			for _, plus := range []bool{false, true} {
				if !cfg.wantOp(plus) {
					continue
				}
				out = append(out, readPhase(cfg, t, l, mode, plus))
			}
		}
	}
	return out, nil
}

// wantOp reports whether readmatrix runs READ (plus false) or READ_PLUS.
func (c *Config) wantOp(plus bool) bool {
	if len(c.ReadOps) == 0 {
		return true
	}
	want := "READ"
	if plus {
		want = "READ_PLUS"
	}
	for _, op := range c.ReadOps {
		if op == want {
			return true
		}
	}
	return false
}

func pickLayouts(names []string) ([]Layout, error) {
	if len(names) == 0 {
		return Layouts(), nil
	}
	var out []Layout
	for _, n := range names {
		l, err := LayoutByName(n)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// cacheModes drops "uncached" when the export is not local: only then can
// the server's page cache be dropped.
func cacheModes(cfg *Config, t *Target) []string {
	var out []string
	for _, m := range cfg.Cache {
		if m == "uncached" && t.LocalDir == "" {
			cfg.warn("%s: uncached reads need --local-dir (the export's directory on this machine) to evict the server's page cache; running cached only", t.Label())
			continue
		}
		out = append(out, m)
	}
	return out
}

func readPhase(cfg *Config, t *Target, l Layout, mode string, plus bool) *Phase {
	p := &Phase{Workload: "readmatrix", File: l.Name, Op: "READ", Cache: mode, Total: cfg.Size}
	if plus {
		p.Op = "READ_PLUS"
	}
	var files []*client.File
	p.Prep = func(ctx context.Context) error {
		if err := setCache(ctx, cfg, t, l.Name, mode); err != nil {
			return err
		}
		var err error
		files, err = openFiles(ctx, t, t.dir, l.Name, false, false)
		return err
	}
	p.Run = func(ctx context.Context, m *Measure) error {
		return readSequential(ctx, cfg, t, files, l, cfg.Size, &reader{plus: plus, m: m}, m)
	}
	p.After = func(ctx context.Context) error { return closeAll(ctx, t, files) }
	return p
}

// setCache evicts the file from the page cache (uncached) or reads it
// locally once (cached), when the export is local.
func setCache(ctx context.Context, cfg *Config, t *Target, name, mode string) error {
	if t.LocalDir == "" {
		return nil
	}
	path := filepath.Join(t.LocalDir, cfg.Dir, name)
	if mode == "uncached" {
		return evict(path)
	}
	return warm(path)
}

func evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("posix_fadvise(DONTNEED) %s: %w", path, err)
	}
	return nil
}

func warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// readSequential reads [0, size) in rsize chunks, chunk i on connection
// i mod conns, depth chunks in flight per connection, checking the data.
func readSequential(ctx context.Context, cfg *Config, t *Target, files []*client.File, l Layout, size int64, r *reader, m *Measure) error {
	chunk := int64(rsize(t, cfg))
	n := int64(len(t.conns))
	units := (size + chunk - 1) / chunk
	limit := make([]int64, n)
	for c := range limit {
		limit[c] = (units - int64(c) + n - 1) / n
	}
	_, err := runUnits(ctx, t, cfg.Depth, limit, cfg.deadline(timeNow()), m, func(ctx context.Context, w *worker, k int64) error {
		off := (k*n + int64(w.conn)) * chunk
		want := int(min(chunk, size-off))
		data, err := r.readFull(ctx, t.conns[w.conn], files[w.conn], w, off, want)
		if err != nil {
			return err
		}
		if len(data) < want {
			return fmt.Errorf("%s: eof at %d, expected %d bytes", l.Name, off+int64(len(data)), size)
		}
		if !cfg.NoVerify {
			if err := l.Verify(data, off, &w.scratch); err != nil {
				return err
			}
		}
		m.Add(int64(len(data)), 1)
		return nil
	})
	if err == nil && cfg.Stonewall == 0 && m.bytes.Load() != size {
		err = fmt.Errorf("%s: read %d bytes, expected %d", l.Name, m.bytes.Load(), size)
	}
	return err
}

// rsize is the largest READ the session allows, capped at cfg.RSize.
func rsize(t *Target, cfg *Config) int {
	limit := int(t.conns[0].ForeChannel().MaxResponse) - 1024
	return max(4096, min(int(cfg.RSize), limit))
}

// ensureFile makes name in the benchmark directory hold layout l at
// cfg.Size, on disk when the export is local, over NFS otherwise. A file
// already of the right size is kept unless cfg.Recreate.
func ensureFile(ctx context.Context, cfg *Config, t *Target, l Layout, name string) error {
	if t.LocalDir != "" {
		path := filepath.Join(t.LocalDir, cfg.Dir, name)
		if st, err := os.Stat(path); err == nil && st.Size() == cfg.Size && !cfg.Recreate {
			return nil
		}
		return createLocal(path, cfg.Size, l)
	}
	if !cfg.Recreate {
		fh, err := t.conns[0].Lookup(ctx, t.dir, name)
		if err == nil {
			a, err := t.conns[0].Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrSize))
			if err == nil && int64(a.Size) == cfg.Size {
				return nil
			}
		}
	}
	return createOverNFS(ctx, cfg, t, l, name)
}

// createLocal writes the data segments of l with pwrite and leaves the
// rest as holes.
func createLocal(path string, size int64, l Layout) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		win := buf[:min(int64(len(buf)), size-off)]
		l.Fill(win, off)
		err := l.DataSegments(off, int64(len(win)), func(o, n int64) error {
			_, err := f.WriteAt(win[o-off:o-off+n], o)
			return err
		})
		if err != nil {
			return err
		}
	}
	return unix.Fdatasync(int(f.Fd()))
}

// createOverNFS sets the size with SETATTR and WRITEs the data segments
// only, so holes stay holes wherever the server's file system keeps them.
func createOverNFS(ctx context.Context, cfg *Config, t *Target, l Layout, name string) error {
	files, err := openFiles(ctx, t, t.dir, name, true, false)
	if err != nil {
		return err
	}
	defer closeAll(ctx, t, files)
	if err := t.conns[0].Truncate(ctx, files[0], 0); err != nil {
		return fmt.Errorf("SETATTR size 0: %w", err)
	}
	if err := t.conns[0].Truncate(ctx, files[0], uint64(cfg.Size)); err != nil {
		return fmt.Errorf("SETATTR size %d: %w", cfg.Size, err)
	}
	return writeLayout(ctx, cfg, t, files, l, cfg.Size)
}

func writeLayout(ctx context.Context, cfg *Config, t *Target, files []*client.File, l Layout, size int64) error {
	chunk := int64(wsize(t, cfg))
	n := int64(len(t.conns))
	units := (size + chunk - 1) / chunk
	limit := make([]int64, n)
	for c := range limit {
		limit[c] = (units - int64(c) + n - 1) / n
	}
	var v verifs
	_, err := runUnits(ctx, t, cfg.Depth, limit, timeZero, nil, func(ctx context.Context, w *worker, k int64) error {
		off := (k*n + int64(w.conn)) * chunk
		win := grow(&w.buf, int(min(chunk, size-off)))
		l.Fill(win, off)
		return l.DataSegments(off, int64(len(win)), func(o, m int64) error {
			verf, err := writeFull(ctx, t.conns[w.conn], files[w.conn], o, win[o-off:o-off+m], nfs4.Unstable4)
			v.add(verf)
			return err
		})
	})
	if err != nil {
		return err
	}
	return commitAll(ctx, t, files, &v)
}

func grow(b *[]byte, n int) []byte {
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	return (*b)[:n]
}
