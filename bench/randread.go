package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
)

// RandRead reads random 4 KiB blocks of a data file: cfg.Ops reads, or
// until the stonewall; one phase per operation in cfg.ReadOps (READ when
// empty), READ_PLUS being what a Linux 6.12 client sends for every read.
func RandRead(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	l, _ := LayoutByName("data")
	if err := ensureFile(ctx, cfg, t, l, l.Name); err != nil {
		return nil, err
	}
	ops := cfg.ReadOps
	if len(ops) == 0 {
		ops = []string{"READ"}
	}
	var phases []*Phase
	for _, op := range ops {
		if op != "READ" && op != "READ_PLUS" {
			return nil, fmt.Errorf("randread: unknown read op %q (READ, READ_PLUS)", op)
		}
		p := &Phase{Workload: "randread", File: l.Name, Op: op + " 4KiB", Cache: "", Total: int64(cfg.Ops)}
		var files []*client.File
		p.Prep = func(ctx context.Context) (err error) {
			files, err = openOnAll(ctx, t, t.dir, l.Name, false)
			return err
		}
		r := &reader{plus: op == "READ_PLUS"}
		p.Run = func(ctx context.Context, m *Measure) error {
			return randomReads(ctx, cfg, t, files, l, r, m)
		}
		p.After = func(ctx context.Context) error { return closeAll(ctx, t, files) }
		phases = append(phases, p)
	}
	return phases, nil
}

func randomReads(ctx context.Context, cfg *Config, t *Target, files []*client.File, l Layout, r *reader, m *Measure) error {
	n := len(t.conns)
	limit := make([]int64, n)
	for c := range limit {
		limit[c] = int64((cfg.Ops - c + n - 1) / n)
	}
	blocks := cfg.Size / blockSize
	r.m = m
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
