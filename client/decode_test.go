package client

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// replyHead is an accepted, successful RPC reply header for xid.
func replyHead(xid uint32) w { return w{}.u32(xid, 1, 0, 0, 0, 0) }

func TestDecodeCompoundAndOp(t *testing.T) {
	// COMPOUND4res: status NOENT, tag "t", 2 results: PUTFH ok, LOOKUP NOENT.
	rec := replyHead(7).u32(uint32(nfs4.ErrNoent)).opaque("t").u32(2).
		u32(nfs4.OpPutfh, 0).u32(nfs4.OpLookup, uint32(nfs4.ErrNoent))
	r, err := decodeCompound(rec, 7)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != nfs4.ErrNoent || string(r.Tag) != "t" || r.N != 2 {
		t.Fatalf("reply %+v", r)
	}
	if err := r.Op(nfs4.OpPutfh); err != nil {
		t.Fatal(err)
	}
	err = r.Op(nfs4.OpLookup)
	var se *StatusError
	if !errors.As(err, &se) || se.Op != nfs4.OpLookup || se.Status != nfs4.ErrNoent {
		t.Fatalf("err %v", err)
	}
	if se.Error() != "LOOKUP: NFS4ERR_NOENT" {
		t.Fatalf("message %q", se.Error())
	}
	// A further op that was never executed reports the compound status.
	if err := r.Op(nfs4.OpGetfh); !IsStatus(err, nfs4.ErrNoent) {
		t.Fatalf("err %v", err)
	}
}

func TestDecodeCompoundIllegal(t *testing.T) {
	rec := replyHead(1).u32(uint32(nfs4.ErrOpIllegal)).opaque("").u32(1).u32(nfs4.OpIllegal, uint32(nfs4.ErrOpIllegal))
	r, err := decodeCompound(rec, 1)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Op(9999)
	var se *StatusError
	if !errors.As(err, &se) || se.Op != nfs4.OpIllegal || se.Status != nfs4.ErrOpIllegal {
		t.Fatalf("err %v", err)
	}
}

func TestDecodeReplyHeaderErrors(t *testing.T) {
	tests := []struct {
		name string
		in   w
		want RPCError
	}{
		{"garbage args", w{}.u32(5, 1, 0, 0, 0, nfs4.AcceptGarbageArgs), RPCError{Stat: nfs4.AcceptGarbageArgs}},
		{"prog mismatch", w{}.u32(5, 1, 0, 0, 0, nfs4.AcceptProgMismatch, 4, 4), RPCError{Stat: nfs4.AcceptProgMismatch, Low: 4, High: 4}},
		{"rpc mismatch", w{}.u32(5, 1, 1, nfs4.RejectRPCMismatch, 2, 2), RPCError{Denied: true, Low: 2, High: 2}},
		{"auth error", w{}.u32(5, 1, 1, nfs4.RejectAuthError, nfs4.AuthTooWeak), RPCError{Denied: true, Stat: 1, Auth: nfs4.AuthTooWeak}},
	}
	for _, tc := range tests {
		err := decodeReplyHeader(xdr.NewDecoder(tc.in), 5)
		var re *RPCError
		if !errors.As(err, &re) || *re != tc.want {
			t.Errorf("%s: err %v, want %+v", tc.name, err, tc.want)
		}
	}
	if err := decodeReplyHeader(xdr.NewDecoder(w{}.u32(6, 1, 0, 0, 0, 0)), 5); err == nil {
		t.Error("wrong xid accepted")
	}
	if err := decodeReplyHeader(xdr.NewDecoder(w{}.u32(5, 0, 0)), 5); err == nil {
		t.Error("CALL accepted as reply")
	}
	full := replyHead(5)
	for i := range len(full) {
		if err := decodeReplyHeader(xdr.NewDecoder(full[:i]), 5); err == nil {
			t.Errorf("truncated at %d accepted", i)
		}
	}
}

func TestDecodeFattr(t *testing.T) {
	mask := nfs4.BitmapOf(nfs4.AttrSupportedAttrs, nfs4.AttrType, nfs4.AttrChange, nfs4.AttrSize,
		nfs4.AttrLinkSupport, nfs4.AttrFsid, nfs4.AttrFileid, nfs4.AttrMode, nfs4.AttrNumlinks,
		nfs4.AttrOwner, nfs4.AttrOwnerGroup, nfs4.AttrSpaceUsed, nfs4.AttrTimeAccess,
		nfs4.AttrTimeMetadata, nfs4.AttrTimeModify, nfs4.AttrMountedOnFileid)
	vals := w{}.
		u32(2, 0xff, 0x3).               // supported_attrs: 2 words
		u32(nfs4.NF4REG).                // type
		u64(42, 8192).                   // change, size
		u32(1).                          // link_support
		u64(1, 2).                       // fsid
		u64(99).                         // fileid
		u32(0o644, 1).                   // mode, numlinks
		opaque("alice").opaque("staff"). // owner, group
		u64(4096).                       // space_used
		u64(10).u32(1).u64(20).u32(2).u64(30).u32(3).
		u64(77)
	in := w{}.u32(3, mask[0], mask[1], mask[2]).u32(uint32(len(vals))).raw(string(vals))
	d := xdr.NewDecoder(in)
	a, err := DecodeFattr(d)
	if err != nil {
		t.Fatal(err)
	}
	want := Attrs{
		Mask: mask, Supported: nfs4.Bitmap{0xff, 0x3}, Type: nfs4.NF4REG, Change: 42, Size: 8192,
		Fsid: Fsid{1, 2}, Fileid: 99, Mode: 0o644, Numlinks: 1, Owner: "alice", OwnerGroup: "staff",
		SpaceUsed: 4096, Atime: Time{10, 1}, Ctime: Time{20, 2}, Mtime: Time{30, 3}, MountedOnFileid: 77,
	}
	if a.FH != nil || !equalAttrs(a, want) {
		t.Fatalf("got %+v\nwant %+v", a, want)
	}
	if d.Remaining() != 0 {
		t.Fatal("bytes left")
	}
	// Round trip through EncodeFattr.
	want.Mask = StandardAttrs
	want.Mask.Set(nfs4.AttrSupportedAttrs)
	e := xdr.NewEncoder(256)
	EncodeFattr(e, &want)
	got, err := DecodeFattr(xdr.NewDecoder(e.AppendTo(nil)))
	if err != nil || !equalAttrs(got, want) {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	for i := range len(in) {
		if _, err := DecodeFattr(xdr.NewDecoder(in[:i])); err == nil {
			t.Fatalf("truncated at %d accepted", i)
		}
	}
}

func equalAttrs(a, b Attrs) bool {
	return reflect.DeepEqual(a, b)
}

func TestDecodeFattrUnknown(t *testing.T) {
	in := w{}.u32(1, 1<<nfs4.AttrFsLocations).u32(4, 0)
	if _, err := DecodeFattr(xdr.NewDecoder(in)); err == nil {
		t.Fatal("undecodable attribute accepted")
	}
}

func TestDecodeOpenRes(t *testing.T) {
	other := "ABCDEFGHIJKL"
	base := w{}.u32(1).raw(other). // stateid
					u32(1).u64(5, 6). // cinfo
					u32(nfs4.OpenResultLocktype).
					u32(0) // attrset
	tests := []struct {
		name  string
		tail  w
		deleg uint32
	}{
		{"none", w{}.u32(nfs4.DelegateNone), nfs4.DelegateNone},
		{"read", w{}.u32(nfs4.DelegateRead).u32(2).raw(other).u32(0).u32(0, 0, 0).opaque("EVERYONE@"), nfs4.DelegateRead},
		{"write", w{}.u32(nfs4.DelegateWrite).u32(2).raw(other).u32(0).u32(1).u64(1<<20).u32(0, 0, 0).opaque("OWNER@"), nfs4.DelegateWrite},
		{"none ext", w{}.u32(nfs4.DelegateNoneExt, nfs4.WhyNoDelegContention, 0), nfs4.DelegateNoneExt},
	}
	for _, tc := range tests {
		in := append(append(w{}, base...), tc.tail...)
		d := xdr.NewDecoder(in)
		r, err := DecodeOpenRes(d)
		if err != nil || r.Deleg != tc.deleg || r.Stateid.Seqid != 1 || string(r.Stateid.Other[:]) != other || d.Remaining() != 0 {
			t.Errorf("%s: %v %+v rem %d", tc.name, err, r, d.Remaining())
		}
	}
}

func TestDecodeReaddirRes(t *testing.T) {
	mask := nfs4.BitmapOf(nfs4.AttrType, nfs4.AttrFileid)
	ent := func(cookie uint64, name string, typ uint32, id uint64) w {
		vals := w{}.u32(typ).u64(id)
		return w{}.u32(1).u64(cookie).opaque(name).u32(1, mask[0]).u32(uint32(len(vals))).raw(string(vals))
	}
	in := w{}.raw("VERIFIER")
	in = append(in, ent(3, "a", nfs4.NF4REG, 10)...)
	in = append(in, ent(5, "dir", nfs4.NF4DIR, 11)...)
	in = in.u32(0, 1)
	verf, ents, eof, err := DecodeReaddirRes(xdr.NewDecoder(in), nil)
	if err != nil || !eof || string(verf[:]) != "VERIFIER" || len(ents) != 2 {
		t.Fatalf("%v %v %q %+v", err, eof, verf, ents)
	}
	if ents[1].Name != "dir" || ents[1].Cookie != 5 || ents[1].Type != nfs4.NF4DIR || ents[1].Fileid != 11 {
		t.Fatalf("entry %+v", ents[1])
	}
}

func TestEncodeCallHeader(t *testing.T) {
	e := xdr.NewEncoder(128)
	encodeCallHeader(e, 0x1234, &Cred{Stamp: 9, Machine: "box", UID: 1000, GID: 100, GIDs: []uint32{4}})
	npos := encodeCompoundHeader(e, "", 2)
	EncodePutrootfh(e)
	e.Patch(npos, 1)
	finishRecord(e)
	body := w{}.u32(0x1234, 0, 2, 100003, 4, 1).
		u32(1, 28).u32(9).opaque("box").u32(1000, 100, 1, 4). // AUTH_SYS
		u32(0, 0).                                            // verifier
		u32(0, 2, 1, nfs4.OpPutrootfh)
	want := w{}.u32(0x80000000 | uint32(len(body))).raw(string(body))
	if got := e.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
}

func TestEncodeOps(t *testing.T) {
	sid := nfs4.Stateid{Seqid: 3}
	copy(sid.Other[:], "123456789012")
	var sess [16]byte
	copy(sess[:], "SESSIONID0123456")
	tests := []struct {
		name string
		enc  func(e *xdr.Encoder)
		want w
	}{
		{"sequence", func(e *xdr.Encoder) { EncodeSequence(e, sess, 7, 2, 63, true) },
			w{}.u32(nfs4.OpSequence).raw("SESSIONID0123456").u32(7, 2, 63, 1)},
		{"putfh", func(e *xdr.Encoder) { EncodePutfh(e, []byte{1, 2, 3}) },
			w{}.u32(nfs4.OpPutfh, 3).raw("\x01\x02\x03\x00")},
		{"lookup", func(e *xdr.Encoder) { EncodeLookup(e, "hello") }, w{}.u32(nfs4.OpLookup).opaque("hello")},
		{"read_plus", func(e *xdr.Encoder) { EncodeReadPlus(e, sid, 1<<33, 4096) },
			w{}.u32(nfs4.OpReadPlus, 3).raw("123456789012").u64(1 << 33).u32(4096)},
		{"seek", func(e *xdr.Encoder) { EncodeSeek(e, sid, 5, nfs4.ContentHole) },
			w{}.u32(nfs4.OpSeek, 3).raw("123456789012").u64(5).u32(1)},
		{"open null", func(e *xdr.Encoder) {
			EncodeOpen(e, &OpenArgs{Access: nfs4.ShareAccessRead, ClientID: 0x55, Owner: []byte("o1"), Name: "f"})
		}, w{}.u32(nfs4.OpOpen, 0, 1, 0).u64(0x55).opaque("o1").u32(0, nfs4.ClaimNull).opaque("f")},
		{"open fh", func(e *xdr.Encoder) {
			EncodeOpen(e, &OpenArgs{Access: nfs4.ShareAccessRead, ClientID: 0x55, Owner: []byte("o1"), ClaimFH: true})
		}, w{}.u32(nfs4.OpOpen, 0, 1, 0).u64(0x55).opaque("o1").u32(0, nfs4.ClaimFH)},
		{"getattr", func(e *xdr.Encoder) { EncodeGetattr(e, nfs4.BitmapOf(nfs4.AttrSize, nfs4.AttrMode)) },
			w{}.u32(nfs4.OpGetattr, 2, 1<<4, 1<<1)},
		{"exchange_id", func(e *xdr.Encoder) { EncodeExchangeID(e, [8]byte{'v'}, "me", nfs4.ExchgIDUseNonPNFS) },
			w{}.u32(nfs4.OpExchangeID).raw("v\x00\x00\x00\x00\x00\x00\x00").opaque("me").u32(0x10000, 0, 0)},
	}
	for _, tc := range tests {
		e := xdr.NewEncoder(64)
		tc.enc(e)
		if got := e.AppendTo(nil); !bytes.Equal(got, tc.want) {
			t.Errorf("%s:\ngot  %x\nwant %x", tc.name, got, tc.want)
		}
	}
}

func TestStatusNames(t *testing.T) {
	if StatusName(nfs4.ErrDelay) != "NFS4ERR_DELAY" || StatusName(4242) != "NFS4ERR_4242" {
		t.Fatal("status names")
	}
	if OpName(nfs4.OpReadPlus) != "READ_PLUS" || OpName(999) != "OP_999" {
		t.Fatal("op names")
	}
}
