package nfs

import (
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Cred is the caller's identity from AUTH_SYS (AUTH_NONE maps to nobody).
type Cred struct {
	UID, GID uint32
	Flavor   uint32
	NGIDs    int
	GIDs     [maxAuxGIDs]uint32
	// Service is RPCSEC_GSS's (gssSvcNone, gssSvcInteg, gssSvcPriv) when
	// Flavor is nfs4.AuthGSS, and Principal the Kerberos principal
	// ("alice@REALM") the ids were mapped from (rpc_gss_cred.go).
	Service   uint32
	Principal string
}

const nobody = 65534

// maxAuxGIDs is AUTH_SYS's limit on supplementary groups.
const maxAuxGIDs = 16

type call struct {
	xid     uint32
	rpcvers uint32
	prog    uint32
	vers    uint32
	proc    uint32
	cred    Cred
	authErr uint32
	// RPCSEC_GSS (rpc_gss.go): the credential, the end of the header its
	// verifier's MIC covers, and the verifier.
	gss      gssCred
	hdrEnd   int
	verfFlav uint32
	verf     []byte
	// A DATA call's context and reply verifier, for the NFSv3 and MOUNT
	// handlers' headers (replyAccepted).
	gssx    *gssCtx
	gssVerf []byte
}

// decodeCall reads an RPC call header. ok is false when the record is not a
// call we can answer at all (too short or a REPLY).
func decodeCall(d *xdr.Decoder) (c call, ok bool) {
	c.xid = d.Uint32()
	mtype := d.Uint32()
	if d.Err() != nil || mtype != nfs4.MsgCall {
		return c, false
	}
	c.rpcvers = d.Uint32()
	c.prog = d.Uint32()
	c.vers = d.Uint32()
	c.proc = d.Uint32()
	flavor := d.Uint32()
	body := d.Opaque(nfs4.MaxAuthBytes)
	c.hdrEnd = d.Offset()
	c.verfFlav = d.Uint32()
	c.verf = d.Opaque(nfs4.MaxAuthBytes)
	if d.Err() != nil {
		c.authErr = nfs4.AuthBadCred
		return c, true
	}
	c.cred = Cred{UID: nobody, GID: nobody, Flavor: flavor}
	switch flavor {
	case nfs4.AuthNone:
	case nfs4.AuthSys:
		if !c.decodeAuthSys(body) {
			c.authErr = nfs4.AuthBadCred
		}
	case nfs4.AuthGSS:
		if !c.gss.decode(body) {
			c.authErr = nfs4.AuthBadCred
		}
	default:
		c.authErr = nfs4.AuthBadCred
	}
	return c, true
}

// decodeAuthSys reads authsys_parms: stamp, machinename<255>, uid, gid,
// gids<16>.
func (c *call) decodeAuthSys(body []byte) bool {
	d := xdr.NewDecoder(body)
	d.Uint32()
	d.Opaque(255)
	c.cred.UID = d.Uint32()
	c.cred.GID = d.Uint32()
	n := d.ArrayLen(maxAuxGIDs, 4)
	for i := 0; i < n; i++ {
		c.cred.GIDs[i] = d.Uint32()
	}
	c.cred.NGIDs = n
	return d.Err() == nil
}

func encodeReplyHeader(e *xdr.Encoder, xid uint32) {
	e.Uint32(xid)
	e.Uint32(nfs4.MsgReply)
}

// encodeAccepted writes an accepted reply header with an AUTH_NONE verifier.
func encodeAccepted(e *xdr.Encoder, xid, stat uint32) {
	encodeReplyHeader(e, xid)
	e.Uint32(nfs4.MsgAccepted)
	e.Uint32(nfs4.AuthNone)
	e.Uint32(0)
	e.Uint32(stat)
}

func encodeRPCMismatch(e *xdr.Encoder, xid uint32) {
	encodeReplyHeader(e, xid)
	e.Uint32(nfs4.MsgDenied)
	e.Uint32(nfs4.RejectRPCMismatch)
	e.Uint32(nfs4.RPCVersion)
	e.Uint32(nfs4.RPCVersion)
}

func encodeAuthError(e *xdr.Encoder, xid, stat uint32) {
	encodeReplyHeader(e, xid)
	e.Uint32(nfs4.MsgDenied)
	e.Uint32(nfs4.RejectAuthError)
	e.Uint32(stat)
}
