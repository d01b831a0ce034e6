package client

import (
	"context"
	"fmt"
	"strings"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// ACE is an nfsace4 (RFC 8881 section 6.2.1): Who is "OWNER@",
// "GROUP@", "EVERYONE@" or an owner string (a group's with
// ACEIdentifierGroup in Flag).
type ACE struct {
	Type, Flag, Mask uint32
	Who              string
}

// ACE types, flags and mask bits (RFC 8881 section 6.2.1).
const (
	ACEAllowed = 0
	ACEDenied  = 1
	ACEAudit   = 2
	ACEAlarm   = 3

	ACEFileInherit      = 0x01
	ACEDirectoryInherit = 0x02
	ACENoPropagate      = 0x04
	ACEInheritOnly      = 0x08
	ACEIdentifierGroup  = 0x40

	ACEReadData        = 0x00000001
	ACEWriteData       = 0x00000002
	ACEAppendData      = 0x00000004
	ACEExecute         = 0x00000020
	ACEDeleteChild     = 0x00000040
	ACEReadAttributes  = 0x00000080
	ACEWriteAttributes = 0x00000100
	ACEDelete          = 0x00010000
	ACEReadACL         = 0x00020000
	ACEWriteACL        = 0x00040000
	ACEWriteOwner      = 0x00080000
	ACESynchronize     = 0x00100000

	// ACLSupportAllow and ACLSupportDeny are aclsupport4 bits.
	ACLSupportAllow = 0x1
	ACLSupportDeny  = 0x2
)

// maxACEs bounds the ACEs DecodeACL takes.
const maxACEs = 1 << 16

// DecodeACL reads fattr4_acl (nfsace4<>); errors are left in d.
func DecodeACL(d *xdr.Decoder) []ACE {
	n := d.ArrayLen(maxACEs, 16)
	if d.Err() != nil {
		return nil
	}
	aces := make([]ACE, n)
	for i := range aces {
		aces[i] = ACE{Type: d.Uint32(), Flag: d.Uint32(), Mask: d.Uint32(), Who: string(d.String(nfs4.OpaqueLimit))}
		if d.Err() != nil {
			return nil
		}
	}
	return aces
}

// EncodeACL writes fattr4_acl.
func EncodeACL(e *xdr.Encoder, aces []ACE) {
	e.Uint32(uint32(len(aces)))
	for _, a := range aces {
		e.Uint32(a.Type)
		e.Uint32(a.Flag)
		e.Uint32(a.Mask)
		e.String(a.Who)
	}
}

// String is the ACE as nfs4_getfacl prints it: type:flags:who:mask, with
// the letters of nfs4_acl(5) (only those this package names).
func (a ACE) String() string {
	typ := map[uint32]string{ACEAllowed: "A", ACEDenied: "D", ACEAudit: "U", ACEAlarm: "L"}[a.Type]
	var f strings.Builder
	for _, b := range []struct {
		bit uint32
		c   byte
	}{{ACEFileInherit, 'f'}, {ACEDirectoryInherit, 'd'}, {ACENoPropagate, 'n'}, {ACEInheritOnly, 'i'}, {ACEIdentifierGroup, 'g'}} {
		if a.Flag&b.bit != 0 {
			f.WriteByte(b.c)
		}
	}
	var m strings.Builder
	for _, b := range []struct {
		bit uint32
		c   byte
	}{{ACEReadData, 'r'}, {ACEWriteData, 'w'}, {ACEAppendData, 'a'}, {ACEExecute, 'x'}, {ACEDeleteChild, 'D'},
		{ACEDelete, 'd'}, {ACEReadAttributes, 't'}, {ACEWriteAttributes, 'T'}, {ACEReadACL, 'c'}, {ACEWriteACL, 'C'},
		{ACEWriteOwner, 'o'}, {ACESynchronize, 'y'}} {
		if a.Mask&b.bit != 0 {
			m.WriteByte(b.c)
		}
	}
	return fmt.Sprintf("%s:%s:%s:%s", typ, f.String(), a.Who, m.String())
}

// GetACL returns the acl attribute of fh.
func (c *Client) GetACL(ctx context.Context, fh []byte) ([]ACE, error) {
	a, err := c.Getattr(ctx, fh, nfs4.BitmapOf(nfs4.AttrACL))
	if err != nil {
		return nil, err
	}
	if !a.Mask.Has(nfs4.AttrACL) {
		return nil, fmt.Errorf("client: the server did not return the acl attribute")
	}
	return a.ACL, nil
}

// SetACL replaces the ACL of fh (SETATTR with the anonymous stateid).
func (c *Client) SetACL(ctx context.Context, fh []byte, aces []ACE) error {
	if aces == nil {
		aces = []ACE{}
	}
	_, err := c.Setattr(ctx, fh, nfs4.Stateid{}, &Attrs{Mask: nfs4.BitmapOf(nfs4.AttrACL), ACL: aces})
	return err
}
