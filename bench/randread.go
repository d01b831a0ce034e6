package bench

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
)

// RandRead reads random 4 KiB blocks of a data file: cfg.Ops reads, or
// until the stonewall.
func RandRead(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	l, _ := LayoutByName("data")
	if err := ensureFile(ctx, cfg, t, l, l.Name); err != nil {
		return nil, err
	}
	p := &Phase{Workload: "randread", File: l.Name, Op: "READ 4KiB", Cache: "", Total: int64(cfg.Ops)}
	var files []*client.File
	p.Prep = func(ctx context.Context) (err error) {
		files, err = openOnAll(ctx, t, t.dir, l.Name, false)
		return err
	}
	p.Run = func(ctx context.Context, m *Measure) error {
		return randomReads(ctx, cfg, t, files, l, m)
	}
	p.After = func(ctx context.Context) error { return closeAll(ctx, t, files) }
	return []*Phase{p}, nil
}

func randomReads(ctx context.Context, cfg *Config, t *Target, files []*client.File, l Layout, m *Measure) error {
	n := len(t.conns)
	limit := make([]int64, n)
	for c := range limit {
		limit[c] = int64((cfg.Ops - c + n - 1) / n)
	}
	blocks := cfg.Size / blockSize
	r := &reader{m: m}
	_, err := runUnits(ctx, t, cfg.Depth, limit, cfg.deadline(time.Now()), m, func(ctx context.Context, w *worker, k int64) error {
		rng := rand.New(rand.NewPCG(uint64(w.conn), uint64(k)))
		off := rng.Int64N(blocks) * blockSize
		start := time.Now()
		data, err := r.readFull(ctx, t.conns[w.conn], files[w.conn], w, off, blockSize)
		w.lat = append(w.lat, time.Since(start))
		if err != nil {
			return err
		}
		if !cfg.NoVerify {
			if err := l.Verify(data, off, &w.scratch); err != nil {
				return err
			}
		}
		m.Add(int64(len(data)), 1)
		return nil
	})
	return err
}
