package bench

import (
	"context"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// IOR transfer sizes, as in IO500.
const (
	iorEasyXfer = 2 << 20
	iorHardXfer = 47008
)

// iorPlan places the transfers of one IOR workload.
type iorPlan struct {
	workload string
	xfer     int64
	shared   bool                   // one file for all connections (ior-hard)
	limit    []int64                // transfers per connection
	offset   func(c, k int64) int64 // where transfer k of connection c goes
	files    [][]*client.File       // per file, one open per connection
	written  []int64                // transfers done per connection in the write phase
	layout   Layout
}

// IOREasy: a file per connection, 2 MiB sequential transfers, cfg.Size
// bytes per file; write phase then read phase.
func IOREasy(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	p := newIORPlan(cfg, t, "ior-easy", iorEasyXfer, false)
	per := (cfg.Size + p.xfer - 1) / p.xfer
	for c := range p.limit {
		p.limit[c] = per
	}
	p.offset = func(c, k int64) int64 { return k * p.xfer }
	return p.phases(cfg, t), nil
}

// IORHard: one shared file of about cfg.Size bytes, 47008-byte transfers
// interleaved across connections; each connection reads back its
// neighbour's transfers.
func IORHard(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	p := newIORPlan(cfg, t, "ior-hard", iorHardXfer, true)
	n := int64(len(t.conns))
	per := max(1, cfg.Size/p.xfer/n)
	for c := range p.limit {
		p.limit[c] = per
	}
	p.offset = func(c, k int64) int64 { return (k*n + c) * p.xfer }
	return p.phases(cfg, t), nil
}

func newIORPlan(cfg *Config, t *Target, name string, xfer int64, shared bool) *iorPlan {
	l, _ := LayoutByName("data")
	l.Seed = 1000
	return &iorPlan{workload: name, xfer: xfer, shared: shared, limit: make([]int64, len(t.conns)), layout: l}
}

func (p *iorPlan) fileName(c int) string {
	if p.shared {
		return "file"
	}
	return fmt.Sprintf("file.%d", c)
}

func (p *iorPlan) fileCount() int {
	if p.shared {
		return 1
	}
	return len(p.limit)
}

// fileOf is the open that connection c uses for transfers it owns.
func (p *iorPlan) fileOf(c int) *client.File {
	if p.shared {
		return p.files[0][c]
	}
	return p.files[c][c]
}

func (p *iorPlan) phases(cfg *Config, t *Target) []*Phase {
	var dir []byte
	total := p.xfer * p.limit[0] * int64(len(p.limit))
	write := &Phase{Workload: p.workload, Op: "write", Total: total}
	write.Prep = func(ctx context.Context) (err error) {
		dir, err = lookupOrMkdir(ctx, t.conns[0], t.dir, p.workload)
		return err
	}
	write.Run = func(ctx context.Context, m *Measure) error { return p.write(ctx, cfg, t, dir, m) }
	read := &Phase{Workload: p.workload, Op: "read", Total: total}
	read.Prep = func(ctx context.Context) error { return p.open(ctx, t, dir, false) }
	read.Run = func(ctx context.Context, m *Measure) error { return p.read(ctx, cfg, t, m) }
	read.After = func(ctx context.Context) error { return p.remove(ctx, t, dir) }
	return []*Phase{write, read}
}

func (p *iorPlan) open(ctx context.Context, t *Target, dir []byte, create bool) error {
	p.files = make([][]*client.File, p.fileCount())
	for i := range p.files {
		fs, err := openOnAll(ctx, t, dir, p.fileName(i), create)
		if err != nil {
			return err
		}
		p.files[i] = fs
	}
	return nil
}

func (p *iorPlan) closeAll(ctx context.Context, t *Target) error {
	var first error
	for _, fs := range p.files {
		if err := closeAll(ctx, t, fs); err != nil && first == nil {
			first = err
		}
	}
	p.files = nil
	return first
}

// write: OPEN (create), transfers, COMMIT, CLOSE, all timed as in IOR
// with fsync.
func (p *iorPlan) write(ctx context.Context, cfg *Config, t *Target, dir []byte, m *Measure) error {
	if err := p.open(ctx, t, dir, true); err != nil {
		return err
	}
	var v verifs
	chunk := int64(wsize(t, cfg))
	done, err := runUnits(ctx, t, cfg.Depth, p.limit, cfg.deadline(timeNow()), nil, func(ctx context.Context, w *worker, k int64) error {
		off := p.offset(int64(w.conn), k)
		buf := grow(&w.buf, int(p.xfer))
		p.layout.Fill(buf, off)
		for i := int64(0); i < p.xfer; i += chunk {
			piece := buf[i:min(p.xfer, i+chunk)]
			verf, err := writeFull(ctx, t.conns[w.conn], p.fileOf(w.conn), off+i, piece, nfs4.Unstable4)
			if err != nil {
				return err
			}
			v.add(verf)
			m.Add(int64(len(piece)), 1)
		}
		return nil
	})
	p.written = done
	for i, fs := range p.files {
		if err == nil {
			err = commitOne(ctx, t.conns[i], fs[i], &v)
		}
	}
	if cerr := p.closeAll(ctx, t); err == nil {
		err = cerr
	}
	return err
}

// read: each connection reads what the next connection wrote (ior-hard)
// or its own file (ior-easy), checking the data.
func (p *iorPlan) read(ctx context.Context, cfg *Config, t *Target, m *Measure) error {
	n := len(p.limit)
	src := func(c int) int {
		if p.shared {
			return (c + 1) % n
		}
		return c
	}
	limit := make([]int64, n)
	for c := range limit {
		limit[c] = p.written[src(c)]
	}
	r := &reader{m: m}
	chunk := int64(rsize(t, cfg))
	_, err := runUnits(ctx, t, cfg.Depth, limit, timeZero, nil, func(ctx context.Context, w *worker, k int64) error {
		s := src(w.conn)
		off := p.offset(int64(s), k)
		f := p.files[0][w.conn]
		if !p.shared {
			f = p.files[s][w.conn]
		}
		for i := int64(0); i < p.xfer; i += chunk {
			want := int(min(chunk, p.xfer-i))
			data, err := r.readFull(ctx, t.conns[w.conn], f, w, off+i, want)
			if err != nil {
				return err
			}
			if len(data) != want {
				return fmt.Errorf("%s: short file: eof at %d", p.workload, off+i+int64(len(data)))
			}
			if !cfg.NoVerify {
				if err := p.layout.Verify(data, off+i, &w.scratch); err != nil {
					return err
				}
			}
			m.Add(int64(want), 1)
		}
		return nil
	})
	return err
}

func (p *iorPlan) remove(ctx context.Context, t *Target, dir []byte) error {
	err := p.closeAll(ctx, t)
	for i := range p.fileCount() {
		if rerr := t.conns[0].Remove(ctx, dir, p.fileName(i)); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}
