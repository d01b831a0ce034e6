// Package gss is the narrow part of GSS-API (RFC 2743) with the Kerberos 5
// mechanism (RFC 4121) that RPCSEC_GSS needs: accepting and initiating a
// context from an AP-REQ (parsed and checked with gokrb5), and the
// per-message tokens, MIC and Wrap with and without confidentiality,
// written here (gokrb5 does not seal Wrap tokens).
//
// Only the RFC 4121 token format is spoken: the AES enctypes of RFC 3962
// and aes128-cts-hmac-sha256-128 of RFC 8009. Contexts on DES or RC4 keys are refused at creation.
package gss

import (
	"crypto/hmac"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"
	"sync/atomic"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/etype"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Token flags (RFC 4121 section 4.2.2).
const (
	FlagSentByAcceptor = 0x01
	FlagSealed         = 0x02
	FlagAcceptorSubkey = 0x04
)

// Key usages (RFC 4121 section 2).
const (
	usageAcceptorSeal  = 22
	usageAcceptorSign  = 23
	usageInitiatorSeal = 24
	usageInitiatorSign = 25
)

const (
	tokMIC  = 0x0404
	tokWrap = 0x0504
	hdrLen  = 16
)

// Errors a token check returns.
var (
	ErrDefective = errors.New("gss: defective token")
	ErrBadMIC    = errors.New("gss: bad checksum")
)

// Key is a context key with its derived checksum keys cached.
type Key struct {
	et  etype.EType
	key []byte

	mu sync.Mutex
	kc map[uint32][]byte
}

// NewKey wraps a Kerberos key. Only RFC 4121 (CFX) capable enctypes work.
func NewKey(k types.EncryptionKey) (*Key, error) {
	switch k.KeyType {
	case 17, 18, 19: // aes128/256-cts-hmac-sha1-96, aes128-cts-hmac-sha256-128
		// (gokrb5 v8.4.4 has aes256-cts-hmac-sha384-192's key size wrong)
	default:
		return nil, fmt.Errorf("gss: enctype %d not supported (AES only)", k.KeyType)
	}
	et, err := crypto.GetEtype(k.KeyType)
	if err != nil {
		return nil, err
	}
	if len(k.KeyValue) != et.GetKeyByteSize() {
		return nil, fmt.Errorf("gss: key size %d for enctype %d", len(k.KeyValue), k.KeyType)
	}
	return &Key{et: et, key: append([]byte(nil), k.KeyValue...), kc: map[uint32][]byte{}}, nil
}

// Enctype is the key's Kerberos enctype number.
func (k *Key) Enctype() int32 { return k.et.GetETypeID() }

// checksumKey is Kc for usage (RFC 3961 section 5.3).
func (k *Key) checksumKey(usage uint32) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if kc, ok := k.kc[usage]; ok {
		return kc, nil
	}
	var u [5]byte
	binary.BigEndian.PutUint32(u[:], usage)
	u[4] = 0x99
	kc, err := k.et.DeriveKey(k.key, u[:])
	if err != nil {
		return nil, err
	}
	k.kc[usage] = kc
	return kc, nil
}

// checksum is the keyed checksum of the pieces in order, truncated to
// the enctype's length (hmac-sha1-96-aes*, hmac-sha256-128-aes128).
func (k *Key) checksum(usage uint32, pieces ...[]byte) ([]byte, error) {
	kc, err := k.checksumKey(usage)
	if err != nil {
		return nil, err
	}
	h := hmac.New(k.et.GetHashFunc(), kc)
	for _, p := range pieces {
		h.Write(p)
	}
	return h.Sum(nil)[:k.et.GetHMACBitLength()/8], nil
}

// checksumIov is checksum over a list of buffers followed by tail.
func (k *Key) checksumIov(usage uint32, iov [][]byte, tail []byte) ([]byte, error) {
	kc, err := k.checksumKey(usage)
	if err != nil {
		return nil, err
	}
	var h hash.Hash = hmac.New(k.et.GetHashFunc(), kc)
	for _, p := range iov {
		h.Write(p)
	}
	h.Write(tail)
	return h.Sum(nil)[:k.et.GetHMACBitLength()/8], nil
}

// CksumLen is the length of the key's checksums.
func (k *Key) CksumLen() int { return k.et.GetHMACBitLength() / 8 }

// Tokens makes and checks the per-message tokens of one side of a
// context. Safe for concurrent use.
type Tokens struct {
	Key *Key
	// Acceptor: this side accepted the context (sets SentByAcceptor,
	// expects it clear on the peer's tokens).
	Acceptor bool
	// AcceptorSubkey: the key is the acceptor's subkey (the flag is set
	// on every token, RFC 4121 section 4.2.2).
	AcceptorSubkey bool
	seq            atomic.Uint64
}

// SetSeq sets the next sequence number this side sends.
func (t *Tokens) SetSeq(s uint64) { t.seq.Store(s) }

func (t *Tokens) flags() byte {
	var f byte
	if t.Acceptor {
		f |= FlagSentByAcceptor
	}
	if t.AcceptorSubkey {
		f |= FlagAcceptorSubkey
	}
	return f
}

func (t *Tokens) usages() (sign, seal, peerSign, peerSeal uint32) {
	if t.Acceptor {
		return usageAcceptorSign, usageAcceptorSeal, usageInitiatorSign, usageInitiatorSeal
	}
	return usageInitiatorSign, usageInitiatorSeal, usageAcceptorSign, usageAcceptorSeal
}

// MICLen is the length of a MIC token.
func (t *Tokens) MICLen() int { return hdrLen + t.Key.CksumLen() }

// MIC returns a MIC token over the concatenation of msg.
func (t *Tokens) MIC(msg ...[]byte) []byte {
	tok, err := t.MICIov(msg)
	if err != nil {
		panic(err) // derivation of a checked key cannot fail
	}
	return tok
}

// MICIov returns a MIC token over the concatenation of iov.
func (t *Tokens) MICIov(iov [][]byte) ([]byte, error) {
	sign, _, _, _ := t.usages()
	hdr := make([]byte, hdrLen, hdrLen+t.Key.CksumLen())
	binary.BigEndian.PutUint16(hdr, tokMIC)
	hdr[2] = t.flags()
	for i := 3; i < 8; i++ {
		hdr[i] = 0xff
	}
	binary.BigEndian.PutUint64(hdr[8:], t.seq.Add(1)-1)
	ck, err := t.Key.checksumIov(sign, iov, hdr)
	if err != nil {
		return nil, err
	}
	return append(hdr, ck...), nil
}

// checkFlags checks a received token's flags against this side.
func (t *Tokens) checkFlags(f byte) error {
	if f&FlagSentByAcceptor != 0 == t.Acceptor {
		return fmt.Errorf("%w: direction flag", ErrDefective)
	}
	return nil
}

// VerifyMIC checks a MIC token from the peer over the concatenation of
// iov.
func (t *Tokens) VerifyMIC(tok []byte, iov ...[]byte) error {
	_, _, peerSign, _ := t.usages()
	if len(tok) != t.MICLen() || binary.BigEndian.Uint16(tok) != tokMIC {
		return ErrDefective
	}
	for i := 3; i < 8; i++ {
		if tok[i] != 0xff {
			return ErrDefective
		}
	}
	if err := t.checkFlags(tok[2]); err != nil {
		return err
	}
	ck, err := t.Key.checksumIov(peerSign, iov, tok[:hdrLen])
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(ck, tok[hdrLen:]) != 1 {
		return ErrBadMIC
	}
	return nil
}

// Wrap returns a Wrap token carrying msg, encrypted when seal is set,
// else with a trailing checksum (RFC 4121 section 4.2.4). RRC is 0.
func (t *Tokens) Wrap(msg []byte, seal bool) ([]byte, error) {
	_, sealU, _, _ := t.usages()
	hdr := make([]byte, hdrLen)
	binary.BigEndian.PutUint16(hdr, tokWrap)
	hdr[2] = t.flags()
	hdr[3] = 0xff
	binary.BigEndian.PutUint64(hdr[8:], t.seq.Add(1)-1)
	if !seal {
		// The checksum covers msg | header with EC and RRC zero.
		ck, err := t.Key.checksum(sealU, msg, hdr)
		if err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint16(hdr[4:], uint16(len(ck)))
		out := make([]byte, 0, hdrLen+len(msg)+len(ck))
		out = append(out, hdr...)
		out = append(out, msg...)
		return append(out, ck...), nil
	}
	hdr[2] |= FlagSealed
	// EC 0: the AES enctypes need no filler.
	pt := make([]byte, 0, len(msg)+hdrLen)
	pt = append(pt, msg...)
	pt = append(pt, hdr...)
	_, ct, err := t.Key.et.EncryptMessage(t.Key.key, pt, sealU)
	if err != nil {
		return nil, err
	}
	return append(hdr, ct...), nil
}

// Unwrap checks a Wrap token from the peer and returns its message and
// whether it was encrypted. The message may alias tok.
func (t *Tokens) Unwrap(tok []byte) (msg []byte, sealed bool, err error) {
	_, _, _, peerSeal := t.usages()
	if len(tok) < hdrLen || binary.BigEndian.Uint16(tok) != tokWrap || tok[3] != 0xff {
		return nil, false, ErrDefective
	}
	f := tok[2]
	if err := t.checkFlags(f); err != nil {
		return nil, false, err
	}
	ec := int(binary.BigEndian.Uint16(tok[4:]))
	rrc := int(binary.BigEndian.Uint16(tok[6:]))
	body := tok[hdrLen:]
	if rrc != 0 && len(body) > 0 {
		// Undo the right rotation by rrc (RFC 4121 section 4.2.5).
		r := rrc % len(body)
		nb := make([]byte, len(body))
		copy(nb, body[r:])
		copy(nb[len(body)-r:], body[:r])
		body = nb
	}
	if f&FlagSealed == 0 {
		if ec != t.Key.CksumLen() || len(body) < ec {
			return nil, false, ErrDefective
		}
		var h [hdrLen]byte
		copy(h[:], tok[:hdrLen])
		h[4], h[5], h[6], h[7] = 0, 0, 0, 0
		m := body[:len(body)-ec]
		ck, err := t.Key.checksum(peerSeal, m, h[:])
		if err != nil {
			return nil, false, err
		}
		if subtle.ConstantTimeCompare(ck, body[len(body)-ec:]) != 1 {
			return nil, false, ErrBadMIC
		}
		return m, false, nil
	}
	pt, err := t.Key.et.DecryptMessage(t.Key.key, body, peerSeal)
	if err != nil {
		return nil, true, ErrBadMIC
	}
	if len(pt) < ec+hdrLen {
		return nil, true, ErrDefective
	}
	// The encrypted copy of the header must match the one outside, RRC
	// aside (it is zero inside).
	in := pt[len(pt)-hdrLen:]
	for i := 0; i < hdrLen; i++ {
		if i == 6 || i == 7 {
			continue
		}
		if in[i] != tok[i] {
			return nil, true, ErrDefective
		}
	}
	return pt[:len(pt)-hdrLen-ec], true, nil
}
