package nfs

import (
	"context"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// I/O through the MDS of files whose data lives on the data servers: for
// clients that do not speak pNFS, and for pNFS clients that fall back
// (FF_FLAGS_NO_IO_THRU_MDS is never set, op_layout.go). The MDS checks
// state and permission as for any file, then reads and writes the data
// files through DataServers; the export file stays sparse, only its
// size kept right (GETATTR answers from it). These run on a worker:
// Inline sends READ and READ_PLUS of a file with a layout, or one whose
// layout is not loaded yet, there (inlineScan.plainData).

// layoutFile returns the current file's layout when the role is on and it
// has one.
func (c *compound) layoutFile() *FileLayout {
	if c.s.mds == nil || c.cfh == nil {
		return nil
	}
	return c.s.layoutOf(c.cfh)
}

// proxyRead answers READ (plus false) or READ_PLUS (one DATA segment)
// of a file with layout l. The range is the one the export file's size
// allows; what the data files do not hold (a file extended by SETATTR
// or LAYOUTCOMMIT past what was written) reads as zeros.
func (c *compound) proxyRead(l *FileLayout, plus bool) nfs4.Status {
	a := decodeRead(c.d)
	if c.d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	var st unix.Stat_t
	if _, s := c.readTarget(a.stateid, &st); s != nfs4.OK {
		return s
	}
	n := c.clampCount(a.count)
	size := uint64(st.Size)
	if a.offset >= size {
		n = 0
	} else if rem := size - a.offset; uint64(n) > rem {
		n = int(rem)
	}
	buf := make([]byte, n)
	if n > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), dsTimeout)
		got, _, err := c.s.mds.ds.ReadAt(ctx, *l, buf, a.offset)
		cancel()
		if err != nil {
			c.s.log.Debug("pnfs: proxied READ failed", "err", err)
			return nfs4.ErrIO
		}
		clear(buf[got:])
		c.s.mds.proxyRead.Add(uint64(n))
	}
	eof := a.offset+uint64(n) >= size
	c.e.Bool(eof)
	if !plus {
		c.e.Opaque(buf)
		return nfs4.OK
	}
	if n == 0 {
		c.e.Uint32(0)
		return nfs4.OK
	}
	c.e.Uint32(1)
	c.e.Uint32(nfs4.ContentData)
	c.e.Uint64(a.offset)
	c.e.Opaque(buf)
	return nfs4.OK
}

// proxyWrite writes data at off to the data files of l (stably, on every
// mirror) and grows the export file's size to cover it. fd is the export
// file's write descriptor, writeTarget's.
func (c *compound) proxyWrite(l *FileLayout, fd int, off uint64, data []byte) nfs4.Status {
	ctx, cancel := context.WithTimeout(context.Background(), dsTimeout)
	n, err := c.s.mds.ds.WriteAt(ctx, *l, data, off)
	cancel()
	if n == 0 && len(data) > 0 {
		c.s.log.Debug("pnfs: proxied WRITE failed", "err", err)
		return nfs4.ErrIO
	}
	c.s.mds.proxyWritten.Add(uint64(n))
	if s := growTo(fd, off+uint64(n)); s != nfs4.OK {
		return s
	}
	c.cfh.extent.changed()
	c.countWritten(n)
	c.e.Uint32(uint32(n))
	c.e.Uint32(nfs4.FileSync4) // DataServers.WriteAt is stable
	c.e.Fixed(c.s.bootVer[:])
	return nfs4.OK
}

// growTo extends the file open as fd to size when it is smaller; it
// never shrinks it (LAYOUTCOMMIT's rule too).
func growTo(fd int, size uint64) nfs4.Status {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return errno(err)
	}
	if size > uint64(st.Size) {
		if err := unix.Ftruncate(fd, int64(size)); err != nil {
			return errno(err)
		}
	}
	return nfs4.OK
}

// proxySeek answers SEEK on a file with a layout: the data files are not
// walked, so the whole file reads as data (RFC 7862 section 15.11.3
// allows a server to report holes as data).
func (c *compound) proxySeek(a seekArgs) nfs4.Status {
	var st unix.Stat_t
	if _, s := c.readTarget(a.stateid, &st); s != nfs4.OK {
		return s
	}
	size := uint64(st.Size)
	switch a.what {
	case nfs4.ContentData:
		if a.offset >= size {
			return nfs4.ErrNxio
		}
		c.e.Bool(false)
		c.e.Uint64(a.offset)
	case nfs4.ContentHole:
		if a.offset > size {
			return nfs4.ErrNxio
		}
		c.e.Bool(true)
		c.e.Uint64(size)
	default:
		return nfs4.ErrUnionNotsupp
	}
	return nfs4.OK
}

// proxySetSize sets the data files' size before SETATTR truncates or
// extends the export file to the same size.
func (s *Server) proxySetSize(l *FileLayout, size uint64) nfs4.Status {
	ctx, cancel := context.WithTimeout(context.Background(), dsTimeout)
	defer cancel()
	if err := s.mds.ds.SetSize(ctx, *l, size); err != nil {
		s.log.Debug("pnfs: truncating data files failed", "err", err)
		return nfs4.ErrIO
	}
	return nfs4.OK
}

// proxyFallocate does ALLOCATE (mode 0) or DEALLOCATE (a punch) of a
// file with layout l on its data files, when DataServers offers SpaceOps
// (else NFS4ERR_NOTSUPP). ALLOCATE past the end grows the export file's
// size, as fallocate(2) without KEEP_SIZE does; the export file itself
// stays sparse. fd is writeTarget's.
func (c *compound) proxyFallocate(l *FileLayout, fd int, mode uint32, off, length uint64) nfs4.Status {
	sp, ok := c.s.mds.ds.(SpaceOps)
	if !ok {
		return nfs4.ErrNotsupp
	}
	ctx, cancel := context.WithTimeout(context.Background(), dsTimeout)
	defer cancel()
	var err error
	if mode == 0 {
		err = sp.Allocate(ctx, *l, off, length)
	} else {
		err = sp.Deallocate(ctx, *l, off, length)
	}
	if err != nil {
		c.s.log.Debug("pnfs: ALLOCATE/DEALLOCATE of data files failed", "err", err)
		return nfs4.ErrIO
	}
	if mode == 0 {
		return growTo(fd, off+length)
	}
	return nfs4.OK
}

// noLayoutOp refuses an operation on a file with a layout that the MDS
// does not do on data files yet (COPY, CLONE):
// NFS4ERR_NOTSUPP, after which clients copy or zero through READ and
// WRITE.
func (c *compound) noLayoutOp(nodes ...*node) nfs4.Status {
	if c.s.mds == nil {
		return nfs4.OK
	}
	for _, n := range nodes {
		if c.s.layoutOf(n) != nil {
			return nfs4.ErrNotsupp
		}
	}
	return nfs4.OK
}
