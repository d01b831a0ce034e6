package nfs

import (
	"strings"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestLongNamesAreNametoolong: a component name longer than NFS4_MAXNAMLEN
// (255) is NFS4ERR_NAMETOOLONG in every op that takes one, as with knfsd,
// however long it is, as long as it fits in the request. Before, a name
// over 1,024 bytes failed to decode: NFS4ERR_BADXDR.
func TestLongNamesAreNametoolong(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("x"))
	for _, n := range []int{256, 1025, 4000} {
		long := strings.Repeat("a", n)
		cases := []struct {
			op    string
			nops  int
			build func(e *xdr.Encoder)
		}{
			{"LOOKUP", 2, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpLookup)
				e.String(long)
			}},
			{"SECINFO", 2, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpSecinfo)
				e.String(long)
			}},
			{"CREATE", 2, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpCreate)
				e.Uint32(nfs4.NF4DIR)
				e.String(long)
				nfs4.Bitmap{}.Encode(e)
				e.Uint32(0)
			}},
			{"REMOVE", 2, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpRemove)
				e.String(long)
			}},
			{"RENAME from", 4, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpSavefh)
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpRename)
				e.String(long)
				e.String("g")
			}},
			{"RENAME to", 4, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpSavefh)
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpRename)
				e.String("f")
				e.String(long)
			}},
			{"LINK", 5, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpLookup)
				e.String("f")
				e.Uint32(nfs4.OpSavefh)
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpLink)
				e.String(long)
			}},
			{"OPEN", 2, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutrootfh)
				e.Uint32(nfs4.OpOpen)
				e.Uint32(0)
				e.Uint32(nfs4.ShareAccessRead)
				e.Uint32(nfs4.ShareDenyNone)
				e.Uint64(h.clid)
				e.String("owner")
				e.Uint32(nfs4.OpenNoCreate)
				e.Uint32(nfs4.ClaimNull)
				e.String(long)
			}},
		}
		for _, c := range cases {
			_, st := h.opsAs(asRoot, c.nops, c.build)
			if st != nfs4.ErrNametoolong {
				t.Errorf("%s of a %d-byte name: %d, want NFS4ERR_NAMETOOLONG", c.op, n, st)
			}
		}
	}
}

// TestHugeNameLengthIsBadXDR: a name length past the end of the request
// cannot be decoded at all: NFS4ERR_BADXDR, not NAMETOOLONG.
func TestHugeNameLengthIsBadXDR(t *testing.T) {
	h := newHarness(t)
	h.session()
	for _, op := range []uint32{nfs4.OpLookup, nfs4.OpSecinfo, nfs4.OpRemove} {
		_, st := h.opsAs(asRoot, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(op)
			e.Uint32(1 << 30) // the length; a few bytes follow
			e.Uint32(0x61616161)
		})
		if st != nfs4.ErrBadXDR {
			t.Errorf("op %d with a name length of 2^30: %d, want NFS4ERR_BADXDR", op, st)
		}
	}
}

// TestSecinfoOfMissingName: SECINFO looks the name up, as knfsd's
// nfsd4_secinfo does: a name that does not exist is NFS4ERR_NOENT (it
// answered NFS4_OK with the flavors before), one that does gets them.
func TestSecinfoOfMissingName(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("here", []byte("x"))
	secinfo := func(name string) nfs4.Status {
		_, st := h.opsAs(asRoot, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpSecinfo)
			e.String(name)
		})
		return st
	}
	if st := secinfo("absent"); st != nfs4.ErrNoent {
		t.Errorf("SECINFO of a missing name: %d, want NFS4ERR_NOENT", st)
	}
	if st := secinfo("here"); st != nfs4.OK {
		t.Errorf("SECINFO of an existing name: %d", st)
	}
}
