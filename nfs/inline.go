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
// skips their fixed-shape arguments, except PUTFH's handle: one the node
// table does not hold would be looked up with open_by_handle_at, which can
// wait on the disk (a cold inode, or a client sending handles after a
// restart), so it goes to a worker too, and so does an op that would have
// to open a known file by path first (GETATTR, ACCESS, READ or READ_PLUS
// of a node with no descriptor open: the fd cache closed it, or it was
// never read): the walk from the export root can wait on the disk when
// its dentries were evicted. The worker's open is kept, so the next
// request is inline. So does a READ_PLUS whose extents are not cached
// (extentsKnown): SEEK_DATA/SEEK_HOLE wait for the inode's lock behind
// writers (op_read.go, planSegmentsLoop); the worker's walk is cached.
// One LOOKUP right after such a PUTFH is inline too when the kernel's
// dentry cache answers it (lookupCached): the stat of mdtest and of every
// client's path walk; a GETATTR of the child it finds answers from the
// LOOKUP's own fstatat (compound.recall), and any other op on the child
// goes to a worker.
func (s *Server) Inline(rec []byte) bool {
	var d xdr.Decoder
	d.Reset(rec)
	if _, ok := decodeCall(&d); !ok || d.Err() != nil {
		return false
	}
	d.Opaque(maxTag)
	d.Uint32()
	n := d.ArrayLen(maxOpsHard, 4)
	// cur is the current filehandle's node when a known PUTFH set it; nil
	// for the pseudo-filesystem and a handle refused as malformed;
	// lookedUp for a LOOKUP's child. saved is SAVEFH's.
	var cur, saved *node
	for i := 0; i < n && d.Err() == nil; i++ {
		op := d.Uint32()
		switch op {
		case nfs4.OpPutfh:
			var known bool
			if cur, known = s.knownHandle(d.Opaque(nfs4.FHSize)); !known {
				return false
			}
			continue
		case nfs4.OpLookup:
			if cur == nil || !s.lookupCached(cur, d.Opaque(nfs4.OpaqueLimit)) {
				return false
			}
			cur = lookedUp // the child: not looked up here
			continue
		case nfs4.OpGetattr, nfs4.OpAccess, nfs4.OpRead, nfs4.OpReadPlus:
			if cur == lookedUp && op != nfs4.OpGetattr {
				// Not known to have a descriptor open. (GETATTR answers
				// from the LOOKUP's own fstatat: compound.recall.)
				return false
			}
			if cur != nil && cur != lookedUp && !cur.hasOpenFD() {
				return false // it would open cur by path first
			}
			if op == nfs4.OpReadPlus && cur != nil && !cur.extentsKnown(&d) {
				return false // its extents would be walked with lseek
			}
			if op == nfs4.OpGetattr && s.state.dl.writes.Load() > 0 {
				return false // it may wait for CB_GETATTR (deleg.go)
			}
		case nfs4.OpPutrootfh, nfs4.OpPutpubfh:
			cur = nil
		case nfs4.OpSavefh:
			saved = cur
		case nfs4.OpRestorefh:
			cur = saved
		}
		info := lookupOp(op)
		if info == nil || info.flags&opInline == 0 {
			return false
		}
		info.skip(&d)
	}
	return d.Err() == nil
}

// lookedUp stands, in Inline's scan, for the current filehandle a LOOKUP
// made: a node the scan does not know.
var lookedUp = new(node)

// extentsKnown reports, for Inline, whether the READ_PLUS whose arguments
// d is at (not moved) would find all its extents in n's extent cache, so
// that it walks none with lseek on the loop (op_read.go,
// planSegmentsLoop). It takes n's lock only if free. The cache is checked
// against the last walk's size and this server's changes, not the file's
// ctime, which needs an fstat: a file changed by a local process since is
// found stale when the READ_PLUS runs, and that reply sends its range as
// DATA.
func (n *node) extentsKnown(d *xdr.Decoder) bool {
	p := *d
	p.Skip(stateidLen)
	off, count := p.Uint64(), p.Uint32()
	if p.Err() != nil || off > maxOffset {
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
// when no WRITE follows ops of fixed-shape arguments (SEQUENCE, PUTFH...)
// or head is too short to say.
func WriteAlign(head []byte) (dataOff int, fileOff uint64, ok bool) {
	var d xdr.Decoder
	d.Reset(head)
	if _, ok := decodeCall(&d); !ok || d.Err() != nil {
		return 0, 0, false
	}
	d.Opaque(maxTag)
	d.Uint32()
	n := d.ArrayLen(maxOpsHard, 0)
	for i := 0; i < n && d.Err() == nil; i++ {
		switch op := d.Uint32(); op {
		case nfs4.OpWrite:
			d.Skip(16)
			fileOff = d.Uint64()
			d.Skip(4 + 4) // stable, data length
			return d.Offset(), fileOff, d.Err() == nil
		default:
			// Ops before the WRITE need only be skippable.
			info := lookupOp(op)
			if info == nil || info.skip == nil {
				return 0, 0, false
			}
			info.skip(&d)
		}
	}
	return 0, 0, false
}
