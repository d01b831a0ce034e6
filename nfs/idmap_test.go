package nfs

import (
	"os/user"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// fakeNames is an idNames over a fixed table, counting the lookups that
// reach it.
func fakeNames(domain string, names bool, lookups *atomic.Int64) *idNames {
	m := newIDNames(domain, names)
	users := map[string]uint32{"alice": 1000, "bob": 1001}
	groups := map[string]uint32{"staff": 50}
	m.userByName = func(n string) (uint32, bool) { lookups.Add(1); id, ok := users[n]; return id, ok }
	m.groupByName = func(n string) (uint32, bool) { lookups.Add(1); id, ok := groups[n]; return id, ok }
	m.userByID = func(id uint32) (string, bool) {
		lookups.Add(1)
		for n, u := range users {
			if u == id {
				return n, true
			}
		}
		return "", false
	}
	m.groupByID = func(id uint32) (string, bool) {
		lookups.Add(1)
		for n, g := range groups {
			if g == id {
				return n, true
			}
		}
		return "", false
	}
	return m
}

// TestOwnerNames: owner strings both ways, and the BADOWNER cases.
func TestOwnerNames(t *testing.T) {
	var n atomic.Int64
	m := fakeNames("Example.COM", false, &n)
	for _, tc := range []struct {
		in    string
		group bool
		id    uint32
		st    nfs4.Status
	}{
		{in: "1000", id: 1000},
		{in: "4294967295", id: 4294967295},
		{in: "4294967296", st: nfs4.ErrBadowner}, // too big: a name, unknown
		{in: "alice@example.com", id: 1000},
		{in: "alice@EXAMPLE.com", id: 1000},
		{in: "bob", id: 1001},
		{in: "staff@example.com", group: true, id: 50},
		{in: "alice@other.org", st: nfs4.ErrBadowner},
		{in: "carol@example.com", st: nfs4.ErrBadowner},
		{in: "staff@example.com", st: nfs4.ErrBadowner}, // a group, not a user
		{in: "@example.com", st: nfs4.ErrBadowner},
		{in: "", st: nfs4.ErrBadowner},
		{in: "-1", st: nfs4.ErrBadowner},
		{in: "alice@example.com@x", st: nfs4.ErrBadowner},
	} {
		id, st := m.parse(tc.in, tc.group)
		if st != tc.st || st == nfs4.OK && id != tc.id {
			t.Errorf("parse(%q, group %v) = %d, %v; want %d, %v", tc.in, tc.group, id, st, tc.id, tc.st)
		}
	}
	for _, tc := range []struct {
		id     uint32
		group  bool
		flavor uint32
		names  bool
		want   string
	}{
		{id: 1000, flavor: nfs4.AuthSys, want: "1000"},
		{id: 1000, flavor: nfs4.AuthGSS, want: "alice@example.com"},
		{id: 1000, flavor: nfs4.AuthSys, names: true, want: "alice@example.com"},
		{id: 50, group: true, flavor: nfs4.AuthGSS, want: "staff@example.com"},
		{id: 4242, flavor: nfs4.AuthGSS, want: "4242"}, // no name: numeric, as knfsd
	} {
		mm := m
		if tc.names {
			mm = fakeNames("example.com", true, &n)
		}
		if got := mm.ownerString(tc.id, tc.group, tc.flavor); got != tc.want {
			t.Errorf("owner string of %d (group %v, flavor %d, names %v) = %q, want %q", tc.id, tc.group, tc.flavor, tc.names, got, tc.want)
		}
	}
}

// TestIdmapCache: answers, failures too, are cached for idmapTTL and the
// cache stays within idmapCacheSize.
func TestIdmapCache(t *testing.T) {
	var n atomic.Int64
	m := fakeNames("example.com", true, &n)
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	for range 3 {
		m.parse("alice@example.com", false)
		m.parse("nobody-here@example.com", false)
		m.ownerString(1000, false, nfs4.AuthSys)
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("%d lookups, want 3 (one per key)", got)
	}
	now = now.Add(idmapTTL + time.Second)
	m.parse("nobody-here@example.com", false)
	if got := n.Load(); got != 4 {
		t.Fatalf("%d lookups after the TTL, want 4", got)
	}
	for i := range 2 * idmapCacheSize {
		m.parse("user"+strconv.Itoa(i)+"@example.com", false)
		if len(m.cache) > idmapCacheSize {
			t.Fatalf("cache holds %d entries", len(m.cache))
		}
	}
}

// TestIdmapSystem: root's names through the real name service.
func TestIdmapSystem(t *testing.T) {
	u, err := user.LookupId("0")
	if err != nil {
		t.Skip("no name for uid 0")
	}
	m := newIDNames("example.org", false)
	if got := m.ownerString(0, false, nfs4.AuthGSS); got != u.Username+"@example.org" {
		t.Fatalf("uid 0 = %q", got)
	}
	if id, st := m.parse(u.Username+"@example.org", false); st != nfs4.OK || id != 0 {
		t.Fatalf("%s@example.org = %d, %v", u.Username, id, st)
	}
	if d := newIDNames("", false).Domain(); d == "" {
		t.Fatal("no default domain")
	}
}

func BenchmarkOwnerString(b *testing.B) {
	root, err := user.LookupId("0")
	if err != nil {
		b.Skip("no name for uid 0")
	}
	_ = root
	var buf [64]byte
	b.Run("numeric", func(b *testing.B) {
		m := newIDNames("example.org", false)
		for b.Loop() {
			m.appendOwner(buf[:0], 1000, false, nfs4.AuthSys)
		}
	})
	b.Run("cached-name", func(b *testing.B) {
		m := newIDNames("example.org", true)
		for b.Loop() {
			m.appendOwner(buf[:0], 0, false, nfs4.AuthSys)
		}
	})
	b.Run("uncached-name", func(b *testing.B) {
		m := newIDNames("example.org", true)
		for b.Loop() {
			clear(m.cache)
			m.appendOwner(buf[:0], 0, false, nfs4.AuthSys)
		}
	})
	b.Run("parse-cached-name", func(b *testing.B) {
		m := newIDNames("example.org", true)
		name := root.Username + "@example.org"
		for b.Loop() {
			m.parse(name, false)
		}
	})
}
