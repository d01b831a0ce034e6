package nfs

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// mds is the metadata-server role's part of the server (pnfs.go): the
// data servers, the files whose data files wait to be removed, and the
// role's counters. Server.mds is nil when the role is off.
type mds struct {
	ds    DataServers
	store OrphanStore // nil: orphans are kept in memory only (pnfs_orphan.go)

	mu sync.Mutex
	// orphans are the layouts of files whose last name is gone, by file:
	// their data files are removed by the unlinked sweep once no state
	// holds the file (a client may still read or write an open file
	// after its REMOVE, POSIX unlink-while-open).
	orphans map[fileID]FileLayout

	createWarned atomic.Bool // Create failed: logged once
	badWarned    atomic.Bool // a stored layout did not decode: logged once

	granted, returned, recalled, fenced atomic.Uint64
	proxyRead, proxyWritten             atomic.Uint64
	ioErrors, statsReports              atomic.Uint64
	statsRead, statsWritten             atomic.Uint64 // bytes LAYOUTSTATS reported

	proxyGate    hostGate      // proxied calls in flight per client host (pnfs_gate.go)
	proxyDelayed atomic.Uint64 // proxied calls answered NFS4ERR_DELAY by proxyGate
}

// dsTimeout bounds one call to the data servers made while a client
// waits (a create, a proxied READ or WRITE, a truncate).
const dsTimeout = 30 * time.Second

func newMDS(ds DataServers) *mds {
	return &mds{ds: ds, orphans: make(map[fileID]FileLayout)}
}

// nodeLayout is what a node knows of its file's layout once loaded from
// layoutXattr: l is nil for a file without one.
type nodeLayout struct {
	l *FileLayout
}

// layoutKnown returns n's layout as loaded, and whether it has been
// loaded: Inline asks without loading (no xattr read on a loop).
func (n *node) layoutKnown() (*FileLayout, bool) {
	p := n.pl.Load()
	if p == nil {
		return nil, false
	}
	return p.l, true
}

// layoutOf returns the layout of n's file, nil for a file that has none
// (or when the role is off). The first call for a node reads the xattr
// (a worker's job: Inline sends a data op on a node not yet loaded
// there), later ones the node's copy.
func (s *Server) layoutOf(n *node) *FileLayout {
	if s.mds == nil || n == nil || n.exp == nil || !n.isReg() {
		return nil
	}
	if l, ok := n.layoutKnown(); ok {
		return l
	}
	n.pin()
	defer n.unpin()
	fd, err := n.readFD()
	if err != nil {
		return nil // not stored: the next use tries again
	}
	l, err := readLayoutXattr(fd)
	if err != nil {
		if s.mds.badWarned.CompareAndSwap(false, true) {
			s.log.Warn("pnfs: a file's stored layout is unreadable; it is served from the export", "file", n.path(), "err", err)
		}
		l = nil
	}
	n.pl.CompareAndSwap(nil, &nodeLayout{l: l})
	l, _ = n.layoutKnown()
	return l
}

// dataName names a new file's data files on the data servers: unique on
// this MDS (device and inode, and the creation time, which tells a reused
// inode from its earlier file) and stable for the file.
func dataName(st *unix.Stat_t) string {
	return fmt.Sprintf("%x-%x-%x.%x", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}

// makeLayout gives a regular file just created through NFS (open as fd)
// its data files and stores their layout on it. A failure leaves the file
// without a layout, served from the export: a create never fails because
// a data server is down.
func (s *Server) makeLayout(n *node, fd int, st *unix.Stat_t) {
	ctx, cancel := context.WithTimeout(context.Background(), dsTimeout)
	defer cancel()
	l, err := s.mds.ds.Create(ctx, dataName(st))
	if err == nil {
		if err = writeLayoutXattr(fd, l); err != nil {
			// Not stored: the data files would leak; give them back.
			go s.removeData(l)
		}
	}
	if err != nil {
		if s.mds.createWarned.CompareAndSwap(false, true) {
			s.log.Warn("pnfs: data files not made; new files keep their data on the export until data servers answer", "err", err)
		}
		n.pl.Store(&nodeLayout{})
		return
	}
	n.pl.Store(&nodeLayout{l: &l})
}

// removeData removes a layout's data files.
func (s *Server) removeData(l FileLayout) error {
	ctx, cancel := context.WithTimeout(context.Background(), dsTimeout)
	defer cancel()
	err := s.mds.ds.Remove(ctx, l)
	if err != nil {
		s.log.Warn("pnfs: data files not removed", "err", err)
	}
	return err
}

// fence gives n's data files new synthetic owners (RFC 8435 section 14),
// so that layouts handed out before can no longer be used, and stores the
// new ids with the file. Fences of one file take turns.
func (s *Server) fence(n *node) {
	if s.mds == nil {
		return
	}
	n.layoutMu.Lock()
	defer n.layoutMu.Unlock()
	l := s.layoutOf(n)
	if l == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), dsTimeout)
	defer cancel()
	nl, err := s.mds.ds.Fence(ctx, *l)
	if err != nil {
		s.log.Warn("pnfs: fencing failed", "file", n.path(), "err", err)
		return
	}
	s.mds.fenced.Add(1)
	s.recallFile(n) // the layouts left name the old ids: clients get new ones
	n.pin()
	defer n.unpin()
	fd, err := n.readFD()
	if err == nil {
		err = writeLayoutXattr(fd, nl)
	}
	if err != nil {
		s.log.Warn("pnfs: fenced layout not stored", "file", n.path(), "err", err)
	}
	n.pl.Store(&nodeLayout{l: &nl})
}

// orphan notes that the file n's layout belongs to lost its last name:
// its data files go once no state holds the file (sweepOrphans).
func (s *Server) orphan(id fileID, l *FileLayout) {
	if s.mds == nil || l == nil {
		return
	}
	s.mds.mu.Lock()
	s.mds.orphans[id] = *l
	s.mds.mu.Unlock()
	s.recordOrphan(*l)
}

// sweepOrphans removes the data files of removed files that no open,
// lock, delegation or layout holds any more. The unlinked sweep calls it.
func (s *Server) sweepOrphans() {
	if s.mds == nil {
		return
	}
	var gone []FileLayout
	s.mds.mu.Lock()
	var held map[fileID]bool
	if len(s.mds.orphans) > 0 {
		held = s.state.heldInodes()
	}
	for id, l := range s.mds.orphans {
		if !held[id] {
			gone = append(gone, l)
			delete(s.mds.orphans, id)
		}
	}
	s.mds.mu.Unlock()
	for _, l := range gone {
		if s.removeData(l) == nil {
			s.forgetOrphan(l.Name)
		}
	}
}

// registerLayoutGauges adds the role's counters to every scrape.
func (s *Server) registerLayoutGauges(set *metrics.Set) {
	m := s.mds
	counter := func(name, help string, v *atomic.Uint64) {
		set.AddGauge(metrics.Gauge{Name: name, Help: help, Value: func() float64 { return float64(v.Load()) }})
	}
	counter("pnfs_layouts_granted_total", "layouts granted by LAYOUTGET", &m.granted)
	counter("pnfs_layouts_returned_total", "layouts returned (LAYOUTRETURN, or forgotten at a client's end)", &m.returned)
	counter("pnfs_layouts_recalled_total", "CB_LAYOUTRECALLs sent", &m.recalled)
	counter("pnfs_fences_total", "data files given new synthetic owners (RFC 8435 section 14)", &m.fenced)
	counter("pnfs_proxy_read_bytes_total", "file data read from data servers for clients without layouts", &m.proxyRead)
	counter("pnfs_proxy_written_bytes_total", "file data written to data servers for clients without layouts", &m.proxyWritten)
	counter("pnfs_proxy_delayed_total", "proxied READs, WRITEs and SEEKs answered NFS4ERR_DELAY: the client host had its share of calls waiting on the data servers", &m.proxyDelayed)
	counter("pnfs_io_errors_total", "data server errors reported by clients (LAYOUTERROR, LAYOUTRETURN)", &m.ioErrors)
	counter("pnfs_layoutstats_total", "LAYOUTSTATS reports received", &m.statsReports)
	counter("pnfs_layoutstats_read_bytes_total", "bytes clients reported reading from data servers (LAYOUTSTATS)", &m.statsRead)
	counter("pnfs_layoutstats_written_bytes_total", "bytes clients reported writing to data servers (LAYOUTSTATS)", &m.statsWritten)
	set.AddGauge(metrics.Gauge{Name: "pnfs_layouts", Help: "layout stateids held by clients", Value: func() float64 {
		s.state.mu.Lock()
		defer s.state.mu.Unlock()
		return float64(len(s.state.layouts))
	}})
}

// failed tells the data servers of an error reported for device id.
func (s *Server) failed(id DeviceID, st nfs4.Status) {
	s.mds.ioErrors.Add(1)
	s.mds.ds.Failed(id, st)
}

// layoutOfName returns the layout of the regular file name in the
// directory open as dirfd, which st (its fstatat) describes: from its
// node when the table has it, else read from the file, opened beneath
// dirfd (a single name, no symlink followed; O_NONBLOCK, and the file is
// checked to be st's). nil when the role is off or it has none.
func (c *compound) layoutOfName(dirfd int, name string, st *unix.Stat_t) *FileLayout {
	if c.s.mds == nil {
		return nil
	}
	if f := c.cfh.exp.fsOfDev(st.Dev); f != nil {
		if n := c.s.files.get(nodeKey{c.cfh.exp.id, f.id, st.Ino}); n != nil {
			return c.s.layoutOf(n)
		}
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var got unix.Stat_t
	if unix.Fstat(fd, &got) != nil || got.Dev != st.Dev || got.Ino != st.Ino {
		return nil
	}
	l, _ := readLayoutXattr(fd)
	return l
}
