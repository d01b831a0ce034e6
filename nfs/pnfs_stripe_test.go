package nfs

import (
	"bytes"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func stripedLayout() FileLayout {
	l := FileLayout{Name: "a-b-c.d", UID: 7, GID: 8, StripeUnit: 1 << 20, Width: 3}
	for i := range 6 { // two mirrors of three stripes
		l.Mirrors = append(l.Mirrors, DSFile{Device: DeviceID{byte(i + 1)}, FH: []byte{byte(i), 'f', 'h'}})
	}
	return l
}

// TestStripeMath: stripe units go round robin over a mirror's data files;
// rows and columns pick the right ones.
func TestStripeMath(t *testing.T) {
	l := stripedLayout()
	if l.Stripes() != 3 || l.MirrorCount() != 2 || !l.Striped() {
		t.Fatalf("stripes %d mirrors %d", l.Stripes(), l.MirrorCount())
	}
	const su = 1 << 20
	for _, c := range []struct {
		off, n uint64
		s      int
		k      uint64
	}{
		{0, 10, 0, 10},
		{0, 2 * su, 0, su},
		{su - 1, 100, 0, 1},
		{su, 100, 1, 100},
		{2*su + 5, su, 2, su - 5},
		{3 * su, 1, 0, 1},
		{7*su + 3, 4, 1, 4},
	} {
		if s, k := l.StripeAt(c.off, c.n); s != c.s || k != c.k {
			t.Errorf("StripeAt(%d, %d) = %d, %d; want %d, %d", c.off, c.n, s, k, c.s, c.k)
		}
	}
	if r := l.Row(1); len(r) != 3 || r[0].Device[0] != 4 || r[2].Device[0] != 6 {
		t.Errorf("row 1 %+v", r)
	}
	c := l.Column(2)
	if c.Striped() || len(c.Mirrors) != 2 || c.Mirrors[0].Device[0] != 3 || c.Mirrors[1].Device[0] != 6 || c.Name != l.Name || c.UID != 7 {
		t.Errorf("column 2 %+v", c)
	}
	plain := FileLayout{Name: "p", Mirrors: []DSFile{{FH: []byte{1}}}}
	if s, k := plain.StripeAt(12345, 99); s != 0 || k != 99 || plain.Stripes() != 1 || plain.MirrorCount() != 1 {
		t.Errorf("unstriped: %d %d", s, k)
	}
}

// TestLayoutXattrStriped: a striped layout is stored as version 2 and
// comes back whole; an unstriped one stays version 1; inconsistent
// striping neither encodes nor decodes.
func TestLayoutXattrStriped(t *testing.T) {
	l := stripedLayout()
	b, err := encodeLayout(l)
	if err != nil || b[0] != layoutVersionStriped {
		t.Fatalf("encode: %x %v", b, err)
	}
	got, err := decodeLayout(b)
	if err != nil || got.Width != 3 || got.StripeUnit != l.StripeUnit || len(got.Mirrors) != 6 || got.Name != l.Name ||
		got.Mirrors[5].Device != l.Mirrors[5].Device || !bytes.Equal(got.Mirrors[4].FH, l.Mirrors[4].FH) {
		t.Fatalf("decoded %+v %v", got, err)
	}
	one := FileLayout{Name: "n", Width: 1, Mirrors: []DSFile{{Device: DeviceID{1}, FH: []byte("fh")}}}
	if b1, err := encodeLayout(one); err != nil || b1[0] != layoutVersion {
		t.Fatalf("width 1: %x %v", b1, err)
	}
	for name, bad := range map[string]FileLayout{
		"no stripe unit": {Name: "n", Width: 2, Mirrors: l.Mirrors[:2]},
		"partial mirror": {Name: "n", Width: 4, StripeUnit: 1, Mirrors: l.Mirrors},
		"too many files": {Name: "n", Width: 2, StripeUnit: 1, Mirrors: append(append(append([]DSFile(nil), l.Mirrors...), l.Mirrors...), append(l.Mirrors, l.Mirrors...)...)},
	} {
		if _, err := encodeLayout(bad); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
	// width(1) sits after the name: 1+4+4+8+1+len(name).
	w := 18 + len(l.Name)
	for name, mut := range map[string]func([]byte){
		"width 1":        func(b []byte) { b[w] = 1 },
		"width 0":        func(b []byte) { b[w] = 0 },
		"width too wide": func(b []byte) { b[w] = 9 },
		"no stripe unit": func(b []byte) { clear(b[9:17]) },
		"as version 1":   func(b []byte) { b[0] = layoutVersion },
	} {
		c := bytes.Clone(b)
		mut(c)
		if got, err := decodeLayout(c); err == nil {
			t.Errorf("%s: decoded %+v", name, got)
		}
	}
}

// TestImplIDStripes: striped layouts go to Linux 6.18 and later and the
// project's client, not to 6.12 or a client without an id.
func TestImplIDStripes(t *testing.T) {
	for _, c := range []struct {
		dom, name string
		ok        bool
	}{
		{"kernel.org", "Linux 6.18.0 #1 SMP PREEMPT_DYNAMIC Sun Nov 30 x86_64", true},
		{"kernel.org", "Linux 6.19.2-rc1+ #3 SMP aarch64", true},
		{"kernel.org", "Linux 7.0.0 #1 x86_64", true},
		{"example.com", "Linux 6.18.1 #1 x86_64", true},
		{"kernel.org", "Linux 6.12.0 #1 SMP PREEMPT_DYNAMIC x86_64", false},
		{"kernel.org", "Linux 6.12.57+deb13-amd64 #1 SMP x86_64", false},
		{"kernel.org", "Linux 5.19.0 #1 x86_64", false},
		{"kernel.org", "Linux 6 #1", false},
		{"kernel.org", "Linux", false},
		{"", "", false},
		{"nfsd-uring.dev", "nfsd-uring client", true},
		{"other.dev", "nfsd-uring client", false},
		{"kernel.org", "FreeBSD 14.1", false},
	} {
		if got := (implID{c.dom, c.name}).takesStripes(); got != c.ok {
			t.Errorf("%q %q: %v, want %v", c.dom, c.name, got, c.ok)
		}
	}
	e := xdr.NewEncoder(64)
	e.Uint32(1)
	e.String("kernel.org")
	e.String("Linux 6.18.0 #1 x86_64")
	e.Uint64(1)
	e.Uint32(2)
	id := decodeImplID(xdr.NewDecoder(e.Header()))
	if id.domain != "kernel.org" || !id.takesStripes() {
		t.Errorf("decoded %+v", id)
	}
}

// FuzzImplID: eia_client_impl_id never makes the decoder panic.
func FuzzImplID(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		d := xdr.NewDecoder(in)
		id := decodeImplID(d)
		if len(id.domain) > maxImplID || len(id.name) > maxImplID {
			t.Fatalf("kept %d and %d bytes", len(id.domain), len(id.name))
		}
		id.takesStripes()
	})
}
