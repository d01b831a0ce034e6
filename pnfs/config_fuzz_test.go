package pnfs

import (
	"net"
	"strings"
	"testing"
)

// FuzzParseServer: any --data-server value is refused or gives a config
// whose address splits into host and port, whose path is clean and
// absolute, and whose HOST:PORT/PATH form parses back to it.
func FuzzParseServer(f *testing.F) {
	for _, s := range []string{"ds:2049", "10.0.0.1:2049/a/b", "[::1]:20/x,advertise=1.2.3.4:5", "a:1/../..//,", "a:1,advertise=", "/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c, err := ParseServer(v, "/def")
		if err != nil {
			return
		}
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			t.Fatalf("%q: address %q: %v", v, c.Addr, err)
		}
		if !strings.HasPrefix(c.Path, "/") || strings.Contains(c.Path, "//") || strings.Contains(c.Path, "/../") {
			t.Fatalf("%q: path %q", v, c.Path)
		}
		if strings.ContainsRune(c.Path, ',') {
			return // a comma in PATH cannot be written back: it starts the options
		}
		back, err := ParseServer(c.String(), "/other")
		if err != nil || back.Addr != c.Addr || back.Path != c.Path || back.ID() != c.ID() {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", v, c, c.String(), back, err)
		}
	})
}
