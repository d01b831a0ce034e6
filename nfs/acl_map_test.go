package nfs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// aceString writes an ACE as nfs4_getfacl does (type:flags:who:mask),
// named whos as u<uid> or g<gid>.
func aceString(a ace) string {
	typ := map[uint32]string{aceAllowed: "A", aceDenied: "D", aceAudit: "U", aceAlarm: "L"}[a.typ]
	var f, m strings.Builder
	for _, b := range []struct {
		bit uint32
		c   byte
	}{{aceFileInherit, 'f'}, {aceDirectoryInherit, 'd'}, {aceNoPropagate, 'n'}, {aceInheritOnly, 'i'}, {aceIdentifierGroup, 'g'}} {
		if a.flag&b.bit != 0 {
			f.WriteByte(b.c)
		}
	}
	for _, b := range []struct {
		bit uint32
		c   byte
	}{{aceReadData, 'r'}, {aceWriteData, 'w'}, {aceAppendData, 'a'}, {aceExecute, 'x'}, {aceDeleteChild, 'D'},
		{aceDelete, 'd'}, {aceReadAttributes, 't'}, {aceWriteAttributes, 'T'}, {aceReadNamedAttrs, 'n'},
		{aceWriteNamedAttrs, 'N'}, {aceReadACL, 'c'}, {aceWriteACL, 'C'}, {aceWriteOwner, 'o'}, {aceSynchronize, 'y'}} {
		if a.mask&b.bit != 0 {
			m.WriteByte(b.c)
		}
	}
	who := map[int]string{whoOwner: whoOwnerStr, whoGroup: whoGroupStr, whoEveryone: whoEveryoneStr}[a.who]
	if a.who == whoNamed {
		who = fmt.Sprintf("u%d", a.id)
		if a.flag&aceIdentifierGroup != 0 {
			who = fmt.Sprintf("g%d", a.id)
		}
	}
	return fmt.Sprintf("%s:%s:%s:%s", typ, f.String(), who, m.String())
}

// parseACE reads aceString's form back.
func parseACE(t testing.TB, s string) ace {
	t.Helper()
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		t.Fatalf("bad ACE %q", s)
	}
	var a ace
	a.typ = map[string]uint32{"A": aceAllowed, "D": aceDenied, "U": aceAudit, "L": aceAlarm}[parts[0]]
	for _, c := range parts[1] {
		a.flag |= map[rune]uint32{'f': aceFileInherit, 'd': aceDirectoryInherit, 'n': aceNoPropagate,
			'i': aceInheritOnly, 'g': aceIdentifierGroup}[c]
	}
	for _, c := range parts[3] {
		a.mask |= map[rune]uint32{'r': aceReadData, 'w': aceWriteData, 'a': aceAppendData, 'x': aceExecute,
			'D': aceDeleteChild, 'd': aceDelete, 't': aceReadAttributes, 'T': aceWriteAttributes,
			'n': aceReadNamedAttrs, 'N': aceWriteNamedAttrs, 'c': aceReadACL, 'C': aceWriteACL,
			'o': aceWriteOwner, 'y': aceSynchronize}[c]
	}
	switch w := parts[2]; {
	case w == whoOwnerStr:
		a.who = whoOwner
	case w == whoGroupStr:
		a.who = whoGroup
	case w == whoEveryoneStr:
		a.who = whoEveryone
	default:
		a.who = whoNamed
		fmt.Sscanf(w[1:], "%d", &a.id)
	}
	return a
}

// posixString writes a POSIX ACL as getfacl's short form.
func posixString(p pACL) string {
	var out []string
	for _, e := range p {
		perm := []byte("---")
		if e.perm&aclRead != 0 {
			perm[0] = 'r'
		}
		if e.perm&aclWrite != 0 {
			perm[1] = 'w'
		}
		if e.perm&aclExecute != 0 {
			perm[2] = 'x'
		}
		switch e.tag {
		case aclUserObj:
			out = append(out, "u::"+string(perm))
		case aclUser:
			out = append(out, fmt.Sprintf("u:%d:%s", e.id, perm))
		case aclGroupObj:
			out = append(out, "g::"+string(perm))
		case aclGroup:
			out = append(out, fmt.Sprintf("g:%d:%s", e.id, perm))
		case aclMask:
			out = append(out, "m::"+string(perm))
		case aclOther:
			out = append(out, "o::"+string(perm))
		}
	}
	return strings.Join(out, ",")
}

// parsePosix reads posixString's form back.
func parsePosix(t testing.TB, s string) pACL {
	t.Helper()
	if s == "" {
		return nil
	}
	var p pACL
	for _, f := range strings.Split(s, ",") {
		parts := strings.Split(f, ":")
		e := posixEntry{id: aclUndefinedID}
		for i, c := range parts[2] {
			if c != '-' {
				e.perm |= []uint16{aclRead, aclWrite, aclExecute}[i]
			}
		}
		named := parts[1] != ""
		switch parts[0] {
		case "u":
			e.tag = aclUserObj
			if named {
				e.tag = aclUser
			}
		case "g":
			e.tag = aclGroupObj
			if named {
				e.tag = aclGroup
			}
		case "m":
			e.tag = aclMask
		case "o":
			e.tag = aclOther
		}
		if named {
			fmt.Sscanf(parts[1], "%d", &e.id)
		}
		p = append(p, e)
	}
	if err := p.valid(); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return p
}

// effective is what p grants each of its entries (named ones and the
// owning group limited by the mask), by tag and id.
func effective(p pACL) map[[2]uint32]uint16 {
	mask := uint16(7)
	for _, e := range p {
		if e.tag == aclMask {
			mask = e.perm
		}
	}
	out := map[[2]uint32]uint16{}
	for _, e := range p {
		switch e.tag {
		case aclUser, aclGroup, aclGroupObj:
			out[[2]uint32{uint32(e.tag), e.id}] = e.perm & mask
		case aclUserObj, aclOther:
			out[[2]uint32{uint32(e.tag), e.id}] = e.perm
		}
	}
	return out
}

func aceStrings(aces []ace) []string {
	out := make([]string, len(aces))
	for i, a := range aces {
		out[i] = aceString(a)
	}
	return out
}

// TestPosixToNFS4: the ACEs knfsd's nfs4acl.c makes of modes, access ACLs
// and default ACLs (the 0644 case is what nfs4_getfacl shows from knfsd).
func TestPosixToNFS4(t *testing.T) {
	for _, tc := range []struct {
		name     string
		acc, def string
		dir      bool
		want     []string
	}{
		{name: "0644", acc: "u::rw-,g::r--,o::r--",
			want: []string{"A::OWNER@:rwatTcCy", "A::GROUP@:rtcy", "A::EVERYONE@:rtcy"}},
		{name: "0755 dir", acc: "u::rwx,g::r-x,o::r-x", dir: true,
			want: []string{"A::OWNER@:rwaxDtTcCy", "A::GROUP@:rxtcy", "A::EVERYONE@:rxtcy"}},
		{name: "0604 denies the group", acc: "u::rw-,g::---,o::r--",
			want: []string{"A::OWNER@:rwatTcCy", "A::GROUP@:tcy", "D::GROUP@:r", "A::EVERYONE@:rtcy"}},
		{name: "0070 denies the owner", acc: "u::---,g::rwx,o::---",
			want: []string{"D::OWNER@:rwax", "A::OWNER@:tTcCy", "A::GROUP@:rwaxtcy", "A::EVERYONE@:tcy"}},
		{name: "named user and group under a mask",
			acc: "u::rwx,u:1000:rwx,g::r-x,g:50:rw-,m::r-x,o::---",
			want: []string{"A::OWNER@:rwaxtTcCy", "A::u1000:rxtcy", "A::GROUP@:rxtcy", "A:g:g50:rtcy",
				"A::EVERYONE@:tcy"}},
		{name: "named user denied what others get",
			acc:  "u::rwx,u:1000:---,g::r--,m::rwx,o::r--",
			want: []string{"A::OWNER@:rwaxtTcCy", "D::u1000:r", "A::u1000:tcy", "A::GROUP@:rtcy", "A::EVERYONE@:rtcy"}},
		{name: "directory default ACL", dir: true,
			acc: "u::rwx,g::r-x,o::---", def: "u::rwx,u:1000:rwx,g::r-x,m::rwx,o::---",
			want: []string{"A::OWNER@:rwaxDtTcCy", "A::GROUP@:rxtcy", "A::EVERYONE@:tcy",
				"A:fdi:OWNER@:rwaxDtTcCy", "A:fdi:u1000:rwaxDtcy", "A:fdi:GROUP@:rxtcy", "A:fdi:EVERYONE@:tcy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := aceStrings(posixToNFS4(parsePosix(t, tc.acc), parsePosix(t, tc.def), tc.dir))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			// And back: the same permissions for everyone (a named
			// entry's bits beyond the mask, and the mask beyond the
			// entries, come back trimmed, as with knfsd).
			acc, def, err := nfs4ToPosix(posixToNFS4(parsePosix(t, tc.acc), parsePosix(t, tc.def), tc.dir), tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(effective(acc), effective(parsePosix(t, tc.acc))) ||
				!maps.Equal(effective(def), effective(parsePosix(t, tc.def))) {
				t.Fatalf("round trip: %s / %s, want %s / %s (ACEs %q)", posixString(acc), posixString(def), tc.acc, tc.def, got)
			}
		})
	}
}

// TestNFS4ToPosix: ACLs as nfs4_setfacl sends them become the POSIX ACLs
// knfsd would set; what POSIX cannot hold is refused, and partial grants
// are never rounded up.
func TestNFS4ToPosix(t *testing.T) {
	for _, tc := range []struct {
		name     string
		aces     []string
		dir      bool
		acc, def string // "": none
		err      bool
	}{
		{name: "0644", aces: []string{"A::OWNER@:rwatTcCy", "A::GROUP@:rtcy", "A::EVERYONE@:rtcy"},
			acc: "u::rw-,g::r--,o::r--"},
		{name: "named user gets a mask", aces: []string{"A::OWNER@:rwatTcCy", "A::u1000:rx", "A::GROUP@:r", "A::EVERYONE@:"},
			acc: "u::rw-,u:1000:r-x,g::r--,m::r-x,o::---"},
		{name: "named users sorted", aces: []string{"A::OWNER@:rwa", "A::u2000:r", "A::u1000:r", "A:g:g70:r", "A:g:g60:rwa", "A::GROUP@:", "A::EVERYONE@:"},
			acc: "u::rw-,u:1000:r--,u:2000:r--,g::---,g:60:rw-,g:70:r--,m::rw-,o::---"},
		{name: "empty ACL grants nothing", aces: nil, acc: "u::---,g::---,o::---"},
		{name: "write without append is no write", aces: []string{"A::EVERYONE@:rw"}, acc: "u::r--,g::r--,o::r--"},
		{name: "directory write needs delete-child", dir: true, aces: []string{"D::OWNER@:D", "A::OWNER@:rwax", "A::EVERYONE@:rwaxD"},
			acc: "u::r-x,g::rwx,o::rwx"},
		{name: "deny before allow", aces: []string{"D::EVERYONE@:w", "A::EVERYONE@:rwa"}, acc: "u::r--,g::r--,o::r--"},
		{name: "group deny reaches the owner", aces: []string{"D::GROUP@:w", "A::EVERYONE@:rwa"}, acc: "u::r--,g::r--,o::rw-"},
		{name: "named deny reaches the owner", aces: []string{"D::u5:x", "A::EVERYONE@:rwax"},
			acc: "u::rw-,u:5:rw-,g::rwx,m::rwx,o::rwx"},
		{name: "inheritable ACEs make the default ACL", dir: true,
			aces: []string{"A::OWNER@:rwaxD", "A::GROUP@:rx", "A::EVERYONE@:", "A:fdi:OWNER@:rwaxD", "A:fdi:u1000:rwaxD", "A:fdi:GROUP@:rx", "A:fdi:EVERYONE@:"},
			acc:  "u::rwx,g::r-x,o::---", def: "u::rwx,u:1000:rwx,g::r-x,m::rwx,o::---"},
		{name: "inheritable and effective", dir: true, aces: []string{"A:fd:EVERYONE@:rx"},
			acc: "u::r-x,g::r-x,o::r-x", def: "u::r-x,g::r-x,o::r-x"},
		{name: "file_inherit alone turns on directory_inherit too", dir: true, aces: []string{"A:fi:EVERYONE@:r"},
			acc: "u::---,g::---,o::---", def: "u::r--,g::r--,o::r--"},
		// Unmappable: refused.
		{name: "audit ACE", aces: []string{"U::EVERYONE@:r"}, err: true},
		{name: "alarm ACE", aces: []string{"L::EVERYONE@:r"}, err: true},
		{name: "no_propagate flag", dir: true, aces: []string{"A:fdn:EVERYONE@:r"}, err: true},
		{name: "inheritance on a file", aces: []string{"A:fd:EVERYONE@:r"}, err: true},
		{name: "inherit_only without inheritance", dir: true, aces: []string{"A:i:EVERYONE@:rwax"}, err: true},
		{name: "deny read_acl", aces: []string{"D::EVERYONE@:c"}, err: true},
		{name: "deny read_attributes to a user", aces: []string{"D::u7:t", "A::EVERYONE@:r"}, err: true},
		{name: "deny write_acl to the owner", aces: []string{"D::OWNER@:C"}, err: true},
		{name: "deny write_attributes to the owner", aces: []string{"D::OWNER@:T"}, err: true},
		{name: "unknown flag bit", aces: []string{"A::EVERYONE@:r"}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aces := make([]ace, len(tc.aces))
			for i, s := range tc.aces {
				aces[i] = parseACE(t, s)
			}
			if tc.name == "unknown flag bit" {
				aces[0].flag |= 0x80 // INHERITED_ACE
			}
			acc, def, err := nfs4ToPosix(aces, tc.dir)
			if tc.err {
				if err != errACLUnmappable {
					t.Fatalf("got %s / %s, %v; want errACLUnmappable", posixString(acc), posixString(def), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if posixString(acc) != tc.acc || posixString(def) != tc.def {
				t.Fatalf("got %s / %s\nwant %s / %s", posixString(acc), posixString(def), tc.acc, tc.def)
			}
			for _, p := range []pACL{acc, def} {
				if p != nil {
					if err := p.valid(); err != nil {
						t.Fatalf("%s: %v", posixString(p), err)
					}
					if q, err := decodePosixXattr(encodePosixXattr(p)); err != nil || posixString(q) != posixString(p) {
						t.Fatalf("xattr round trip: %s, %v", posixString(q), err)
					}
				}
			}
		})
	}
}
