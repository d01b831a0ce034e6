package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// openOnAll opens name in dir once per connection: a stateid belongs to
// the client id of the connection that opened it. With pNFS on, their I/O
// goes through layouts.
func openOnAll(ctx context.Context, t *Target, dir []byte, name string, create bool) ([]*client.File, error) {
	return openFiles(ctx, t, dir, name, create, true)
}

// openFiles is openOnAll; viaLayouts false keeps the I/O on the server
// named even with pNFS on (readmatrix measures that server's READ and
// READ_PLUS).
func openFiles(ctx context.Context, t *Target, dir []byte, name string, create, viaLayouts bool) ([]*client.File, error) {
	files := make([]*client.File, len(t.conns))
	for i, c := range t.conns {
		var err error
		if create {
			files[i], err = t.openFile(ctx, c, dir, name, true, 0o644)
		} else {
			files[i], err = t.openFile(ctx, c, dir, name, false, 0)
		}
		if err != nil {
			closeAll(ctx, t, files)
			return nil, fmt.Errorf("OPEN %s: %w", name, err)
		}
		if viaLayouts {
			t.wrapOpen(i, files[i], create)
		}
	}
	return files, nil
}

func closeAll(ctx context.Context, t *Target, files []*client.File) error {
	var first error
	for i, f := range files {
		if f == nil {
			continue
		}
		if err := closeOpen(ctx, t.conns[i], f); err != nil && first == nil {
			first = fmt.Errorf("CLOSE: %w", err)
		}
	}
	return first
}

// worker is one goroutine's state: its connection index and buffers.
type worker struct {
	conn    int
	buf     []byte
	scratch []byte
	lat     []time.Duration
}

// unitFunc does unit k of connection w.conn.
type unitFunc func(ctx context.Context, w *worker, k int64) error

// runUnits runs units 0..limit[c)-1 of each connection c with depth
// workers per connection, stopping early at deadline (zero: none) or on
// the first error. done[c] is how many units of c were carried out: units
// are taken in order, so they are 0..done[c]-1.
func runUnits(ctx context.Context, t *Target, depth int, limit []int64, deadline time.Time, m *Measure, do unitFunc) ([]int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make([]atomic.Int64, len(t.conns))
	var wg sync.WaitGroup
	for c := range t.conns {
		for range depth {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := &worker{conn: c}
				work(ctx, cancel, w, &next[c], limit[c], deadline, do)
				if m != nil && len(w.lat) > 0 {
					m.Latencies(w.lat)
				}
			}()
		}
	}
	wg.Wait()
	done := make([]int64, len(t.conns))
	for c := range done {
		done[c] = min(next[c].Load(), limit[c])
	}
	return done, context.Cause(ctx)
}

func work(ctx context.Context, cancel context.CancelCauseFunc, w *worker, next *atomic.Int64, limit int64, deadline time.Time, do unitFunc) {
	for ctx.Err() == nil {
		if !deadline.IsZero() && time.Now().After(deadline) {
			return
		}
		k := next.Add(1) - 1
		if k >= limit {
			return
		}
		if err := do(ctx, w, k); err != nil {
			cancel(err)
			return
		}
	}
}

// errNotSupported marks READ_PLUS refused by the server.
func isNotSupported(err error) bool {
	return client.IsStatus(err, nfs4.ErrNotsupp) || client.IsStatus(err, nfs4.ErrOpIllegal)
}

// readOp is "READ" or "READ_PLUS".
type reader struct {
	plus     bool
	fallback atomic.Bool // READ_PLUS refused: use READ
	m        *Measure
}

// readFull reads [off, off+n) of f into w.buf through connection c,
// following short replies, and returns the bytes (n unless eof comes
// first).
func (r *reader) readFull(ctx context.Context, c *client.Client, f *client.File, w *worker, off int64, n int) ([]byte, error) {
	if cap(w.buf) < n {
		w.buf = make([]byte, n)
	}
	buf := w.buf[:n]
	got := 0
	for got < n {
		k, eof, err := r.readOnce(ctx, c, f, uint64(off)+uint64(got), buf[got:])
		if err != nil {
			return buf[:got], err
		}
		got += k
		if eof {
			break
		}
		if k == 0 {
			return buf[:got], fmt.Errorf("READ at %d: reply has no data and no eof", off+int64(got))
		}
	}
	return buf[:got], nil
}

func (r *reader) readOnce(ctx context.Context, c *client.Client, f *client.File, off uint64, dst []byte) (int, bool, error) {
	if pf := pnfsOf(f); pf != nil {
		// READ to the data server (the layout's; READ_PLUS is not sent
		// to data servers), or through the MDS without a layout.
		if r.plus && r.m != nil {
			r.m.Note("pNFS: READ to the data servers (READ_PLUS is not sent to them)")
		}
		n, eof, err := pf.ReadAt(ctx, dst, off)
		if err != nil {
			return 0, false, fmt.Errorf("pNFS READ %d bytes at %d: %w", len(dst), off, err)
		}
		return n, eof, nil
	}
	if r.plus && !r.fallback.Load() {
		n, eof, segs, err := c.ReadPlus(ctx, f.FH, f.Stateid, off, uint32(len(dst)), dst)
		if err == nil || !isNotSupported(err) {
			return n, eof, readPlusError(err, off, len(dst), segs)
		}
		r.fallback.Store(true)
		r.m.Note(fmt.Sprintf("server refused READ_PLUS (%v): fell back to READ", err))
	}
	n, eof, err := c.ReadInto(ctx, f.FH, f.Stateid, off, dst)
	if err != nil {
		return 0, false, fmt.Errorf("READ %d bytes at %d: %w", len(dst), off, err)
	}
	return n, eof, nil
}

func readPlusError(err error, off uint64, count int, segs []client.Segment) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, client.ErrNoProgress):
		return fmt.Errorf("READ_PLUS %d bytes at %d: server reply covers no bytes and is not eof (segments %s); "+
			"not retrying, it would loop forever (NFS-Ganesha 4.3 answers so): %w", count, off, segString(segs), err)
	}
	return fmt.Errorf("READ_PLUS %d bytes at %d (segments %s): %w", count, off, segString(segs), err)
}

func segString(segs []client.Segment) string {
	s := "["
	for i, g := range segs {
		if i > 0 {
			s += " "
		}
		if i == 8 {
			s += fmt.Sprintf("... %d more", len(segs)-i)
			break
		}
		kind := map[uint32]string{nfs4.ContentData: "DATA", nfs4.ContentHole: "HOLE"}[g.Type]
		s += fmt.Sprintf("%s@%d+%d", kind, g.Offset, g.Length)
	}
	return s + "]"
}

// writeFull writes data at off, following short writes, and returns the
// verifier of the last reply.
func writeFull(ctx context.Context, c *client.Client, f *client.File, off int64, data []byte, stable uint32) ([nfs4.VerifierSize]byte, error) {
	var verf [nfs4.VerifierSize]byte
	pf := pnfsOf(f)
	for len(data) > 0 {
		var res client.WriteRes
		var err error
		if pf != nil {
			// Each data server has its own write verifier: the
			// phase's one-verifier check is for one server.
			res, err = pf.WriteAt(ctx, data, uint64(off), stable)
			res.Verifier = verf
		} else {
			res, err = c.Write(ctx, f.FH, f.Stateid, uint64(off), stable, data)
		}
		if err != nil {
			return verf, fmt.Errorf("WRITE %d bytes at %d: %w", len(data), off, err)
		}
		if res.Count == 0 {
			return verf, fmt.Errorf("WRITE %d bytes at %d: server wrote nothing", len(data), off)
		}
		verf = res.Verifier
		data = data[res.Count:]
		off += int64(res.Count)
	}
	return verf, nil
}

// verifs checks that every WRITE and the COMMIT carried one verifier.
type verifs struct {
	mu   sync.Mutex
	seen map[[nfs4.VerifierSize]byte]bool
}

func (v *verifs) add(x [nfs4.VerifierSize]byte) {
	v.mu.Lock()
	if v.seen == nil {
		v.seen = map[[nfs4.VerifierSize]byte]bool{}
	}
	v.seen[x] = true
	v.mu.Unlock()
}

// commitAll sends COMMIT on every open and checks the verifiers.
func commitAll(ctx context.Context, t *Target, files []*client.File, v *verifs) error {
	for i, f := range files {
		if err := commitOne(ctx, t.conns[i], f, v); err != nil {
			return err
		}
	}
	return nil
}

// commitOne sends COMMIT and checks that the verifier did not change.
func commitOne(ctx context.Context, c *client.Client, f *client.File, v *verifs) error {
	if pf := pnfsOf(f); pf != nil {
		if err := pf.Commit(ctx); err != nil {
			return fmt.Errorf("pNFS COMMIT: %w", err)
		}
		return nil
	}
	cv, err := c.Commit(ctx, f.FH, 0, 0)
	if err != nil {
		return fmt.Errorf("COMMIT: %w", err)
	}
	v.add(cv)
	if len(v.seen) > 1 {
		return fmt.Errorf("write verifier changed during the phase (%d distinct): the server restarted or lost unstable writes", len(v.seen))
	}
	return nil
}

// wsize is the largest WRITE the session allows, capped at cfg.RSize.
func wsize(t *Target, cfg *Config) int {
	limit := int(t.conns[0].ForeChannel().MaxRequest) - 1024
	return max(4096, min(int(cfg.RSize), limit))
}
