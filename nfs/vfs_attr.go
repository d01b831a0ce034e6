package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// supportedAttrs is what GETATTR and READDIR can report.
var supportedAttrs = nfs4.BitmapOf(
	nfs4.AttrSupportedAttrs, nfs4.AttrType, nfs4.AttrFhExpireType, nfs4.AttrChange,
	nfs4.AttrSize, nfs4.AttrLinkSupport, nfs4.AttrSymlinkSupport, nfs4.AttrNamedAttr,
	nfs4.AttrFsid, nfs4.AttrUniqueHandles, nfs4.AttrLeaseTime, nfs4.AttrRdattrError,
	nfs4.AttrCansettime, nfs4.AttrCaseInsensitive, nfs4.AttrCasePreserving,
	nfs4.AttrChownRestricted, nfs4.AttrFilehandle, nfs4.AttrFileid, nfs4.AttrFilesAvail,
	nfs4.AttrFilesFree, nfs4.AttrFilesTotal, nfs4.AttrHomogeneous, nfs4.AttrMaxfilesize,
	nfs4.AttrMaxlink, nfs4.AttrMaxname, nfs4.AttrMaxread, nfs4.AttrMaxwrite, nfs4.AttrMode,
	nfs4.AttrNoTrunc, nfs4.AttrNumlinks, nfs4.AttrOwner, nfs4.AttrOwnerGroup, nfs4.AttrRawdev,
	nfs4.AttrSpaceAvail, nfs4.AttrSpaceFree, nfs4.AttrSpaceTotal, nfs4.AttrSpaceUsed,
	nfs4.AttrTimeAccess, nfs4.AttrTimeDelta, nfs4.AttrTimeMetadata, nfs4.AttrTimeModify,
	nfs4.AttrMountedOnFileid, nfs4.AttrSuppattrExclcreat,
	nfs4.AttrTimeAccessSet, nfs4.AttrTimeModifySet, nfs4.AttrXattrSupport,
	nfs4.AttrOpenArguments,
	nfs4.AttrACL, nfs4.AttrACLSupport, // acl_attr.go
)

// pnfsAttrs are reported only by a metadata server (pnfs.go): the layout
// types of the filesystem (RFC 8881 section 5.12.2) and the preferred
// I/O block size for layouts (section 5.12.4).
var pnfsAttrs = nfs4.BitmapOf(nfs4.AttrFsLayoutType, nfs4.AttrLayoutBlksize)

// supportedAttrs is what this server reports: pnfsAttrs too when the
// metadata-server role is on.
func (s *Server) supportedAttrs() nfs4.Bitmap {
	if s.mds == nil {
		return supportedAttrs
	}
	return supportedAttrs.Or(pnfsAttrs)
}

// attrs40 are the attributes NFSv4.0 defines (RFC 7530 section 5: up to
// mounted_on_fileid, 55). A 4.0 client is told of and sent no others, as
// knfsd's nfsd_suppattrs[0]: to it their numbers mean nothing.
var attrs40 = nfs4.Bitmap{0xffffffff, 0x00ffffff, 0}

// supportedFor is supportedAttrs as a client of minor version minor sees
// it.
func (s *Server) supportedFor(minor uint32) nfs4.Bitmap {
	if minor == 0 {
		return s.supportedAttrs().And(attrs40)
	}
	return s.supportedAttrs()
}

// writeOnlyAttrs can be set but not read.
var writeOnlyAttrs = nfs4.BitmapOf(nfs4.AttrTimeAccessSet, nfs4.AttrTimeModifySet)

// readableAttrs are what GETATTR and READDIR report.
var readableAttrs = func() nfs4.Bitmap {
	b := supportedAttrs
	for i := range b {
		b[i] &^= writeOnlyAttrs[i]
	}
	return b
}()

// fsAttrs need a statfs of the export.
var fsAttrs = nfs4.BitmapOf(nfs4.AttrFilesAvail, nfs4.AttrFilesFree, nfs4.AttrFilesTotal,
	nfs4.AttrSpaceAvail, nfs4.AttrSpaceFree, nfs4.AttrSpaceTotal)

// attrSource is what attributes are encoded from.
type attrSource struct {
	n  *node
	st *unix.Stat_t
	fs *unix.Statfs_t
	// flavor is the caller's auth flavor: owner strings are names or
	// numbers by it (idmap.go).
	flavor uint32
	minor  uint32 // the COMPOUND's minor version: which attributes exist
	aces   []ace  // the acl attribute, read by fetchACL
}

// aclsOn reports whether the file's filesystem keeps POSIX ACLs (the
// pseudo-root's mode-made ACL is always offered).
func (src *attrSource) aclsOn() bool {
	return src.n.exp == nil || src.n.exp.aclsOn(src.n.fs)
}

// statNode fills st for n: through a cached descriptor when there is one
// (one syscall, pinned, not locked), else by a confined open of its path
// (node.stat).
func (s *Server) statNode(n *node, st *unix.Stat_t) nfs4.Status {
	if n.exp == nil {
		s.pseudoStat(n, st)
		return nfs4.OK
	}
	if err := n.stat(st); err != nil {
		if err == unix.ENOENT || err == unix.ENOTDIR {
			return nfs4.ErrStale
		}
		return errno(err)
	}
	if s.removedUnheld(n, st) {
		// knfsd: a handle of an unlinked inode that nothing holds open
		// no longer decodes (exportfs_decode_fh), so NFS4ERR_STALE.
		return nfs4.ErrStale
	}
	return nfs4.OK
}

func (s *Server) pseudoStat(n *node, st *unix.Stat_t) {
	entries := 0
	if d := s.pseudoDirOf(n); d != nil {
		entries = len(d.entries)
	}
	*st = unix.Stat_t{Ino: n.ino, Mode: unix.S_IFDIR | 0o555, Nlink: uint64(2 + entries)}
	st.Ctim.Sec = s.start.Unix()
	st.Mtim, st.Atim = st.Ctim, st.Ctim
}

func ftype(mode uint32) uint32 {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nfs4.NF4REG
	case unix.S_IFDIR:
		return nfs4.NF4DIR
	case unix.S_IFLNK:
		return nfs4.NF4LNK
	case unix.S_IFBLK:
		return nfs4.NF4BLK
	case unix.S_IFCHR:
		return nfs4.NF4CHR
	case unix.S_IFSOCK:
		return nfs4.NF4SOCK
	case unix.S_IFIFO:
		return nfs4.NF4FIFO
	}
	return nfs4.NF4REG
}

// changeAttr derives the change attribute from ctime: it moves on every
// data or metadata change the filesystem records.
func changeAttr(st *unix.Stat_t) uint64 {
	return uint64(st.Ctim.Sec)*1_000_000_000 + uint64(st.Ctim.Nsec)
}

func encodeTime(e *xdr.Encoder, t unix.Timespec) {
	e.Int64(t.Sec)
	e.Uint32(uint32(t.Nsec))
}

// encodeFattr writes fattr4 for the attributes in req that we support.
func (s *Server) encodeFattr(e *xdr.Encoder, req nfs4.Bitmap, src *attrSource) {
	readable := readableAttrs
	if s.mds != nil && src.n.exp != nil {
		readable = readable.Or(pnfsAttrs)
	}
	got := req.And(readable)
	if src.minor == 0 {
		got = got.And(attrs40)
	}
	if src.n.exp == nil {
		got = got.And(pseudoOK)
	}
	if !got.And(fsAttrs).Empty() && src.fs == nil {
		var fs unix.Statfs_t
		root := s.table().exports[0].rootFD
		if src.n.exp != nil {
			root = src.n.exp.mountFD(src.n.fs)
		}
		if unix.Fstatfs(root, &fs) == nil {
			src.fs = &fs
		} else {
			for i := range fsAttrs {
				got[i] &^= fsAttrs[i]
			}
		}
	}
	if got.Has(nfs4.AttrACL) && (!src.aclsOn() || !s.fetchACL(src)) {
		got[nfs4.AttrACL/32] &^= 1 << (nfs4.AttrACL % 32)
	}
	got.Encode(e)
	lenPos := e.Reserve()
	start := e.Pos()
	for w := 0; w < len(got); w++ {
		for b := 0; b < 32; b++ {
			if got[w]&(1<<b) != 0 {
				s.encodeAttr(e, w*32+b, src)
			}
		}
	}
	e.Patch(lenPos, uint32(e.Pos()-start))
}

// pseudoOK are the attributes the pseudo-root has.
var pseudoOK = func() nfs4.Bitmap {
	b := readableAttrs
	for i := range fsAttrs {
		b[i] &^= fsAttrs[i]
	}
	return b
}()

func (s *Server) encodeAttr(e *xdr.Encoder, a int, src *attrSource) {
	st, n := src.st, src.n
	switch a {
	case nfs4.AttrSupportedAttrs:
		sup := s.supportedFor(src.minor)
		if !src.aclsOn() {
			sup[nfs4.AttrACL/32] &^= 1 << (nfs4.AttrACL % 32)
		}
		sup.Encode(e)
	case nfs4.AttrType:
		e.Uint32(ftype(st.Mode))
	case nfs4.AttrFhExpireType:
		e.Uint32(0) // FH4_PERSISTENT
	case nfs4.AttrChange:
		e.Uint64(changeAttr(st))
	case nfs4.AttrSize:
		e.Uint64(uint64(st.Size))
	case nfs4.AttrLinkSupport, nfs4.AttrSymlinkSupport, nfs4.AttrUniqueHandles,
		nfs4.AttrCansettime, nfs4.AttrCasePreserving, nfs4.AttrChownRestricted,
		nfs4.AttrHomogeneous, nfs4.AttrNoTrunc:
		e.Bool(true)
	case nfs4.AttrNamedAttr, nfs4.AttrCaseInsensitive:
		e.Bool(false)
	case nfs4.AttrFsid:
		if n.exp == nil {
			e.Uint64(0)
			e.Uint64(0)
		} else {
			major, minor := n.exp.attrFsid(n.fs)
			e.Uint64(major)
			e.Uint64(minor)
		}
	case nfs4.AttrLeaseTime:
		e.Uint32(s.cfg.LeaseTime)
	case nfs4.AttrRdattrError:
		e.Uint32(uint32(nfs4.OK))
	case nfs4.AttrFilehandle:
		e.Opaque(n.handle)
	case nfs4.AttrFileid, nfs4.AttrMountedOnFileid:
		e.Uint64(st.Ino)
	case nfs4.AttrFilesAvail:
		e.Uint64(src.fs.Ffree)
	case nfs4.AttrFilesFree:
		e.Uint64(src.fs.Ffree)
	case nfs4.AttrFilesTotal:
		e.Uint64(src.fs.Files)
	case nfs4.AttrMaxfilesize:
		e.Uint64(1<<63 - 1)
	case nfs4.AttrMaxlink:
		e.Uint32(65000)
	case nfs4.AttrMaxname:
		e.Uint32(nfs4.MaxNameLen)
	case nfs4.AttrMaxread, nfs4.AttrMaxwrite:
		e.Uint64(uint64(s.cfg.MaxIO))
	case nfs4.AttrMode:
		e.Uint32(st.Mode & 0o7777)
	case nfs4.AttrNumlinks:
		e.Uint32(uint32(st.Nlink))
	case nfs4.AttrOwner:
		var buf [64]byte
		e.Opaque(s.ids.names.appendOwner(buf[:0], st.Uid, false, src.flavor))
	case nfs4.AttrOwnerGroup:
		var buf [64]byte
		e.Opaque(s.ids.names.appendOwner(buf[:0], st.Gid, true, src.flavor))
	case nfs4.AttrACL:
		s.ids.names.encodeACL(e, src.aces, src.flavor)
	case nfs4.AttrACLSupport:
		if src.aclsOn() {
			e.Uint32(aclSupportAllow | aclSupportDeny)
		} else {
			e.Uint32(0)
		}
	case nfs4.AttrRawdev:
		e.Uint32(unix.Major(st.Rdev))
		e.Uint32(unix.Minor(st.Rdev))
	case nfs4.AttrSpaceAvail:
		e.Uint64(src.fs.Bavail * uint64(src.fs.Bsize))
	case nfs4.AttrSpaceFree:
		e.Uint64(src.fs.Bfree * uint64(src.fs.Bsize))
	case nfs4.AttrSpaceTotal:
		e.Uint64(src.fs.Blocks * uint64(src.fs.Bsize))
	case nfs4.AttrSpaceUsed:
		e.Uint64(uint64(st.Blocks) * 512)
	case nfs4.AttrTimeAccess:
		encodeTime(e, st.Atim)
	case nfs4.AttrTimeDelta:
		e.Int64(0)
		e.Uint32(1)
	case nfs4.AttrTimeMetadata:
		encodeTime(e, st.Ctim)
	case nfs4.AttrTimeModify:
		encodeTime(e, st.Mtim)
	case nfs4.AttrSuppattrExclcreat:
		exclcreatAttrs.Encode(e)
	case nfs4.AttrOpenArguments:
		encodeOpenArguments(e)
	case nfs4.AttrFsLayoutType:
		e.Uint32(1)
		e.Uint32(nfs4.LayoutFlexFiles)
	case nfs4.AttrLayoutBlksize:
		e.Uint32(uint32(s.cfg.MaxIO))
	case nfs4.AttrXattrSupport:
		// RFC 8276: user xattrs through GETXATTR and friends (op_xattr.go).
		e.Bool(true)
	}
}
