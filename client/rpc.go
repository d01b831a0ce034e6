package client

import (
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Cred is an AUTH_SYS credential (RFC 5531 appendix A).
type Cred struct {
	Stamp   uint32
	Machine string
	UID     uint32
	GID     uint32
	GIDs    []uint32
}

// encodeCallHeader writes the record mark placeholder and an RPC call
// header for NFSv4 COMPOUND. The record mark is patched by finishRecord.
func encodeCallHeader(e *xdr.Encoder, xid uint32, cred *Cred) {
	encodeCallOf(e, xid, nfs4.ProgramNFS, nfs4.NFSVersion, nfs4.ProcCompound, cred)
}

// encodeCallOf writes the record mark placeholder and the header of a
// call of prog/vers/proc with cred (AUTH_NONE when nil).
func encodeCallOf(e *xdr.Encoder, xid, prog, vers, proc uint32, cred *Cred) {
	e.Reserve() // record mark
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(nfs4.RPCVersion)
	e.Uint32(prog)
	e.Uint32(vers)
	e.Uint32(proc)
	encodeCred(e, cred)
	e.Uint32(nfs4.AuthNone) // verifier
	e.Uint32(0)
}

// SysCall returns the record, record mark included, of a call of
// prog/vers/proc with the AUTH_SYS credential cred (AUTH_NONE when nil),
// whose arguments args writes (nil: none): what the NFSv3, MOUNT and NLM
// callers send; GSS.Call is its RPCSEC_GSS counterpart.
func SysCall(xid, prog, vers, proc uint32, cred *Cred, args func(e *xdr.Encoder)) []byte {
	e := xdr.NewEncoder(256)
	encodeCallOf(e, xid, prog, vers, proc, cred)
	if args != nil {
		args(e)
	}
	finishRecord(e)
	return e.AppendTo(nil)
}

func encodeCred(e *xdr.Encoder, cred *Cred) {
	if cred == nil {
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
		return
	}
	e.Uint32(nfs4.AuthSys)
	lenPos := e.Reserve()
	start := e.Pos()
	e.Uint32(cred.Stamp)
	e.String(cred.Machine)
	e.Uint32(cred.UID)
	e.Uint32(cred.GID)
	e.Uint32(uint32(len(cred.GIDs)))
	for _, g := range cred.GIDs {
		e.Uint32(g)
	}
	e.Patch(lenPos, uint32(e.Pos()-start))
}

// finishRecord patches the record mark reserved at position 0.
func finishRecord(e *xdr.Encoder) {
	e.Patch(0, xdr.RecordMark(e.Len()-4))
}

// RPCError is a reply that was denied or not accepted with SUCCESS.
type RPCError struct {
	Denied bool   // MSG_DENIED rather than MSG_ACCEPTED
	Stat   uint32 // accept_stat, or reject_stat when Denied
	Auth   uint32 // auth_stat for AUTH_ERROR
	Low    uint32 // version range for mismatch replies
	High   uint32
}

func (e *RPCError) Error() string {
	if e.Denied {
		if e.Stat == nfs4.RejectAuthError {
			return fmt.Sprintf("rpc: auth error %d", e.Auth)
		}
		return fmt.Sprintf("rpc: rpc version mismatch (%d-%d)", e.Low, e.High)
	}
	names := []string{"SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH", "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR"}
	if int(e.Stat) < len(names) {
		return "rpc: " + names[e.Stat]
	}
	return fmt.Sprintf("rpc: accept_stat %d", e.Stat)
}

// decodeReplyHeader reads an RPC reply header through the accept status,
// leaving d at the procedure results. It returns an *RPCError for anything
// but an accepted, successful reply.
func decodeReplyHeader(d *xdr.Decoder, xid uint32) error {
	gotXID := d.Uint32()
	mtype := d.Uint32()
	stat := d.Uint32()
	if err := d.Err(); err != nil {
		return fmt.Errorf("rpc reply header: %w", err)
	}
	if gotXID != xid || mtype != nfs4.MsgReply {
		return fmt.Errorf("rpc: bad reply header (xid %#x want %#x, type %d)", gotXID, xid, mtype)
	}
	if stat == nfs4.MsgDenied {
		return decodeDenied(d)
	}
	if stat != nfs4.MsgAccepted {
		return fmt.Errorf("rpc: bad reply_stat %d", stat)
	}
	d.Uint32()                  // verifier flavor
	d.Opaque(nfs4.MaxAuthBytes) // verifier body
	as := d.Uint32()
	if err := d.Err(); err != nil {
		return fmt.Errorf("rpc reply header: %w", err)
	}
	if as == nfs4.AcceptSuccess {
		return nil
	}
	re := &RPCError{Stat: as}
	if as == nfs4.AcceptProgMismatch {
		re.Low, re.High = d.Uint32(), d.Uint32()
	}
	return re
}

func decodeDenied(d *xdr.Decoder) error {
	re := &RPCError{Denied: true, Stat: d.Uint32()}
	switch re.Stat {
	case nfs4.RejectRPCMismatch:
		re.Low, re.High = d.Uint32(), d.Uint32()
	case nfs4.RejectAuthError:
		re.Auth = d.Uint32()
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("rpc denied reply: %w", err)
	}
	return re
}
