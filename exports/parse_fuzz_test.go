package exports

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// fuzzResolve resolves "good.example" and nothing else, without DNS.
func fuzzResolve(_ context.Context, host string) ([]netip.Addr, error) {
	if host == "good.example" {
		return []netip.Addr{netip.MustParseAddr("192.0.2.7")}, nil
	}
	return nil, errors.New("no such host")
}

// FuzzReadExports: no exports file, however broken, makes the parser
// panic or hang; what it accepts prints (FormatExports) to a file that
// reads back to the same table.
func FuzzReadExports(f *testing.F) {
	for _, s := range []string{
		"/srv/data 10.0.0.0/8(rw,root_squash) 192.168.1.5(ro) *(ro,all_squash,anonuid=65534,anongid=65534)\n",
		"/srv/a good.example(rw) bad.example(ro)\n# comment\n\"/srv/with space\" *(ro,fsid=7,crossmnt)\n",
		"/srv/b \\\n  *(rw,sync,no_subtree_check,insecure)\n",
		"/x 2001:db8::/32(rw) [::1](ro)\n",
		"/y *(rw,fsid=00000000-0000-0000-0000-000000000001)\n",
		"/k 10.0.0.0/8(rw,sec=krb5p:krb5i) *(ro,sec=sys:krb5)\n",
		"/z 10.0.0.0/8(rw,xprtsec=tls:mtls) *(ro,xprtsec=mtls)\n",
		"/\\012! *(ro)\n", // a newline in the path: printed as two lines once
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list, _, err := ReadExports(strings.NewReader(s), fuzzResolve)
		if err != nil {
			return
		}
		var out bytes.Buffer
		FormatExports(&out, list)
		again, _, err := ReadExports(bytes.NewReader(out.Bytes()), fuzzResolve)
		if err != nil {
			t.Fatalf("the formatted table does not read back: %v\n%s", err, out.String())
		}
		if len(again) != len(list) {
			t.Fatalf("%d exports read back as %d\n%s", len(list), len(again), out.String())
		}
		for i := range list {
			if again[i].Path != list[i].Path || len(again[i].Clients) != len(list[i].Clients) {
				t.Fatalf("export %q (%d clients) read back as %q (%d)\n%s", list[i].Path, len(list[i].Clients), again[i].Path, len(again[i].Clients), out.String())
			}
			for j, c := range list[i].Clients {
				if again[i].Clients[j].Spec != c.Spec {
					t.Fatalf("client %q read back as %q\n%s", c.Spec, again[i].Clients[j].Spec, out.String())
				}
			}
		}
	})
}
