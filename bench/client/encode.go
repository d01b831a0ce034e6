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

// OpenArgs are the OPEN arguments the client supports: no create, share
// deny none, CLAIM_NULL (Name set) or CLAIM_FH (Name empty).
type OpenArgs struct {
	Access   uint32 // OPEN4_SHARE_ACCESS_* (want bits allowed)
	Deny     uint32
	ClientID uint64
	Owner    []byte
	Name     string
	ClaimFH  bool
}

// EncodeOpen writes OPEN without create.
func EncodeOpen(e *xdr.Encoder, a *OpenArgs) {
	e.Uint32(nfs4.OpOpen)
	e.Uint32(0) // seqid, ignored in 4.1
	e.Uint32(a.Access)
	e.Uint32(a.Deny)
	e.Uint64(a.ClientID)
	e.Opaque(a.Owner)
	e.Uint32(nfs4.OpenNoCreate)
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
