package nfs

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// needFHArgs are the ops that act on the current filehandle, written out
// here rather than read from the table, with well-formed arguments. LOCK
// asks for a range NFS4ERR_INVAL refuses and WRITE for an unknown
// stable_how: without a filehandle both are NFS4ERR_NOFILEHANDLE, knfsd's
// order (nfsd4_proc_compound checks ALLOWED_WITHOUT_FH before the op runs).
var needFHArgs = map[uint32]func(e *xdr.Encoder){
	nfs4.OpAccess: func(e *xdr.Encoder) { e.Uint32(0x3f) },
	nfs4.OpClose: func(e *xdr.Encoder) {
		e.Uint32(0)
		nfs4.AnonStateid.Encode(e)
	},
	nfs4.OpCommit: func(e *xdr.Encoder) { e.Uint64(0); e.Uint32(0) },
	nfs4.OpCreate: func(e *xdr.Encoder) {
		e.Uint32(nfs4.NF4DIR)
		e.String("d")
		nfs4.Bitmap{}.Encode(e)
		e.Opaque(nil)
	},
	nfs4.OpDelegReturn: func(e *xdr.Encoder) { nfs4.AnonStateid.Encode(e) },
	nfs4.OpGetattr:     func(e *xdr.Encoder) { nfs4.BitmapOf(nfs4.AttrSize).Encode(e) },
	nfs4.OpGetfh:       func(*xdr.Encoder) {},
	nfs4.OpLink:        func(e *xdr.Encoder) { e.String("l") },
	nfs4.OpLock: func(e *xdr.Encoder) {
		e.Uint32(writeLT)
		e.Bool(false)
		e.Uint64(0)
		e.Uint64(0) // a zero length: NFS4ERR_INVAL, with a filehandle
		e.Bool(false)
		nfs4.AnonStateid.Encode(e)
		e.Uint32(0)
	},
	nfs4.OpLockt: func(e *xdr.Encoder) {
		e.Uint32(readLT)
		e.Uint64(0)
		e.Uint64(1)
		e.Uint64(1)
		e.String("owner")
	},
	nfs4.OpLocku: func(e *xdr.Encoder) {
		e.Uint32(readLT)
		e.Uint32(0)
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint64(1)
	},
	nfs4.OpLookup:  func(e *xdr.Encoder) { e.String("f") },
	nfs4.OpLookupp: func(*xdr.Encoder) {},
	nfs4.OpNverify: verifyArgsFH,
	nfs4.OpOpen: func(e *xdr.Encoder) {
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessRead)
		e.Uint32(0)
		e.Uint64(0)
		e.String("owner")
		e.Uint32(0) // OPEN4_NOCREATE
		e.Uint32(nfs4.ClaimNull)
		e.String("f")
	},
	nfs4.OpOpenDowngrade: func(e *xdr.Encoder) {
		nfs4.AnonStateid.Encode(e)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessRead)
		e.Uint32(0)
	},
	nfs4.OpRead: readArgsFH,
	nfs4.OpReaddir: func(e *xdr.Encoder) {
		e.Uint64(0)
		e.Fixed(make([]byte, nfs4.VerifierSize))
		e.Uint32(4096)
		e.Uint32(4096)
		nfs4.Bitmap{}.Encode(e)
	},
	nfs4.OpReadlink: func(*xdr.Encoder) {},
	nfs4.OpRemove:   func(e *xdr.Encoder) { e.String("f") },
	nfs4.OpRename:   func(e *xdr.Encoder) { e.String("a"); e.String("b") },
	nfs4.OpSavefh:   func(*xdr.Encoder) {},
	nfs4.OpSecinfo:  func(e *xdr.Encoder) { e.String("f") },
	nfs4.OpVerify:   verifyArgsFH,
	nfs4.OpWrite: func(e *xdr.Encoder) {
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(7) // no such stable_how: NFS4ERR_INVAL, with a filehandle
		e.Opaque([]byte("data"))
	},
	nfs4.OpSecinfoNoName: func(e *xdr.Encoder) { e.Uint32(secinfoStyleCurrentFH) },
	nfs4.OpWantDelegation: func(e *xdr.Encoder) {
		e.Uint32(nfs4.ShareAccessWantReadDeleg)
		e.Uint32(nfs4.ClaimFH)
	},
	nfs4.OpAllocate:   rangeArgsFH,
	nfs4.OpDeallocate: rangeArgsFH,
	nfs4.OpCopy: func(e *xdr.Encoder) {
		cloneArgsFH(e)
		e.Bool(true)
		e.Bool(true)
		e.Uint32(0)
	},
	nfs4.OpClone:         cloneArgsFH,
	nfs4.OpOffloadCancel: func(e *xdr.Encoder) { nfs4.AnonStateid.Encode(e) },
	nfs4.OpOffloadStatus: func(e *xdr.Encoder) { nfs4.AnonStateid.Encode(e) },
	nfs4.OpReadPlus:      readArgsFH,
	nfs4.OpSeek: func(e *xdr.Encoder) {
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(nfs4.ContentData)
	},
	nfs4.OpGetxattr: func(e *xdr.Encoder) { e.String("user.a") },
	nfs4.OpSetxattr: func(e *xdr.Encoder) {
		e.Uint32(nfs4.SetxattrEither)
		e.String("user.a")
		e.Opaque([]byte("v"))
	},
	nfs4.OpListxattrs:  func(e *xdr.Encoder) { e.Uint64(0); e.Uint32(4096) },
	nfs4.OpRemovexattr: func(e *xdr.Encoder) { e.String("user.a") },
}

func verifyArgsFH(e *xdr.Encoder) {
	nfs4.BitmapOf(nfs4.AttrSize).Encode(e)
	e.Opaque(make([]byte, 8))
}

func readArgsFH(e *xdr.Encoder) {
	nfs4.AnonStateid.Encode(e)
	e.Uint64(0)
	e.Uint32(4096)
}

func rangeArgsFH(e *xdr.Encoder) {
	nfs4.AnonStateid.Encode(e)
	e.Uint64(0)
	e.Uint64(4096)
}

func cloneArgsFH(e *xdr.Encoder) {
	nfs4.AnonStateid.Encode(e)
	nfs4.AnonStateid.Encode(e)
	e.Uint64(0)
	e.Uint64(0)
	e.Uint64(4096)
}

// TestNoFilehandle: each op that acts on the current filehandle, sent
// after SEQUENCE alone, is NFS4ERR_NOFILEHANDLE, and with its arguments
// cut short NFS4ERR_BADXDR (knfsd decodes the whole COMPOUND before it
// checks for a filehandle). The table marks exactly these ops opNeedFH
// (SETATTR checks by itself: its error result carries a bitmap).
func TestNoFilehandle(t *testing.T) {
	h := newHarness(t)
	h.session()
	for op := uint32(0); op <= nfs4.OpRemovexattr; op++ {
		info := lookupOp(op)
		if _, listed := needFHArgs[op]; (info != nil && info.flags&opNeedFH != 0) != listed {
			t.Errorf("%s: opNeedFH %v, listed %v", OpName(op), !listed, listed)
		}
	}
	send := func(op uint32, args func(*xdr.Encoder), cut bool) nfs4.Status {
		d, st, n := h.compound(2, func(e *xdr.Encoder) {
			h.sequence(e)
			e.Uint32(op)
			args(e)
			if cut {
				e.Truncate(e.Pos() - 4)
			}
		})
		skipSequence(t, d)
		if gotOp := d.Uint32(); n != 2 || gotOp != op || nfs4.Status(d.Uint32()) != st {
			t.Errorf("%s: %d results, op %d", OpName(op), n, gotOp)
		}
		return st
	}
	for op, args := range needFHArgs {
		if st := send(op, args, false); st != nfs4.ErrNofilehandle {
			t.Errorf("%s without a filehandle: status %d, want NOFILEHANDLE", OpName(op), st)
		}
		e := xdr.NewEncoder(64)
		if args(e); e.Len() == 0 {
			continue // no arguments to cut
		}
		if st := send(op, args, true); st != nfs4.ErrBadXDR {
			t.Errorf("%s cut short, without a filehandle: status %d, want BADXDR", OpName(op), st)
		}
	}
	// SETATTR's own check: NOFILEHANDLE with an empty bitmap.
	d, st, _ := h.compound(2, func(e *xdr.Encoder) {
		h.sequence(e)
		e.Uint32(nfs4.OpSetattr)
		nfs4.AnonStateid.Encode(e)
		nfs4.Bitmap{}.Encode(e)
		e.Opaque(nil)
	})
	skipSequence(t, d)
	opResult(t, d, nfs4.OpSetattr, nfs4.ErrNofilehandle)
	if got := nfs4.DecodeBitmap(d); st != nfs4.ErrNofilehandle || !got.Empty() || d.Err() != nil {
		t.Errorf("SETATTR without a filehandle: status %d, bitmap %v", st, got)
	}
}
