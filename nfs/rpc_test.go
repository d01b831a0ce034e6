package nfs

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func TestRPCReplies(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name  string
		build func(e *xdr.Encoder)
		want  []uint32
	}{
		{"null", func(e *xdr.Encoder) { callHeader(e, 7, nfs4.ProgramNFS, 4, nfs4.ProcNull) },
			[]uint32{7, 1, nfs4.MsgAccepted, 0, 0, nfs4.AcceptSuccess}},
		{"prog unavail", func(e *xdr.Encoder) { callHeader(e, 7, 100099, 4, 0) },
			[]uint32{7, 1, nfs4.MsgAccepted, 0, 0, nfs4.AcceptProgUnavail}},
		{"prog mismatch", func(e *xdr.Encoder) { callHeader(e, 7, nfs4.ProgramNFS, 2, 0) },
			[]uint32{7, 1, nfs4.MsgAccepted, 0, 0, nfs4.AcceptProgMismatch, 3, 4}},
		{"proc unavail", func(e *xdr.Encoder) { callHeader(e, 7, nfs4.ProgramNFS, 4, 9) },
			[]uint32{7, 1, nfs4.MsgAccepted, 0, 0, nfs4.AcceptProcUnavail}},
		{"garbage args", func(e *xdr.Encoder) {
			callHeader(e, 7, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
			e.Uint32(1 << 30) // tag length far past the record
		}, []uint32{7, 1, nfs4.MsgAccepted, 0, 0, nfs4.AcceptGarbageArgs}},
		{"rpc mismatch", func(e *xdr.Encoder) {
			e.Uint32(7)
			e.Uint32(0)
			e.Uint32(3)
		}, []uint32{7, 1, nfs4.MsgDenied, nfs4.RejectRPCMismatch, 2, 2}},
		{"bad flavor", func(e *xdr.Encoder) {
			for _, v := range []uint32{7, 0, 2, nfs4.ProgramNFS, 4, 0, 6, 0, 0, 0} {
				e.Uint32(v)
			}
		}, []uint32{7, 1, nfs4.MsgDenied, nfs4.RejectAuthError, nfs4.AuthBadCred}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := xdr.NewEncoder(64)
			tc.build(e)
			got := h.record(e.AppendTo(nil))
			d := xdr.NewDecoder(got)
			for i, w := range tc.want {
				if v := d.Uint32(); v != w {
					t.Fatalf("word %d = %d, want %d (reply %x)", i, v, w, got)
				}
			}
			if d.Remaining() != 0 {
				t.Fatalf("%d trailing bytes", d.Remaining())
			}
		})
	}
}

func TestRPCDropsNonCalls(t *testing.T) {
	h := newHarness(t)
	for _, rec := range [][]byte{nil, {1, 2, 3}, {0, 0, 0, 1, 0, 0, 0, 1}} {
		if got := h.record(rec); got != nil {
			t.Fatalf("record %x answered %x", rec, got)
		}
	}
}

func TestAuthSysDecoded(t *testing.T) {
	e := xdr.NewEncoder(64)
	e.Uint32(1)
	e.String("host")
	e.Uint32(1000)
	e.Uint32(100)
	e.Uint32(2)
	e.Uint32(5)
	e.Uint32(6)
	var c call
	if !c.decodeAuthSys(e.Header()) {
		t.Fatal("decode failed")
	}
	if c.cred.UID != 1000 || c.cred.GID != 100 || c.cred.NGIDs != 2 || c.cred.GIDs[1] != 6 {
		t.Fatalf("cred %+v", c.cred)
	}
	e.Reset()
	e.Uint32(1)
	e.String("host")
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(17) // over the AUTH_SYS limit of 16 groups
	if c.decodeAuthSys(e.Header()) {
		t.Fatal("17 groups accepted")
	}
}
