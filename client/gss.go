package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// RPCSEC_GSS (RFC 2203) on the client side: Options.Krb5 makes every call
// of the connection carry an RPCSEC_GSS credential of one context, made
// at Dial with the Kerberos initiator's ticket for the server. The
// sequence number of a call is its xid's distance from the first one,
// so replies find theirs without a table.

// Security services of RPCSEC_GSS, by their exports(5) names.
const (
	SecKrb5  = "krb5"  // the header is signed
	SecKrb5i = "krb5i" // arguments and results too
	SecKrb5p = "krb5p" // arguments and results are encrypted
)

// Krb5 configures RPCSEC_GSS with Kerberos.
type Krb5 struct {
	Initiator *gss.Initiator
	// Service is the server's principal without realm, "nfs/host".
	Service string
	// Sec is SecKrb5, SecKrb5i or SecKrb5p.
	Sec string
}

const (
	gssProcData    = 0
	gssProcInit    = 1
	gssProcDestroy = 3
)

type gssClient struct {
	tok    *gss.Tokens
	handle []byte
	svc    uint32
	base   uint32 // xid of sequence number 0
}

func gssService(sec string) (uint32, error) {
	switch sec {
	case SecKrb5:
		return 1, nil
	case SecKrb5i:
		return 2, nil
	case SecKrb5p:
		return 3, nil
	}
	return 0, fmt.Errorf("rpcsec_gss: unknown security flavor %q (krb5, krb5i, krb5p)", sec)
}

// gssInit makes the context: RPCSEC_GSS_INIT on the NULL procedure.
func (c *Client) gssInit(ctx context.Context, k *Krb5) error {
	g, err := gssInitOver(k, nfs4.ProgramNFS, nfs4.NFSVersion, c.t.nextXID(), func(rec []byte) ([]byte, error) {
		return c.RawCall(ctx, rec)
	})
	if err != nil {
		return err
	}
	g.base = c.t.nextXID()
	c.gss = g
	return nil
}

// gssInitOver makes a context with an INIT call of xid to program prog
// version vers, sent with roundTrip (the record without its mark in, the
// reply's out); the caller sets base.
func gssInitOver(k *Krb5, prog, vers, xid uint32, roundTrip func([]byte) ([]byte, error)) (*gssClient, error) {
	svc, err := gssService(k.Sec)
	if err != nil {
		return nil, err
	}
	tok, tokens, err := k.Initiator.Init(k.Service)
	if err != nil {
		return nil, err
	}
	e := xdr.NewEncoder(len(tok) + 128)
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(nfs4.RPCVersion)
	e.Uint32(prog)
	e.Uint32(vers)
	e.Uint32(nfs4.ProcNull)
	e.Uint32(nfs4.AuthGSS)
	e.Uint32(20)
	e.Uint32(1)
	e.Uint32(gssProcInit)
	e.Uint32(0)
	e.Uint32(svc)
	e.Uint32(0) // no handle
	e.Uint32(nfs4.AuthNone)
	e.Uint32(0)
	e.Opaque(tok)
	rec, err := roundTrip(e.Header())
	if err != nil {
		return nil, err
	}
	d := xdr.NewDecoder(rec)
	if d.Uint32() != xid || d.Uint32() != nfs4.MsgReply {
		return nil, errors.New("rpcsec_gss: bad INIT reply header")
	}
	if d.Uint32() == nfs4.MsgDenied {
		return nil, decodeDenied(d)
	}
	vf := d.Uint32()
	verf := d.Opaque(nfs4.MaxAuthBytes)
	if as := d.Uint32(); as != nfs4.AcceptSuccess {
		return nil, &RPCError{Stat: as}
	}
	handle := d.Opaque(64)
	major, minor, window := d.Uint32(), d.Uint32(), d.Uint32()
	d.Opaque(1 << 16) // no token back: mutual authentication was not asked
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("rpcsec_gss: INIT reply: %w", err)
	}
	if major != 0 {
		return nil, fmt.Errorf("rpcsec_gss: the server refused the context (major %#x minor %d)", major, minor)
	}
	if vf != nfs4.AuthGSS {
		return nil, errors.New("rpcsec_gss: INIT reply without a verifier")
	}
	var w [4]byte
	binary.BigEndian.PutUint32(w[:], window)
	if err := tokens.VerifyMIC(verf, w[:]); err != nil {
		return nil, fmt.Errorf("rpcsec_gss: INIT reply verifier: %w", err)
	}
	return &gssClient{tok: tokens, handle: append([]byte(nil), handle...), svc: svc}, nil
}

// buildCall encodes a COMPOUND call record under the context.
func (g *gssClient) buildCall(xid uint32, tag string, minor uint32, build BuildFunc) *xdr.Encoder {
	return g.buildRecord(xid, nfs4.ProgramNFS, nfs4.NFSVersion, nfs4.ProcCompound, func(e *xdr.Encoder) {
		npos := encodeCompoundHeader(e, tag, minor)
		e.Patch(npos, uint32(build(e)))
	})
}

// buildRecord encodes a call record of any program under the context,
// its arguments written by args.
func (g *gssClient) buildRecord(xid, prog, vers, proc uint32, args func(e *xdr.Encoder)) *xdr.Encoder {
	seq := xid - g.base
	e := xdr.NewEncoder(512)
	e.Reserve() // record mark
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(nfs4.RPCVersion)
	e.Uint32(prog)
	e.Uint32(vers)
	e.Uint32(proc)
	e.Uint32(nfs4.AuthGSS)
	e.Uint32(uint32(20 + len(g.handle) + xdr.Pad(len(g.handle))))
	e.Uint32(1)
	e.Uint32(gssProcData)
	e.Uint32(seq)
	e.Uint32(g.svc)
	e.Opaque(g.handle)
	verf := g.tok.MIC(e.Header()[4:])
	e.Uint32(nfs4.AuthGSS)
	e.Opaque(verf)
	lenPos := -1
	if g.svc != 1 {
		lenPos = e.Reserve()
		e.Uint32(seq)
	}
	args(e)
	if lenPos < 0 {
		finishRecord(e)
		return e
	}
	var body [][]byte
	skip, n := lenPos+4, 0
	for _, b := range e.Iovecs() {
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		body = append(body, b[skip:])
		n += len(b) - skip
		skip = 0
	}
	if g.svc == 2 {
		mic, err := g.tok.MICIov(body)
		if err != nil {
			panic(err) // a checked key's derivation does not fail
		}
		e.Patch(lenPos, uint32(n))
		e.Opaque(mic)
		finishRecord(e)
		return e
	}
	plain := make([]byte, 0, n)
	for _, b := range body {
		plain = append(plain, b...)
	}
	w, err := g.tok.Wrap(plain, true)
	if err != nil {
		panic(err)
	}
	out := xdr.NewEncoder(lenPos + 8)
	out.Fixed(e.Header()[:lenPos])
	out.Uint32(uint32(len(w)))
	out.Borrow(w)
	finishRecord(out)
	return out
}

// decode checks a COMPOUND reply's verifier and protection and parses
// its header.
func (g *gssClient) decode(rec []byte, xid uint32) (*Reply, error) {
	d, err := g.unwrap(rec, xid)
	if err != nil {
		return nil, err
	}
	return compoundResults(d, rec)
}

// unwrap checks a reply's verifier and protection and returns a decoder
// on its plain results; a reply not accepted with SUCCESS is an
// *RPCError.
func (g *gssClient) unwrap(rec []byte, xid uint32) (*xdr.Decoder, error) {
	seq := xid - g.base
	d := xdr.NewDecoder(rec)
	gotXID, mtype, stat := d.Uint32(), d.Uint32(), d.Uint32()
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("rpc reply header: %w", err)
	}
	if gotXID != xid || mtype != nfs4.MsgReply {
		return nil, fmt.Errorf("rpc: bad reply header (xid %#x want %#x, type %d)", gotXID, xid, mtype)
	}
	if stat == nfs4.MsgDenied {
		return nil, decodeDenied(d)
	}
	vf := d.Uint32()
	verf := d.Opaque(nfs4.MaxAuthBytes)
	as := d.Uint32()
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("rpc reply header: %w", err)
	}
	var sq [4]byte
	binary.BigEndian.PutUint32(sq[:], seq)
	if vf != nfs4.AuthGSS || g.tok.VerifyMIC(verf, sq[:]) != nil {
		return nil, errors.New("rpcsec_gss: reply verifier does not check")
	}
	if as != nfs4.AcceptSuccess {
		return nil, &RPCError{Stat: as}
	}
	if g.svc != 1 {
		var body []byte
		if g.svc == 2 {
			body = d.Opaque(len(rec))
			mic := d.Opaque(nfs4.MaxAuthBytes)
			if d.Err() != nil || g.tok.VerifyMIC(mic, body) != nil {
				return nil, errors.New("rpcsec_gss: reply integrity check failed")
			}
		} else {
			w := d.Opaque(len(rec))
			var sealed bool
			var err error
			if d.Err() == nil {
				body, sealed, err = g.tok.Unwrap(w)
			}
			if d.Err() != nil || err != nil || !sealed {
				return nil, errors.New("rpcsec_gss: reply privacy unwrap failed")
			}
		}
		if len(body) < 4 || binary.BigEndian.Uint32(body) != seq {
			return nil, errors.New("rpcsec_gss: reply sequence number mismatch")
		}
		d = xdr.NewDecoder(body[4:])
	}
	return d, nil
}

// GSS is an RPCSEC_GSS context for the calls of any ONC RPC program over
// a connection its user runs itself (nfsbench's NFSv3 and MOUNT client):
// NewGSS makes it, Call builds a call record and Reply checks the
// reply. A call's sequence number is its xid's distance from the first
// xid given to NewGSS, so xids must grow by one a call.
type GSS struct{ g *gssClient }

// NewGSS makes a context with k's principal: an RPCSEC_GSS_INIT call of
// xid to program prog version vers, which roundTrip sends (the record
// without its mark) and answers (the reply record). Calls then use xids
// from first on.
func NewGSS(k *Krb5, prog, vers, xid, first uint32, roundTrip func(record []byte) ([]byte, error)) (*GSS, error) {
	g, err := gssInitOver(k, prog, vers, xid, roundTrip)
	if err != nil {
		return nil, err
	}
	g.base = first
	return &GSS{g: g}, nil
}

// Call returns the record, record mark included, of a call of proc whose
// arguments args writes, protected as the context's service says.
func (x *GSS) Call(xid, prog, vers, proc uint32, args func(e *xdr.Encoder)) []byte {
	return x.g.buildRecord(xid, prog, vers, proc, args).AppendTo(nil)
}

// Reply checks the reply record (without its mark) to the call of xid
// and returns a decoder on its plain results; a reply not accepted with
// SUCCESS is an *RPCError.
func (x *GSS) Reply(rec []byte, xid uint32) (*xdr.Decoder, error) {
	return x.g.unwrap(rec, xid)
}

// decodeReply parses a COMPOUND reply, under the context when there is
// one.
func (c *Client) decodeReply(rec []byte, xid uint32) (*Reply, error) {
	if c.gss != nil {
		return c.gss.decode(rec, xid)
	}
	return decodeCompound(rec, xid)
}

// gssDestroy ends the context (RPCSEC_GSS_DESTROY on the NULL
// procedure), so the server need not keep it until it is evicted. Errors
// are ignored: the server drops contexts on its own.
func (c *Client) gssDestroy(ctx context.Context) {
	g := c.gss
	if g == nil {
		return
	}
	xid := c.t.nextXID()
	e := xdr.NewEncoder(128)
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(nfs4.RPCVersion)
	e.Uint32(nfs4.ProgramNFS)
	e.Uint32(nfs4.NFSVersion)
	e.Uint32(nfs4.ProcNull)
	e.Uint32(nfs4.AuthGSS)
	e.Uint32(uint32(20 + len(g.handle) + xdr.Pad(len(g.handle))))
	e.Uint32(1)
	e.Uint32(gssProcDestroy)
	e.Uint32(xid - g.base)
	e.Uint32(g.svc)
	e.Opaque(g.handle)
	verf := g.tok.MIC(e.Header())
	e.Uint32(nfs4.AuthGSS)
	e.Opaque(verf)
	c.RawCall(ctx, e.Header())
	c.gss = nil
}

// Krb5Context is one RPCSEC_GSS context of a Client's connection, for a
// principal other than the one of Options.Krb5 (a user beside the
// machine credential). See NewKrb5Context.
type Krb5Context struct{ g *gssClient }

// NewKrb5Context makes another context on the connection with k's
// principal, without using it: UseKrb5Context switches to it.
func (c *Client) NewKrb5Context(ctx context.Context, k *Krb5) (*Krb5Context, error) {
	prev := c.gss
	defer func() { c.gss = prev }()
	if err := c.gssInit(ctx, k); err != nil {
		return nil, err
	}
	return &Krb5Context{g: c.gss}, nil
}

// UseKrb5Context makes the calls from now on carry x's credential and
// returns the context used until now (nil: AUTH_SYS), to switch back.
// It must not be called while calls are in flight. Close destroys only
// the context in use then.
func (c *Client) UseKrb5Context(x *Krb5Context) *Krb5Context {
	var prev *Krb5Context
	if c.gss != nil {
		prev = &Krb5Context{g: c.gss}
	}
	c.gss = nil
	if x != nil {
		c.gss = x.g
	}
	return prev
}

// ExchangeIDResult is the last EXCHANGE_ID's result (its state
// protection among it).
func (c *Client) ExchangeIDResult() ExchangeIDRes { return c.exchange }
