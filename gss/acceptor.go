package gss

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/types"
)

// krb5OID is the Kerberos 5 mechanism, 1.2.840.113554.1.2.2, DER encoded.
var krb5OID = []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02}

// KRB5OID is the mechanism OID's DER bytes without tag and length, as
// SECINFO lists it (sec_oid4).
var KRB5OID = krb5OID[2:]

// GSS flags in the authenticator checksum (RFC 4121 section 4.1.1.1).
const (
	flagDeleg    = 1
	flagMutual   = 2
	flagReplay   = 4
	flagSequence = 8
	flagConf     = 16
	flagInteg    = 32
)

// Context is an established security context.
type Context struct {
	Tokens
	// Initiator is the client principal, "name@REALM" (components
	// joined with "/").
	Initiator string
	// Expiry is the end of the ticket's validity.
	Expiry time.Time
	// ServiceRealm is the realm of the service principal the ticket was
	// for.
	ServiceRealm string
}

// Acceptor accepts contexts for the service principals in a keytab.
type Acceptor struct {
	kt   *keytab.Keytab
	skew time.Duration
	// Service, when set, is the only service name accepted (the first
	// component of the ticket's server principal: "nfs"), so a keytab
	// that also holds host/ keys does not let those tickets in.
	Service string
}

// LoadKeytab reads a keytab file.
func LoadKeytab(path string) (*keytab.Keytab, error) {
	kt, err := keytab.Load(path)
	if err != nil {
		return nil, fmt.Errorf("gss: keytab %s: %w", path, err)
	}
	return kt, nil
}

// NewAcceptor accepts tickets for any service principal in kt.
func NewAcceptor(kt *keytab.Keytab) *Acceptor {
	return &Acceptor{kt: kt, skew: 5 * time.Minute}
}

// frame adds the GSS-API initial context token framing (RFC 2743 3.1).
func frame(tokID uint16, inner []byte) []byte {
	b := make([]byte, 0, len(krb5OID)+2+len(inner))
	b = append(b, krb5OID...)
	b = binary.BigEndian.AppendUint16(b, tokID)
	b = append(b, inner...)
	return asn1tools.AddASNAppTag(b, 0)
}

// unframe strips the framing and checks the mechanism.
func unframe(tok []byte) (tokID uint16, inner []byte, err error) {
	var raw asn1.RawValue
	rest, err := asn1.Unmarshal(tok, &raw)
	if err != nil || len(rest) != 0 || raw.Class != asn1.ClassApplication || raw.Tag != 0 {
		return 0, nil, fmt.Errorf("%w: framing", ErrDefective)
	}
	b := raw.Bytes
	if len(b) < len(krb5OID)+2 || string(b[:len(krb5OID)]) != string(krb5OID) {
		return 0, nil, fmt.Errorf("%w: not the krb5 mechanism", ErrDefective)
	}
	b = b[len(krb5OID):]
	return binary.BigEndian.Uint16(b), b[2:], nil
}

// Accept checks an initial context token (an AP-REQ) and returns the
// context and the token to send back: an AP-REP when the initiator asked
// for mutual authentication, else nil. The context is complete after one
// call (no DCE style, no user-to-user).
func (a *Acceptor) Accept(tok []byte) (ctx *Context, out []byte, err error) {
	id, inner, err := unframe(tok)
	if err != nil {
		return nil, nil, err
	}
	if id != 0x0100 {
		return nil, nil, fmt.Errorf("%w: token id %#x is not AP-REQ", ErrDefective, id)
	}
	var req messages.APReq
	if err := req.Unmarshal(inner); err != nil {
		return nil, nil, fmt.Errorf("gss: AP-REQ: %w", err)
	}
	if a.Service != "" && (len(req.Ticket.SName.NameString) == 0 || req.Ticket.SName.NameString[0] != a.Service) {
		return nil, nil, fmt.Errorf("gss: ticket for %s, not a %s/ service", req.Ticket.SName.PrincipalNameString(), a.Service)
	}
	st := service.NewSettings(a.kt, service.MaxClockSkew(a.skew), service.DecodePAC(false),
		service.Logger(log.New(io.Discard, "", 0)))
	ok, _, err := service.VerifyAPREQ(&req, st)
	if err != nil {
		return nil, nil, fmt.Errorf("gss: AP-REQ refused: %w", err)
	}
	if !ok {
		return nil, nil, errors.New("gss: AP-REQ refused")
	}
	auth := req.Authenticator
	var gflags uint32
	if auth.Cksum.CksumType == 0x8003 && len(auth.Cksum.Checksum) >= 24 {
		gflags = binary.LittleEndian.Uint32(auth.Cksum.Checksum[20:24])
	}
	key := req.Ticket.DecryptedEncPart.Key
	if len(auth.SubKey.KeyValue) > 0 {
		key = auth.SubKey
	}
	k, err := NewKey(key)
	if err != nil {
		return nil, nil, err
	}
	ctx = &Context{
		Initiator: auth.CName.PrincipalNameString() + "@" + auth.CRealm,
		Expiry:    req.Ticket.DecryptedEncPart.EndTime,

		ServiceRealm: req.Ticket.Realm,
	}
	ctx.Key = k
	ctx.Acceptor = true
	mutual := gflags&flagMutual != 0 || types.IsFlagSet(&req.APOptions, 2) // mutual-required
	if !mutual {
		return ctx, nil, nil
	}
	seq, err := rand.Int(rand.Reader, big.NewInt(1<<30))
	if err != nil {
		return nil, nil, err
	}
	ctx.SetSeq(seq.Uint64())
	rep, err := apRep(req.Ticket.DecryptedEncPart.Key, auth, seq.Int64())
	if err != nil {
		return nil, nil, err
	}
	return ctx, frame(0x0200, rep), nil
}

type encAPRepPart struct {
	CTime          time.Time `asn1:"generalized,explicit,tag:0"`
	Cusec          int       `asn1:"explicit,tag:1"`
	SequenceNumber int64     `asn1:"explicit,tag:3"`
}

type apRepMsg struct {
	PVNO    int                 `asn1:"explicit,tag:0"`
	MsgType int                 `asn1:"explicit,tag:1"`
	EncPart types.EncryptedData `asn1:"explicit,tag:2"`
}

// apRep is KRB_AP_REP (RFC 4120 5.5.2) answering auth, under the ticket's
// session key, with no subkey (the initiator's subkey protects the
// messages).
func apRep(sessKey types.EncryptionKey, auth types.Authenticator, seq int64) ([]byte, error) {
	part, err := asn1.Marshal(encAPRepPart{CTime: auth.CTime, Cusec: auth.Cusec, SequenceNumber: seq})
	if err != nil {
		return nil, err
	}
	part = asn1tools.AddASNAppTag(part, 27)
	ed, err := crypto.GetEncryptedData(part, sessKey, 12, 0)
	if err != nil {
		return nil, err
	}
	b, err := asn1.Marshal(apRepMsg{PVNO: 5, MsgType: 15, EncPart: ed})
	if err != nil {
		return nil, err
	}
	return asn1tools.AddASNAppTag(b, 15), nil
}
