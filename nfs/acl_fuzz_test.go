package nfs

import (
	"bytes"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// notWider reports whether q grants no entity more than p does, nor
// anyone p does not name more than p's OTHER entry.
func notWider(p, q pACL) bool {
	ep, eq := effective(p), effective(q)
	other := ep[[2]uint32{uint32(aclOther), aclUndefinedID}]
	for k, v := range eq {
		base, ok := ep[k]
		if !ok {
			base = other
			if k[0] == uint32(aclUser) || k[0] == uint32(aclGroup) {
				// A new named entry: bounded by what its class had.
				base = ep[[2]uint32{uint32(aclUserObj), aclUndefinedID}] | ep[[2]uint32{uint32(aclGroupObj), aclUndefinedID}] | other
			}
		}
		if v&^base != 0 {
			return false
		}
	}
	return true
}

// FuzzDecodePosixXattr: any xattr value decodes or is refused without a
// panic; what decodes encodes back to the same bytes (ids of unnamed
// entries aside), maps to an NFSv4 ACL and back without widening.
func FuzzDecodePosixXattr(f *testing.F) {
	f.Add(encodePosixXattr(posixFromMode(0o644)))
	f.Add(encodePosixXattr(pACL{{aclUserObj, 7, 0}, {aclUser, 5, 1000}, {aclGroupObj, 5, 0}, {aclGroup, 6, 50}, {aclMask, 5, 0}, {aclOther, 0, 0}}))
	f.Add([]byte{2, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 1, 0, 7, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePosixXattr(b)
		if err != nil {
			return
		}
		q, err := decodePosixXattr(encodePosixXattr(p))
		if err != nil || posixString(q) != posixString(p) {
			t.Fatalf("re-encoded: %s, %v; was %s", posixString(q), err, posixString(p))
		}
		for _, dir := range []bool{false, true} {
			acc, _, err := nfs4ToPosix(posixToNFS4(p, nil, dir), dir)
			if err != nil {
				t.Fatalf("%s: %v", posixString(p), err)
			}
			if acc.valid() != nil || !notWider(p, acc) || !notWider(acc, p) {
				t.Fatalf("%s came back as %s", posixString(p), posixString(acc))
			}
		}
	})
}

// FuzzDecodeACL: any fattr4_acl decodes or is refused (BADXDR, BADOWNER)
// without a panic; what maps gives valid POSIX ACLs that encode and
// decode again.
func FuzzDecodeACL(f *testing.F) {
	enc := func(aces ...wireACE) []byte {
		e := xdr.NewEncoder(256)
		e.Uint32(uint32(len(aces)))
		for _, a := range aces {
			e.Uint32(a.typ)
			e.Uint32(a.flag)
			e.Uint32(a.mask)
			e.String(a.who)
		}
		return e.Header()
	}
	f.Add(enc())
	f.Add(enc(wireACE{aceAllowed, 0, 0x1f01ff, "OWNER@"}, wireACE{aceDenied, 0, aceWriteData, "GROUP@"}, wireACE{aceAllowed, 0, aceReadData, "EVERYONE@"}))
	f.Add(enc(wireACE{aceAllowed, aceFileInherit | aceDirectoryInherit, 7, "1000"}, wireACE{aceAllowed, aceIdentifierGroup, 1, "50"}))
	f.Add(enc(wireACE{aceAudit, 0, 1, "root@localdomain"}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	m := newIDNames("localdomain", false)
	m.userByName = func(string) (uint32, bool) { return 0, false }
	m.groupByName = m.userByName
	f.Fuzz(func(t *testing.T, b []byte) {
		d := xdr.NewDecoder(b)
		w, st := decodeACL(d)
		if st != nfs4.OK {
			if st != nfs4.ErrBadXDR {
				t.Fatalf("decode: %v", st)
			}
			return
		}
		aces, st := m.resolveACL(w)
		if st != nfs4.OK {
			if st != nfs4.ErrBadowner {
				t.Fatalf("resolve: %v", st)
			}
			return
		}
		var e xdr.Encoder
		m.encodeACL(&e, aces, nfs4.AuthSys)
		for _, dir := range []bool{false, true} {
			acc, def, err := nfs4ToPosix(aces, dir)
			if err != nil {
				if err != errACLUnmappable {
					t.Fatal(err)
				}
				continue
			}
			for _, p := range []pACL{acc, def} {
				if p == nil {
					continue
				}
				if err := p.valid(); err != nil {
					t.Fatalf("%s: %v", posixString(p), err)
				}
				x := encodePosixXattr(p)
				if q, err := decodePosixXattr(x); err != nil || !bytes.Equal(encodePosixXattr(q), x) {
					t.Fatalf("%s: %v", posixString(p), err)
				}
			}
		}
	})
}
