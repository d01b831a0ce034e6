package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// FuzzResolveHandle: any bytes given as a file handle resolve to nothing
// (BADHANDLE or STALE) unless they are exactly a handle the server issued
// — never a panic, never another file. Seeds are real handles and the
// pseudo-root's.
func FuzzResolveHandle(f *testing.F) {
	dir := f.TempDir()
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	issued := map[string]*node{}
	root := s.root()
	issued[string(root.handle)] = root
	for _, name := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			f.Fatal(err)
		}
		var st unix.Stat_t
		n, err := s.lookupChild(root, name, &st)
		if err != nil {
			f.Fatal(err)
		}
		issued[string(n.handle)] = n
		f.Add(bytes.Clone(n.handle))
	}
	f.Add(bytes.Clone(pseudoHandle))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, h []byte) {
		n, st := s.resolve(h)
		want, known := issued[string(h)]
		switch {
		case known && (st != nfs4.OK || n != want):
			t.Fatalf("an issued handle resolved to %v, status %d", n, st)
		case !known && st == nfs4.OK:
			t.Fatalf("unissued handle %x resolved to %s", h, n.path())
		case !known && st != nfs4.ErrBadhandle && st != nfs4.ErrStale:
			t.Fatalf("unissued handle: status %d", st)
		}
	})
}
