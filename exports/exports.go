// Package exports is the data of an exports(5) file and its parser: the
// exports, their client specs and each client's options. It knows nothing
// of the server; package nfs applies what it describes.
package exports

import "net/netip"

// AnonID is the id of "nobody" and "nogroup", the anonymous uid and gid
// exports(5) defaults anonuid and anongid to.
const AnonID = 65534

// Export is one exported directory.
type Export struct {
	// Name places the export under the pseudo-root: a name starting with
	// "/" is a path whose directories the pseudo-root mirrors (/srv/data,
	// as knfsd; exports files give the exported path), and such an export
	// has a pseudo-root above it even alone ("/" alone: the export is the
	// root). Any other name is one entry of the pseudo-root when there are
	// several exports; a single export named so is the root.
	Name string
	Path string
	// CrossMnt serves filesystems mounted inside the export too (exports(5)
	// crossmnt), each with its own fsid. Without it a mount point shows the
	// directory underneath, as on the exported filesystem itself.
	CrossMnt bool
	// FSID, when set, names the export in file handles instead of its
	// filesystem and path (exports(5) fsid=), e.g. to keep handles valid
	// when the export moves.
	FSID string
	// Clients are the client specs allowed, each with its options; the
	// first that names a client applies (ParseExports orders them as
	// exports(5) says). Nil: every client, with ShorthandOptions.
	Clients []ClientRule
	// Line is where an exports file defined the export (0: not from a
	// file), for messages.
	Line int
}

// Squash says which callers act as the anonymous ids (exports(5)).
type Squash uint8

const (
	// RootSquash maps uid 0 and gid 0 (supplementary groups included) to
	// the anonymous ids: exports(5) root_squash, the default.
	RootSquash Squash = iota
	// NoRootSquash leaves every caller as it is (no_root_squash).
	NoRootSquash
	// AllSquash maps every caller to the anonymous ids (all_squash).
	AllSquash
)

// ClientOptions are what one client spec of an export allows.
type ClientOptions struct {
	ReadOnly         bool // every modifying operation answers NFS4ERR_ROFS
	Squash           Squash
	AnonUID, AnonGID uint32
	// Insecure accepts requests from any source port; without it only
	// from ports below 1024 (exports(5) secure, the default).
	Insecure bool
	// Async answers namespace changes and SETATTR before they are on
	// stable storage; without it (sync, the default) they are committed
	// first, as knfsd's commit_metadata does.
	Async bool
	// Sec is the security flavours accepted, in the order SECINFO lists
	// them (sec=; the zero value is sys alone).
	Sec SecList
	// XprtSec is the transport security a connection needs (xprtsec=);
	// zero: any.
	XprtSec XprtSec
}

// DefaultClientOptions are exports(5)'s defaults: ro, root_squash, secure,
// sync, anonuid and anongid 65534.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{ReadOnly: true, Squash: RootSquash, AnonUID: AnonID, AnonGID: AnonID}
}

// ShorthandOptions are what an export given as --export DIR (or with no
// client list at all) grants: every client, rw, no_root_squash, insecure,
// async, and every security flavour (sys:krb5:krb5i:krb5p; the krb5 ones
// work when the server has a keytab). That is the server's behaviour from
// before exports files, kept so existing setups do not change; exports
// files get exports(5)'s defaults instead.
func ShorthandOptions() ClientOptions {
	return ClientOptions{Squash: NoRootSquash, AnonUID: AnonID, AnonGID: AnonID, Insecure: true, Async: true, Sec: AllSec}
}

// ClientRule is one client spec of an export and its options.
type ClientRule struct {
	Spec    string         // as written: "10.0.0.0/8", "192.168.1.5", "host.example", "*"
	Any     bool           // "*": every client
	Nets    []netip.Prefix // the addresses matched (a hostname's addresses, resolved at load)
	Options ClientOptions
}

// Matches reports whether the rule names a client at a.
func (r *ClientRule) Matches(a netip.Addr) bool {
	if r.Any {
		return true
	}
	if !a.IsValid() {
		return false
	}
	for _, p := range r.Nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
