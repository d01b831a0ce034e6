package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// mdtestHardSize is the file size of mdtest-hard, as in IO500.
const mdtestHardSize = 3901

// mdPlan is one mdtest workload: files named file.C.K, created by
// connection C in its own directory (easy) or in one shared one (hard).
type mdPlan struct {
	workload string
	shared   bool
	size     int
	limit    []int64
	done     []int64
	dirs     [][]byte // per connection
	layout   Layout
}

// MDTestEasy: empty files in per-connection directories; create, stat,
// read, remove; kIOPS per phase.
func MDTestEasy(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	return newMDPlan(cfg, t, "mdtest-easy", false, 0).phases(cfg, t), nil
}

// MDTestHard: 3901-byte files in one shared directory.
func MDTestHard(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	return newMDPlan(cfg, t, "mdtest-hard", true, mdtestHardSize).phases(cfg, t), nil
}

func newMDPlan(cfg *Config, t *Target, name string, shared bool, size int) *mdPlan {
	p := &mdPlan{workload: name, shared: shared, size: size, limit: make([]int64, len(t.conns))}
	for c := range p.limit {
		p.limit[c] = int64(cfg.Files)
	}
	p.layout, _ = LayoutByName("data")
	p.layout.Seed = 2000
	return p
}

func fileName(c int, k int64) string { return fmt.Sprintf("file.%d.%d", c, k) }

func (p *mdPlan) phases(cfg *Config, t *Target) []*Phase {
	total := int64(cfg.Files * len(t.conns))
	mk := func(op string, do unitFunc) *Phase {
		ph := &Phase{Workload: p.workload, Op: op, Total: total}
		ph.Run = func(ctx context.Context, m *Measure) error {
			limit, deadline := p.done, timeZero
			if op == "create" {
				limit, deadline = p.limit, cfg.deadline(timeNow())
			}
			done, err := runUnits(ctx, t, cfg.Depth, limit, deadline, nil, func(ctx context.Context, w *worker, k int64) error {
				if err := do(ctx, w, k); err != nil {
					return err
				}
				m.Add(int64(p.size), 1)
				return nil
			})
			if op == "create" {
				p.done = done
			}
			return err
		}
		return ph
	}
	create := mk("create", func(ctx context.Context, w *worker, k int64) error { return p.create(ctx, t, w, k) })
	create.Prep = func(ctx context.Context) error { return p.makeDirs(ctx, t) }
	return []*Phase{
		create,
		mk("stat", func(ctx context.Context, w *worker, k int64) error { return p.stat(ctx, t, w, k) }),
		mk("read", func(ctx context.Context, w *worker, k int64) error { return p.read(ctx, cfg, t, w, k) }),
		{Workload: p.workload, Op: "list", Total: total, Run: func(ctx context.Context, m *Measure) error { return p.list(ctx, t, m) }},
		mk("remove", func(ctx context.Context, w *worker, k int64) error {
			return t.conns[w.conn].Remove(ctx, p.dirs[w.conn], fileName(w.conn, k))
		}),
	}
}

func (p *mdPlan) makeDirs(ctx context.Context, t *Target) error {
	top, err := lookupOrMkdir(ctx, t.conns[0], t.dir, p.workload)
	if err != nil {
		return err
	}
	p.dirs = make([][]byte, len(t.conns))
	for c := range p.dirs {
		p.dirs[c] = top
		if !p.shared {
			if p.dirs[c], err = lookupOrMkdir(ctx, t.conns[c], top, fmt.Sprintf("dir.%d", c)); err != nil {
				return err
			}
		}
	}
	return nil
}

// list: READDIR of each directory (the shared one once, by connection 0, in
// mdtest-hard; each connection its own in mdtest-easy) in 32 KiB replies
// asking type, fileid, size, mode and change; one op per entry listed.
// Every file made must be listed exactly once.
func (p *mdPlan) list(ctx context.Context, t *Target, m *Measure) error {
	lists := len(t.conns)
	if p.shared {
		lists = 1
	}
	errs := make([]error, lists)
	var wg sync.WaitGroup
	for c := range lists {
		wg.Go(func() {
			ents, err := t.conns[c].Readdir(ctx, p.dirs[c])
			if err != nil {
				errs[c] = fmt.Errorf("READDIR: %w", err)
				return
			}
			m.Add(0, int64(len(ents)))
			errs[c] = p.checkListing(ents, c)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkListing checks that a listing of connection c's directory holds each
// file made there once (all connections' in mdtest-hard).
func (p *mdPlan) checkListing(ents []client.DirEntry, c int) error {
	seen := make(map[string]int, len(ents))
	for _, e := range ents {
		seen[e.Name]++
	}
	conns := []int{c}
	if p.shared {
		conns = conns[:0]
		for c := range p.done {
			conns = append(conns, c)
		}
	}
	for _, c := range conns {
		for k := range p.done[c] {
			if n := seen[fileName(c, k)]; n != 1 {
				return fmt.Errorf("READDIR listed %s %d times", fileName(c, k), n)
			}
		}
	}
	return nil
}

// create: OPEN with create, WRITE (mdtest-hard), CLOSE.
func (p *mdPlan) create(ctx context.Context, t *Target, w *worker, k int64) error {
	c := t.conns[w.conn]
	f, err := t.openFile(ctx, c, p.dirs[w.conn], fileName(w.conn, k), true, 0o644)
	if err != nil {
		return fmt.Errorf("OPEN create %s: %w", fileName(w.conn, k), err)
	}
	if p.size > 0 {
		buf := grow(&w.buf, p.size)
		p.layout.Fill(buf, 0)
		if _, err := writeFull(ctx, c, f, 0, buf, nfs4.Unstable4); err != nil {
			return err
		}
	}
	return c.CloseFile(ctx, f.FH, f.Stateid)
}

// stat: LOOKUP and GETATTR in one COMPOUND, checking the size.
func (p *mdPlan) stat(ctx context.Context, t *Target, w *worker, k int64) error {
	name := fileName(w.conn, k)
	var a client.Attrs
	err := t.conns[w.conn].Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, p.dirs[w.conn])
		client.EncodeLookup(e, name)
		client.EncodeGetattr(e, client.StandardAttrs)
		return 3
	}, func(r *client.Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err == nil {
			if err = r.Op(nfs4.OpLookup); err == nil {
				if err = r.Op(nfs4.OpGetattr); err == nil {
					a, err = client.DecodeFattr(r.D)
				}
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("stat %s: %w", name, err)
	}
	if a.Size != uint64(p.size) {
		return fmt.Errorf("stat %s: size %d, wrote %d", name, a.Size, p.size)
	}
	return nil
}

// read: OPEN, READ of the whole file (checked), CLOSE.
func (p *mdPlan) read(ctx context.Context, cfg *Config, t *Target, w *worker, k int64) error {
	c := t.conns[w.conn]
	name := fileName(w.conn, k)
	f, err := t.openFile(ctx, c, p.dirs[w.conn], name, false, 0)
	if err != nil {
		return fmt.Errorf("OPEN %s: %w", name, err)
	}
	data, eof, err := c.Read(ctx, f.FH, f.Stateid, 0, 8192)
	switch {
	case err != nil:
		err = fmt.Errorf("READ %s: %w", name, err)
	case len(data) != p.size || !eof:
		err = fmt.Errorf("READ %s: %d bytes (eof %v), wrote %d", name, len(data), eof, p.size)
	case !cfg.NoVerify:
		err = p.layout.Verify(data, 0, &w.scratch)
	}
	if cerr := c.CloseFile(ctx, f.FH, f.Stateid); err == nil {
		err = cerr
	}
	return err
}
