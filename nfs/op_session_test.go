package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// exchangeID sends EXCHANGE_ID for owner with verifier verf and flags as
// h's uid, and returns the status, client id and result flags.
func (h *harness) exchangeID(owner, verf string, flags uint32) (nfs4.Status, uint64, uint32) {
	h.t.Helper()
	d, st, _ := h.compound(1, func(e *xdr.Encoder) {
		encodeExchangeID(e, owner, verf, flags)
	})
	if st != nfs4.OK {
		return st, 0, 0
	}
	opResult(h.t, d, nfs4.OpExchangeID, nfs4.OK)
	id := d.Uint64()
	d.Uint32() // eir_sequenceid
	return st, id, d.Uint32()
}

func encodeExchangeID(e *xdr.Encoder, owner, verf string, flags uint32) {
	e.Uint32(nfs4.OpExchangeID)
	e.Fixed([]byte(verf))
	e.String(owner)
	e.Uint32(flags)
	e.Uint32(nfs4.SP4None)
	e.Uint32(0)
}

// TestExchangeIDDataServerRole: a client asking for the data-server role
// (the Linux client's eia_flags to a flexfiles data server, 0x40101) gets
// USE_PNFS_DS with the server's other role bit; one not asking gets the
// other bit alone. Without USE_PNFS_DS the Linux 6.12 client drops the
// data server (nfs4_init_ds_session: -ENODEV): the kernel e2e's pNFS phase
// saw it destroy the session at once and report NFS4ERR_NXIO.
func TestExchangeIDDataServerRole(t *testing.T) {
	const linuxDS = nfs4.ExchgIDUsePNFSDS | nfs4.ExchgIDBindPrincStateid | nfs4.ExchgIDSuppMovedRefer
	h := newHarness(t)
	if _, _, f := h.exchangeID("ds-client", "verifier", linuxDS); f&^nfs4.ExchgIDConfirmedR != nfs4.ExchgIDUseNonPNFS|nfs4.ExchgIDUsePNFSDS {
		t.Errorf("plain server, USE_PNFS_DS asked: flags %#x, want USE_NON_PNFS|USE_PNFS_DS", f)
	}
	if _, _, f := h.exchangeID("plain-client", "verifier", nfs4.ExchgIDUseNonPNFS); f&^nfs4.ExchgIDConfirmedR != nfs4.ExchgIDUseNonPNFS {
		t.Errorf("plain server, not asked: flags %#x, want USE_NON_PNFS", f)
	}
	m := newMDSHarness(t, newFakeDS(1))
	if _, _, f := m.exchangeID("ds-client", "verifier", linuxDS); f&^nfs4.ExchgIDConfirmedR != nfs4.ExchgIDUsePNFSMDS|nfs4.ExchgIDUsePNFSDS {
		t.Errorf("metadata server, USE_PNFS_DS asked: flags %#x, want USE_PNFS_MDS|USE_PNFS_DS", f)
	}
}

// TestExchangeIDCases walks the case table of RFC 8881 section 18.35.4
// (pynfs EID5a-h, EID6a-h): which requests make a new client id, which
// return the existing one, which fail, and which records they destroy.
// Before it, an unconfirmed record was handed out again (EID5d), updates
// of unconfirmed records succeeded or got NOT_SAME instead of NOENT
// (EID6a-d), and an update by another principal got CLID_INUSE instead of
// PERM (EID6g).
func TestExchangeIDCases(t *testing.T) {
	const upd = nfs4.ExchgIDUpdConfirmedRecA
	type step struct {
		uid   uint32
		verf  string
		flags uint32
		want  nfs4.Status
		// same: the client id must equal the first's; new: must differ.
		same, fresh bool
	}
	cases := []struct {
		name    string
		confirm bool // CREATE_SESSION (then DESTROY_SESSION, see noState) after the first
		noState bool
		next    step
		// firstGone: the first client id is stale afterwards.
		firstGone bool
	}{
		{"4 unconfirmed, same verifier and principal", false, false, step{0, "verifier", 0, nfs4.OK, false, true}, true},
		{"4 unconfirmed, other principal", false, false, step{7, "verifier", 0, nfs4.OK, false, true}, true},
		{"4 unconfirmed, other verifier", false, false, step{0, "verif-02", 0, nfs4.OK, false, true}, true},
		{"7 update of an unconfirmed record", false, false, step{0, "verifier", upd, nfs4.ErrNoent, false, false}, false},
		{"7 update, other principal and verifier", false, false, step{7, "verif-02", upd, nfs4.ErrNoent, false, false}, false},
		{"2 confirmed, same verifier and principal", true, false, step{0, "verifier", 0, nfs4.OK, true, false}, false},
		{"5 confirmed, new verifier: reboot", true, false, step{0, "verif-02", 0, nfs4.OK, false, true}, false},
		{"3 confirmed with state, other principal", true, false, step{7, "verifier", 0, nfs4.ErrClidInuse, false, false}, false},
		{"3 confirmed without state, other principal", true, true, step{7, "verif-02", 0, nfs4.OK, false, true}, true},
		{"6 update", true, false, step{0, "verifier", upd, nfs4.OK, true, false}, false},
		{"8 update with another verifier", true, false, step{0, "verif-02", upd, nfs4.ErrNotSame, false, false}, false},
		{"9 update by another principal", true, false, step{7, "verifier", upd, nfs4.ErrPerm, false, false}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			st, first, _ := h.exchangeID("owner", "verifier", 0)
			if st != nfs4.OK {
				t.Fatalf("first EXCHANGE_ID: %d", st)
			}
			if tc.confirm {
				st, id := h.createSession(first, 1, defaultFore)
				if st != nfs4.OK {
					t.Fatalf("CREATE_SESSION: %d", st)
				}
				if tc.noState {
					if _, st, _ := h.compound(1, func(e *xdr.Encoder) {
						e.Uint32(nfs4.OpDestroySession)
						e.Fixed(id[:])
					}); st != nfs4.OK {
						t.Fatalf("DESTROY_SESSION: %d", st)
					}
				}
			}
			p := h.peer(tc.next.uid, "owner")
			st, id, flags := p.exchangeID("owner", tc.next.verf, tc.next.flags)
			if st != tc.next.want {
				t.Fatalf("EXCHANGE_ID: status %d, want %d", st, tc.next.want)
			}
			if tc.next.same && (id != first || flags&nfs4.ExchgIDConfirmedR == 0) {
				t.Fatalf("client id %x flags %#x, want the confirmed %x", id, flags, first)
			}
			if tc.next.fresh && (id == first || flags&nfs4.ExchgIDConfirmedR != 0) {
				t.Fatalf("client id %x flags %#x, want a new unconfirmed one", id, flags)
			}
			// CREATE_SESSION on the first id tells whether it survived.
			st, _ = h.createSession(first, 2, defaultFore)
			if !tc.confirm {
				st, _ = h.createSession(first, 1, defaultFore)
			}
			if gone := st == nfs4.ErrStaleClientid; gone != tc.firstGone {
				t.Fatalf("first client id afterwards: CREATE_SESSION %d, want gone=%v", st, tc.firstGone)
			}
		})
	}
}

// TestRebootKeepsOldRecordUntilConfirmed is case 5 (pynfs EID5f): the old
// record and its session live until the new record is confirmed.
func TestRebootKeepsOldRecordUntilConfirmed(t *testing.T) {
	h := newHarness(t)
	h.session()
	old := h.clid
	st, id, _ := h.exchangeID("owner-1", "rebooted", 0)
	if st != nfs4.OK || id == old {
		t.Fatalf("EXCHANGE_ID after reboot: %d, id %x", st, id)
	}
	if _, st := h.ops(0, func(*xdr.Encoder) {}); st != nfs4.OK {
		t.Fatalf("old session before the new record is confirmed: %d", st)
	}
	if st, _ := h.createSession(id, 1, defaultFore); st != nfs4.OK {
		t.Fatalf("CREATE_SESSION of the new record: %d", st)
	}
	if _, st := h.ops(0, func(*xdr.Encoder) {}); st != nfs4.ErrBadsession {
		t.Fatalf("old session after: %d, want BADSESSION", st)
	}
	// The confirmed record is the new one.
	if st, got, _ := h.exchangeID("owner-1", "rebooted", 0); st != nfs4.OK || got != id {
		t.Fatalf("EXCHANGE_ID again: %d, id %x, want %x", st, got, id)
	}
}

// createSessionOp writes CREATE_SESSION with flags and the given channel
// attributes.
func createSessionOp(e *xdr.Encoder, clientID uint64, seq, flags uint32, fore, back [6]uint32) {
	e.Uint32(nfs4.OpCreateSession)
	e.Uint64(clientID)
	e.Uint32(seq)
	e.Uint32(flags)
	for _, a := range [][6]uint32{fore, back} {
		for _, v := range a {
			e.Uint32(v)
		}
		e.Uint32(0)
	}
	e.Uint32(0x40000000)
	e.Uint32(1)
	e.Uint32(nfs4.AuthNone)
}

var defaultBack = [6]uint32{0, 4096, 4096, 0, 2, 1}

// TestCreateSessionAfterSequence: CREATE_SESSION and EXCHANGE_ID may come
// after SEQUENCE (pynfs CSESS2, CSESS2b, EID1b; they got NOT_ONLY_OP), and
// a CREATE_SESSION retransmitted without SEQUENCE gets the same result
// (CSESS5b).
func TestCreateSessionAfterSequence(t *testing.T) {
	h := newHarness(t)
	h.session()
	p := h.peer(0, "second")
	st, other, _ := p.exchangeID("second", "verifier", 0)
	if st != nfs4.OK {
		t.Fatal(st)
	}
	var results [][]byte
	for _, clid := range []uint64{h.clid, other} {
		seq := uint32(2)
		if clid == other {
			seq = 1
		}
		d, st := h.ops(1, func(e *xdr.Encoder) {
			createSessionOp(e, clid, seq, 0, defaultFore, defaultBack)
		})
		if st != nfs4.OK {
			t.Fatalf("SEQUENCE + CREATE_SESSION for %x: %d", clid, st)
		}
		skipSequence(t, d)
		opResult(t, d, nfs4.OpCreateSession, nfs4.OK)
		results = append(results, bytes.Clone(d.Fixed(16+4+4+2*28)))
	}
	d, st, _ := h.compound(1, func(e *xdr.Encoder) {
		createSessionOp(e, other, 1, 0, defaultFore, defaultBack)
	})
	if st != nfs4.OK {
		t.Fatalf("CREATE_SESSION retransmit: %d", st)
	}
	opResult(t, d, nfs4.OpCreateSession, nfs4.OK)
	if got := d.Fixed(len(results[1])); !bytes.Equal(got, results[1]) {
		t.Fatal("retransmitted CREATE_SESSION got another result")
	}
	_, st = h.ops(1, func(e *xdr.Encoder) { encodeExchangeID(e, "third", "verifier", 0) })
	if st != nfs4.OK {
		t.Fatalf("SEQUENCE + EXCHANGE_ID: %d", st)
	}
	// BIND_CONN_TO_SESSION must still be alone.
	_, st = h.ops(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpBindConnToSession)
		e.Fixed(h.sess[:])
		e.Uint32(nfs4.CDRFore)
		e.Bool(false)
	})
	if st != nfs4.ErrNotOnlyOp {
		t.Fatalf("SEQUENCE + BIND_CONN_TO_SESSION: %d", st)
	}
}

// TestCreateSessionArgs: undefined flags are NFS4ERR_INVAL (pynfs
// CSESS15), unusable channels NFS4ERR_TOOSMALL, back channel included
// (CSESS29), and a small but usable one is granted (CSESS26 asks for 400
// bytes each way; it got TOOSMALL).
func TestCreateSessionArgs(t *testing.T) {
	h := newHarness(t)
	_, clid, _ := h.exchangeID("owner", "verifier", 0)
	status := func(flags uint32, fore, back [6]uint32) nfs4.Status {
		_, st, _ := h.compound(1, func(e *xdr.Encoder) { createSessionOp(e, clid, 1, flags, fore, back) })
		return st
	}
	if st := status(0xf, defaultFore, defaultBack); st != nfs4.ErrInval {
		t.Fatalf("flags 0xf: %d", st)
	}
	for _, bad := range []struct{ fore, back [6]uint32 }{
		{[6]uint32{0, 20, 8192, 8192, 16, 8}, defaultBack},
		{[6]uint32{0, 8192, 0, 8192, 16, 8}, defaultBack},
		{defaultFore, [6]uint32{0, 10, 8192, 8192, 2, 1}},
		{defaultFore, [6]uint32{0, 8192, 8192, 8192, 1, 1}},
	} {
		if st := status(0, bad.fore, bad.back); st != nfs4.ErrToosmall {
			t.Fatalf("channels %v %v: %d, want TOOSMALL", bad.fore, bad.back, st)
		}
	}
	if st := status(nfs4.CreateSessionConnBackChan, [6]uint32{0, 400, 400, 400, 128, 8}, defaultBack); st != nfs4.OK {
		t.Fatalf("400-byte channel: %d", st)
	}
}

// TestCreateSessionPrincipal: an unconfirmed record is confirmed only by
// its own principal (pynfs CSESS9); once confirmed, with SP4_NONE, another
// principal may add a session (CSESS10).
func TestCreateSessionPrincipal(t *testing.T) {
	h := newHarness(t)
	_, clid, _ := h.exchangeID("owner", "verifier", 0)
	other := h.peer(7, "owner")
	if st, _ := other.createSession(clid, 1, defaultFore); st != nfs4.ErrClidInuse {
		t.Fatalf("other principal confirming: %d", st)
	}
	if st, _ := h.createSession(clid, 1, defaultFore); st != nfs4.OK {
		t.Fatalf("own principal confirming: %d", st)
	}
	if st, _ := other.createSession(clid, 2, defaultFore); st != nfs4.OK {
		t.Fatalf("other principal on the confirmed record: %d", st)
	}
}

// TestFreeOpenStateid: FREE_STATEID of an open stateid, named as the
// current stateid right after OPEN, is NFS4ERR_LOCKS_HELD (pynfs CSID9; the
// current stateid was taken literally: STALE_STATEID).
func TestFreeOpenStateid(t *testing.T) {
	h := newHarness(t)
	h.session()
	_, st := h.ops(3, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessBoth)
		e.Uint32(nfs4.ShareDenyNone)
		e.Uint64(h.clid)
		e.String("o")
		e.Uint32(nfs4.OpenCreate)
		e.Uint32(nfs4.CreateUnchecked)
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
		e.Uint32(nfs4.ClaimNull)
		e.String("f")
		e.Uint32(nfs4.OpFreeStateid)
		nfs4.CurrentStateid.Encode(e)
	})
	if st != nfs4.ErrLocksHeld {
		t.Fatalf("FREE_STATEID of the open: %d", st)
	}
}

// TestSecinfoNoNameParent: SECINFO_NO_NAME of the root's parent is
// NFS4ERR_NOENT (pynfs SECNN3; it answered OK); of a directory's parent,
// OK.
func TestSecinfoNoNameParent(t *testing.T) {
	h := newHarness(t)
	h.session()
	if err := os.Mkdir(filepath.Join(h.dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if st := h.opStatus(h.rootFH(), nfs4.OpSecinfoNoName, func(e *xdr.Encoder) { e.Uint32(secinfoStyleParent) }); st != nfs4.ErrNoent {
		t.Fatalf("parent of the root: %d", st)
	}
	if st := h.opStatus(h.lookupFH("d"), nfs4.OpSecinfoNoName, func(e *xdr.Encoder) { e.Uint32(secinfoStyleParent) }); st != nfs4.OK {
		t.Fatalf("parent of d: %d", st)
	}
	if st := h.opStatus(h.rootFH(), nfs4.OpSecinfoNoName, func(e *xdr.Encoder) { e.Uint32(2) }); st != nfs4.ErrInval {
		t.Fatalf("style 2: %d", st)
	}
}

// rootFH returns the root's file handle.
func (h *harness) rootFH() []byte {
	h.t.Helper()
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		h.t.Fatalf("root: %d", st)
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	return bytes.Clone(d.Opaque(128))
}

// TestVerify: VERIFY of what GETATTR returned is OK and NVERIFY of it
// NFS4ERR_SAME; a changed value flips both; write-only attributes are
// NFS4ERR_INVAL (pynfs VF1r; both ops were NOTSUPP).
func TestVerify(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("12345"))
	fh := h.lookupFH("f")
	req := nfs4.BitmapOf(nfs4.AttrSupportedAttrs, nfs4.AttrType, nfs4.AttrChange, nfs4.AttrSize,
		nfs4.AttrFsid, nfs4.AttrFilehandle, nfs4.AttrFileid, nfs4.AttrMode, nfs4.AttrOwner)
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpGetattr)
		req.Encode(e)
	})
	if st != nfs4.OK {
		t.Fatalf("GETATTR: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(t, d, nfs4.OpGetattr, nfs4.OK)
	if got := nfs4.DecodeBitmap(d); got != req {
		t.Fatalf("GETATTR returned %v", got)
	}
	vals := bytes.Clone(d.Opaque(4096))
	check := func(op uint32, bits nfs4.Bitmap, vals []byte, want nfs4.Status) {
		t.Helper()
		if st := h.opStatus(fh, op, func(e *xdr.Encoder) {
			bits.Encode(e)
			e.Opaque(vals)
		}); st != want {
			t.Fatalf("op %d: %d, want %d", op, st, want)
		}
	}
	check(nfs4.OpVerify, req, vals, nfs4.OK)
	check(nfs4.OpNverify, req, vals, nfs4.ErrSame)
	size := nfs4.BitmapOf(nfs4.AttrSize)
	check(nfs4.OpVerify, size, []byte{0, 0, 0, 0, 0, 0, 0, 6}, nfs4.ErrNotSame)
	check(nfs4.OpNverify, size, []byte{0, 0, 0, 0, 0, 0, 0, 6}, nfs4.OK)
	check(nfs4.OpVerify, size, []byte{0, 0, 0, 0, 0, 0, 0, 5}, nfs4.OK)
	check(nfs4.OpVerify, nfs4.BitmapOf(nfs4.AttrTimeModifySet), []byte{0, 0, 0, 0}, nfs4.ErrInval)
	check(nfs4.OpVerify, nfs4.BitmapOf(nfs4.AttrRdattrError), []byte{0, 0, 0, 0}, nfs4.ErrInval)
}

// TestAllocateBypassStateid: ALLOCATE with the all-ones stateid acts as
// with the anonymous one (pynfs ALLOC3; it was BAD_STATEID).
func TestAllocateBypassStateid(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", nil)
	if st := h.opStatus(h.lookupFH("f"), nfs4.OpAllocate, func(e *xdr.Encoder) {
		nfs4.BypassStateid.Encode(e)
		e.Uint64(0)
		e.Uint64(1)
	}); st != nfs4.OK {
		t.Fatalf("ALLOCATE with the bypass stateid: %d", st)
	}
	if fi, err := os.Stat(filepath.Join(h.dir, "f")); err != nil || fi.Size() != 1 {
		t.Fatalf("size after ALLOCATE: %v %v", fi, err)
	}
}

// TestSetattrModeOfSymlink: SETATTR of a symlink's mode succeeds and
// changes nothing, as knfsd (pynfs cleans its tree so; it was NOTSUPP).
func TestSetattrModeOfSymlink(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("target", nil)
	if err := os.Symlink("target", filepath.Join(h.dir, "l")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(filepath.Join(h.dir, "target"))
	if st := h.opStatus(h.lookupFH("l"), nfs4.OpSetattr, func(e *xdr.Encoder) {
		nfs4.AnonStateid.Encode(e)
		nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
		e.Uint32(4)
		e.Uint32(0o777)
	}); st != nfs4.OK {
		t.Fatalf("SETATTR mode of a symlink: %d", st)
	}
	if after, _ := os.Stat(filepath.Join(h.dir, "target")); after.Mode() != before.Mode() {
		t.Fatalf("the symlink's target changed mode: %v -> %v", before.Mode(), after.Mode())
	}
}

// TestExchangeIDSSV: EXCHANGE_ID asking for SP4_SSV state protection is
// decoded whole and refused with NFS4ERR_ENCR_ALG_UNSUPP, as knfsd does
// (it was NFS4ERR_BADXDR: the SSV arguments were left unread, pynfs
// EID50). A truncated SSV request is still BADXDR.
func TestExchangeIDSSV(t *testing.T) {
	h := newHarness(t)
	ssv := func(e *xdr.Encoder, cut bool) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("verifier"))
		e.String("ssv-owner")
		e.Uint32(0)
		e.Uint32(nfs4.SP4SSV)
		// spo_must_enforce (bitmap4: count, words): CREATE_SESSION,
		// DESTROY_SESSION, DESTROY_CLIENTID; spo_must_allow: CLOSE
		e.Uint32(2)
		e.Uint32(0)
		e.Uint32(1<<(nfs4.OpCreateSession-32) | 1<<(nfs4.OpDestroySession-32) | 1<<(nfs4.OpDestroyClientid-32))
		e.Uint32(1)
		e.Uint32(1 << nfs4.OpClose)
		e.Uint32(2) // hash algorithms: two OIDs
		e.Opaque([]byte{0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01})
		e.Opaque([]byte{0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a})
		if cut {
			return
		}
		e.Uint32(1) // encryption algorithms: one
		e.Opaque([]byte("giberrish_oid"))
		e.Uint32(4) // ssp_window
		e.Uint32(2) // ssp_num_gss_handles
		e.Uint32(0) // no nfs_impl_id4
	}
	if _, st, _ := h.compound(1, func(e *xdr.Encoder) { ssv(e, false) }); st != nfs4.ErrEncrAlgUnsupp {
		t.Fatalf("EXCHANGE_ID with SP4_SSV: %d, want NFS4ERR_ENCR_ALG_UNSUPP", st)
	}
	if _, st, _ := h.compound(1, func(e *xdr.Encoder) { ssv(e, true) }); st != nfs4.ErrBadXDR {
		t.Fatalf("EXCHANGE_ID with truncated SP4_SSV arguments: %d, want NFS4ERR_BADXDR", st)
	}
	// The server still works for the next client.
	if st, _, _ := h.exchangeID("after-ssv", "verifier", 0); st != nfs4.OK {
		t.Fatalf("EXCHANGE_ID after: %d", st)
	}
}

// TestDestroySessionLastOp: after a SEQUENCE of the same session,
// DESTROY_SESSION must be the last op (RFC 8881 section 18.37.3): not
// last, it is NFS4ERR_NOT_ONLY_OP and the session lives (pynfs DSESS9004;
// it was destroyed and the COMPOUND went on). Last, it destroys the
// session.
func TestDestroySessionLastOp(t *testing.T) {
	h := newHarness(t)
	h.session()
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroySession)
		e.Fixed(h.sess[:])
		e.Uint32(nfs4.OpPutrootfh)
	})
	if st != nfs4.ErrNotOnlyOp {
		t.Fatalf("SEQUENCE + DESTROY_SESSION (same session) + PUTROOTFH: %d, want NFS4ERR_NOT_ONLY_OP", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpDestroySession, nfs4.ErrNotOnlyOp)
	if _, st := h.ops(1, func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }); st != nfs4.OK {
		t.Fatalf("the session after the refused DESTROY_SESSION: %d", st)
	}
	if _, st := h.ops(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroySession)
		e.Fixed(h.sess[:])
	}); st != nfs4.OK {
		t.Fatalf("SEQUENCE + DESTROY_SESSION as the last op: %d", st)
	}
	if _, st := h.ops(1, func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }); st != nfs4.ErrBadsession {
		t.Fatalf("the destroyed session: %d, want NFS4ERR_BADSESSION", st)
	}
}

// TestServerOwnerPerKey: the server_owner4 major id and scope follow the
// handle key: the same across restarts on one state directory, another
// for another server on the same host (a pNFS data server beside its
// metadata server must not look like one server to a client's trunking
// detection).
func TestServerOwnerPerKey(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	if !bytes.Equal(serverOwner(a), serverOwner(a)) {
		t.Fatal("one key, two owners")
	}
	if bytes.Equal(serverOwner(a), serverOwner(b)) {
		t.Fatal("two keys, one owner")
	}
	if n := len(serverOwner(a)); n == 0 || n > nfs4.OpaqueLimit {
		t.Fatalf("owner of %d bytes", n)
	}
}
