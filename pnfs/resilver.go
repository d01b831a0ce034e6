package pnfs

import (
	"context"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Mirrors that miss a write or a truncate while their server is out of
// reach are stale: ReadAt skips them, and they must not be named in a
// layout until Resilver has copied a good mirror over them. The marks are
// kept in the Registry too (FileState), so a restarted metadata server
// still knows them.

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

// Resilver copies l's data from a mirror that is not stale over each one
// that is (whose server answers again), sets its size, and clears its
// mark. It returns the bytes copied. The caller keeps writers away from
// the file meanwhile (recalls its layouts and holds proxied writes): the
// copy is not atomic with respect to them.
func (p *Pool) Resilver(ctx context.Context, l nfs.FileLayout) (uint64, error) {
	stale := p.StaleMirrors(l)
	if len(stale) == 0 {
		return 0, nil
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
	var copied uint64
	for _, id := range stale {
		dst := nfs.FileLayout{Name: l.Name, Mirrors: []nfs.DSFile{mirrorOn(l, id)}}
		n, err := p.copyData(ctx, l, dst, size)
		copied += n
		if err != nil {
			return copied, fmt.Errorf("pnfs: resilver %s onto %s: %w", l.Name, p.byID[id].cfg, err)
		}
		s := p.byID[id]
		s.mu.Lock()
		delete(s.stale, l.Name)
		s.mu.Unlock()
		p.persist(s, l.Name)
	}
	return copied, nil
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
// WriteAt and SetSize on a layout of one mirror fail when it is out of
// reach, and mark nothing. Holes are copied as zeros (READ_PLUS and SEEK
// could skip them).
func (p *Pool) copyData(ctx context.Context, src, dst nfs.FileLayout, size uint64) (uint64, error) {
	buf := make([]byte, 1<<20)
	var off uint64
	for off < size {
		n, eof, err := p.ReadAt(ctx, src, buf[:min(uint64(len(buf)), size-off)], off)
		if err != nil {
			return off, err
		}
		if n > 0 {
			if _, err := p.WriteAt(ctx, dst, buf[:n], off); err != nil {
				return off, err
			}
		}
		off += uint64(n)
		if eof || n == 0 {
			break
		}
	}
	return off, p.SetSize(ctx, dst, size)
}
