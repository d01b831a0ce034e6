package nfs

import (
	"bytes"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// newMachHarness is newGSSHarness with one export that takes krb5p alone
// (sec=krb5p), rw.
func newMachHarness(t *testing.T) (*harness, func(cname string) *gssPeer) {
	t.Helper()
	kt, err := gss.FakeKeytab("nfs/server.test", gssTestRealm, "service-secret", 18)
	if err != nil {
		t.Fatal(err)
	}
	dir, state := t.TempDir(), t.TempDir()
	o := DefaultClientOptions()
	o.ReadOnly, o.Insecure = false, true
	o.Sec = exports.SecList(exports.SecKrb5p)
	s, err := NewServer(Config{Exports: []Export{{Path: dir, Clients: []ClientRule{{Spec: "*", Any: true, Options: o}}}},
		StateDir: state, GSS: gss.NewAcceptor(kt)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.gss.lookupFn = func(name string) (Cred, bool) {
		if name == "alice" {
			return Cred{UID: 1000, GID: 1000}, true
		}
		return Cred{}, false
	}
	h := &harness{t: t, s: s, conn: NewConn("127.0.0.1:700"), dir: dir, state: state}
	return h, func(cname string) *gssPeer { return h.gssInit(kt, cname) }
}

// encodeExchangeIDMach writes EXCHANGE_ID with state protection how
// (SP4_MACH_CRED: enforce and allow as spo_must_enforce, spo_must_allow).
func encodeExchangeIDMach(e *xdr.Encoder, owner string, how uint32, enforce, allow nfs4.Bitmap) {
	e.Uint32(nfs4.OpExchangeID)
	e.Fixed([]byte("verifier"))
	e.String(owner)
	e.Uint32(nfs4.ExchgIDUseNonPNFS)
	e.Uint32(how)
	if how == nfs4.SP4MachCred {
		enforce.Encode(e)
		allow.Encode(e)
	}
	e.Uint32(0)
}

func opsBitmap(ops ...uint32) nfs4.Bitmap {
	var b nfs4.Bitmap
	for _, op := range ops {
		b.Set(int(op))
	}
	return b
}

// knfsd's lists (nfsd4_exchange_id).
var (
	wantMachEnforce = opsBitmap(nfs4.OpBindConnToSession, nfs4.OpExchangeID, nfs4.OpCreateSession,
		nfs4.OpDestroySession, nfs4.OpDestroyClientid)
	allMachAllow = opsBitmap(nfs4.OpClose, nfs4.OpOpenDowngrade, nfs4.OpLocku, nfs4.OpDelegReturn,
		nfs4.OpTestStateid, nfs4.OpFreeStateid)
)

func TestMachCredExchangeID(t *testing.T) {
	h, peer := newMachHarness(t)
	m := peer("host/client.test")
	asked := allMachAllow.Or(opsBitmap(nfs4.OpRead, nfs4.OpWrite, nfs4.OpSetattr))
	for _, svc := range []uint32{gssSvcInteg, gssSvcPriv} {
		d, st := m.compound(svc, 1, func(e *xdr.Encoder) {
			encodeExchangeIDMach(e, "mach-owner", nfs4.SP4MachCred, asked, asked)
		})
		if st != nfs4.OK {
			t.Fatalf("svc %d: EXCHANGE_ID %d", svc, st)
		}
		opResult(t, d, nfs4.OpExchangeID, nfs4.OK)
		d.Uint64()
		d.Uint32()
		d.Uint32()
		if how := d.Uint32(); how != nfs4.SP4MachCred {
			t.Fatalf("svc %d: spr_how %d", svc, how)
		}
		enf, allow := nfs4.DecodeBitmap(d), nfs4.DecodeBitmap(d)
		if enf != wantMachEnforce || allow != allMachAllow {
			t.Fatalf("svc %d: must_enforce %x must_allow %x, want %x %x", svc, enf, allow, wantMachEnforce, allMachAllow)
		}
	}
	// Asked for part of the list, it gets that part.
	d, _ := m.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		encodeExchangeIDMach(e, "mach-owner-2", nfs4.SP4MachCred, nfs4.Bitmap{}, opsBitmap(nfs4.OpClose, nfs4.OpRead))
	})
	opResult(t, d, nfs4.OpExchangeID, nfs4.OK)
	d.Skip(16)
	d.Uint32()
	if enf, allow := nfs4.DecodeBitmap(d), nfs4.DecodeBitmap(d); enf != wantMachEnforce || allow != opsBitmap(nfs4.OpClose) {
		t.Fatalf("must_enforce %x must_allow %x", enf, allow)
	}
	// Plain krb5 and AUTH_SYS: NFS4ERR_INVAL, as knfsd
	// (svc_rqst_integrity_protected).
	if _, st := m.compound(gssSvcNone, 1, func(e *xdr.Encoder) {
		encodeExchangeIDMach(e, "mach-owner-3", nfs4.SP4MachCred, asked, asked)
	}); st != nfs4.ErrInval {
		t.Fatalf("krb5 SP4_MACH_CRED: %d, want INVAL", st)
	}
	if _, st, _ := h.compound(1, func(e *xdr.Encoder) {
		encodeExchangeIDMach(e, "sys-owner", nfs4.SP4MachCred, asked, asked)
	}); st != nfs4.ErrInval {
		t.Fatalf("AUTH_SYS SP4_MACH_CRED: %d, want INVAL", st)
	}
	// SP4_NONE over krb5i still answers SP4_NONE.
	d, _ = m.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		encodeExchangeIDMach(e, "none-owner", nfs4.SP4None, nfs4.Bitmap{}, nfs4.Bitmap{})
	})
	opResult(t, d, nfs4.OpExchangeID, nfs4.OK)
	d.Skip(16)
	if how := d.Uint32(); how != nfs4.SP4None {
		t.Fatalf("SP4_NONE answered %d", how)
	}
	// SP4_SSV: NFS4ERR_ENCR_ALG_UNSUPP (knfsd).
	if _, st := m.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("verifier"))
		e.String("ssv-owner")
		e.Uint32(0)
		e.Uint32(nfs4.SP4SSV)
		e.Uint32(0) // enforce
		e.Uint32(0) // allow
		e.Uint32(0) // hash algs
		e.Uint32(0) // encr algs
		e.Uint32(1) // window
		e.Uint32(1) // handles
		e.Uint32(0)
	}); st != nfs4.ErrEncrAlgUnsupp {
		t.Fatalf("SP4_SSV: %d", st)
	}
}

// machSession makes a client with SP4_MACH_CRED from m (krb5i) and a
// session for it in h. other, another machine principal (mapped to the
// same anonymous ids), is refused CREATE_SESSION first.
func machSession(t *testing.T, h *harness, m, other *gssPeer) {
	t.Helper()
	d, st := m.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		encodeExchangeIDMach(e, "mach-owner", nfs4.SP4MachCred, wantMachEnforce, allMachAllow)
	})
	if st != nfs4.OK {
		t.Fatalf("EXCHANGE_ID: %d", st)
	}
	opResult(t, d, nfs4.OpExchangeID, nfs4.OK)
	h.clid = d.Uint64()
	seq := d.Uint32()
	cs := func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpCreateSession)
		e.Uint64(h.clid)
		e.Uint32(seq)
		e.Uint32(0)
		for _, a := range [][6]uint32{{0, 2 << 20, 2 << 20, 8192, 16, 64}, {0, 4096, 4096, 0, 2, 1}} {
			for _, v := range a {
				e.Uint32(v)
			}
			e.Uint32(0)
		}
		e.Uint32(0x40000000)
		e.Uint32(1)
		e.Uint32(nfs4.AuthNone)
	}
	if _, st := other.compound(gssSvcInteg, 1, cs); st != nfs4.ErrWrongCred {
		t.Fatalf("CREATE_SESSION by another machine principal: %d, want WRONG_CRED", st)
	}
	d, st = m.compound(gssSvcInteg, 1, cs)
	if st != nfs4.OK {
		t.Fatalf("CREATE_SESSION: %d", st)
	}
	opResult(t, d, nfs4.OpCreateSession, nfs4.OK)
	copy(h.sess[:], d.Fixed(16))
	h.seq = 0
	tb := h.s.state
	tb.mu.Lock()
	cl := tb.clients[h.clid]
	tb.mu.Unlock()
	if st := tb.reclaimComplete(cl); st != nfs4.OK {
		t.Fatalf("RECLAIM_COMPLETE: %d", st)
	}
}

// TestMachCredStateOps: alice (krb5p, the export's only flavour) opens a
// file in the session of a client made with SP4_MACH_CRED; the machine
// principal, over krb5i, may CLOSE it (spo_must_allow passes sec=) but
// not GETATTR it (WRONGSEC); another machine principal may neither
// CLOSE it (WRONGSEC) nor destroy the session or the client id
// (WRONG_CRED, spo_must_enforce).
func TestMachCredStateOps(t *testing.T) {
	h, peer := newMachHarness(t)
	h.write("f", []byte("data"))
	m, other, alice := peer("host/client.test"), peer("host/other.test"), peer("alice")
	machSession(t, h, m, other)

	// alice: LOOKUP f, GETFH; then OPEN it.
	d, st := alice.compound(gssSvcPriv, 4, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("f")
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		t.Fatalf("alice LOOKUP: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpLookup, nfs4.OK)
	opResult(t, d, nfs4.OpGetfh, nfs4.OK)
	fh := bytes.Clone(d.Opaque(nfs4.FHSize))
	d, st = alice.compound(gssSvcPriv, 3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessRead)
		e.Uint32(0)
		e.Uint64(h.clid)
		e.String("alice-owner")
		e.Uint32(nfs4.OpenNoCreate)
		e.Uint32(nfs4.ClaimNull)
		e.String("f")
	})
	if st != nfs4.OK {
		t.Fatalf("alice OPEN: %d", st)
	}
	skipSequence(t, d)
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpOpen, nfs4.OK)
	sid := nfs4.DecodeStateid(d)

	closeBy := func(p *gssPeer, svc uint32) nfs4.Status {
		_, st := p.compound(svc, 3, func(e *xdr.Encoder) {
			h.sequence(e)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpClose)
			e.Uint32(0)
			sid.Encode(e)
		})
		return st
	}
	// The machine principal over krb5i: any op but an allowed one is
	// refused by the export's sec=krb5p.
	if _, st := m.compound(gssSvcInteg, 3, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpGetattr)
		nfs4.BitmapOf(nfs4.AttrType).Encode(e)
	}); st != nfs4.ErrWrongsec {
		t.Fatalf("machine GETATTR: %d, want WRONGSEC", st)
	}
	if st := closeBy(other, gssSvcInteg); st != nfs4.ErrWrongsec {
		t.Fatalf("CLOSE by another machine principal: %d, want WRONGSEC", st)
	}
	if st := closeBy(m, gssSvcInteg); st != nfs4.OK {
		t.Fatalf("CLOSE by the machine principal: %d", st)
	}

	// spo_must_enforce: another principal may not destroy the session or
	// the client id.
	if _, st := other.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroySession)
		e.Fixed(h.sess[:])
	}); st != nfs4.ErrWrongCred {
		t.Fatalf("DESTROY_SESSION by another principal: %d, want WRONG_CRED", st)
	}
	if _, st := other.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpBindConnToSession)
		e.Fixed(h.sess[:])
		e.Uint32(nfs4.CDRFore)
		e.Bool(false)
	}); st != nfs4.ErrWrongCred {
		t.Fatalf("BIND_CONN_TO_SESSION by another principal: %d, want WRONG_CRED", st)
	}
	if _, st := m.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroySession)
		e.Fixed(h.sess[:])
	}); st != nfs4.OK {
		t.Fatalf("DESTROY_SESSION by the machine principal: %d", st)
	}
	destroyClid := func(p *gssPeer) nfs4.Status {
		_, st := p.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpDestroyClientid)
			e.Uint64(h.clid)
		})
		return st
	}
	if st := destroyClid(other); st != nfs4.ErrWrongCred {
		t.Fatalf("DESTROY_CLIENTID by another principal: %d, want WRONG_CRED", st)
	}
	// An EXCHANGE_ID update from another principal: WRONG_CRED too.
	if _, st := other.compound(gssSvcInteg, 1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("verifier"))
		e.String("mach-owner")
		e.Uint32(nfs4.ExchgIDUseNonPNFS | nfs4.ExchgIDUpdConfirmedRecA)
		e.Uint32(nfs4.SP4None)
		e.Uint32(0)
	}); st != nfs4.ErrWrongCred {
		t.Fatalf("EXCHANGE_ID update by another principal: %d, want WRONG_CRED", st)
	}
	if st := destroyClid(m); st != nfs4.OK {
		t.Fatalf("DESTROY_CLIENTID by the machine principal: %d", st)
	}
}

// FuzzStateProtect: state_protect4_a from any bytes decodes without a
// panic, and SP4_MACH_CRED never grants an op outside machAllowOps.
func FuzzStateProtect(f *testing.F) {
	e := xdr.NewEncoder(64)
	e.Uint32(nfs4.SP4MachCred)
	wantMachEnforce.Encode(e)
	allMachAllow.Or(opsBitmap(nfs4.OpRead)).Encode(e)
	f.Add(e.AppendTo(nil))
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 2, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff})
	cr := Cred{Flavor: nfs4.AuthGSS, Service: gssSvcInteg, Principal: "host/x@R"}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := xdr.NewDecoder(b)
		sp, st := decodeStateProtect(d)
		if st != nfs4.OK || d.Err() != nil {
			return
		}
		m, st := machCredFor(sp, cr)
		if sp.how == nfs4.SP4MachCred && (st != nfs4.OK || m == nil || m.allow.Or(machAllowOps) != machAllowOps) {
			t.Fatalf("%+v: %v %d", sp, m, st)
		}
	})
}

// FuzzHoldsOp: the spo_must_allow scan over any bytes ends without a
// panic.
func FuzzHoldsOp(f *testing.F) {
	e := xdr.NewEncoder(64)
	e.Uint32(nfs4.OpGetattr)
	nfs4.BitmapOf(nfs4.AttrType).Encode(e)
	e.Uint32(nfs4.OpClose)
	e.Uint32(0)
	e.Fixed(make([]byte, 16))
	f.Add(e.AppendTo(nil))
	f.Add([]byte{0, 0, 0, 4})
	f.Add([]byte{0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		holdsOp(b, allMachAllow)
	})
}

func TestHoldsOp(t *testing.T) {
	e := xdr.NewEncoder(64)
	e.Uint32(nfs4.OpGetattr)
	nfs4.BitmapOf(nfs4.AttrType).Encode(e)
	getattr := e.AppendTo(nil)
	e.Uint32(nfs4.OpClose)
	e.Uint32(0)
	e.Fixed(make([]byte, 16))
	both := e.AppendTo(nil)
	if holdsOp(getattr, allMachAllow) || !holdsOp(both, allMachAllow) || holdsOp(both, opsBitmap(nfs4.OpLocku)) {
		t.Fatal("holdsOp")
	}
	// Past an op it cannot skip (an unknown number), nothing is found.
	if holdsOp(append([]byte{0, 0, 0x27, 0x10}, both...), allMachAllow) {
		t.Fatal("scan went past an unknown op")
	}
}
