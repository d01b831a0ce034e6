package nfs

import "github.com/nfsd-uring/nfsd-uring/exports"

// XprtSec is a connection's transport security, or the set an export's
// client spec accepts (exports(5) xprtsec=).
type XprtSec = exports.XprtSec

// The transport securities.
const (
	XprtNone = exports.XprtNone
	XprtTLS  = exports.XprtTLS
	XprtMTLS = exports.XprtMTLS
)

// xprt is the connection's transport security: plaintext unless the
// engine said otherwise. An export whose client spec does not accept it
// answers NFS4ERR_WRONGSEC where the caller enters it (PUTROOTFH, PUTFH,
// LOOKUP: admit), as knfsd's check_nfsd_access does for xprtsec=.
func (c *Conn) xprt() XprtSec {
	if c.Xprt == 0 {
		return XprtNone
	}
	return c.Xprt
}
