package nfs

import (
	"encoding/binary"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Security flavours per export (exports(5) sec=): SECINFO and
// SECINFO_NO_NAME list the export's, NFS4ERR_WRONGSEC refuses the others
// where RFC 8881 section 2.6.3.1 puts it, as knfsd does
// (need_wrongsec_check, check_nfsd_access): a put-filehandle op (PUTFH,
// PUTROOTFH, PUTPUBFH, RESTOREFH) answers it unless it is the last op or
// the next one handles the check itself (LOOKUP, LOOKUPP, OPEN, SECINFO,
// SECINFO_NO_NAME); LOOKUP and LOOKUPP answer it for the file they reach
// and OPEN for its directory. The pseudo-filesystem takes every flavour.

// secFlavorOf is the flavour a caller used.
func secFlavorOf(cr Cred) exports.SecFlavor {
	if cr.Flavor != nfs4.AuthGSS {
		return exports.SecSys
	}
	switch cr.Service {
	case gssSvcInteg:
		return exports.SecKrb5i
	case gssSvcPriv:
		return exports.SecKrb5p
	}
	return exports.SecKrb5
}

// secAllowed checks the caller's flavour against the current
// filehandle's export.
func (c *compound) secAllowed() nfs4.Status {
	if c.cfh == nil || c.cfh.exp == nil {
		return nfs4.OK
	}
	o, ok := c.cfh.exp.access(c.conn.addr)
	if !ok || o.Sec.Allows(secFlavorOf(c.caller)) {
		return nfs4.OK // an address refused is admit's to answer
	}
	if c.op != nfs4.OpOpen && c.machAllowed() { // machcred.go: spo_must_allow
		return nfs4.OK
	}
	return nfs4.ErrWrongsec
}

// sysAllowed reports whether e's client spec for the caller's address
// takes the flavour of an NFSv3 call (AUTH_SYS and AUTH_NONE as sys,
// RPCSEC_GSS as its service): the others are refused with NFS3ERR_ACCES,
// knfsd's nfserr_wrongsec for v2 and v3.
func (c *compound) sysAllowed(e *export) bool {
	o, ok := e.access(c.conn.addr)
	return !ok || o.Sec.Allows(secFlavorOf(c.caller))
}

// secBefore is the check an op makes before it runs (OPEN, on its
// directory).
func (c *compound) secBefore(op uint32) nfs4.Status {
	if op == nfs4.OpOpen {
		return c.secAllowed()
	}
	return nfs4.OK
}

// secAfter is the check after an op that set the current filehandle.
func (c *compound) secAfter(op uint32) nfs4.Status {
	switch op {
	case nfs4.OpLookup, nfs4.OpLookupp:
		return c.secAllowed()
	case nfs4.OpPutfh, nfs4.OpPutrootfh, nfs4.OpPutpubfh, nfs4.OpRestorefh:
		if !c.more {
			return nfs4.OK // RFC 8881 2.6.3.1.1.6: the handle is not used
		}
		if rest := c.d.Rest(); len(rest) >= 4 {
			switch binary.BigEndian.Uint32(rest) {
			case nfs4.OpLookup, nfs4.OpLookupp, nfs4.OpOpen, nfs4.OpSecinfo, nfs4.OpSecinfoNoName:
				return nfs4.OK
			}
		}
		return c.secAllowed()
	}
	return nfs4.OK
}

// secinfoExport is the export SECINFO of name in the current directory
// answers for: the directory's, or in the pseudo-filesystem the export
// rooted at name (nil: a pseudo directory).
func (c *compound) secinfoExport(name string) *export {
	if c.cfh.exp != nil {
		return c.cfh.exp
	}
	if d := c.s.pseudoDirOf(c.cfh); d != nil {
		if en := d.find(name); en != nil {
			return en.exp
		}
	}
	return nil
}

// encodeSecinfoFor lists the flavours of export e (nil: the
// pseudo-filesystem, which takes all the server offers) in its order:
// AUTH_SYS is followed by AUTH_NONE, the krb5 ones (only with a keytab)
// are RPCSEC_GSS entries with the Kerberos 5 OID (RFC 8881 18.29).
func (c *compound) encodeSecinfoFor(e *export) {
	list := exports.AllSec
	if e != nil {
		list = c.secListOf(e)
	}
	c.encodeFlavorList(list, func(f exports.SecFlavor) {
		c.e.Uint32(nfs4.AuthGSS)
		c.e.Opaque(gss.KRB5OID)
		c.e.Uint32(0) // qop
		c.e.Uint32(uint32(f-exports.SecKrb5) + gssSvcNone)
	})
}

// secListOf is the sec= list of e's client spec for the caller's
// address; none when no spec admits it.
func (c *compound) secListOf(e *export) exports.SecList {
	if o, ok := e.access(c.conn.addr); ok {
		return o.Sec
	}
	return 0
}

// encodeFlavorList writes the count and the flavours of list in its
// order, as SECINFO and MNT answer them: sys as AUTH_SYS then AUTH_NONE,
// each krb5 one (only with a keytab) as krb5 writes it.
func (c *compound) encodeFlavorList(list exports.SecList, krb5 func(f exports.SecFlavor)) {
	n := 0
	countPos := c.e.Reserve()
	for _, f := range list.Flavors() {
		switch f {
		case exports.SecSys:
			c.e.Uint32(nfs4.AuthSys)
			c.e.Uint32(nfs4.AuthNone)
			n += 2
		case exports.SecKrb5, exports.SecKrb5i, exports.SecKrb5p:
			if c.s.gss != nil {
				krb5(f)
				n++
			}
		}
	}
	c.e.Patch(countPos, uint32(n))
}

// secinfoGSSMax is what the krb5 entries add to SECINFO's result.
const secinfoGSSMax = 3 * (4 + 4 + 12 + 4 + 4)
