package nfs

import (
	"net/netip"
	"slices"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// The exports data is package exports's; these names keep nfs.Config's
// vocabulary.
type (
	Export        = exports.Export
	ClientRule    = exports.ClientRule
	ClientOptions = exports.ClientOptions
	Squash        = exports.Squash
)

// Squash values, as exports(5) names them.
const (
	RootSquash   = exports.RootSquash
	NoRootSquash = exports.NoRootSquash
	AllSquash    = exports.AllSquash
)

// DefaultClientOptions and ShorthandOptions are package exports's.
var (
	DefaultClientOptions = exports.DefaultClientOptions
	ShorthandOptions     = exports.ShorthandOptions
)

// access returns the options of the first of e's rules that names a
// client at a, and false when none does.
func (e *export) access(a netip.Addr) (ClientOptions, bool) {
	rules := e.rules.Load()
	if rules == nil {
		return ClientOptions{}, false
	}
	for i := range *rules {
		if (*rules)[i].Matches(a) {
			return (*rules)[i].Options, true
		}
	}
	return ClientOptions{}, false
}

// setRules installs the export's client rules (nil: every client with
// ShorthandOptions, anonymous ids from the server's configuration).
func (e *export) setRules(rules []ClientRule, anonUID, anonGID uint32) {
	if rules == nil {
		o := ShorthandOptions()
		o.AnonUID, o.AnonGID = anonUID, anonGID
		rules = []ClientRule{{Spec: "*", Any: true, Options: o}}
	}
	rules = slices.Clone(rules)
	e.rules.Store(&rules)
}

// refuseAll makes e refuse every client (an export dropped by a reload).
func (e *export) refuseAll() {
	var none []ClientRule
	e.rules.Store(&none)
}

// squash maps a caller's credentials as the options say (knfsd's
// nfsd_setuser): AUTH_NONE and, with all_squash, everyone become the
// anonymous ids; with root_squash uid 0 and gid 0 do, in the
// supplementary groups too.
func squash(o *ClientOptions, cr Cred) Cred {
	if cr.Flavor == nfs4.AuthNone || o.Squash == AllSquash {
		return Cred{UID: o.AnonUID, GID: o.AnonGID, Flavor: cr.Flavor}
	}
	if o.Squash == NoRootSquash {
		return cr
	}
	if cr.UID == 0 {
		cr.UID = o.AnonUID
	}
	if cr.GID == 0 {
		cr.GID = o.AnonGID
	}
	for i := range cr.GIDs[:cr.NGIDs] {
		if cr.GIDs[i] == 0 {
			cr.GIDs[i] = o.AnonGID
		}
	}
	return cr
}

// refusedOptions stand in for an export that no longer admits the caller
// (a reload in the middle of a COMPOUND): nothing may be changed, and as
// nobody.
var refusedOptions = ClientOptions{ReadOnly: true, Squash: AllSquash, AnonUID: defaultAnonID, AnonGID: defaultAnonID}

// admit checks that the caller may use export e: NFS4ERR_ACCESS for an
// address none of its client specs names, NFS4ERR_PERM for a source port
// of 1024 or more where the spec is secure (knfsd's fh_verify answers
// nfserr_perm from nfsd_originating_port_ok).
func (c *compound) admit(e *export) nfs4.Status {
	o, ok := e.access(c.conn.addr)
	if !ok {
		return nfs4.ErrAccess
	}
	if !o.Insecure && !c.conn.reservedPort() {
		return nfs4.ErrPerm
	}
	if !o.XprtSec.Allows(c.conn.xprt()) {
		return nfs4.ErrWrongsec
	}
	return nfs4.OK
}

// enterExport makes the caller's credentials and options those of n's
// export, when the current filehandle moves to another export. Every
// permission check and every file operation uses c.cred, so squashing
// here covers them all (writes, COPY and CLONE included).
func (c *compound) enterExport(n *node) {
	if n == nil || n.exp == nil || n.exp == c.accExp {
		return
	}
	c.accExp = n.exp
	o, ok := n.exp.access(c.conn.addr)
	if !ok {
		o = refusedOptions
	}
	c.opts = o
	c.cred = squash(&o, c.caller)
}

// readOnlyFH reports whether the current filehandle lies in an export the
// caller may not change.
func (c *compound) readOnlyFH() bool {
	return c.cfh != nil && c.cfh.exp != nil && c.opts.ReadOnly
}

// refuseReadOnly answers NFS4ERR_ROFS for an operation the table marks
// opChangesFS when the current filehandle's export is read-only for the
// caller. RENAME and LINK change the current (target) directory, COPY and
// CLONE the current (destination) file. OPEN and SETATTR check by
// themselves.
func (c *compound) refuseReadOnly(info *opInfo) nfs4.Status {
	if info.flags&opChangesFS != 0 && c.readOnlyFH() {
		return nfs4.ErrRofs
	}
	return nfs4.OK
}

// parseRemote parses a connection's peer address ("ip:port"); an address
// it cannot parse matches only "*" and counts as an insecure port.
func parseRemote(remote string) (netip.Addr, uint16) {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}, 0
	}
	return ap.Addr().Unmap(), ap.Port()
}

// reservedPort reports whether the peer's source port is below 1024 (a
// privileged port, as exports(5) secure asks).
func (c *Conn) reservedPort() bool { return c.addr.IsValid() && c.port < 1024 }

// admitFH is admit for PUTFH's node: an export's file needs the export's
// client specs; a pseudo directory below the root must lead to an export
// the caller may see.
func (c *compound) admitFH(n *node) nfs4.Status {
	if n.exp != nil {
		return c.admit(n.exp)
	}
	if d := c.s.pseudoDirOf(n); d != nil && d.up != nil && !d.visible(c.conn.addr) {
		return nfs4.ErrAccess
	}
	return nfs4.OK
}
