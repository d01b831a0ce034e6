package nfs

// Striping (RFC 8435 section 5.1, ffl_stripe_unit): a file's layout may
// name, per mirror, several data servers, each holding its own data file
// of the file. Stripe unit k of the file (bytes [k*su, (k+1)*su)) lives
// in the data file of stripe k mod Width, at the same file offset: the
// data files are sparse, each holding its own units and holes between
// them. This is the mapping the Linux client uses from 6.18 on
// (fs/nfs/flexfilelayout/flexfilelayout.h, nfs4_ff_layout_calc_dss_id:
// the data server index is (offset / stripe_unit) mod dss_count, and the
// I/O keeps the file's offset; ff_layout_alloc_lseg wants the same
// count in every mirror, as the pool makes them), and the project's
// client's (client/pnfs.go, heldLayout.stripe).
//
// Every data file of a layout is on its own data server (the pool
// places mirrors times width distinct servers), so a data server holds at
// most one data file of a file, and the file's name (FileLayout.Name)
// names it on every server.

// Stripes is the number of data files each mirror stripes over: Width,
// or 1 without striping.
func (l FileLayout) Stripes() int {
	if l.Width > 1 {
		return l.Width
	}
	return 1
}

// MirrorCount is the number of mirrors (full copies) of l.
func (l FileLayout) MirrorCount() int {
	return len(l.Mirrors) / l.Stripes()
}

// Striped says whether l stripes its data over several data servers.
func (l FileLayout) Striped() bool { return l.Width > 1 }

// Row returns mirror m's data files, stripe after stripe.
func (l FileLayout) Row(m int) []DSFile {
	w := l.Stripes()
	return l.Mirrors[m*w : (m+1)*w]
}

// Column returns the layout of stripe s alone: its data file on every
// mirror, not striped (what a data server holds of the file, as an
// unstriped layout would describe it).
func (l FileLayout) Column(s int) FileLayout {
	w := l.Stripes()
	c := FileLayout{Name: l.Name, UID: l.UID, GID: l.GID}
	for m := 0; m < len(l.Mirrors)/w; m++ {
		c.Mirrors = append(c.Mirrors, l.Mirrors[m*w+s])
	}
	return c
}

// StripeAt returns the stripe holding offset off and how many of the n
// bytes from off stay in that stripe unit (n without striping).
func (l FileLayout) StripeAt(off, n uint64) (int, uint64) {
	if !l.Striped() || l.StripeUnit == 0 {
		return 0, n
	}
	su := l.StripeUnit
	s := int((off / su) % uint64(l.Width))
	return s, min(n, su-off%su)
}

// validStriping says whether l's striping fields agree with its data
// files: no striping, or a stripe unit, at least two stripes, and whole
// mirrors of them.
func (l FileLayout) validStriping() bool {
	if l.Width <= 1 {
		return true
	}
	return l.Width >= 2 && l.StripeUnit > 0 && len(l.Mirrors)%l.Width == 0 && len(l.Mirrors) > 0
}
