package client

import (
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Operation encoders: each writes the operation number and its arguments.

// EncodePutrootfh writes PUTROOTFH.
func EncodePutrootfh(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }

// EncodePutfh writes PUTFH.
func EncodePutfh(e *xdr.Encoder, fh []byte) {
	e.Uint32(nfs4.OpPutfh)
	e.Opaque(fh)
}

// EncodeGetfh writes GETFH.
func EncodeGetfh(e *xdr.Encoder) { e.Uint32(nfs4.OpGetfh) }

// EncodeLookup writes LOOKUP.
func EncodeLookup(e *xdr.Encoder, name string) {
	e.Uint32(nfs4.OpLookup)
	e.String(name)
}

// EncodeGetattr writes GETATTR.
func EncodeGetattr(e *xdr.Encoder, bm nfs4.Bitmap) {
	e.Uint32(nfs4.OpGetattr)
	bm.Encode(e)
}

// EncodeAccess writes ACCESS.
func EncodeAccess(e *xdr.Encoder, mask uint32) {
	e.Uint32(nfs4.OpAccess)
	e.Uint32(mask)
}

// EncodeReaddir writes READDIR.
func EncodeReaddir(e *xdr.Encoder, cookie uint64, verf [nfs4.VerifierSize]byte, dircount, maxcount uint32, bm nfs4.Bitmap) {
	e.Uint32(nfs4.OpReaddir)
	e.Uint64(cookie)
	e.Fixed(verf[:])
	e.Uint32(dircount)
	e.Uint32(maxcount)
	bm.Encode(e)
}

// OpenArgs are the OPEN arguments the client supports: CLAIM_NULL (Name
// set) or CLAIM_FH (Name empty), with or without create.
type OpenArgs struct {
	Access   uint32 // OPEN4_SHARE_ACCESS_* (want bits allowed)
	Deny     uint32
	ClientID uint64
	Owner    []byte
	Name     string
	ClaimFH  bool

	Create     bool                    // OPEN4_CREATE
	CreateMode uint32                  // nfs4.Create* (UNCHECKED4 ... EXCLUSIVE4_1)
	Attrs      *Attrs                  // createattrs (UNCHECKED4, GUARDED4, EXCLUSIVE4_1); nil: none
	Verifier   [nfs4.VerifierSize]byte // EXCLUSIVE4 and EXCLUSIVE4_1
}

// EncodeOpen writes OPEN, with createhow4 when a.Create is set.
func EncodeOpen(e *xdr.Encoder, a *OpenArgs) {
	e.Uint32(nfs4.OpOpen)
	e.Uint32(0) // seqid, ignored in 4.1
	e.Uint32(a.Access)
	e.Uint32(a.Deny)
	e.Uint64(a.ClientID)
	e.Opaque(a.Owner)
	encodeOpenHow(e, a)
	if a.ClaimFH {
		e.Uint32(nfs4.ClaimFH)
		return
	}
	e.Uint32(nfs4.ClaimNull)
	e.String(a.Name)
}

// EncodeClose writes CLOSE.
func EncodeClose(e *xdr.Encoder, sid nfs4.Stateid) {
	e.Uint32(nfs4.OpClose)
	e.Uint32(0)
	sid.Encode(e)
}

// EncodeRead writes READ.
func EncodeRead(e *xdr.Encoder, sid nfs4.Stateid, off uint64, count uint32) {
	e.Uint32(nfs4.OpRead)
	sid.Encode(e)
	e.Uint64(off)
	e.Uint32(count)
}

// EncodeReadPlus writes READ_PLUS.
func EncodeReadPlus(e *xdr.Encoder, sid nfs4.Stateid, off uint64, count uint32) {
	e.Uint32(nfs4.OpReadPlus)
	sid.Encode(e)
	e.Uint64(off)
	e.Uint32(count)
}

// EncodeSeek writes SEEK; what is nfs4.ContentData or nfs4.ContentHole.
func EncodeSeek(e *xdr.Encoder, sid nfs4.Stateid, off uint64, what uint32) {
	e.Uint32(nfs4.OpSeek)
	sid.Encode(e)
	e.Uint64(off)
	e.Uint32(what)
}

// EncodeReadlink writes READLINK.
func EncodeReadlink(e *xdr.Encoder) { e.Uint32(nfs4.OpReadlink) }

// EncodeTestStateid writes TEST_STATEID.
func EncodeTestStateid(e *xdr.Encoder, sids []nfs4.Stateid) {
	e.Uint32(nfs4.OpTestStateid)
	e.Uint32(uint32(len(sids)))
	for _, s := range sids {
		s.Encode(e)
	}
}

// EncodeFreeStateid writes FREE_STATEID.
func EncodeFreeStateid(e *xdr.Encoder, sid nfs4.Stateid) {
	e.Uint32(nfs4.OpFreeStateid)
	sid.Encode(e)
}

// encodeOpenHow writes openflag4.
func encodeOpenHow(e *xdr.Encoder, a *OpenArgs) {
	if !a.Create {
		e.Uint32(nfs4.OpenNoCreate)
		return
	}
	e.Uint32(nfs4.OpenCreate)
	e.Uint32(a.CreateMode)
	switch a.CreateMode {
	case nfs4.CreateExclusive:
		e.Fixed(a.Verifier[:])
	case nfs4.CreateExclusive41:
		e.Fixed(a.Verifier[:])
		encodeAttrsOrEmpty(e, a.Attrs)
	default:
		encodeAttrsOrEmpty(e, a.Attrs)
	}
}

// encodeAttrsOrEmpty writes a fattr4, an empty one for nil.
func encodeAttrsOrEmpty(e *xdr.Encoder, a *Attrs) {
	if a == nil {
		a = &Attrs{}
	}
	EncodeFattr(e, a)
}
