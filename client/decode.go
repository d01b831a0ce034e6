package client

import (
	"fmt"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// OpenRes is the part of OPEN4resok the client keeps.
type OpenRes struct {
	Stateid      nfs4.Stateid
	Rflags       uint32
	Attrset      nfs4.Bitmap
	Deleg        uint32 // OPEN_DELEGATE_*
	DelegSid     nfs4.Stateid
	WhyNoDeleg   uint32
	ChangeAtomic bool
}

// DecodeOpenRes reads OPEN4resok.
func DecodeOpenRes(d *xdr.Decoder) (OpenRes, error) {
	var r OpenRes
	r.Stateid = nfs4.DecodeStateid(d)
	r.ChangeAtomic = d.Bool()
	d.Uint64() // change before
	d.Uint64() // change after
	r.Rflags = d.Uint32()
	r.Attrset = nfs4.DecodeBitmap(d)
	r.Deleg = d.Uint32()
	switch r.Deleg {
	case nfs4.DelegateNone:
	case nfs4.DelegateRead:
		r.DelegSid = nfs4.DecodeStateid(d)
		d.Bool()
		skipACE(d)
	case nfs4.DelegateWrite:
		r.DelegSid = nfs4.DecodeStateid(d)
		d.Bool()
		if d.Uint32() == 1 { // NFS_LIMIT_SIZE
			d.Uint64()
		} else {
			d.Skip(8) // nfs_modified_limit4
		}
		skipACE(d)
	case nfs4.DelegateNoneExt:
		r.WhyNoDeleg = d.Uint32()
		if r.WhyNoDeleg == nfs4.WhyNoDelegContention || r.WhyNoDeleg == nfs4.WhyNoDelegResource {
			d.Bool()
		}
	default:
		d.Fail(fmt.Errorf("bad delegation type %d", r.Deleg))
	}
	if err := d.Err(); err != nil {
		return r, fmt.Errorf("OPEN result: %w", err)
	}
	return r, nil
}

func skipACE(d *xdr.Decoder) {
	d.Skip(12)
	d.Opaque(nfs4.OpaqueLimit)
}

// DirEntry is one READDIR entry.
type DirEntry struct {
	Name   string
	Cookie uint64
	Fileid uint64
	Type   uint32
	Attrs  Attrs
}

// DecodeReaddirRes reads READDIR4resok, appending entries to ents.
func DecodeReaddirRes(d *xdr.Decoder, ents []DirEntry) (verf [nfs4.VerifierSize]byte, out []DirEntry, eof bool, err error) {
	copy(verf[:], d.Fixed(nfs4.VerifierSize))
	for d.Bool() {
		var ent DirEntry
		ent.Cookie = d.Uint64()
		ent.Name = string(d.String(nfs4.MaxNameLen))
		ent.Attrs, err = DecodeFattr(d)
		if err != nil {
			return verf, ents, false, fmt.Errorf("READDIR entry %q: %w", ent.Name, err)
		}
		ent.Fileid, ent.Type = ent.Attrs.Fileid, ent.Attrs.Type
		ents = append(ents, ent)
	}
	eof = d.Bool()
	if err := d.Err(); err != nil {
		return verf, ents, false, fmt.Errorf("READDIR result: %w", err)
	}
	return verf, ents, eof, nil
}

// DecodeReadRes reads READ4resok; data aliases the input.
func DecodeReadRes(d *xdr.Decoder, max uint32) (data []byte, eof bool, err error) {
	eof = d.Bool()
	data = d.Opaque(int(max))
	if err := d.Err(); err != nil {
		return nil, false, fmt.Errorf("READ result: %w", err)
	}
	return data, eof, nil
}
