package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Inline reports whether a record may be handled on an event loop's own
// thread: a COMPOUND made only of operations the table marks opInline,
// which never block for long (no path walk, no open, no fsync, no
// directory read, no lseek) — the data path of SEQUENCE, PUTFH, READ, READ_PLUS,
// GETATTR and friends. Everything else (and anything this quick scan
// cannot read) should go to a worker, so a slow metadata operation never
// stalls other connections. It decodes only the operation numbers and
// skips their arguments (the table's args), except where the table gives
// an op a scan that follows the current filehandle: PUTFH's handle is
// read, as one the node table does not hold would be looked up with
// open_by_handle_at, which can wait on the disk (a cold inode, or a client
// sending handles after a restart), so it goes to a worker too, and so
// does an op that would have to open a known file by path first (opByFD:
// GETATTR, ACCESS, READ or READ_PLUS of a node with no descriptor open:
// the fd cache closed it, or it was never read): the walk from the export
// root can wait on the disk when its dentries were evicted. The worker's
// open is kept, so the next request is inline. So does a READ_PLUS whose
// extents are not cached (extentsKnown): SEEK_DATA/SEEK_HOLE wait for the
// inode's lock behind writers (op_readplus.go, planSegmentsLoop); the
// worker's walk is cached. One LOOKUP right after such a PUTFH is inline
// too when the kernel's dentry cache answers it (lookupCached): the stat
// of mdtest and of every client's path walk; a GETATTR of the child it
// finds answers from the LOOKUP's own fstatat (compound.recall), and any
// other op on the child goes to a worker.
func (s *Server) Inline(rec []byte) bool {
	var d xdr.Decoder
	d.Reset(rec)
	cl, ok := decodeCall(&d)
	if !ok || d.Err() != nil {
		return false
	}
	skip, plain := cl.gssScanSkip()
	if !plain {
		return false
	}
	d.Skip(skip)
	if cl.prog != nfs4.ProgramNFS && cl.prog != progMount {
		return false // NLM and NSM calls may write the hosts file
	}
	if cl.prog != nfs4.ProgramNFS || cl.vers != nfs4.NFSVersion {
		return s.inline3(&cl, &d) // nfs3.go
	}
	d.Opaque(maxTag)
	minor := d.Uint32()
	n := d.ArrayLen(maxOpsHard, 4)
	sc := inlineScan{s: s}
	for i := 0; i < n && d.Err() == nil; i++ {
		info := lookupOp(d.Uint32())
		if info == nil || info.flags&opInline == 0 && info.scan == nil {
			return false
		}
		if minor == 0 && info.flags&opSeqid != 0 {
			return false // NFSv4.0 CLOSE waits its turn among its owner's ops (v40.go)
		}
		if info.flags&opByFD != 0 && info.scan == nil && !sc.fdOpen() {
			return false // it would open cur by path first
		}
		if info.flags&opDataReply != 0 && s.mds != nil && !sc.plainData() {
			return false // data on the data servers, or not known yet (pnfs_proxy.go)
		}
		if info.scan != nil {
			if sc, ok = info.scan(sc, &d); !ok {
				return false
			}
			continue
		}
		info.args.skip(&d)
	}
	return d.Err() == nil
}

// inlineScan is what Inline follows of a COMPOUND's filehandles. cur is
// the current filehandle's node when a known PUTFH set it; nil for the
// pseudo-filesystem and a handle refused as malformed; lookedUp for a
// LOOKUP's child. saved is SAVEFH's. The scans take and return it by
// value: a pointer passed to the table's functions would put it on the
// heap.
type inlineScan struct {
	s          *Server
	cur, saved *node
}

// lookedUp stands, in Inline's scan, for the current filehandle a LOOKUP
// made: a node the scan does not know.
var lookedUp = new(node)

// fdOpen reports whether an op that works through cur's descriptor
// (opByFD) finds one open, so that it opens nothing by path on the loop.
// A LOOKUP's child is not known to have one.
func (sc *inlineScan) fdOpen() bool {
	return sc.cur == nil || sc.cur != lookedUp && sc.cur.hasOpenFD()
}

// plainData reports whether cur's data is known to be in the export file,
// not on the data servers of the metadata-server role: a READ of a file
// with a layout waits for a data server, and loading the layout reads an
// extended attribute. Only asked with the role on.
func (sc *inlineScan) plainData() bool {
	if sc.cur == nil {
		return true
	}
	if sc.cur == lookedUp {
		return false
	}
	l, known := sc.cur.layoutKnown()
	return known && l == nil
}

// scanPutfh: a handle the node table does not hold goes to a worker.
func scanPutfh(sc inlineScan, d *xdr.Decoder) (inlineScan, bool) {
	var known bool
	sc.cur, known = sc.s.knownHandle(decodePutfh(d).fh)
	return sc, known
}

// scanLookup: a LOOKUP right after a known PUTFH is inline when the
// dentry cache answers it.
func scanLookup(sc inlineScan, d *xdr.Decoder) (inlineScan, bool) {
	if sc.cur == nil || sc.cur == lookedUp || !sc.s.lookupCached(sc.cur, decodeLookup(d).name) {
		return sc, false
	}
	sc.cur = lookedUp // the child: not looked up here
	return sc, true
}

// scanGetattr: GETATTR of a LOOKUP's child answers from the LOOKUP's own
// fstatat (compound.recall); of another node it needs a descriptor open
// (opByFD). While a write delegation is out, GETATTR may wait for
// CB_GETATTR (state_deleg.go).
func scanGetattr(sc inlineScan, d *xdr.Decoder) (inlineScan, bool) {
	decodeGetattr(d)
	if sc.cur != lookedUp && !sc.fdOpen() {
		return sc, false
	}
	return sc, sc.s.state.dl.writes.Load() == 0
}

// scanReadPlus: a READ_PLUS needs a descriptor open (opByFD) and all its
// extents cached (extentsKnown), so that it walks none with lseek on the
// loop.
func scanReadPlus(sc inlineScan, d *xdr.Decoder) (inlineScan, bool) {
	if !sc.fdOpen() {
		return sc, false
	}
	a := decodeRead(d)
	return sc, sc.cur == nil || d.Err() != nil || sc.cur.extentsKnown(a.offset, a.count)
}

func scanRootfh(sc inlineScan, _ *xdr.Decoder) (inlineScan, bool) {
	sc.cur = nil
	return sc, true
}

func scanSavefh(sc inlineScan, _ *xdr.Decoder) (inlineScan, bool) {
	sc.saved = sc.cur
	return sc, true
}

func scanRestorefh(sc inlineScan, _ *xdr.Decoder) (inlineScan, bool) {
	sc.cur = sc.saved
	return sc, true
}

// extentsKnown reports, for Inline, whether a READ_PLUS of count bytes at
// off would find all its extents in n's extent cache, so that it walks
// none with lseek on the loop (op_readplus.go, planSegmentsLoop). It takes
// n's lock only if free. The cache is checked against the last walk's
// size and this server's changes, not the file's ctime, which needs an
// fstat: a file changed by a local process since is found stale when the
// READ_PLUS runs, and that reply sends its range as DATA.
func (n *node) extentsKnown(off uint64, count uint32) bool {
	if off > maxOffset {
		return true // refused by READ_PLUS itself
	}
	if !n.mu.TryLock() {
		return false
	}
	defer n.mu.Unlock()
	return n.extent.covers(int64(off), int64(off)+int64(count))
}

// knownHandle reports whether resolve would find h's node without going to
// the filesystem, and returns the node when there is one (nil for the
// pseudo-filesystem and for handles refused without a look at the disk).
// A false answer only sends the request to a worker.
func (s *Server) knownHandle(h []byte) (*node, bool) {
	if len(h) >= 2 && h[0] == fhVersion && h[1] == fhPseudo {
		return nil, true
	}
	f, ok := parseHandle(h)
	if !ok {
		return nil, true // refused as BADHANDLE without a look at the disk
	}
	n := s.files.get(nodeKey{f.export, f.fs, f.ino})
	if n == nil || !sameHandle(n, h) {
		return nil, false
	}
	return n, true
}

// lookupCached reports whether a LOOKUP of name in dir would find its
// answer without waiting on the disk: dir's directory descriptor is open
// and the dentry cache resolves name (export.inCache). A malformed name
// in such a directory answers yes: LOOKUP refuses it after an fstat of
// the open descriptor. Anything else (the pseudo-filesystem, a
// descriptor to open, a name to read from disk) answers no and the
// request goes to a worker.
func (s *Server) lookupCached(dir *node, name []byte) bool {
	if dir.exp == nil || !dir.isDir() {
		return false
	}
	dir.pin()
	defer dir.unpin()
	fd, ok := dir.pub.path.get()
	if !ok || fd < 0 {
		return false // LOOKUP would open it first, even to refuse a name
	}
	return checkName(name) != nfs4.OK || dir.exp.inCache(fd, string(name))
}

// WriteAlign says where a record's WRITE payload should sit in memory so
// that the engine's O_DIRECT write of it needs no bounce copy: given the
// first bytes of a record (head; 512 are plenty), it returns the payload's
// offset in the record and the file offset it is written at. ok is false
// when no WRITE (an op with the table's dataAt) follows ops whose
// arguments the table can read (SEQUENCE, PUTFH...) or head is too short
// to say.
func WriteAlign(head []byte) (dataOff int, fileOff uint64, ok bool) {
	var d xdr.Decoder
	d.Reset(head)
	cl, ok := decodeCall(&d)
	if !ok || d.Err() != nil {
		return 0, 0, false
	}
	skip, plain := cl.gssScanSkip()
	if !plain {
		return 0, 0, false
	}
	d.Skip(skip)
	if cl.prog != nfs4.ProgramNFS || cl.vers != nfs4.NFSVersion {
		return writeAlign3(&cl, &d) // nfs3.go
	}
	d.Opaque(maxTag)
	d.Uint32()
	n := d.ArrayLen(maxOpsHard, 0)
	for i := 0; i < n && d.Err() == nil; i++ {
		info := lookupOp(d.Uint32())
		switch {
		case info != nil && info.dataAt != nil:
			fileOff = info.dataAt(&d)
			return d.Offset(), fileOff, d.Err() == nil
		case info == nil || info.args.read == nil:
			return 0, 0, false
		}
		// Ops before the WRITE need only be readable.
		if !info.args.skip(&d) {
			return 0, 0, false
		}
	}
	return 0, 0, false
}
