package pnfs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// dataFileMode is every data file's mode: read and write for the
// synthetic owner, read for its group (RFC 8435 section 2.2: the owner
// writes, the group may only read, so a read-only layout can carry the
// group id).
const dataFileMode = 0o640

// ErrNoServers is returned by Create when fewer servers than the mirror
// count are in service.
var ErrNoServers = errors.New("pnfs: not enough data servers in service")

// do runs fn with s's session, bounded by CallTimeout when ctx has no
// deadline. A failure of the server itself (not an NFS error about the
// call) ends the session and takes s out of service.
func (p *Pool) do(ctx context.Context, s *dataServer, fn func(ctx context.Context, c *client.Client, dir []byte) error) error {
	c, dir, err := s.session()
	if err != nil {
		return err
	}
	cctx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, p.cfg.CallTimeout)
		defer cancel()
	}
	s.stats.calls.Add(1)
	err = fn(cctx, c, dir)
	if err != nil {
		s.stats.errors.Add(1)
		if faulty(ctx, err) {
			p.lost(s, c, err)
		}
	}
	return err
}

// place picks n distinct servers in service, round robin over those with
// MinFree or more free space (over all in service when fewer than n have
// it: a nearly full server is better than no file).
func (p *Pool) place(n int) ([]*dataServer, error) {
	var up, roomy []*dataServer
	for _, s := range p.servers {
		s.mu.Lock()
		in, full := s.inService, s.availKnown && p.cfg.MinFree >= 0 && s.avail < uint64(p.cfg.MinFree)
		s.mu.Unlock()
		if in {
			up = append(up, s)
			if !full {
				roomy = append(roomy, s)
			}
		}
	}
	if len(roomy) >= n {
		up = roomy
	}
	if len(up) < n {
		return nil, fmt.Errorf("%w: %d of %d wanted", ErrNoServers, len(up), n)
	}
	start := int(p.rr.Add(1) % uint64(len(up)))
	out := make([]*dataServer, n)
	for i := range out {
		out[i] = up[(start+i)%len(up)]
	}
	return out, nil
}

// checkName refuses names that are not one plain component: the data
// files live flat in one directory.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > 255 || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("pnfs: bad data file name %q", name)
	}
	return nil
}

// Create implements nfs.DataServers. Each mirror's file is made GUARDED4
// (an existing file of that name is a leftover of a create that did not
// finish, since names are unique on the metadata server: it is removed and
// made again, so it is empty and has the new owner). A server failing
// midway leaves service; the create is tried once more on others.
func (p *Pool) Create(ctx context.Context, name string) (nfs.FileLayout, error) {
	if err := checkName(name); err != nil {
		return nfs.FileLayout{}, err
	}
	id, err := p.ids.take(ctx)
	if err != nil {
		return nfs.FileLayout{}, fmt.Errorf("pnfs: synthetic id: %w", err)
	}
	l := nfs.FileLayout{Name: name, UID: id, GID: id}
	for try := 0; ; try++ {
		servers, width, err := p.placeStriped()
		if err != nil {
			return nfs.FileLayout{}, err
		}
		l.Width, l.StripeUnit = 0, 0
		if width > 1 {
			l.Width, l.StripeUnit = width, p.cfg.StripeUnit
		}
		l.Mirrors, err = p.createOn(ctx, servers, l)
		if err == nil {
			return l, nil
		}
		if try == 1 || ctx.Err() != nil {
			return nfs.FileLayout{}, err
		}
	}
}

// createOn makes l's data file on each of servers, in parallel; on any
// failure it removes those it made.
func (p *Pool) createOn(ctx context.Context, servers []*dataServer, l nfs.FileLayout) ([]nfs.DSFile, error) {
	files := make([]nfs.DSFile, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			files[i].Device = s.id
			errs[i] = p.do(ctx, s, func(ctx context.Context, c *client.Client, dir []byte) (err error) {
				files[i].FH, err = createFile(ctx, c, dir, l)
				return err
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for i, s := range servers {
			if errs[i] == nil {
				p.do(context.WithoutCancel(ctx), s, func(ctx context.Context, c *client.Client, dir []byte) error {
					return c.Remove(ctx, dir, l.Name)
				})
			}
		}
		return nil, err
	}
	return files, nil
}

func createFile(ctx context.Context, c *client.Client, dir []byte, l nfs.FileLayout) ([]byte, error) {
	attrs := client.OwnerAttrs(l.UID, l.GID, dataFileMode)
	fh, err := c.CreateClosed(ctx, dir, l.Name, nfs4.CreateGuarded, attrs)
	if client.IsStatus(err, nfs4.ErrExist) {
		if err = c.Remove(ctx, dir, l.Name); err == nil || client.IsStatus(err, nfs4.ErrNoent) {
			fh, err = c.CreateClosed(ctx, dir, l.Name, nfs4.CreateGuarded, attrs)
		}
	}
	return fh, err
}

// Fence implements nfs.DataServers (RFC 8435 section 14). A mirror whose
// server is out of reach is fenced when it comes back, before it is in
// service again; an NFS error from any mirror fails the fence.
func (p *Pool) Fence(ctx context.Context, l nfs.FileLayout) (nfs.FileLayout, error) {
	id, err := p.ids.take(ctx)
	if err != nil {
		return l, fmt.Errorf("pnfs: synthetic id: %w", err)
	}
	nl := l
	nl.UID, nl.GID = id, id
	err = p.eachMirror(ctx, l, func(ctx context.Context, c *client.Client, dir []byte, f nfs.DSFile) error {
		_, err := c.Setattr(ctx, f.FH, nfs4.AnonStateid, client.OwnerAttrs(id, id, -1))
		return err
	}, func(s *dataServer, f nfs.DSFile) bool {
		s.addRepair(l.Name, repair{fh: f.FH, fence: true, uid: id, gid: id})
		p.persist(s, l.Name)
		return true
	})
	if err != nil {
		return l, err
	}
	return nl, nil
}

// SetSize implements nfs.DataServers. A mirror out of reach misses the
// change and is marked stale.
func (p *Pool) SetSize(ctx context.Context, l nfs.FileLayout, size uint64) error {
	defer p.hold(l.Name, false)()
	return p.setSize(ctx, l, size)
}

func (p *Pool) setSize(ctx context.Context, l nfs.FileLayout, size uint64) error {
	if l.Striped() {
		// Every stripe's data file gets the file's size: each holds
		// its units at the file's offsets (stripe.go).
		return p.eachColumn(l, func(col nfs.FileLayout) error { return p.setSize(ctx, col, size) })
	}
	a := &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrSize), Size: size}
	return p.eachMirror(ctx, l, func(ctx context.Context, c *client.Client, dir []byte, f nfs.DSFile) error {
		_, err := c.Setattr(ctx, f.FH, nfs4.AnonStateid, a)
		return err
	}, p.markStale(l))
}

// Allocate implements nfs.SpaceOps: ALLOCATE on every mirror (a
// mirror out of reach is marked stale, as for a write).
func (p *Pool) Allocate(ctx context.Context, l nfs.FileLayout, off, length uint64) error {
	return p.fallocate(ctx, nfs4.OpAllocate, l, off, length)
}

// Deallocate implements nfs.SpaceOps: DEALLOCATE (punch a hole) on
// every mirror.
func (p *Pool) Deallocate(ctx context.Context, l nfs.FileLayout, off, length uint64) error {
	return p.fallocate(ctx, nfs4.OpDeallocate, l, off, length)
}

func (p *Pool) fallocate(ctx context.Context, op uint32, l nfs.FileLayout, off, length uint64) error {
	defer p.hold(l.Name, false)() // not during a resilver's copy of the file
	if l.Striped() {
		return p.eachColumn(l, func(col nfs.FileLayout) error { return p.fallocateColumn(ctx, op, col, off, length) })
	}
	return p.fallocateColumn(ctx, op, l, off, length)
}

func (p *Pool) fallocateColumn(ctx context.Context, op uint32, l nfs.FileLayout, off, length uint64) error {
	return p.eachMirror(ctx, l, func(ctx context.Context, c *client.Client, dir []byte, f nfs.DSFile) error {
		return c.Fallocate(ctx, op, f.FH, nfs4.AnonStateid, off, length)
	}, p.markStale(l))
}

// Remove implements nfs.DataServers. A data file already gone is not an
// error; one on a server out of reach is removed when it comes back.
func (p *Pool) Remove(ctx context.Context, l nfs.FileLayout) error {
	if err := checkName(l.Name); err != nil {
		return err
	}
	defer p.hold(l.Name, false)()
	return p.eachMirror(ctx, l, func(ctx context.Context, c *client.Client, dir []byte, f nfs.DSFile) error {
		err := c.Remove(ctx, dir, l.Name)
		if client.IsStatus(err, nfs4.ErrNoent) {
			err = nil
		}
		if err == nil {
			p.clearStale(p.byID[f.Device], l.Name) // nothing left to resilver
		}
		return err
	}, func(s *dataServer, f nfs.DSFile) bool {
		s.addRepair(l.Name, repair{fh: f.FH, remove: true})
		p.persist(s, l.Name)
		return true
	})
}

// WriteAt implements nfs.DataServers: FILE_SYNC writes of at most the
// server's wsize, to every mirror in parallel. A mirror out of reach
// misses the write and is marked stale; the write fails only when no
// mirror took it.
func (p *Pool) WriteAt(ctx context.Context, l nfs.FileLayout, b []byte, off uint64) (int, error) {
	defer p.hold(l.Name, false)()
	if l.Striped() {
		return p.writeStriped(ctx, l, b, off)
	}
	return p.writeAt(ctx, l, b, off)
}

func (p *Pool) writeAt(ctx context.Context, l nfs.FileLayout, b []byte, off uint64) (int, error) {
	err := p.eachMirror(ctx, l, func(ctx context.Context, c *client.Client, dir []byte, f nfs.DSFile) error {
		s := p.byID[f.Device]
		_, wsize := s.sizes()
		for done := 0; done < len(b); {
			chunk := b[done:min(len(b), done+int(wsize))]
			res, err := c.Write(ctx, f.FH, nfs4.AnonStateid, off+uint64(done), nfs4.FileSync4, chunk)
			if err != nil {
				return err
			}
			if res.Count == 0 {
				return fmt.Errorf("pnfs: %s wrote nothing", s.cfg)
			}
			if res.Committed != nfs4.FileSync4 {
				if _, err := c.Commit(ctx, f.FH, off+uint64(done), res.Count); err != nil {
					return err
				}
			}
			done += int(res.Count)
			s.stats.written.Add(uint64(res.Count))
		}
		return nil
	}, p.markStale(l))
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// ReadAt implements nfs.DataServers: from the first mirror in service
// (then any reachable one) that is not stale, falling over to the next
// when one fails midway.
func (p *Pool) ReadAt(ctx context.Context, l nfs.FileLayout, b []byte, off uint64) (n int, eof bool, err error) {
	if l.Striped() {
		return p.readStriped(ctx, l, b, off)
	}
	err = ErrOutOfService
	for _, f := range p.readOrder(l) {
		s := p.byID[f.Device]
		err = p.do(ctx, s, func(ctx context.Context, c *client.Client, dir []byte) error {
			rsize, _ := s.sizes()
			for n < len(b) && !eof {
				dst := b[n:min(len(b), n+int(rsize))]
				got, e, err := c.ReadInto(ctx, f.FH, nfs4.AnonStateid, off+uint64(n), dst)
				if err != nil {
					return err
				}
				n += got
				s.stats.read.Add(uint64(got))
				eof = e
				if got == 0 && !e {
					return fmt.Errorf("pnfs: %s read nothing", s.cfg)
				}
			}
			return nil
		})
		if err == nil || !faulty(ctx, err) && !errors.Is(err, ErrOutOfService) {
			return n, eof, err
		}
	}
	return n, eof, err
}

// readOrder lists l's mirrors to read from: in service first, then the
// others (one reported failed may still answer the metadata server),
// leaving out stale ones.
func (p *Pool) readOrder(l nfs.FileLayout) []nfs.DSFile {
	var first, then []nfs.DSFile
	for _, f := range l.Mirrors {
		s, ok := p.byID[f.Device]
		if !ok || s.isStale(l.Name) {
			continue
		}
		if s.isInService() {
			first = append(first, f)
		} else {
			then = append(then, f)
		}
	}
	return append(first, then...)
}

// eachMirror runs fn on every mirror of l in parallel. A mirror whose
// server is out of reach (no session, or it failed during fn) is handed
// to missed instead, which says whether the work is as good as done
// (queued for the server's return). The call fails when an NFS error came
// back, or when no mirror was done.
func (p *Pool) eachMirror(ctx context.Context, l nfs.FileLayout, fn func(ctx context.Context, c *client.Client, dir []byte, f nfs.DSFile) error, missed func(*dataServer, nfs.DSFile) bool) error {
	errs := make([]error, len(l.Mirrors))
	var wg sync.WaitGroup
	for i, f := range l.Mirrors {
		s, ok := p.byID[f.Device]
		if !ok {
			errs[i] = fmt.Errorf("pnfs: unknown data server %x", f.Device)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.do(ctx, s, func(ctx context.Context, c *client.Client, dir []byte) error {
				return fn(ctx, c, dir, f)
			})
		}()
	}
	wg.Wait()
	reached := 0
	var failed []error
	for i, err := range errs {
		switch {
		case err == nil:
			reached++
		case ctx.Err() == nil && (errors.Is(err, ErrOutOfService) || faulty(ctx, err)):
			if s, ok := p.byID[l.Mirrors[i].Device]; ok && missed(s, l.Mirrors[i]) {
				reached++
				continue
			}
			failed = append(failed, err)
		default:
			return err
		}
	}
	if reached == 0 && len(failed) > 0 {
		return errors.Join(failed...)
	}
	return nil
}

// markStale returns a missed-mirror handler that records l's data file as
// stale on that server: it missed a change the other mirrors have.
func (p *Pool) markStale(l nfs.FileLayout) func(*dataServer, nfs.DSFile) bool {
	return func(s *dataServer, f nfs.DSFile) bool {
		if len(l.Mirrors) > 1 {
			s.mu.Lock()
			_, was := s.stale[l.Name]
			if !was {
				s.stale[l.Name] = slices.Clone(l.Mirrors)
			}
			s.mu.Unlock()
			if !was {
				p.persist(s, l.Name)
			}
		}
		return false
	}
}

func (s *dataServer) isStale(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.stale[name]
	return ok
}

// addRepair queues work for when s is reached again. A removal replaces
// a fence; a later fence replaces an earlier one.
func (s *dataServer) addRepair(name string, r repair) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.pending[name]; ok && old.remove {
		return
	}
	s.repairSeq++
	r.seq = s.repairSeq
	s.pending[name] = r
}

// doRepairs does s's queued work with session c.
func (p *Pool) doRepairs(ctx context.Context, s *dataServer, c *client.Client) error {
	s.mu.Lock()
	dir := s.dir
	todo := make(map[string]repair, len(s.pending))
	for k, v := range s.pending {
		todo[k] = v
	}
	s.mu.Unlock()
	for name, r := range todo {
		err := p.repair(ctx, s, c, dir, name, r)
		if err != nil && faulty(context.Background(), err) {
			return err
		}
		if err != nil {
			p.log.Warn("data server repair failed", "server", s.cfg.String(), "file", name, "err", err)
		}
		s.mu.Lock()
		if cur, ok := s.pending[name]; ok && cur.seq == r.seq {
			delete(s.pending, name)
		}
		s.mu.Unlock()
		p.persist(s, name)
	}
	return nil
}

// repair does one queued repair, within CallTimeout.
func (p *Pool) repair(ctx context.Context, s *dataServer, c *client.Client, dir []byte, name string, r repair) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	if r.remove {
		err := c.Remove(ctx, dir, name)
		if err != nil && !client.IsStatus(err, nfs4.ErrNoent) {
			return err
		}
		s.mu.Lock()
		delete(s.stale, name) // nothing left to resilver; doRepairs persists
		s.mu.Unlock()
		return nil
	}
	_, err := c.Setattr(ctx, r.fh, nfs4.AnonStateid, client.OwnerAttrs(r.uid, r.gid, -1))
	if client.IsStatus(err, nfs4.ErrStale) {
		return nil // the file is gone: nothing left to fence
	}
	return err
}
