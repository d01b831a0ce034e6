package client

import (
	"bytes"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func encoded(f func(e *xdr.Encoder)) []byte {
	e := xdr.NewEncoder(64)
	f(e)
	return e.AppendTo(nil)
}

func testSid() nfs4.Stateid {
	return nfs4.Stateid{Seqid: 1, Other: [12]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
}

// sidXDR is testSid as XDR.
func sidXDR() w { return w{}.u32(1).raw("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c") }

func TestEncodeWriteOps(t *testing.T) {
	mode := &Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: 0o644}
	modeXDR := w{}.u32(2, 0, 1<<(nfs4.AttrMode-32)).u32(4, 0o644)
	size := &Attrs{Mask: nfs4.BitmapOf(nfs4.AttrSize), Size: 1 << 33}
	tests := []struct {
		name string
		enc  func(e *xdr.Encoder)
		want w
	}{
		{"WRITE", func(e *xdr.Encoder) { EncodeWrite(e, testSid(), 4096, nfs4.DataSync4, []byte("hello")) },
			w{}.u32(nfs4.OpWrite).raw(string(sidXDR())).u64(4096).u32(nfs4.DataSync4).opaque("hello")},
		{"COMMIT", func(e *xdr.Encoder) { EncodeCommit(e, 7, 9) }, w{}.u32(nfs4.OpCommit).u64(7).u32(9)},
		{"CREATE dir", func(e *xdr.Encoder) { EncodeCreate(e, nfs4.NF4DIR, "d", "", mode) },
			w{}.u32(nfs4.OpCreate, nfs4.NF4DIR).opaque("d").raw(string(modeXDR))},
		{"CREATE symlink", func(e *xdr.Encoder) { EncodeCreate(e, nfs4.NF4LNK, "l", "target", nil) },
			w{}.u32(nfs4.OpCreate, nfs4.NF4LNK).opaque("target").opaque("l").u32(0, 0)},
		{"REMOVE", func(e *xdr.Encoder) { EncodeRemove(e, "gone") }, w{}.u32(nfs4.OpRemove).opaque("gone")},
		{"SETATTR size", func(e *xdr.Encoder) { EncodeSetattr(e, testSid(), size) },
			w{}.u32(nfs4.OpSetattr).raw(string(sidXDR())).u32(1, 1<<nfs4.AttrSize, 8).u64(1 << 33)},
	}
	for _, tc := range tests {
		if got := encoded(tc.enc); !bytes.Equal(got, tc.want) {
			t.Errorf("%s:\ngot  %x\nwant %x", tc.name, got, []byte(tc.want))
		}
	}
}

func TestEncodeOpenCreate(t *testing.T) {
	mode := &Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: 0o600}
	head := w{}.u32(nfs4.OpOpen, 0, nfs4.ShareAccessBoth, 0).u64(5).opaque("o")
	modeXDR := w{}.u32(2, 0, 1<<(nfs4.AttrMode-32)).u32(4, 0o600)
	verf := [8]byte{'v', 'e', 'r', 'i', 'f', 'i', 'e', 'r'}
	tests := []struct {
		mode uint32
		want w
	}{
		{nfs4.CreateUnchecked, head.u32(nfs4.OpenCreate, nfs4.CreateUnchecked).raw(string(modeXDR))},
		{nfs4.CreateGuarded, head.u32(nfs4.OpenCreate, nfs4.CreateGuarded).raw(string(modeXDR))},
		{nfs4.CreateExclusive, head.u32(nfs4.OpenCreate, nfs4.CreateExclusive).raw("verifier")},
		{nfs4.CreateExclusive41, head.u32(nfs4.OpenCreate, nfs4.CreateExclusive41).raw("verifier").raw(string(modeXDR))},
	}
	for _, tc := range tests {
		a := &OpenArgs{Access: nfs4.ShareAccessBoth, ClientID: 5, Owner: []byte("o"), Name: "f",
			Create: true, CreateMode: tc.mode, Attrs: mode, Verifier: verf}
		want := tc.want.u32(nfs4.ClaimNull).opaque("f")
		if got := encoded(func(e *xdr.Encoder) { EncodeOpen(e, a) }); !bytes.Equal(got, want) {
			t.Errorf("mode %d:\ngot  %x\nwant %x", tc.mode, got, []byte(want))
		}
	}
	a := &OpenArgs{Access: nfs4.ShareAccessRead, ClientID: 5, Owner: []byte("o"), ClaimFH: true}
	want := w{}.u32(nfs4.OpOpen, 0, nfs4.ShareAccessRead, 0).u64(5).opaque("o").u32(nfs4.OpenNoCreate, nfs4.ClaimFH)
	if got := encoded(func(e *xdr.Encoder) { EncodeOpen(e, a) }); !bytes.Equal(got, want) {
		t.Errorf("no create:\ngot  %x\nwant %x", got, []byte(want))
	}
}

func TestDecodeWriteOpsResults(t *testing.T) {
	in := w{}.u32(4096, nfs4.FileSync4).raw("VERF0001")
	r, err := DecodeWriteRes(xdr.NewDecoder(in))
	if err != nil || r.Count != 4096 || r.Committed != nfs4.FileSync4 || string(r.Verifier[:]) != "VERF0001" {
		t.Fatalf("WRITE %+v %v", r, err)
	}
	if _, err := DecodeWriteRes(xdr.NewDecoder(w{}.u32(1, 3).raw("VERF0001"))); err == nil {
		t.Error("stable_how 3 accepted")
	}
	v, err := DecodeCommitRes(xdr.NewDecoder(w{}.raw("VERF0002")))
	if err != nil || string(v[:]) != "VERF0002" {
		t.Fatalf("COMMIT %q %v", v, err)
	}
	ci, bm, err := DecodeCreateRes(xdr.NewDecoder(w{}.u32(1).u64(3, 4).u32(2, 0, 2)))
	if err != nil || ci != (ChangeInfo{true, 3, 4}) || !bm.Has(nfs4.AttrMode) {
		t.Fatalf("CREATE %+v %v %v", ci, bm, err)
	}
	ci, err = DecodeRemoveRes(xdr.NewDecoder(w{}.u32(0).u64(8, 9)))
	if err != nil || ci != (ChangeInfo{false, 8, 9}) {
		t.Fatalf("REMOVE %+v %v", ci, err)
	}
	bm, err = DecodeSetattrRes(xdr.NewDecoder(w{}.u32(1, 1<<nfs4.AttrSize)))
	if err != nil || !bm.Has(nfs4.AttrSize) {
		t.Fatalf("SETATTR %v %v", bm, err)
	}
}

func TestDecodeWriteOpsTruncated(t *testing.T) {
	cases := map[string]struct {
		in  w
		dec func(d *xdr.Decoder) error
	}{
		"WRITE":   {w{}.u32(1, 0).raw("VERF0001"), func(d *xdr.Decoder) error { _, err := DecodeWriteRes(d); return err }},
		"COMMIT":  {w{}.raw("VERF0001"), func(d *xdr.Decoder) error { _, err := DecodeCommitRes(d); return err }},
		"CREATE":  {w{}.u32(1).u64(3, 4).u32(1, 0), func(d *xdr.Decoder) error { _, _, err := DecodeCreateRes(d); return err }},
		"REMOVE":  {w{}.u32(1).u64(3, 4), func(d *xdr.Decoder) error { _, err := DecodeRemoveRes(d); return err }},
		"SETATTR": {w{}.u32(1, 0), func(d *xdr.Decoder) error { _, err := DecodeSetattrRes(d); return err }},
	}
	for name, tc := range cases {
		for i := range len(tc.in) {
			if err := tc.dec(xdr.NewDecoder(tc.in[:i])); err == nil {
				t.Errorf("%s truncated at %d accepted", name, i)
			}
		}
	}
}
