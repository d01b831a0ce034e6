package pnfs

import (
	"context"
	"errors"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// Striping (nfs/pnfs_stripe.go): with Config.StripeUnit set, a new file's
// layout names Mirrors times width distinct data servers, each holding
// one data file, mirror after mirror; stripe unit k of the file lives in
// the data file of stripe k mod width, at the file's own offset (sparse
// data files). Everything the pool does to a striped file's data it does
// stripe by stripe: each stripe's data files (one per mirror, the
// layout's Column) are mirrors of one another, as an unstriped layout's
// are, so writes, reads, truncates, space ops and resilvering of a column
// are those of an unstriped file. Fences and removals go to every data
// file (each server holds one of the file's, named by FileLayout.Name).

// maxDataFiles bounds mirrors times width (nfs stores at most 16 data
// files per layout).
const maxDataFiles = 16

// checkStriping checks the striping settings against the servers.
func (c *Config) checkStriping() error {
	switch {
	case c.StripeUnit == 0 && c.Width > 0:
		return errors.New("pnfs: a stripe width needs a stripe unit")
	case c.StripeUnit == 0:
		return nil
	case c.StripeUnit%4096 != 0:
		return fmt.Errorf("pnfs: stripe unit %d is not a multiple of 4 KiB", c.StripeUnit)
	case c.Width < 0:
		return fmt.Errorf("pnfs: stripe width %d", c.Width)
	case c.Width*c.Mirrors > len(c.Servers):
		return fmt.Errorf("pnfs: %d mirrors of %d stripes need as many data servers (have %d)", c.Mirrors, c.Width, len(c.Servers))
	case c.Width*c.Mirrors > maxDataFiles:
		return fmt.Errorf("pnfs: %d mirrors of %d stripes: more than %d data files per file", c.Mirrors, c.Width, maxDataFiles)
	}
	return nil
}

// width is the stripes each new file should have: 1 without striping.
func (p *Pool) width() int {
	switch {
	case p.cfg.StripeUnit == 0:
		return 1
	case p.cfg.Width > 0:
		return p.cfg.Width
	}
	return max(1, min(len(p.servers), maxDataFiles)/p.cfg.Mirrors)
}

// placeStriped picks the data servers of a new file: Mirrors times the
// width, or, with fewer servers in service, the widest stripe they allow
// (down to no striping), so that a create does not fail for want of
// width.
func (p *Pool) placeStriped() ([]*dataServer, int, error) {
	for w := p.width(); ; w-- {
		servers, err := p.place(p.cfg.Mirrors * w)
		if err == nil || w <= 1 || !errors.Is(err, ErrNoServers) {
			return servers, w, err
		}
	}
}

// eachColumn runs fn on each stripe's column of l in turn, and returns
// the errors joined.
func (p *Pool) eachColumn(l nfs.FileLayout, fn func(col nfs.FileLayout) error) error {
	var errs []error
	for s := range l.Stripes() {
		if err := fn(l.Column(s)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeStriped writes b at off to a striped layout, stripe unit by stripe
// unit, each to its stripe's data files. It returns the bytes written
// before the first failure.
func (p *Pool) writeStriped(ctx context.Context, l nfs.FileLayout, b []byte, off uint64) (int, error) {
	done := 0
	for done < len(b) {
		s, k := l.StripeAt(off+uint64(done), uint64(len(b)-done))
		n, err := p.writeAt(ctx, l.Column(s), b[done:done+int(k)], off+uint64(done))
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// readStriped fills b from off of a striped layout, stripe unit by
// stripe unit. What a stripe's data file does not hold (a hole, or past
// its end) reads as zeros: a data file's end is not the file's, so eof is
// never said, and the caller bounds the read by the file's size (the
// MDS's).
func (p *Pool) readStriped(ctx context.Context, l nfs.FileLayout, b []byte, off uint64) (int, bool, error) {
	n := 0
	for n < len(b) {
		s, k := l.StripeAt(off+uint64(n), uint64(len(b)-n))
		piece := b[n : n+int(k)]
		got, _, err := p.ReadAt(ctx, l.Column(s), piece, off+uint64(n))
		if err != nil {
			return n, false, err
		}
		clear(piece[got:])
		n += int(k)
	}
	return n, false, nil
}
