package exports

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// fakeResolver knows a few names, as a test /etc/hosts.
func fakeResolver(_ context.Context, host string) ([]netip.Addr, error) {
	switch host {
	case "client1.example":
		return []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}, nil
	case "mapped.example":
		return []netip.Addr{netip.MustParseAddr("::ffff:192.0.2.11")}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

func parseOne(t *testing.T, text string) Export {
	t.Helper()
	list, err := ParseExports(strings.NewReader(text), fakeResolver)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	if len(list) != 1 {
		t.Fatalf("%q: %d exports", text, len(list))
	}
	return list[0]
}

func TestParseExportsOptions(t *testing.T) {
	def := DefaultClientOptions()
	with := func(f func(o *ClientOptions)) ClientOptions { o := def; f(&o); return o }
	cases := []struct {
		line string
		want ClientOptions
	}{
		{"/srv *", def},
		{"/srv *()", def},
		{"/srv *(rw)", with(func(o *ClientOptions) { o.ReadOnly = false })},
		{"/srv *(rw,ro)", def},
		{"/srv *(no_root_squash)", with(func(o *ClientOptions) { o.Squash = NoRootSquash })},
		{"/srv *(all_squash)", with(func(o *ClientOptions) { o.Squash = AllSquash })},
		{"/srv *(all_squash,no_all_squash)", def},
		{"/srv *(root_squash,anonuid=1000,anongid=2000)", with(func(o *ClientOptions) { o.AnonUID, o.AnonGID = 1000, 2000 })},
		{"/srv *(insecure)", with(func(o *ClientOptions) { o.Insecure = true })},
		{"/srv *(insecure,secure)", def},
		{"/srv *(async)", with(func(o *ClientOptions) { o.Async = true })},
		{"/srv *(async,sync)", def},
		{"/srv *(sec=sys)", def},
		{"/srv *(sec=krb5p:sys)", with(func(o *ClientOptions) { o.Sec = SecList(SecKrb5p) | SecList(SecSys)<<4 })},
		{"/srv *(sec=krb5:krb5i:krb5p)", with(func(o *ClientOptions) { o.Sec = SecList(SecKrb5) | SecList(SecKrb5i)<<4 | SecList(SecKrb5p)<<8 })},
		{"/srv *(no_subtree_check,subtree_check,wdelay,no_wdelay,hide,secure_locks,insecure_locks,auth_nlm,no_auth_nlm)", def},
		{"/srv -rw,async *", with(func(o *ClientOptions) { o.ReadOnly, o.Async = false, true })},
		{"/srv -rw *(ro)", def},
	}
	for _, tc := range cases {
		e := parseOne(t, tc.line)
		if len(e.Clients) != 1 || !e.Clients[0].Any {
			t.Errorf("%q: clients %+v", tc.line, e.Clients)
			continue
		}
		if got := e.Clients[0].Options; got != tc.want {
			t.Errorf("%q: options %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

func TestParseExportsExportWide(t *testing.T) {
	e := parseOne(t, "/srv/a 10.0.0.0/8(rw,fsid=7,crossmnt) 10.1.2.3(ro,fsid=7,crossmnt)")
	if e.FSID != "7" || !e.CrossMnt || e.Path != "/srv/a" || e.Name != "/srv/a" {
		t.Fatalf("export %+v", e)
	}
	e = parseOne(t, "/srv/a -crossmnt,fsid=abc 10.0.0.1 *(rw)")
	if e.FSID != "abc" || !e.CrossMnt {
		t.Fatalf("export %+v", e)
	}
}

func TestParseExportsClients(t *testing.T) {
	e := parseOne(t, `/srv/data 10.0.0.0/8(rw,root_squash) * 192.168.1.5(ro) client1.example(rw) 172.16.0.0/255.240.0.0 fe80::/64 [::1] mapped.example`)
	var specs []string
	for _, r := range e.Clients {
		specs = append(specs, r.Spec)
	}
	// Hosts first, then networks, then *: exports(5)'s precedence.
	want := "192.168.1.5 client1.example [::1] mapped.example 10.0.0.0/8 172.16.0.0/255.240.0.0 fe80::/64 *"
	if got := strings.Join(specs, " "); got != want {
		t.Fatalf("order %q, want %q", got, want)
	}
	match := func(addr string) string {
		a := netip.MustParseAddr(addr).Unmap()
		for _, r := range e.Clients {
			if r.Matches(a) {
				return r.Spec
			}
		}
		return ""
	}
	for addr, spec := range map[string]string{
		"10.9.9.9": "10.0.0.0/8", "192.168.1.5": "192.168.1.5", "192.0.2.10": "client1.example",
		"2001:db8::10": "client1.example", "192.0.2.11": "mapped.example", "::ffff:10.1.1.1": "10.0.0.0/8",
		"172.31.255.1": "172.16.0.0/255.240.0.0", "fe80::1": "fe80::/64", "::1": "[::1]", "8.8.8.8": "*",
	} {
		if got := match(addr); got != spec {
			t.Errorf("%s matched %q, want %q", addr, got, spec)
		}
	}
}

func TestParseExportsSyntax(t *testing.T) {
	list, err := ParseExports(strings.NewReader(`# comment

"/srv/with space" *(rw) # trailing comment
/srv/oct\040al \
	10.0.0.1(rw)
/   *(ro)
`), fakeResolver)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Path != "/srv/with space" || list[1].Path != "/srv/oct al" || list[2].Path != "/" {
		t.Fatalf("%+v", list)
	}
	if list[0].Line != 3 || list[1].Line != 4 || list[2].Line != 6 {
		t.Fatalf("lines %d %d %d", list[0].Line, list[1].Line, list[2].Line)
	}
	if list[1].Clients[0].Spec != "10.0.0.1" {
		t.Fatalf("continued line: %+v", list[1].Clients)
	}
}

// Every bad line is reported with its number and why; nothing is returned.
func TestParseExportsBadLines(t *testing.T) {
	cases := []struct{ line, want string }{
		{"srv *", "absolute path"},
		{"/srv", "no client given"},
		{"/srv 10.0.0.1 (rw)", "options without a client"},
		{"/srv *(rw", "must end with ')'"},
		{"/srv *(rw) x(", "must end with ')'"},
		{"/srv *(bogus)", `unknown option "bogus"`},
		{"/srv *(rw=1)", "takes no value"},
		{"/srv *(rw,,ro)", "empty option"},
		{"/srv *(anonuid=x)", "numeric id"},
		{"/srv *(anonuid=4294967295)", "numeric id"},
		{"/srv *(fsid=)", "needs a value"},
		{"/srv *(fsid=0)", "not needed"},
		{"/srv *(sec=krb6)", "unknown flavor"},
		{"/srv *(sec=sys:sys)", "given twice"},
		{"/srv *(sec=)", "unknown flavor"},
		{"/srv @netgroup(rw)", "netgroups"},
		{"/srv *.example.com(rw)", "wildcard"},
		{"/srv 10.0.0.0/33", "prefix length"},
		{"/srv 10.0.0.0/255.0.255.0", "not contiguous"},
		{"/srv 10.0.0.0/x", "netmask"},
		{"/srv no.such.host", "cannot resolve"},
		{"/srv bad!host", "not an address"},
		{"/srv 10.0.0.1(fsid=1) 10.0.0.2(fsid=2)", "whole export"},
		{"/srv 10.0.0.1(crossmnt) 10.0.0.2", "whole export"},
		{`"/srv *`, "unterminated quote"},
		{"/srv -bogus *", "unknown option"},
	}
	for _, tc := range cases {
		text := "/ok *(ro)\n" + tc.line + "\n"
		_, err := ParseExports(strings.NewReader(text), fakeResolver)
		if err == nil || !strings.Contains(err.Error(), "line 2: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want line 2 and %q", tc.line, err, tc.want)
		}
	}
	_, err := ParseExports(strings.NewReader("/a *\n/b bogus!\n/a 10.0.0.1\n/c *(x)\n"), fakeResolver)
	for _, want := range []string{"line 2: ", "line 3: /a is already exported on line 1", "line 4: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("several bad lines: %v, want %q", err, want)
		}
	}
	if _, err := ParseExports(strings.NewReader("# nothing\n"), fakeResolver); err == nil {
		t.Error("an empty file parsed")
	}
}

func TestFormatExportsRoundTrip(t *testing.T) {
	text := "/srv/data 10.0.0.0/8(rw,root_squash,fsid=9) 192.168.1.5(ro,fsid=9) client1.example(fsid=9,async,insecure) *(ro,all_squash,anonuid=65534,anongid=65534,fsid=9)\n"
	list, err := ParseExports(strings.NewReader(text), fakeResolver)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	FormatExports(&b, list)
	again, err := ParseExports(strings.NewReader(b.String()), fakeResolver)
	if err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	if fmt.Sprint(again[0].Clients) != fmt.Sprint(list[0].Clients) || again[0].FSID != "9" {
		t.Fatalf("round trip:\n%s\n%+v\n%+v", b.String(), again[0], list[0])
	}
	if !strings.Contains(b.String(), "#   client1.example = [192.0.2.10/32 2001:db8::10/128]") {
		t.Fatalf("resolved addresses missing:\n%s", b.String())
	}
}

// A path holding blanks, a newline, '#', '"' or '\' (all written with
// octal escapes) prints escaped and reads back as the same path, on one
// line (CI's fuzzing found "/\012!" printing as two lines).
func TestFormatExportsEscapes(t *testing.T) {
	text := `"/srv/with space" *(ro)` + "\n" + `/\012! *(ro)` + "\n" + `/a\043b\042c\134101 *(ro)` + "\n"
	list, err := ParseExports(strings.NewReader(text), fakeResolver)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/srv/with space", "/\n!", `/a#b"c\101`}
	var b strings.Builder
	FormatExports(&b, list)
	if n := strings.Count(b.String(), "\n"); n != len(want) {
		t.Fatalf("%d lines for %d exports:\n%s", n, len(want), b.String())
	}
	again, err := ParseExports(strings.NewReader(b.String()), fakeResolver)
	if err != nil {
		t.Fatalf("%s: %v", b.String(), err)
	}
	for i, e := range again {
		if e.Path != want[i] || list[i].Path != want[i] {
			t.Errorf("export %d: read %q, read back %q, want %q", i, list[i].Path, e.Path, want[i])
		}
	}
}

// A hostname that does not resolve leaves out only its own client spec
// (and an export with no client left), as exportfs -ra does; the rest of
// the file takes effect.
func TestReadExportsUnresolvedHost(t *testing.T) {
	text := "/a client1.example(rw) gone.example(rw) 10.0.0.0/8(ro)\n" +
		"/b gone.example(rw)\n" +
		"/c *(ro)\n"
	list, unresolved, err := ReadExports(strings.NewReader(text), fakeResolver)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		var specs []string
		for _, r := range e.Clients {
			specs = append(specs, r.Spec)
		}
		got = append(got, fmt.Sprintf("%s:%d %s", e.Path, e.Line, strings.Join(specs, ",")))
	}
	if want := "/a:1 client1.example,10.0.0.0/8 | /c:3 *"; strings.Join(got, " | ") != want {
		t.Fatalf("exports %q, want %q", strings.Join(got, " | "), want)
	}
	if len(unresolved) != 2 {
		t.Fatalf("unresolved %v", unresolved)
	}
	a, b := unresolved[0], unresolved[1]
	if a.Line != 1 || a.Host != "gone.example" || a.Path != "/a" || a.NoClientLeft || a.Err == nil {
		t.Errorf("first %+v", a)
	}
	if b.Line != 2 || b.Host != "gone.example" || b.Path != "/b" || !b.NoClientLeft {
		t.Errorf("second %+v", b)
	}
	for _, want := range []string{"line 2: ", `"gone.example"`, "cannot resolve", "left out", "/b has no client left"} {
		if !strings.Contains(b.Error(), want) {
			t.Errorf("%q lacks %q", b.Error(), want)
		}
	}

	// A resolver answering no address counts as a failure.
	none := func(context.Context, string) ([]netip.Addr, error) { return nil, nil }
	_, unresolved, err = ReadExports(strings.NewReader("/a empty.example(rw) *(ro)\n"), none)
	if err != nil || len(unresolved) != 1 || !strings.Contains(unresolved[0].Error(), "no address") {
		t.Errorf("empty answer: %v, %v", unresolved, err)
	}
	// Nothing left at all is an error that still names the hosts.
	_, _, err = ReadExports(strings.NewReader("/b gone.example(rw)\n"), fakeResolver)
	if err == nil || !strings.Contains(err.Error(), "no export left") || !strings.Contains(err.Error(), "gone.example") {
		t.Errorf("no export left: %v", err)
	}
	// A real syntax error elsewhere still refuses the whole file.
	if _, _, err := ReadExports(strings.NewReader(text+"/d *(bogus)\n"), fakeResolver); err == nil || !strings.Contains(err.Error(), "line 4: ") {
		t.Errorf("bad line with an unresolved host: %v", err)
	}
}
