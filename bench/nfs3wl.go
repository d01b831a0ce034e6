package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// The rest of the IO500-style workloads over NFSv3 (--vers 3): readmatrix
// (READ only: v3 has no READ_PLUS), ior-hard, mdtest-easy, mdtest-hard and
// io500. Ranks are the v4 run's connections (Conns); the workers (Depth
// per connection, one call in flight each) take units from one queue.

// units3 runs f over the units listed (nil: 0..total-1) on all the v3
// connections until the deadline or the first error, and returns the units
// carried out, in order.
func units3(ctx context.Context, v *v3Target, list []int64, total int64, deadline time.Time, m *Measure,
	f func(c *conn3, w *worker, k int64) error) ([]int64, error) {
	if list != nil {
		total = int64(len(list))
	}
	done := make([]atomic.Bool, total)
	err := run3(ctx, v, total, deadline, m, func(c *conn3, w *worker, i int64) error {
		k := i
		if list != nil {
			k = list[i]
		}
		if err := f(c, w, k); err != nil {
			return err
		}
		done[i].Store(true)
		return nil
	})
	var out []int64
	for i := range done {
		if done[i].Load() {
			if list != nil {
				out = append(out, list[i])
			} else {
				out = append(out, int64(i))
			}
		}
	}
	return out, err
}

// remove3 is REMOVE.
func (c *conn3) remove(dir []byte, name string) error {
	if _, err := c.nfs(12, func(e *xdr.Encoder) { e.Opaque(dir); e.String(name) }); err != nil {
		return fmt.Errorf("REMOVE %s: %w", name, err)
	}
	return nil
}

// getattr3 returns the size in a GETATTR reply.
func (c *conn3) getattr(fh []byte) (int64, error) {
	d, err := c.nfs(1, func(e *xdr.Encoder) { e.Opaque(fh) })
	if err != nil {
		return 0, fmt.Errorf("GETATTR: %w", err)
	}
	d.Fixed(20)
	size := d.Int64()
	return size, d.Err()
}

// truncate sets the size with SETATTR (no guard).
func (c *conn3) truncate(fh []byte, size int64) error {
	_, err := c.nfs(2, func(e *xdr.Encoder) {
		e.Opaque(fh)
		e.Bool(false) // mode
		e.Bool(false) // uid
		e.Bool(false) // gid
		e.Bool(true)
		e.Uint64(uint64(size))
		e.Uint32(0)   // atime: DONT_CHANGE
		e.Uint32(0)   // mtime: DONT_CHANGE
		e.Bool(false) // no guard
	})
	if err != nil {
		return fmt.Errorf("SETATTR size %d: %w", size, err)
	}
	return nil
}

// IORHard3 is IORHard over NFSv3: one shared file, 47008-byte transfers
// (k-th at k*47008: rank k mod Conns), UNSTABLE then COMMIT, read back
// checked.
func IORHard3(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	v := t.v3
	l, _ := LayoutByName("data")
	l.Seed = 1000
	n := int64(max(cfg.Conns, 1))
	total := max(1, cfg.Size/iorHardXfer/n) * n
	var dir, fh []byte
	var written []int64
	write := &Phase{Workload: "ior-hard", Op: "write", Total: total * iorHardXfer}
	write.Prep = func(ctx context.Context) (err error) {
		dir, err = v.conns[0].lookupOrMkdir(v.dir, "ior-hard")
		return err
	}
	write.Run = func(ctx context.Context, m *Measure) (err error) {
		if fh, err = v.conns[0].create(dir, "file", false); err != nil {
			return err
		}
		written, err = units3(ctx, v, nil, total, cfg.deadline(time.Now()), m, func(c *conn3, w *worker, k int64) error {
			buf := grow(&w.buf, iorHardXfer)
			l.Fill(buf, k*iorHardXfer)
			if err := c.write(fh, k*iorHardXfer, buf); err != nil {
				return err
			}
			m.Add(iorHardXfer, 1)
			return nil
		})
		if err == nil {
			err = v.conns[0].commit(fh)
		}
		return err
	}
	read := &Phase{Workload: "ior-hard", Op: "read", Total: total * iorHardXfer}
	read.Run = func(ctx context.Context, m *Measure) error {
		_, err := units3(ctx, v, written, 0, time.Time{}, m, func(c *conn3, w *worker, k int64) error {
			buf := grow(&w.buf, iorHardXfer)
			got, err := c.read(fh, k*iorHardXfer, buf)
			if err != nil {
				return err
			}
			if got != iorHardXfer {
				return fmt.Errorf("ior-hard: short file: eof at %d", k*iorHardXfer+int64(got))
			}
			if !cfg.NoVerify {
				if err := l.Verify(buf, k*iorHardXfer, &w.scratch); err != nil {
					return err
				}
			}
			m.Add(iorHardXfer, 1)
			return nil
		})
		return err
	}
	read.After = func(ctx context.Context) error { return v.conns[0].remove(dir, "file") }
	return []*Phase{write, read}, nil
}

// MDTestEasy3 is MDTestEasy over NFSv3: empty files in a directory per
// rank; create (CREATE), stat (LOOKUP, GETATTR), read (LOOKUP, READ),
// remove (REMOVE).
func MDTestEasy3(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	return md3(cfg, t, "mdtest-easy", false, 0), nil
}

// MDTestHard3 is MDTestHard over NFSv3: 3901-byte files in one directory.
func MDTestHard3(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	return md3(cfg, t, "mdtest-hard", true, mdtestHardSize), nil
}

func md3(cfg *Config, t *Target, name string, shared bool, size int) []*Phase {
	v := t.v3
	l, _ := LayoutByName("data")
	l.Seed = 2000
	ranks := int64(max(cfg.Conns, 1))
	total := int64(cfg.Files) * ranks
	dirs := make([][]byte, ranks)
	var done []int64
	// unit k is file k/ranks of rank k%ranks.
	where := func(k int64) ([]byte, string) { return dirs[k%ranks], fileName(int(k%ranks), k/ranks) }
	mk := func(op string, do func(c *conn3, w *worker, k int64) error) *Phase {
		ph := &Phase{Workload: name, Op: op, Total: total}
		ph.Run = func(ctx context.Context, m *Measure) error {
			f := func(c *conn3, w *worker, k int64) error {
				if err := do(c, w, k); err != nil {
					return err
				}
				m.Add(int64(size), 1)
				return nil
			}
			if op == "create" {
				var err error
				done, err = units3(ctx, v, nil, total, cfg.deadline(time.Now()), m, f)
				return err
			}
			_, err := units3(ctx, v, done, 0, time.Time{}, m, f)
			return err
		}
		return ph
	}
	create := mk("create", func(c *conn3, w *worker, k int64) error {
		dir, fn := where(k)
		fh, err := c.create(dir, fn, false)
		if err != nil {
			return fmt.Errorf("CREATE %s: %w", fn, err)
		}
		if size > 0 {
			buf := grow(&w.buf, size)
			l.Fill(buf, 0)
			return c.write(fh, 0, buf)
		}
		return nil
	})
	create.Prep = func(ctx context.Context) error {
		top, err := v.conns[0].lookupOrMkdir(v.dir, name)
		if err != nil {
			return err
		}
		for r := range dirs {
			dirs[r] = top
			if !shared {
				if dirs[r], err = v.conns[0].lookupOrMkdir(top, fmt.Sprintf("dir.%d", r)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	stat := mk("stat", func(c *conn3, w *worker, k int64) error {
		dir, fn := where(k)
		fh, _, err := c.lookup(dir, fn)
		if err != nil {
			return fmt.Errorf("LOOKUP %s: %w", fn, err)
		}
		got, err := c.getattr(fh)
		if err == nil && got != int64(size) {
			err = fmt.Errorf("stat %s: size %d, wrote %d", fn, got, size)
		}
		return err
	})
	read := mk("read", func(c *conn3, w *worker, k int64) error {
		dir, fn := where(k)
		fh, _, err := c.lookup(dir, fn)
		if err != nil {
			return fmt.Errorf("LOOKUP %s: %w", fn, err)
		}
		buf := grow(&w.buf, 8192)
		got, err := c.read(fh, 0, buf)
		switch {
		case err != nil:
			return fmt.Errorf("READ %s: %w", fn, err)
		case got != size:
			return fmt.Errorf("READ %s: %d bytes, wrote %d", fn, got, size)
		case !cfg.NoVerify:
			return l.Verify(buf[:got], 0, &w.scratch)
		}
		return nil
	})
	remove := mk("remove", func(c *conn3, w *worker, k int64) error {
		dir, fn := where(k)
		return c.remove(dir, fn)
	})
	return []*Phase{create, stat, read, remove}
}

// IO5003 is IO500 over NFSv3.
func IO5003(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	return io500Of(ctx, cfg, t, []Builder{IOREasy3, MDTestEasy3, IORHard3, MDTestHard3})
}

// ReadMatrix3 is ReadMatrix over NFSv3: READ only, each layout's file
// read sequentially in --rsize chunks, uncached and cached, checked.
func ReadMatrix3(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	layouts, err := pickLayouts(cfg.Layouts)
	if err != nil {
		return nil, err
	}
	if !cfg.wantOp(false) {
		return nil, fmt.Errorf("readmatrix over NFSv3: READ only (v3 has no READ_PLUS)")
	}
	v := t.v3
	var out []*Phase
	for _, l := range layouts {
		fh, err := ensureFile3(cfg, t, l)
		if err != nil {
			return nil, fmt.Errorf("preparing %s: %w", l.Name, err)
		}
		for _, mode := range cacheModes(cfg, t) {
			p := &Phase{Workload: "readmatrix", File: l.Name, Op: "READ", Cache: mode, Total: cfg.Size}
			p.Prep = func(ctx context.Context) error { return setCache(ctx, cfg, t, l.Name, mode) }
			p.Run = func(ctx context.Context, m *Measure) error {
				chunk := int64(max(cfg.RSize, 4096))
				units := (cfg.Size + chunk - 1) / chunk
				var bytes atomic.Int64
				_, err := units3(ctx, v, nil, units, cfg.deadline(time.Now()), m, func(c *conn3, w *worker, k int64) error {
					off := k * chunk
					want := int(min(chunk, cfg.Size-off))
					buf := grow(&w.buf, want)
					got, err := c.read(fh, off, buf)
					if err != nil {
						return err
					}
					if got < want {
						return fmt.Errorf("%s: eof at %d, expected %d bytes", l.Name, off+int64(got), cfg.Size)
					}
					if !cfg.NoVerify {
						if err := l.Verify(buf, off, &w.scratch); err != nil {
							return err
						}
					}
					bytes.Add(int64(got))
					m.Add(int64(got), 1)
					return nil
				})
				if err == nil && cfg.Stonewall == 0 && bytes.Load() != cfg.Size {
					err = fmt.Errorf("%s: read %d bytes, expected %d", l.Name, bytes.Load(), cfg.Size)
				}
				return err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// ensureFile3 is ensureFile over NFSv3: on disk when the export is local,
// else CREATE, SETATTR of the size and WRITEs of the data segments only.
func ensureFile3(cfg *Config, t *Target, l Layout) ([]byte, error) {
	v := t.v3
	c0 := v.conns[0]
	if t.LocalDir != "" {
		path := filepath.Join(t.LocalDir, cfg.Dir, l.Name)
		if st, err := os.Stat(path); err != nil || st.Size() != cfg.Size || cfg.Recreate {
			if err := createLocal(path, cfg.Size, l); err != nil {
				return nil, err
			}
		}
		fh, _, err := c0.lookup(v.dir, l.Name)
		return fh, err
	}
	if fh, size, err := c0.lookup(v.dir, l.Name); err == nil && size == cfg.Size && !cfg.Recreate {
		return fh, nil
	}
	fh, err := c0.create(v.dir, l.Name, false)
	if err != nil {
		return nil, err
	}
	if err := c0.truncate(fh, cfg.Size); err != nil {
		return nil, err
	}
	chunk := int64(1 << 20)
	_, err = units3(context.Background(), v, nil, (cfg.Size+chunk-1)/chunk, time.Time{}, &Measure{}, func(c *conn3, w *worker, k int64) error {
		off := k * chunk
		win := grow(&w.buf, int(min(chunk, cfg.Size-off)))
		l.Fill(win, off)
		return l.DataSegments(off, int64(len(win)), func(o, n int64) error {
			return c.write(fh, o, win[o-off:o-off+n])
		})
	})
	if err != nil {
		return nil, err
	}
	return fh, c0.commit(fh)
}
