package exports

import (
	"fmt"
	"strings"
)

// SecFlavor is a security flavour an export may require (exports(5)
// sec=): AUTH_SYS, or RPCSEC_GSS with Kerberos 5 and one of its three
// services.
type SecFlavor uint8

// The flavours, by their exports(5) names.
const (
	SecSys   SecFlavor = 1 // AUTH_SYS (AUTH_NONE counts as it)
	SecKrb5  SecFlavor = 2 // RPCSEC_GSS, authentication
	SecKrb5i SecFlavor = 3 // RPCSEC_GSS, integrity
	SecKrb5p SecFlavor = 4 // RPCSEC_GSS, privacy
)

var secNames = [...]string{SecSys: "sys", SecKrb5: "krb5", SecKrb5i: "krb5i", SecKrb5p: "krb5p"}

func (f SecFlavor) String() string {
	if int(f) < len(secNames) && secNames[f] != "" {
		return secNames[f]
	}
	return fmt.Sprintf("sec(%d)", uint8(f))
}

// SecList is an ordered list of up to four distinct flavours, 4 bits
// each with the first in the low bits; the zero value is "sys" alone,
// exports(5)'s default. It is a value so ClientOptions stays comparable.
type SecList uint16

// AllSec is sys:krb5:krb5i:krb5p, what the --export shorthand accepts.
const AllSec SecList = 1 | 2<<4 | 3<<8 | 4<<12

// Flavors returns the list in order.
func (l SecList) Flavors() []SecFlavor {
	if l == 0 {
		return []SecFlavor{SecSys}
	}
	var out []SecFlavor
	for ; l != 0; l >>= 4 {
		out = append(out, SecFlavor(l&0xf))
	}
	return out
}

// Allows reports whether f is in the list.
func (l SecList) Allows(f SecFlavor) bool {
	if l == 0 {
		return f == SecSys
	}
	return l.has(f) // no allocation: asked on every put-filehandle
}

func (l SecList) String() string {
	var names []string
	for _, f := range l.Flavors() {
		names = append(names, f.String())
	}
	return strings.Join(names, ":")
}

// ParseSec reads a sec= value: flavours separated by ':'.
func ParseSec(v string) (SecList, error) {
	var l SecList
	n := 0
	for _, name := range strings.Split(v, ":") {
		var f SecFlavor
		for i, s := range secNames {
			if s != "" && s == name {
				f = SecFlavor(i)
			}
		}
		if f == 0 {
			return 0, fmt.Errorf("sec=%s: unknown flavor %q (sys, krb5, krb5i, krb5p)", v, name)
		}
		if SecList(l).has(f) {
			return 0, fmt.Errorf("sec=%s: %s given twice", v, name)
		}
		l |= SecList(f) << (4 * n)
		n++
	}
	if l == SecList(SecSys) {
		l = 0 // the default's one spelling
	}
	return l, nil
}

func (l SecList) has(f SecFlavor) bool {
	for ; l != 0; l >>= 4 {
		if SecFlavor(l&0xf) == f {
			return true
		}
	}
	return false
}
