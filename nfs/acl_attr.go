package nfs

import (
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// The acl (FATTR4_ACL) and aclsupport (FATTR4_ACLSUPPORT) attributes:
// GETATTR reports a file's POSIX ACLs as an NFSv4 ACL (acl_map.go),
// SETATTR (and CREATE, OPEN) sets one, and owner strings in both go
// through the name mapping (idmap.go). The permission checks stay the
// kernel's: it enforces the POSIX ACLs set here.

// aclAttrs are the attributes this file adds to the supported ones.
var aclAttrs = nfs4.BitmapOf(nfs4.AttrACL, nfs4.AttrACLSupport)

// maxACEs bounds the ACEs taken from a client: more than a POSIX ACL
// could come back as (the mapping makes at most two per entry).
const maxACEs = 2 * posixACLMaxEntries

// maxWhoLen bounds an ACE's who string, as the owner strings.
const maxWhoLen = 1024

// statusErr carries an NFS status through functions that return an error
// (applyAttrs); errno returns it as it is.
type statusErr nfs4.Status

func (e statusErr) Error() string { return "nfs: status " + itoa(int(e)) }

// errACLNotMapped is errACLUnmappable on the wire: knfsd answers
// NFS4ERR_ATTRNOTSUPP when nfs4_acl_nfsv4_to_posix fails with -EINVAL.
const errACLNotMapped = statusErr(nfs4.ErrAttrnotsupp)

// wireACE is an nfsace4 as decoded, before its who is resolved.
type wireACE struct {
	typ, flag, mask uint32
	who             string
}

// decodeACL reads fattr4_acl (nfsace4<>).
func decodeACL(d *xdr.Decoder) ([]wireACE, nfs4.Status) {
	n := d.Uint32()
	if d.Err() != nil {
		return nil, nfs4.ErrBadXDR
	}
	if n > maxACEs || uint64(n)*16 > uint64(d.Remaining()) {
		return nil, nfs4.ErrBadXDR
	}
	aces := make([]wireACE, n)
	for i := range aces {
		aces[i].typ = d.Uint32()
		aces[i].flag = d.Uint32()
		aces[i].mask = d.Uint32()
		aces[i].who = string(d.String(maxWhoLen))
		if d.Err() != nil {
			return nil, nfs4.ErrBadXDR
		}
	}
	return aces, nfs4.OK
}

// resolveACL turns the decoded ACEs' who strings into ids: the special
// OWNER@, GROUP@ and EVERYONE@, else a user (a group with
// IDENTIFIER_GROUP) through the name mapping; one it cannot map is
// NFS4ERR_BADOWNER, as knfsd's nfsd4_decode_nfsace.
func (m *idNames) resolveACL(in []wireACE) ([]ace, nfs4.Status) {
	out := make([]ace, len(in))
	for i, w := range in {
		out[i] = ace{typ: w.typ, flag: w.flag, mask: w.mask}
		switch w.who {
		case whoOwnerStr:
			out[i].who = whoOwner
		case whoGroupStr:
			out[i].who = whoGroup
		case whoEveryoneStr:
			out[i].who = whoEveryone
		default:
			id, s := m.parse(w.who, w.flag&aceIdentifierGroup != 0)
			if s != nfs4.OK {
				return nil, s
			}
			out[i].who, out[i].id = whoNamed, id
		}
	}
	return out, nfs4.OK
}

// encodeACL writes fattr4_acl, named whos as a caller of flavor sees
// owner strings.
func (m *idNames) encodeACL(e *xdr.Encoder, aces []ace, flavor uint32) {
	e.Uint32(uint32(len(aces)))
	var buf [64]byte
	for _, a := range aces {
		e.Uint32(a.typ)
		e.Uint32(a.flag)
		e.Uint32(a.mask)
		switch a.who {
		case whoOwner:
			e.String(whoOwnerStr)
		case whoGroup:
			e.String(whoGroupStr)
		case whoEveryone:
			e.String(whoEveryoneStr)
		default:
			e.Opaque(m.appendOwner(buf[:0], a.id, a.flag&aceIdentifierGroup != 0, flavor))
		}
	}
}

// resolveNewAttrs maps the owner strings of a (owner, owner_group, the
// ACL's whos) that decodeNewAttrs left as names, through the server's
// name mapping. SETATTR, CREATE and OPEN call it before applyAttrs.
func (c *compound) resolveNewAttrs(a *newAttrs) nfs4.Status {
	m := c.s.ids.names
	if a.ownerName != "" {
		id, s := m.parse(a.ownerName, false)
		if s != nfs4.OK {
			return s
		}
		a.uid, a.ownerName = id, ""
	}
	if a.groupName != "" {
		id, s := m.parse(a.groupName, true)
		if s != nfs4.OK {
			return s
		}
		a.gid, a.groupName = id, ""
	}
	if a.mask.Has(nfs4.AttrACL) && a.aces == nil {
		aces, s := m.resolveACL(a.wireACL)
		if s != nfs4.OK {
			return s
		}
		a.aces = aces
	}
	return nfs4.OK
}

// applyACL sets a's ACL on the file open as fd (path is its /proc link),
// as the thread's (the caller's) credentials.
func applyACL(fd int, path string, a *newAttrs) error {
	if a.aces == nil {
		return statusErr(nfs4.ErrBadowner) // not resolved (resolveNewAttrs)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		// No ACLs on a symlink (ext4's symlink inodes have no set_acl).
		return errACLNotMapped
	}
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	acc, def, err := nfs4ToPosix(a.aces, dir)
	if err != nil {
		return errACLNotMapped
	}
	if err := setPosixACLs(path, acc, def, dir); err != nil {
		if err == unix.EOPNOTSUPP {
			return errACLNotMapped // the filesystem keeps no POSIX ACLs
		}
		return err
	}
	return nil
}

// fetchACL reads the ACL of src's file for encodeFattr; false when it
// cannot be read (the attribute is then left out of the answer).
func (s *Server) fetchACL(src *attrSource) bool {
	n, st := src.n, src.st
	if n.exp == nil {
		src.aces = posixToNFS4(posixFromMode(st.Mode), nil, st.Mode&unix.S_IFMT == unix.S_IFDIR)
		return true
	}
	fd, release, err := n.anyFD()
	if err != nil {
		return false
	}
	defer release()
	aces, err := fileNFS4ACL(fd, st)
	if err != nil {
		return false
	}
	src.aces = aces
	return true
}
