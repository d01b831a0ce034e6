package gss

import (
	"encoding/binary"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Initiator holds a client's Kerberos credentials (a TGT from a password
// or a keytab) and makes initial context tokens for services.
type Initiator struct {
	cl *client.Client
}

// InitiatorConfig says how to get a TGT.
type InitiatorConfig struct {
	Principal string // "user@REALM" or "nfs/host@REALM"
	Password  string // or:
	Keytab    string
	Krb5Conf  string // krb5.conf path (KDC addresses)
}

// NewInitiator logs in to the KDC.
func NewInitiator(cfg InitiatorConfig) (*Initiator, error) {
	conf, err := config.Load(cfg.Krb5Conf)
	if err != nil {
		return nil, fmt.Errorf("gss: %s: %w", cfg.Krb5Conf, err)
	}
	pn, realm := types.ParseSPNString(cfg.Principal)
	if realm == "" {
		realm = conf.LibDefaults.DefaultRealm
	}
	name := pn.PrincipalNameString()
	var cl *client.Client
	switch {
	case cfg.Keytab != "":
		kt, err := keytab.Load(cfg.Keytab)
		if err != nil {
			return nil, fmt.Errorf("gss: keytab %s: %w", cfg.Keytab, err)
		}
		cl = client.NewWithKeytab(name, realm, kt, conf, client.DisablePAFXFAST(true))
	default:
		cl = client.NewWithPassword(name, realm, cfg.Password, conf, client.DisablePAFXFAST(true))
	}
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("gss: login as %s: %w", cfg.Principal, err)
	}
	return &Initiator{cl: cl}, nil
}

// Init gets a ticket for spn ("nfs/host") and returns the initial context
// token (an AP-REQ with a fresh subkey, without mutual authentication:
// RPCSEC_GSS's reply verifiers, under that subkey, authenticate the
// server) and the context's per-message tokens.
func (in *Initiator) Init(spn string) ([]byte, *Tokens, error) {
	tkt, key, err := in.cl.GetServiceTicket(spn)
	if err != nil {
		return nil, nil, fmt.Errorf("gss: ticket for %s: %w", spn, err)
	}
	return InitToken(in.cl.Credentials.Domain(), in.cl.Credentials.CName(), tkt, key)
}

// InitToken builds the AP-REQ token from a service ticket and its key.
func InitToken(realm string, cname types.PrincipalName, tkt messages.Ticket, key types.EncryptionKey) ([]byte, *Tokens, error) {
	auth, err := types.NewAuthenticator(realm, cname)
	if err != nil {
		return nil, nil, err
	}
	ck := make([]byte, 24)
	binary.LittleEndian.PutUint32(ck, 16)
	binary.LittleEndian.PutUint32(ck[20:], flagInteg|flagConf|flagSequence)
	auth.Cksum = types.Checksum{CksumType: 0x8003, Checksum: ck}
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, nil, err
	}
	if err := auth.GenerateSeqNumberAndSubKey(key.KeyType, et.GetKeyByteSize()); err != nil {
		return nil, nil, err
	}
	k, err := NewKey(auth.SubKey)
	if err != nil {
		return nil, nil, err
	}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		return nil, nil, err
	}
	b, err := req.Marshal()
	if err != nil {
		return nil, nil, err
	}
	t := &Tokens{Key: k}
	t.SetSeq(uint64(auth.SeqNumber))
	return frame(0x0100, b), t, nil
}

// Close forgets the credentials.
func (in *Initiator) Close() { in.cl.Destroy() }
