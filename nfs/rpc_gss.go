package nfs

import (
	"encoding/binary"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// RPCSEC_GSS (RFC 2203) with the Kerberos 5 mechanism (gss/): contexts
// are made by INIT calls on the NULL procedure; a DATA call's verifier is
// a MIC of its header, checked before anything else, and its sequence
// number must be new within the window (a replay is dropped without an
// answer). With integrity (krb5i) the arguments come as
// rpc_gss_integ_data (sequence number and arguments, and their MIC),
// with privacy (krb5p) as a sealed Wrap token of the same; the results go
// back the same way, made in Complete once the reads are done: krb5i
// MICs the reply's iovecs in place, krb5p copies the body into the
// token.

// GSS-API major status codes (RFC 2744) an INIT reply carries.
const (
	gssComplete       = 0
	gssDefectiveToken = 9 << 16
	gssFailure        = 13 << 16
)

// gssReply is what Complete needs to protect a DATA reply's body.
type gssReply struct {
	ctx    *gssCtx
	svc    uint32
	lenPos int // the body's length field (databody_integ / databody_priv)
}

// encodeGSSAccepted writes an accepted reply header whose verifier is
// verf (RPCSEC_GSS's MIC of the sequence number or window).
func encodeGSSAccepted(e *xdr.Encoder, xid uint32, verf []byte, stat uint32) {
	encodeReplyHeader(e, xid)
	e.Uint32(nfs4.MsgAccepted)
	if verf == nil {
		e.Uint32(nfs4.AuthNone)
		e.Uint32(0)
	} else {
		e.Uint32(nfs4.AuthGSS)
		e.Opaque(verf)
	}
	e.Uint32(stat)
}

func be32(v uint32) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return b[:]
}

// handleGSS answers a call with an RPCSEC_GSS credential (Handle's part
// for flavor 6). d is positioned at the arguments.
func (s *Server) handleGSS(c *Conn, cl *call, d *xdr.Decoder, rec []byte, rep *Reply) {
	e := rep.Enc
	switch {
	case cl.rpcvers != nfs4.RPCVersion:
		encodeRPCMismatch(e, cl.xid)
		return
	case cl.authErr != nfs4.AuthOK || s.gss == nil:
		encodeAuthError(e, cl.xid, nfs4.AuthBadCred)
		return
	}
	g := &cl.gss
	switch g.proc {
	case gssProcInit, gssProcContinue:
		s.gssInit(c, cl, d, rep)
		return
	}
	x := s.gss.find(g.handle)
	if x == nil {
		encodeAuthError(e, cl.xid, nfs4.AuthGSSCredProblem)
		return
	}
	if cl.verfFlav != nfs4.AuthGSS || x.g.VerifyMIC(cl.verf, rec[:cl.hdrEnd]) != nil {
		s.gss.refused.Add(1)
		encodeAuthError(e, cl.xid, nfs4.AuthGSSCredProblem)
		return
	}
	if g.seq >= gssMaxSeq || time.Now().After(x.expiry) {
		s.gss.drop(x)
		encodeAuthError(e, cl.xid, nfs4.AuthGSSCtxProblem)
		return
	}
	if !x.checkSeq(g.seq) {
		s.gss.replays.Add(1)
		rep.Drop = true // RFC 2203 5.3.3.1: silently discarded
		return
	}
	x.used.Store(time.Now().UnixNano())
	verf := x.g.MIC(be32(g.seq))
	if g.proc == gssProcDestroy {
		if cl.proc != nfs4.ProcNull {
			encodeAuthError(e, cl.xid, nfs4.AuthBadCred)
			return
		}
		s.gss.drop(x)
		encodeGSSAccepted(e, cl.xid, verf, nfs4.AcceptSuccess)
		return
	}
	// DATA.
	if !s.gssUnwrapArgs(x, g, d) {
		s.gss.refused.Add(1)
		encodeGSSAccepted(e, cl.xid, verf, nfs4.AcceptGarbageArgs)
		return
	}
	cl.cred = x.cred
	cl.cred.Service = g.svc
	switch {
	case cl.prog == progMount || cl.prog == nfs4.ProgramNFS && cl.vers == nfs3Version:
		// NFSv3 and MOUNT (nfs3.go, mount3.go) write their header with
		// replyAccepted: the verifier, and the protected body's start.
		cl.gssx, cl.gssVerf = x, verf
		s.handleV3(c, cl, d, rep)
	case cl.prog != nfs4.ProgramNFS:
		encodeGSSAccepted(e, cl.xid, verf, nfs4.AcceptProgUnavail)
	case cl.vers != nfs4.NFSVersion:
		encodeGSSAccepted(e, cl.xid, verf, nfs4.AcceptProgMismatch)
		e.Uint32(nfs3Version)
		e.Uint32(nfs4.NFSVersion)
	case cl.proc == nfs4.ProcNull:
		encodeGSSAccepted(e, cl.xid, verf, nfs4.AcceptSuccess)
		s.gssBody(x, g, rep)
	case cl.proc == nfs4.ProcCompound:
		encodeGSSAccepted(e, cl.xid, verf, nfs4.AcceptSuccess)
		statPos := e.Pos() - 4
		s.gssBody(x, g, rep)
		rep.bodyPos = e.Pos()
		if !s.compoundBody(c, cl.cred, d, len(rec), rep) {
			e.Truncate(statPos)
			e.Uint32(nfs4.AcceptGarbageArgs)
			rep.gss = gssReply{}
			return
		}
		if rep.replay.ok {
			e.Truncate(rep.bodyPos)
			rep.emitReplay()
		}
	default:
		encodeGSSAccepted(e, cl.xid, verf, nfs4.AcceptProcUnavail)
	}
}

// gssBody starts a protected reply body: its length (patched in
// Complete) and the sequence number.
func (s *Server) gssBody(x *gssCtx, g *gssCred, rep *Reply) {
	if g.svc == gssSvcNone {
		return
	}
	rep.gss = gssReply{ctx: x, svc: g.svc, lenPos: rep.Enc.Reserve()}
	rep.Enc.Uint32(g.seq)
}

// replyAccepted writes the accepted reply header of an NFSv3 or MOUNT
// call: AUTH_NONE's verifier, or an RPCSEC_GSS DATA call's, and then for
// SUCCESS the start of its protected body. It returns the position of
// accept_stat, for replyGarbage.
func (s *Server) replyAccepted(cl *call, rep *Reply, stat uint32) int {
	if cl.gssx == nil {
		encodeAccepted(rep.Enc, cl.xid, stat)
		return rep.Enc.Pos() - 4
	}
	encodeGSSAccepted(rep.Enc, cl.xid, cl.gssVerf, stat)
	pos := rep.Enc.Pos() - 4
	if stat == nfs4.AcceptSuccess {
		s.gssBody(cl.gssx, &cl.gss, rep)
	}
	return pos
}

// replyGarbage turns the reply replyAccepted began at statPos into
// GARBAGE_ARGS, with no body to protect.
func replyGarbage(rep *Reply, statPos int) {
	rep.Enc.Truncate(statPos)
	rep.Enc.Uint32(nfs4.AcceptGarbageArgs)
	rep.Reads, rep.segs = rep.Reads[:0], rep.segs[:0]
	rep.gss = gssReply{}
}

// gssUnwrapArgs checks a DATA call's protected arguments and leaves d on
// the plain ones: false when the MIC or the seal is bad or the sequence
// number inside is not the credential's.
func (s *Server) gssUnwrapArgs(x *gssCtx, g *gssCred, d *xdr.Decoder) bool {
	var body []byte
	switch g.svc {
	case gssSvcNone:
		return true
	case gssSvcInteg:
		body = d.Opaque(s.MaxRecord())
		mic := d.Opaque(nfs4.MaxAuthBytes)
		if d.Err() != nil || x.g.VerifyMIC(mic, body) != nil {
			return false
		}
	case gssSvcPriv:
		tok := d.Opaque(s.MaxRecord())
		if d.Err() != nil {
			return false
		}
		var sealed bool
		var err error
		body, sealed, err = x.g.Unwrap(tok)
		if err != nil || !sealed {
			return false
		}
	default:
		return false
	}
	if len(body) < 4 || binary.BigEndian.Uint32(body) != g.seq {
		return false
	}
	d.Reset(body[4:])
	return true
}

// gssInit answers RPCSEC_GSS_INIT (and CONTINUE_INIT, which the krb5
// mechanism never needs): rpc_gss_init_res.
func (s *Server) gssInit(c *Conn, cl *call, d *xdr.Decoder, rep *Reply) {
	e := rep.Enc
	if cl.proc != nfs4.ProcNull || cl.prog != nfs4.ProgramNFS && cl.prog != progMount {
		encodeAuthError(e, cl.xid, nfs4.AuthBadCred)
		return
	}
	tok := d.Opaque(64 << 10)
	if d.Err() != nil {
		encodeGSSAccepted(e, cl.xid, nil, nfs4.AcceptGarbageArgs)
		return
	}
	var major uint32 = gssFailure
	var x *gssCtx
	var out []byte
	if cl.gss.proc == gssProcInit && len(cl.gss.handle) == 0 {
		gc, o, err := s.gss.acc.Accept(tok)
		switch {
		case err == nil:
			x = s.gss.add(c.addr, gc, gc.ServiceRealm)
			out, major = o, gssComplete
		default:
			major = gssDefectiveToken
			s.log.Debug("RPCSEC_GSS context refused", "remote", c.Remote, "err", err)
		}
	}
	if x == nil {
		s.gss.refused.Add(1)
		encodeGSSAccepted(e, cl.xid, nil, nfs4.AcceptSuccess)
		e.Opaque(nil)
		e.Uint32(major)
		e.Uint32(0)
		e.Uint32(0)
		e.Opaque(nil)
		return
	}
	encodeGSSAccepted(e, cl.xid, x.g.MIC(be32(gssWindow)), nfs4.AcceptSuccess)
	e.Opaque(binary.BigEndian.AppendUint64(nil, x.id))
	e.Uint32(major)
	e.Uint32(0)
	e.Uint32(gssWindow)
	e.Opaque(out)
}

// gssComplete protects a DATA reply's body once its reads are in:
// krb5i appends the MIC of the body's iovecs, krb5p replaces the body by
// a sealed token of it (a copy).
func (s *Server) gssComplete(rep *Reply) {
	gr := rep.gss
	e := rep.Enc
	start := gr.lenPos + 4 // the sequence number, then the results
	iov := e.Iovecs()
	var body [][]byte
	skip := start
	n := 0
	for _, b := range iov {
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		body = append(body, b[skip:])
		n += len(b) - skip
		skip = 0
	}
	if gr.svc == gssSvcInteg {
		mic, _ := gr.ctx.g.MICIov(body) // nil only if key derivation failed: the client refuses the reply
		e.Patch(gr.lenPos, uint32(n))
		e.Opaque(mic)
		return
	}
	plain := make([]byte, 0, n)
	for _, b := range body {
		plain = append(plain, b...)
	}
	tok, err := gr.ctx.g.Wrap(plain, true)
	head := append([]byte(nil), e.Header()[:gr.lenPos]...)
	e.Reset()
	e.Fixed(head)
	if err != nil {
		e.Uint32(0) // no body rather than a plain one
		return
	}
	e.Uint32(uint32(len(tok)))
	e.Borrow(tok)
}

// gssScanSkip says how far past an RPCSEC_GSS DATA call's verifier its
// plain arguments begin, for the scans that read them without checking
// anything (Inline, WriteAlign): ok is false where they cannot be read
// in place (krb5p, a context call). Other flavors: 0, true.
func (cl *call) gssScanSkip() (skip int, ok bool) {
	if cl.cred.Flavor != nfs4.AuthGSS {
		return 0, true
	}
	if cl.authErr != nfs4.AuthOK || cl.gss.proc != gssProcData {
		return 0, false
	}
	switch cl.gss.svc {
	case gssSvcNone:
		return 0, true
	case gssSvcInteg:
		return 8, true // databody_integ's length and sequence number
	}
	return 0, false
}
