package nfs

import (
	"errors"
	"sort"
)

// NFSv4 ACLs (RFC 8881 section 6) mapped to and from the POSIX ACLs of
// the exported filesystem, as knfsd's fs/nfsd/nfs4acl.c does (and so the
// Linux client's nfs4_getfacl/nfs4_setfacl see the same ACLs from this
// server as from knfsd):
//
//   - A file's access ACL (or, without one, its mode) becomes ALLOW/DENY
//     pairs for OWNER@, named users, GROUP@, named groups and
//     EVERYONE@; a directory's default ACL follows as the same with
//     FILE_INHERIT|DIRECTORY_INHERIT|INHERIT_ONLY.
//   - An NFSv4 ACL is folded, ACE by ACE, into allow and deny sets per
//     entity and turned back into POSIX entries, erring on the side of
//     denying: a permission is granted only when all of the NFSv4 bits
//     that make it up are allowed. What POSIX cannot express is refused
//     (errACLUnmappable, NFS4ERR_ATTRNOTSUPP as knfsd answers -EINVAL
//     from the mapping): AUDIT and ALARM ACEs, flags other than the
//     inheritance ones and IDENTIFIER_GROUP, inheritable ACEs on a
//     non-directory, and explicit DENYs of what POSIX always grants
//     (READ_ATTRIBUTES, READ_ACL; WRITE_ATTRIBUTES, WRITE_ACL for the
//     owner), and (unlike knfsd, which applies it) INHERIT_ONLY without
//     an inheritance flag. Nothing is ever widened.

// ACE types (acetype4).
const (
	aceAllowed uint32 = 0
	aceDenied  uint32 = 1
	aceAudit   uint32 = 2
	aceAlarm   uint32 = 3
)

// ACE flags (aceflag4).
const (
	aceFileInherit      uint32 = 0x01
	aceDirectoryInherit uint32 = 0x02
	aceNoPropagate      uint32 = 0x04
	aceInheritOnly      uint32 = 0x08
	aceIdentifierGroup  uint32 = 0x40

	aceInheritanceFlags = aceFileInherit | aceDirectoryInherit
	aceSupportedFlags   = aceInheritanceFlags | aceInheritOnly | aceIdentifierGroup
)

// ACE access mask bits (acemask4).
const (
	aceReadData        uint32 = 0x00000001
	aceWriteData       uint32 = 0x00000002
	aceAppendData      uint32 = 0x00000004
	aceReadNamedAttrs  uint32 = 0x00000008
	aceWriteNamedAttrs uint32 = 0x00000010
	aceExecute         uint32 = 0x00000020
	aceDeleteChild     uint32 = 0x00000040
	aceReadAttributes  uint32 = 0x00000080
	aceWriteAttributes uint32 = 0x00000100
	aceDelete          uint32 = 0x00010000
	aceReadACL         uint32 = 0x00020000
	aceWriteACL        uint32 = 0x00040000
	aceWriteOwner      uint32 = 0x00080000
	aceSynchronize     uint32 = 0x00100000

	aceMaskAll = 0x001F01FF
)

// aclsupport4 bits.
const (
	aclSupportAllow uint32 = 0x1
	aclSupportDeny  uint32 = 0x2
)

// Mode bit translations (nfs4acl.c).
const (
	nfs4ReadMode    = aceReadData
	nfs4WriteMode   = aceWriteData | aceAppendData
	nfs4ExecuteMode = aceExecute
	nfs4AnyoneMode  = aceReadAttributes | aceReadACL | aceSynchronize
	nfs4OwnerMode   = aceWriteAttributes | aceWriteACL
)

// Who an ACE is for.
const (
	whoNamed = iota
	whoOwner
	whoGroup
	whoEveryone
)

// Special who strings.
const (
	whoOwnerStr    = "OWNER@"
	whoGroupStr    = "GROUP@"
	whoEveryoneStr = "EVERYONE@"
)

// ace is one NFSv4 ACE with its who resolved: a special who, or a named
// uid (gid when flag has aceIdentifierGroup).
type ace struct {
	typ, flag, mask uint32
	who             int
	id              uint32
}

// POSIX ACL tags and permissions (include/uapi/linux/posix_acl.h).
const (
	aclUserObj  uint16 = 0x01
	aclUser     uint16 = 0x02
	aclGroupObj uint16 = 0x04
	aclGroup    uint16 = 0x08
	aclMask     uint16 = 0x10
	aclOther    uint16 = 0x20

	aclRead    uint16 = 4
	aclWrite   uint16 = 2
	aclExecute uint16 = 1

	aclUndefinedID = 0xFFFFFFFF
)

// posixEntry is one POSIX ACL entry; id is meaningful for aclUser and
// aclGroup only.
type posixEntry struct {
	tag, perm uint16
	id        uint32
}

// pACL is a POSIX ACL in the kernel's canonical order: USER_OBJ,
// USERs by uid, GROUP_OBJ, GROUPs by gid, MASK, OTHER.
type pACL []posixEntry

// errACLUnmappable is an ACL that POSIX ACLs cannot hold (knfsd: -EINVAL
// from nfs4_acl_nfsv4_to_posix, NFS4ERR_ATTRNOTSUPP).
var errACLUnmappable = errors.New("nfs: ACL cannot be mapped to a POSIX ACL")

// errPosixInvalid is a POSIX ACL not in the form posix_acl_valid allows.
var errPosixInvalid = errors.New("nfs: invalid POSIX ACL")

// posixFromMode is posix_acl_from_mode: the three entries a mode means.
func posixFromMode(mode uint32) pACL {
	return pACL{
		{tag: aclUserObj, perm: uint16(mode>>6) & 7, id: aclUndefinedID},
		{tag: aclGroupObj, perm: uint16(mode>>3) & 7, id: aclUndefinedID},
		{tag: aclOther, perm: uint16(mode) & 7, id: aclUndefinedID},
	}
}

// valid checks what posix_acl_valid checks: the canonical order, one
// USER_OBJ, GROUP_OBJ and OTHER, named entries by increasing id without
// repeats, and a MASK exactly when there are named entries.
func (p pACL) valid() error {
	state := aclUserObj
	named := 0
	var last uint32
	haveLast := false
	mask := false
	for _, e := range p {
		if e.perm&^7 != 0 {
			return errPosixInvalid
		}
		switch e.tag {
		case aclUserObj:
			if state != aclUserObj {
				return errPosixInvalid
			}
			state = aclUser
		case aclUser:
			if state != aclUser || haveLast && e.id <= last {
				return errPosixInvalid
			}
			last, haveLast = e.id, true
			named++
		case aclGroupObj:
			if state != aclUser {
				return errPosixInvalid
			}
			state = aclGroup
			haveLast = false
		case aclGroup:
			if state != aclGroup || haveLast && e.id <= last {
				return errPosixInvalid
			}
			last, haveLast = e.id, true
			named++
		case aclMask:
			if state != aclGroup {
				return errPosixInvalid
			}
			state = aclOther
			mask = true
		case aclOther:
			if state == aclGroup && named == 0 {
				state = aclOther
			}
			if state != aclOther {
				return errPosixInvalid
			}
			state = 0
		default:
			return errPosixInvalid
		}
	}
	if state != 0 || named > 0 && !mask {
		return errPosixInvalid
	}
	return nil
}

// Flags for the mapping (nfs4acl.c).
const (
	mapDefault = 0x01 // the directory's default ACL
	mapDir     = 0x02 // the file is a directory
	mapOwner   = 0x04 // the entry is the owner's
)

func maskFromPosix(perm uint16, flags int) uint32 {
	mask := nfs4AnyoneMode
	if flags&mapOwner != 0 {
		mask |= nfs4OwnerMode
	}
	return mask | denyMaskFromPosix(perm, flags)
}

func denyMaskFromPosix(perm uint16, flags int) uint32 {
	var mask uint32
	if perm&aclRead != 0 {
		mask |= nfs4ReadMode
	}
	if perm&aclWrite != 0 {
		mask |= nfs4WriteMode
		if flags&mapDir != 0 {
			mask |= aceDeleteChild
		}
	}
	if perm&aclExecute != 0 {
		mask |= nfs4ExecuteMode
	}
	return mask
}

// lowModeFromNFS4 is the pessimistic mapping back: a POSIX permission
// only when every NFSv4 bit it stands for is in perm.
func lowModeFromNFS4(perm uint32, flags int) uint16 {
	writeMode := nfs4WriteMode
	if flags&mapDir != 0 {
		writeMode |= aceDeleteChild
	}
	var mode uint16
	if perm&nfs4ReadMode == nfs4ReadMode {
		mode |= aclRead
	}
	if perm&writeMode == writeMode {
		mode |= aclWrite
	}
	if perm&nfs4ExecuteMode == nfs4ExecuteMode {
		mode |= aclExecute
	}
	return mode
}

// posixToNFS4 maps a file's access ACL and (directories) default ACL to
// an NFSv4 ACL, as nfsd4_get_nfs4_acl. Both must be valid; def may be
// nil.
func posixToNFS4(acc, def pACL, dir bool) []ace {
	flags := 0
	if dir {
		flags = mapDir
	}
	out := make([]ace, 0, 2*(len(acc)+len(def)))
	out = posixToNFS4One(out, acc, flags)
	if dir && len(def) > 0 {
		out = posixToNFS4One(out, def, flags|mapDefault)
	}
	return out
}

type posixSummary struct {
	owner, users, group, groups, other, mask uint16
}

func summarize(p pACL) posixSummary {
	s := posixSummary{mask: 7}
	for _, e := range p {
		switch e.tag {
		case aclUserObj:
			s.owner = e.perm
		case aclGroupObj:
			s.group = e.perm
		case aclUser:
			s.users |= e.perm
		case aclGroup:
			s.groups |= e.perm
		case aclOther:
			s.other = e.perm
		case aclMask:
			s.mask = e.perm
		}
	}
	s.users &= s.mask
	s.group &= s.mask
	s.groups &= s.mask
	return s
}

// posixToNFS4One is _posix_to_nfsv4_one: p (valid, at least 3 entries)
// appended to out as ALLOW/DENY ACEs.
func posixToNFS4One(out []ace, p pACL, flags int) []ace {
	var eflag uint32
	if flags&mapDefault != 0 {
		eflag = aceInheritanceFlags | aceInheritOnly
	}
	pas := summarize(p)
	i := 0

	// Deny the owner what later entries would grant it but it has not.
	deny := ^pas.owner & (pas.users | pas.group | pas.groups | pas.other) & 7
	if deny != 0 {
		out = append(out, ace{typ: aceDenied, flag: eflag, mask: denyMaskFromPosix(deny, flags), who: whoOwner})
	}
	out = append(out, ace{typ: aceAllowed, flag: eflag, mask: maskFromPosix(p[i].perm, flags|mapOwner), who: whoOwner})
	i++

	for i < len(p) && p[i].tag == aclUser {
		perm := p[i].perm & pas.mask
		deny := ^perm & (pas.groups | pas.group | pas.other) & 7
		if deny != 0 {
			out = append(out, ace{typ: aceDenied, flag: eflag, mask: denyMaskFromPosix(deny, flags), who: whoNamed, id: p[i].id})
		}
		out = append(out, ace{typ: aceAllowed, flag: eflag, mask: maskFromPosix(perm, flags), who: whoNamed, id: p[i].id})
		i++
	}

	// Groups: all the allows first, then the denies, since a user can
	// be in more than one group.
	groupObj := i
	out = append(out, ace{typ: aceAllowed, flag: eflag, mask: maskFromPosix(pas.group, flags), who: whoGroup})
	i++
	for i < len(p) && p[i].tag == aclGroup {
		out = append(out, ace{typ: aceAllowed, flag: eflag | aceIdentifierGroup,
			mask: maskFromPosix(p[i].perm&pas.mask, flags), who: whoNamed, id: p[i].id})
		i++
	}
	i = groupObj
	if deny := ^pas.group & pas.other & 7; deny != 0 {
		out = append(out, ace{typ: aceDenied, flag: eflag, mask: denyMaskFromPosix(deny, flags), who: whoGroup})
	}
	i++
	for i < len(p) && p[i].tag == aclGroup {
		if deny := ^(p[i].perm & pas.mask) & pas.other & 7; deny != 0 {
			out = append(out, ace{typ: aceDenied, flag: eflag | aceIdentifierGroup,
				mask: denyMaskFromPosix(deny, flags), who: whoNamed, id: p[i].id})
		}
		i++
	}
	if i < len(p) && p[i].tag == aclMask {
		i++
	}
	var other uint16
	if i < len(p) {
		other = p[i].perm
	}
	return append(out, ace{typ: aceAllowed, flag: eflag, mask: maskFromPosix(other, flags), who: whoEveryone})
}

// aceState is the allow and deny bits gathered so far for one entity.
type aceState struct{ allow, deny uint32 }

// allowBits allows the bits of mask not already denied.
func (a *aceState) allowBits(mask uint32) { a.allow |= mask &^ a.deny }

// denyBits denies the bits of mask not already allowed.
func (a *aceState) denyBits(mask uint32) { a.deny |= mask &^ a.allow }

type idState struct {
	id    uint32
	perms aceState
}

// posixState is posix_acl_state: what an ACL gives each entity so far.
type posixState struct {
	empty                               bool
	owner, group, other, everyone, mask aceState
	users, groups                       []idState
}

func newPosixState() posixState { return posixState{empty: true} }

func (s *posixState) find(list *[]idState, id uint32) int {
	for i := range *list {
		if (*list)[i].id == id {
			return i
		}
	}
	*list = append(*list, idState{id: id, perms: s.everyone})
	return len(*list) - 1
}

func denyAll(list []idState, mask uint32) {
	for i := range list {
		list[i].perms.denyBits(mask)
	}
}

func allowAll(list []idState, mask uint32) {
	for i := range list {
		list[i].perms.allowBits(mask)
	}
}

// process is process_one_v4_ace.
func (s *posixState) process(a *ace) {
	mask := a.mask
	allow := a.typ == aceAllowed
	s.empty = false
	switch {
	case a.who == whoOwner:
		if allow {
			s.owner.allowBits(mask)
		} else {
			s.owner.denyBits(mask)
		}
	case a.who == whoNamed && a.flag&aceIdentifierGroup == 0:
		i := s.find(&s.users, a.id)
		if allow {
			s.users[i].perms.allowBits(mask)
		} else {
			s.users[i].perms.denyBits(mask)
			s.owner.denyBits(s.users[i].perms.deny)
		}
	case a.who == whoGroup:
		if allow {
			s.group.allowBits(mask)
		} else {
			s.group.denyBits(mask)
			mask = s.group.deny
			s.owner.denyBits(mask)
			s.everyone.denyBits(mask)
			denyAll(s.users, mask)
			denyAll(s.groups, mask)
		}
	case a.who == whoNamed:
		i := s.find(&s.groups, a.id)
		if allow {
			s.groups[i].perms.allowBits(mask)
		} else {
			s.groups[i].perms.denyBits(mask)
			mask = s.groups[i].perms.deny
			s.owner.denyBits(mask)
			s.group.denyBits(mask)
			s.everyone.denyBits(mask)
			denyAll(s.users, mask)
			denyAll(s.groups, mask)
		}
	case a.who == whoEveryone:
		if allow {
			s.owner.allowBits(mask)
			s.group.allowBits(mask)
			s.other.allowBits(mask)
			s.everyone.allowBits(mask)
			allowAll(s.users, mask)
			allowAll(s.groups, mask)
		} else {
			s.owner.denyBits(mask)
			s.group.denyBits(mask)
			s.other.denyBits(mask)
			s.everyone.denyBits(mask)
			denyAll(s.users, mask)
			denyAll(s.groups, mask)
		}
	}
}

// checkDeny refuses explicit DENYs of what POSIX always grants.
func checkDeny(mask uint32, owner bool) error {
	if mask&(aceReadAttributes|aceReadACL) != 0 {
		return errACLUnmappable
	}
	if owner && mask&(aceWriteAttributes|aceWriteACL) != 0 {
		return errACLUnmappable
	}
	return nil
}

// toACL is posix_state_to_acl. A default state with no ACEs is nil (no
// default ACL).
func (s *posixState) toACL(flags int) (pACL, error) {
	if s.empty && flags&mapDefault != 0 {
		return nil, nil
	}
	p := make(pACL, 0, 4+len(s.users)+len(s.groups))
	if err := checkDeny(s.owner.deny, true); err != nil {
		return nil, err
	}
	p = append(p, posixEntry{tag: aclUserObj, perm: lowModeFromNFS4(s.owner.allow, flags), id: aclUndefinedID})
	var mask uint32
	users := append([]idState(nil), s.users...)
	sort.Slice(users, func(i, j int) bool { return users[i].id < users[j].id })
	for _, u := range users {
		if err := checkDeny(u.perms.deny, false); err != nil {
			return nil, err
		}
		p = append(p, posixEntry{tag: aclUser, perm: lowModeFromNFS4(u.perms.allow, flags), id: u.id})
		mask |= u.perms.allow
	}
	if err := checkDeny(s.group.deny, false); err != nil {
		return nil, err
	}
	p = append(p, posixEntry{tag: aclGroupObj, perm: lowModeFromNFS4(s.group.allow, flags), id: aclUndefinedID})
	mask |= s.group.allow
	groups := append([]idState(nil), s.groups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].id < groups[j].id })
	for _, g := range groups {
		if err := checkDeny(g.perms.deny, false); err != nil {
			return nil, err
		}
		p = append(p, posixEntry{tag: aclGroup, perm: lowModeFromNFS4(g.perms.allow, flags), id: g.id})
		mask |= g.perms.allow
	}
	if len(users) > 0 || len(groups) > 0 {
		p = append(p, posixEntry{tag: aclMask, perm: lowModeFromNFS4(mask, flags), id: aclUndefinedID})
	}
	if err := checkDeny(s.other.deny, false); err != nil {
		return nil, err
	}
	p = append(p, posixEntry{tag: aclOther, perm: lowModeFromNFS4(s.other.allow, flags), id: aclUndefinedID})
	return p, nil
}

// nfs4ToPosix maps an NFSv4 ACL to the access ACL and (directories) the
// default ACL to set, as nfs4_acl_nfsv4_to_posix; def nil means no
// default ACL. What cannot be mapped is errACLUnmappable.
func nfs4ToPosix(aces []ace, dir bool) (acc, def pACL, err error) {
	flags := 0
	if dir {
		flags = mapDir
	}
	eff, dflt := newPosixState(), newPosixState()
	for i := range aces {
		a := &aces[i]
		if a.typ != aceAllowed && a.typ != aceDenied {
			return nil, nil, errACLUnmappable
		}
		if a.flag&^aceSupportedFlags != 0 {
			return nil, nil, errACLUnmappable
		}
		if a.who < whoNamed || a.who > whoEveryone {
			return nil, nil, errACLUnmappable
		}
		if a.flag&aceInheritanceFlags == 0 {
			if a.flag&aceInheritOnly != 0 {
				// Applies to nothing (RFC 8881 section 6.2.1.4.1);
				// knfsd takes it as effective, which could grant what
				// the client meant for no one: refused instead.
				return nil, nil, errACLUnmappable
			}
			eff.process(a)
			continue
		}
		if !dir {
			return nil, nil, errACLUnmappable
		}
		// One of FILE_INHERIT or DIRECTORY_INHERIT alone turns on the
		// other too (RFC 3530 allows it, knfsd does it).
		dflt.process(a)
		if a.flag&aceInheritOnly == 0 {
			eff.process(a)
		}
	}
	if acc, err = eff.toACL(flags); err != nil {
		return nil, nil, err
	}
	if def, err = dflt.toACL(flags | mapDefault); err != nil {
		return nil, nil, err
	}
	return acc, def, nil
}
