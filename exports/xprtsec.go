package exports

import (
	"fmt"
	"strings"
)

// XprtSec is a set of transport securities (exports(5) xprtsec=, RFC
// 9289): what a connection is, one bit, or what an export accepts, any.
// The zero set in ClientOptions accepts every one (knfsd's default,
// none:tls:mtls).
type XprtSec uint8

// The transport securities.
const (
	XprtNone XprtSec = 1 << iota // plaintext
	XprtTLS                      // RPC-with-TLS, no client certificate
	XprtMTLS                     // RPC-with-TLS, with a verified client certificate
)

// Allows reports whether a connection secured as c may use an export whose
// clients' option is s.
func (s XprtSec) Allows(c XprtSec) bool { return s == 0 || s&c != 0 }

// String spells the set as xprtsec= does.
func (s XprtSec) String() string {
	if s == 0 {
		s = XprtNone | XprtTLS | XprtMTLS
	}
	var out []string
	for _, x := range []struct {
		b    XprtSec
		name string
	}{{XprtNone, "none"}, {XprtTLS, "tls"}, {XprtMTLS, "mtls"}} {
		if s&x.b != 0 {
			out = append(out, x.name)
		}
	}
	return strings.Join(out, ":")
}

// parseXprtSec parses xprtsec='s value, a colon-separated list.
func parseXprtSec(v string) (XprtSec, error) {
	var s XprtSec
	for _, f := range strings.Split(v, ":") {
		switch f {
		case "none":
			s |= XprtNone
		case "tls":
			s |= XprtTLS
		case "mtls":
			s |= XprtMTLS
		default:
			return 0, fmt.Errorf("xprtsec=%s: %q is not none, tls or mtls", v, f)
		}
	}
	return s, nil
}
