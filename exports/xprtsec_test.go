package exports

import (
	"bytes"
	"strings"
	"testing"
)

func TestXprtSec(t *testing.T) {
	list, err := ParseExports(strings.NewReader("/a *(rw,xprtsec=tls:mtls)\n/b *(rw,xprtsec=mtls)\n/c *(rw)\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []XprtSec{XprtTLS | XprtMTLS, XprtMTLS, 0}
	for i, e := range list {
		o := e.Clients[0].Options
		if o.XprtSec != want[i] {
			t.Fatalf("%s: xprtsec %v, want %v", e.Path, o.XprtSec, want[i])
		}
	}
	for _, c := range []struct {
		set, conn XprtSec
		ok        bool
	}{{0, XprtNone, true}, {XprtTLS | XprtMTLS, XprtNone, false}, {XprtTLS | XprtMTLS, XprtMTLS, true},
		{XprtMTLS, XprtTLS, false}, {XprtNone, XprtTLS, false}} {
		if c.set.Allows(c.conn) != c.ok {
			t.Errorf("%v allows %v: %v", c.set, c.conn, !c.ok)
		}
	}
	var out bytes.Buffer
	FormatExports(&out, list)
	if !strings.Contains(out.String(), "xprtsec=tls:mtls") || !strings.Contains(out.String(), "xprtsec=mtls") {
		t.Fatalf("formatted:\n%s", out.String())
	}
	for _, bad := range []string{"/a *(xprtsec=ssl)\n", "/a *(xprtsec=)\n", "/a *(xprtsec=tls::mtls)\n"} {
		if _, err := ParseExports(strings.NewReader(bad), nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
