package nfs

import (
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// sweepingIO runs the descriptor cache's sweep inside every fsync, as a
// concurrent sweeper could at that moment.
type sweepingIO struct {
	PlainIO
	fc *fdCache
}

func (s *sweepingIO) Sync(fd int, dataOnly bool) error {
	s.fc.sweep()
	return s.PlainIO.Sync(fd, dataOnly)
}

// An OPEN-create on a sync export syncs the directory, then the new file
// through the descriptor the create opened; the descriptor cache must not
// close that descriptor in between (it is pinned), or the sync fails with
// EBADF (or reaches whatever file reused the number).
func TestSyncCreateKeepsItsDescriptor(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	o := ShorthandOptions()
	o.Async = false
	io := &sweepingIO{}
	s, err := NewServer(Config{Exports: []Export{{Path: dir, Clients: []ClientRule{{Spec: "*", Any: true, Options: o}}}},
		StateDir: state, IO: io})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	io.fc = &s.table().exports[0].fds
	io.fc.max = 0 // every sweep closes all it may
	h := &harness{t: t, s: s, conn: NewConn("test"), dir: dir, state: state}
	h.session()
	for _, name := range []string{"f1", "f2", "f3"} {
		if st, _, _ := h.create(name, nfs4.CreateGuarded, ""); st != nfs4.OK {
			t.Fatalf("create %s on a sync export: status %d", name, st)
		}
	}
}
