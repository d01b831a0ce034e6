package pnfs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Mirrors that miss a write or a truncate while their server is out of
// reach are stale: ReadAt skips them, and they must not be named in a
// layout until Resilver has copied a good mirror over them. The marks are
// kept in the Registry too (FileState, with the layout's mirrors), so a
// restarted metadata server still knows them.
//
// Once the metadata server has told the pool how to keep clients' RW
// layouts away from a file (BeforeResilver), the pool resilvers on its
// own: whenever a server comes back into service (and again every
// resilverRetry while some copy failed), resilverLoop copies each of its
// stale files over, one file at a time and one 1 MiB READ or WRITE in
// flight, so clients' I/O is not starved. Each copy is safe because:
//   - no client holds a RW layout of the file: BeforeResilver's function
//     recalls them and waits until they are returned (or fenced), and no
//     new one is granted while the mirror is stale (LAYOUTGET leaves a
//     stale mirror out, and a RW layout needs every mirror);
//   - no write, truncate or removal through the metadata server runs
//     during the copy: they hold the file's gate shared (hold), the copy
//     holds it exclusively, and the mark is cleared before it is let go.

// StaleMirrors returns the servers whose copy of l missed changes.
func (p *Pool) StaleMirrors(l nfs.FileLayout) []nfs.DeviceID {
	var out []nfs.DeviceID
	for _, f := range l.Mirrors {
		if s, ok := p.byID[f.Device]; ok && s.isStale(l.Name) {
			out = append(out, f.Device)
		}
	}
	return out
}

// StaleFiles returns, per server, the names of its stale data files.
func (p *Pool) StaleFiles() map[nfs.DeviceID][]string {
	out := make(map[nfs.DeviceID][]string)
	for _, s := range p.servers {
		s.mu.Lock()
		for name := range s.stale {
			out[s.id] = append(out[s.id], name)
		}
		s.mu.Unlock()
	}
	return out
}

// BeforeResilver implements nfs.Resilverer: f is called before each
// automatic copy of a stale mirror of the file whose data files are named
// name, and returns once no client holds a RW layout of it (an error: try
// later). Setting it starts the automatic resilvering.
func (p *Pool) BeforeResilver(f func(ctx context.Context, name string) error) {
	p.beforeRsv.Store(&f)
	p.kickResilver()
}

// Resilver copies l's data from a mirror that is not stale over each one
// that is (whose server answers again), sets its size, and clears its
// mark. It returns the bytes copied. Writes, truncates and removals of
// the file through the pool wait meanwhile; the caller makes sure no
// client writes the data files directly (no RW layout of the file is
// out).
func (p *Pool) Resilver(ctx context.Context, l nfs.FileLayout) (uint64, error) {
	if l.Striped() {
		// Each stripe's data files are mirrors of one another: a
		// stale one is copied from its stripe's good mirror.
		var copied uint64
		for s := range l.Stripes() {
			n, err := p.Resilver(ctx, l.Column(s))
			copied += n
			if err != nil {
				return copied, err
			}
		}
		return copied, nil
	}
	var copied uint64
	for _, id := range p.StaleMirrors(l) {
		n, err := p.resilverOnto(ctx, l, p.byID[id])
		copied += n
		if err != nil {
			return copied, err
		}
	}
	return copied, nil
}

// resilverOnto copies a good mirror of l over dst's stale one, holding
// the file's gate exclusively.
func (p *Pool) resilverOnto(ctx context.Context, l nfs.FileLayout, dst *dataServer) (uint64, error) {
	defer p.hold(l.Name, true)()
	if !dst.isStale(l.Name) {
		return 0, nil // removed, or copied by another caller meanwhile
	}
	good := p.readOrder(l)
	if len(good) == 0 {
		return 0, fmt.Errorf("pnfs: %s: no mirror is up to date", l.Name)
	}
	src := p.byID[good[0].Device]
	var size uint64
	err := p.do(ctx, src, func(ctx context.Context, c *client.Client, dir []byte) error {
		a, err := c.Getattr(ctx, good[0].FH, nfs4.BitmapOf(nfs4.AttrSize))
		size = a.Size
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pnfs: resilver %s: size: %w", l.Name, err)
	}
	to := nfs.FileLayout{Name: l.Name, Mirrors: []nfs.DSFile{mirrorOn(l, dst.id)}}
	n, err := p.copyData(ctx, l, to, size)
	if err != nil {
		return n, fmt.Errorf("pnfs: resilver %s onto %s: %w", l.Name, dst.cfg, err)
	}
	p.rsvFiles.Add(1)
	p.rsvBytes.Add(n)
	p.clearStale(dst, l.Name)
	return n, nil
}

// clearStale drops s's stale mark of name, in the registry too.
func (p *Pool) clearStale(s *dataServer, name string) {
	s.mu.Lock()
	_, was := s.stale[name]
	delete(s.stale, name)
	s.mu.Unlock()
	if was {
		p.persist(s, name)
	}
}

func mirrorOn(l nfs.FileLayout, id nfs.DeviceID) nfs.DSFile {
	for _, f := range l.Mirrors {
		if f.Device == id {
			return f
		}
	}
	return nfs.DSFile{}
}

// copyData copies size bytes of src (read from its good mirrors) to the
// one mirror of dst, then gives dst that size (cutting what lay beyond).
// Its caller holds the file's gate: it writes with writeAt and setSize.
// On a layout of one mirror they fail when it is out of reach, and mark
// nothing. Holes are copied as zeros (READ_PLUS and SEEK could skip
// them).
func (p *Pool) copyData(ctx context.Context, src, dst nfs.FileLayout, size uint64) (uint64, error) {
	buf := make([]byte, 1<<20)
	var off uint64
	for off < size {
		n, eof, err := p.ReadAt(ctx, src, buf[:min(uint64(len(buf)), size-off)], off)
		if err != nil {
			return off, err
		}
		if n > 0 {
			if _, err := p.writeAt(ctx, dst, buf[:n], off); err != nil {
				return off, err
			}
		}
		off += uint64(n)
		if eof || n == 0 {
			break
		}
	}
	return off, p.setSize(ctx, dst, size)
}

// gate keeps the pool's writes to one file's data files away from a
// resilver of it: shared for writes, truncates and removals, exclusive
// for the copy.
type gate struct {
	rw   sync.RWMutex
	refs int // under Pool.gateMu: callers holding or waiting
}

// hold takes name's gate (exclusively when excl) and returns its release.
func (p *Pool) hold(name string, excl bool) func() {
	p.gateMu.Lock()
	g := p.gates[name]
	if g == nil {
		g = &gate{}
		p.gates[name] = g
	}
	g.refs++
	p.gateMu.Unlock()
	if excl {
		g.rw.Lock()
	} else {
		g.rw.RLock()
	}
	return func() {
		if excl {
			g.rw.Unlock()
		} else {
			g.rw.RUnlock()
		}
		p.gateMu.Lock()
		if g.refs--; g.refs == 0 {
			delete(p.gates, name)
		}
		p.gateMu.Unlock()
	}
}

// quiesceWait bounds how long the automatic resilver waits for one
// file's RW layouts to come back: a recall not answered is fenced a lease
// after it was sent, so this is a few leases.
const quiesceWait = 5 * time.Minute

// kickResilver asks resilverLoop for a pass.
func (p *Pool) kickResilver() {
	select {
	case p.rsvKick <- struct{}{}:
	default:
	}
}

// resilverRetry is how long after a pass that left copies undone the
// next one starts.
func (p *Pool) resilverRetry() time.Duration { return max(10*p.cfg.ProbeInterval, time.Second) }

// resilverLoop resilvers stale mirrors of servers in service, a pass at
// each kick (a server back in service, BeforeResilver set) and again
// while a pass left some undone.
func (p *Pool) resilverLoop() {
	defer p.wg.Done()
	var retry <-chan time.Time
	for {
		select {
		case <-p.stop:
			return
		case <-p.rsvKick:
		case <-retry:
		}
		retry = nil
		if !p.resilverPass() {
			retry = time.After(p.resilverRetry())
		}
	}
}

// resilverPass copies over, one file at a time, every stale mirror on a
// server in service. It reports whether none was left undone.
func (p *Pool) resilverPass() bool {
	before := p.beforeRsv.Load()
	if before == nil {
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	done := true
	for _, s := range p.servers {
		for _, name := range s.staleNames() {
			if ctx.Err() != nil {
				return true
			}
			if err := p.resilverFile(ctx, *before, s, name); err != nil {
				p.log.Warn("resilver failed; tried again later", "server", s.cfg.String(), "file", name, "err", err)
				done = false
			}
		}
	}
	return done
}

// resilverFile keeps clients' RW layouts away from the file name (before)
// and copies a good mirror over s's stale one.
func (p *Pool) resilverFile(ctx context.Context, before func(context.Context, string) error, s *dataServer, name string) error {
	s.mu.Lock()
	mirrors, stale := s.stale[name]
	s.mu.Unlock()
	if !stale {
		return nil
	}
	if mirrors == nil {
		return fmt.Errorf("pnfs: the stale mark records no mirrors: resilver it with the file's layout")
	}
	qctx, cancel := context.WithTimeout(ctx, quiesceWait)
	err := before(qctx, name)
	cancel()
	if err != nil {
		return fmt.Errorf("layouts of the file still out: %w", err)
	}
	n, err := p.resilverOnto(ctx, nfs.FileLayout{Name: name, Mirrors: mirrors}, s)
	if err == nil {
		p.log.Info("stale mirror resilvered", "server", s.cfg.String(), "file", name, "bytes", n)
	}
	return err
}

// staleNames returns s's stale files while it is in service.
func (s *dataServer) staleNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inService {
		return nil
	}
	out := make([]string, 0, len(s.stale))
	for name := range s.stale {
		out = append(out, name)
	}
	return out
}
