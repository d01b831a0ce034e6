package client

import (
	"context"
	"fmt"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// ExchangeIDRes is EXCHANGE_ID4resok (state protection SP4_NONE or
// SP4_MACH_CRED).
type ExchangeIDRes struct {
	ClientID    uint64
	Seqid       uint32
	Flags       uint32
	ServerMinor uint64
	ServerMajor []byte
	ServerScope []byte
	ImplDomain  string
	ImplName    string

	// StateProtect is spr_how: nfs4.SP4None or nfs4.SP4MachCred, then
	// with the server's spo_must_enforce and spo_must_allow (op numbers).
	StateProtect           uint32
	MustEnforce, MustAllow nfs4.Bitmap
}

// EncodeExchangeID writes EXCHANGE_ID with SP4_NONE and no implementation id.
func EncodeExchangeID(e *xdr.Encoder, verifier [nfs4.VerifierSize]byte, owner string, flags uint32) {
	EncodeExchangeIDImpl(e, verifier, owner, flags, "", "")
}

// ImplDomain and ImplName are the implementation id (nfs_impl_id4) the
// client sends in EXCHANGE_ID unless Options say otherwise. An
// nfsd-uring metadata server gives striped pNFS layouts only to clients
// whose id says they take them (this client does: client/pnfs.go).
const (
	ImplDomain = "nfsd-uring.dev"
	ImplName   = "nfsd-uring client"
)

// EncodeExchangeIDImpl is EncodeExchangeID with an implementation id
// (eia_client_impl_id) of domain and name; none when both are empty.
func EncodeExchangeIDImpl(e *xdr.Encoder, verifier [nfs4.VerifierSize]byte, owner string, flags uint32, domain, name string) {
	encodeExchangeID(e, verifier, owner, flags, nil, domain, name)
}

// MachCredOps are the op numbers a client asks for with SP4_MACH_CRED:
// spo_must_enforce as knfsd enforces them (BIND_CONN_TO_SESSION,
// EXCHANGE_ID, CREATE_SESSION, DESTROY_SESSION, DESTROY_CLIENTID) and
// spo_must_allow the state ops the machine credential may send (CLOSE,
// OPEN_DOWNGRADE, LOCKU, DELEGRETURN, TEST_STATEID, FREE_STATEID).
var MachCredOps = [2]nfs4.Bitmap{
	bitmapOfOps(nfs4.OpBindConnToSession, nfs4.OpExchangeID, nfs4.OpCreateSession, nfs4.OpDestroySession, nfs4.OpDestroyClientid),
	bitmapOfOps(nfs4.OpClose, nfs4.OpOpenDowngrade, nfs4.OpLocku, nfs4.OpDelegReturn, nfs4.OpTestStateid, nfs4.OpFreeStateid),
}

func bitmapOfOps(ops ...uint32) nfs4.Bitmap {
	var b nfs4.Bitmap
	for _, op := range ops {
		b.Set(int(op))
	}
	return b
}

// EncodeExchangeIDMach is EncodeExchangeIDImpl asking SP4_MACH_CRED
// with the ops of mach (spo_must_enforce, spo_must_allow; MachCredOps).
func EncodeExchangeIDMach(e *xdr.Encoder, verifier [nfs4.VerifierSize]byte, owner string, flags uint32, mach [2]nfs4.Bitmap, domain, name string) {
	encodeExchangeID(e, verifier, owner, flags, &mach, domain, name)
}

func encodeExchangeID(e *xdr.Encoder, verifier [nfs4.VerifierSize]byte, owner string, flags uint32, mach *[2]nfs4.Bitmap, domain, name string) {
	e.Uint32(nfs4.OpExchangeID)
	e.Fixed(verifier[:])
	e.String(owner)
	e.Uint32(flags)
	if mach == nil {
		e.Uint32(nfs4.SP4None)
	} else {
		e.Uint32(nfs4.SP4MachCred)
		mach[0].Encode(e)
		mach[1].Encode(e)
	}
	if domain == "" && name == "" {
		e.Uint32(0) // eia_client_impl_id<1>
		return
	}
	e.Uint32(1)
	e.String(domain)
	e.String(name)
	e.Int64(0) // nii_date: not given
	e.Uint32(0)
}

// DecodeExchangeIDRes reads EXCHANGE_ID4resok.
func DecodeExchangeIDRes(d *xdr.Decoder) (ExchangeIDRes, error) {
	var r ExchangeIDRes
	r.ClientID = d.Uint64()
	r.Seqid = d.Uint32()
	r.Flags = d.Uint32()
	switch r.StateProtect = d.Uint32(); r.StateProtect {
	case nfs4.SP4None:
	case nfs4.SP4MachCred:
		r.MustEnforce = nfs4.DecodeBitmap(d)
		r.MustAllow = nfs4.DecodeBitmap(d)
	default:
		if d.Err() == nil {
			return r, fmt.Errorf("EXCHANGE_ID: server chose state protection %d", r.StateProtect)
		}
	}
	r.ServerMinor = d.Uint64()
	r.ServerMajor = clone(d.Opaque(nfs4.OpaqueLimit))
	r.ServerScope = clone(d.Opaque(nfs4.OpaqueLimit))
	if d.ArrayLen(1, 16) == 1 {
		r.ImplDomain = string(d.String(nfs4.OpaqueLimit))
		r.ImplName = string(d.String(nfs4.OpaqueLimit))
		d.Skip(12) // nii_date
	}
	if err := d.Err(); err != nil {
		return r, fmt.Errorf("EXCHANGE_ID result: %w", err)
	}
	return r, nil
}

// ExchangeID establishes the client id (SP4_NONE, or SP4_MACH_CRED with
// Options.MachCred; USE_NON_PNFS unless Options.ExchangeFlags say
// otherwise). With Options.MachCred a server that answers SP4_NONE is
// an error.
func (c *Client) ExchangeID(ctx context.Context) (ExchangeIDRes, error) {
	var verf [nfs4.VerifierSize]byte
	copy(verf[:], fmt.Sprint(time.Now().UnixNano()))
	r, err := c.RawCompound(ctx, c.opts.Minor, func(e *xdr.Encoder) int {
		flags := c.opts.ExchangeFlags
		if flags == 0 {
			flags = nfs4.ExchgIDUseNonPNFS
		}
		dom, name := c.opts.ImplDomain, c.opts.ImplName
		if dom == "" && name == "" {
			dom, name = ImplDomain, ImplName
		}
		if c.opts.MachCred {
			EncodeExchangeIDMach(e, verf, c.opts.Owner, flags, MachCredOps, dom, name)
		} else {
			EncodeExchangeIDImpl(e, verf, c.opts.Owner, flags, dom, name)
		}
		return 1
	})
	if err != nil {
		return ExchangeIDRes{}, err
	}
	if err := r.Op(nfs4.OpExchangeID); err != nil {
		return ExchangeIDRes{}, err
	}
	res, err := DecodeExchangeIDRes(r.D)
	if err != nil {
		return res, err
	}
	if c.opts.MachCred && res.StateProtect != nfs4.SP4MachCred {
		return res, fmt.Errorf("EXCHANGE_ID: SP4_MACH_CRED asked, state protection %d granted", res.StateProtect)
	}
	c.exchange = res
	c.clientID = res.ClientID
	c.exFlags.Store(res.Flags)
	return res, nil
}

// EncodeCreateSession writes CREATE_SESSION with no back channel security
// beyond AUTH_NONE and no flags.
func EncodeCreateSession(e *xdr.Encoder, clientID uint64, seqid uint32, fore, back ChannelAttrs) {
	EncodeCreateSessionFlags(e, clientID, seqid, 0, fore, back)
}

// EncodeCreateSessionFlags is EncodeCreateSession with csa_flags.
func EncodeCreateSessionFlags(e *xdr.Encoder, clientID uint64, seqid, flags uint32, fore, back ChannelAttrs) {
	e.Uint32(nfs4.OpCreateSession)
	e.Uint64(clientID)
	e.Uint32(seqid)
	e.Uint32(flags)
	fore.encode(e)
	back.encode(e)
	e.Uint32(0x40000000) // csa_cb_program
	e.Uint32(1)          // csa_sec_parms<>
	e.Uint32(nfs4.AuthNone)
}

// CreateSession creates the session and its slot table from what the
// server grants.
func (c *Client) CreateSession(ctx context.Context, clientID uint64, seqid uint32) error {
	fore := ChannelAttrs{
		MaxRequest: c.opts.MaxRequest, MaxResponse: c.opts.MaxResponse,
		MaxRespCached: 64 << 10, MaxOps: 16, MaxRequests: c.opts.Slots,
	}
	back := ChannelAttrs{MaxRequest: 4096, MaxResponse: 4096, MaxOps: 2, MaxRequests: 1}
	r, err := c.RawCompound(ctx, c.opts.Minor, func(e *xdr.Encoder) int {
		var flags uint32
		if c.opts.BackChannel {
			flags = nfs4.CreateSessionConnBackChan
		}
		EncodeCreateSessionFlags(e, clientID, seqid, flags, fore, back)
		return 1
	})
	if err != nil {
		return err
	}
	if err := r.Op(nfs4.OpCreateSession); err != nil {
		return err
	}
	var id [nfs4.SessionIDSize]byte
	copy(id[:], r.D.Fixed(nfs4.SessionIDSize))
	r.D.Uint32() // csr_sequence
	r.D.Uint32() // csr_flags
	granted := decodeChannelAttrs(r.D)
	decodeChannelAttrs(r.D)
	if err := r.Done(); err != nil {
		return fmt.Errorf("CREATE_SESSION result: %w", err)
	}
	if granted.MaxRequests == 0 || granted.MaxRequests > 1<<16 {
		return fmt.Errorf("CREATE_SESSION: server granted %d slots", granted.MaxRequests)
	}
	c.clientID = clientID
	c.sess = newSession(id, granted)
	return nil
}

// ReclaimComplete sends RECLAIM_COMPLETE(rca_one_fs = false).
func (c *Client) ReclaimComplete(ctx context.Context) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		e.Uint32(nfs4.OpReclaimComplete)
		e.Bool(false)
		return 1
	}, func(r *Reply) error { return r.Op(nfs4.OpReclaimComplete) })
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
