package nfs

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestLockArgsNamed: LOCK's reclaim and LOCKU's lock type used to be
// decoded and dropped. A reclaim outside a grace period (there never is
// one) is NFS4ERR_NO_GRACE and takes no lock, as OPEN's CLAIM_PREVIOUS; a
// LOCKU with no lock type is NFS4ERR_INVAL, as LOCK's, and unlocks
// nothing. The same requests without those faults work.
func TestLockArgsNamed(t *testing.T) {
	h := newHarness(t)
	h.session()
	st, open := h.openFile("f", "o1", nfs4.ShareAccessBoth)
	if st != nfs4.OK {
		t.Fatal(st)
	}
	fh := h.lookupFH("f")
	lockArgs := func(reclaim bool) func(e *xdr.Encoder) {
		return func(e *xdr.Encoder) {
			e.Uint32(writeLT)
			e.Bool(reclaim)
			e.Uint64(0)
			e.Uint64(10)
			e.Bool(true)
			e.Uint32(0)
			open.Encode(e)
			e.Uint32(0)
			e.Uint64(h.clientID())
			e.String("locker")
		}
	}
	locktOther := func() nfs4.Status {
		return h.opStatus(fh, nfs4.OpLockt, func(e *xdr.Encoder) {
			e.Uint32(writeLT)
			e.Uint64(0)
			e.Uint64(10)
			e.Uint64(h.clientID())
			e.String("other")
		})
	}
	if st := h.opStatus(fh, nfs4.OpLock, lockArgs(true)); st != nfs4.ErrNoGrace {
		t.Fatalf("LOCK reclaim: %d, want NO_GRACE", st)
	}
	if st := locktOther(); st != nfs4.OK {
		t.Fatalf("after a refused reclaim LOCKT: %d, want no lock", st)
	}
	st, lsid := h.lock(fh, open, nfs4.Stateid{}, 0, 10)
	if st != nfs4.OK {
		t.Fatalf("LOCK: %d", st)
	}
	locku := func(typ uint32) nfs4.Status {
		return h.opStatus(fh, nfs4.OpLocku, func(e *xdr.Encoder) {
			e.Uint32(typ)
			e.Uint32(0)
			lsid.Encode(e)
			e.Uint64(0)
			e.Uint64(10)
		})
	}
	for _, typ := range []uint32{0, writeWLT + 1} {
		if st := locku(typ); st != nfs4.ErrInval {
			t.Fatalf("LOCKU type %d: %d, want INVAL", typ, st)
		}
	}
	if st := locktOther(); st != nfs4.ErrDenied {
		t.Fatalf("after a refused LOCKU LOCKT: %d, want DENIED", st)
	}
	if st := locku(readLT); st != nfs4.OK {
		t.Fatalf("LOCKU: %d", st)
	}
	if st := locktOther(); st != nfs4.OK {
		t.Fatalf("after LOCKU LOCKT: %d", st)
	}
}
