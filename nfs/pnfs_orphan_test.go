package nfs

import (
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

func (h *harness) remove(name string) {
	h.t.Helper()
	_, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpRemove)
		e.String(name)
	})
	if st != nfs4.OK {
		h.t.Fatalf("REMOVE %s: %d", name, st)
	}
}

// TestOrphanRecorded: the layout of a file removed while open is
// recorded in the OrphanStore, and the record goes with its data files
// at the sweep once no state holds the file.
func TestOrphanRecorded(t *testing.T) {
	ds := newFakeDS(1)
	h := newMDSHarness(t, ds)
	h.session()
	st, _, _ := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	l := h.storedLayout("f")
	h.remove("f")
	if !ds.orphaned(l.Name) {
		t.Fatal("the removed open file's layout is not recorded")
	}
	h.s.sweepOrphans()
	if !ds.orphaned(l.Name) || !ds.exists(l.Mirrors[0].FH) {
		t.Fatal("data files or record gone while the file is open")
	}
	// The client goes (its handle of the removed file no longer
	// resolves, so no CLOSE): its open with it.
	h.s.state.mu.Lock()
	h.s.state.removeClientLocked(h.s.state.clients[h.clid])
	h.s.state.mu.Unlock()
	h.s.sweepOrphans()
	if ds.orphaned(l.Name) || ds.exists(l.Mirrors[0].FH) {
		t.Fatal("record or data files left after the sweep")
	}
}

// TestOrphanSurvivesRestart: the data files of a file removed while open
// are not leaked when the server stops before the sweep: the next run
// over the same data servers removes them once its grace period is
// over, and forgets the record.
func TestOrphanSurvivesRestart(t *testing.T) {
	ds := newFakeDS(1)
	dir, state := t.TempDir(), t.TempDir()
	s1, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: state, DataServers: ds})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, s: s1, conn: NewConn("test"), dir: dir, state: state}
	h.session()
	if st, _, _ := h.create("f", nfs4.CreateUnchecked, ""); st != nfs4.OK {
		t.Fatal(st)
	}
	l := h.storedLayout("f")
	h.remove("f")
	h.s.Close() // a crash: no sweep ran
	if !ds.exists(l.Mirrors[0].FH) {
		t.Fatal("data files gone before the restart")
	}
	s2, err := NewServer(Config{Exports: []Export{{Path: h.dir}}, StateDir: h.state, DataServers: ds, GraceTime: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.inGrace() && !ds.exists(l.Mirrors[0].FH) {
		t.Fatal("data files removed during the grace period")
	}
	deadline := time.Now().Add(10 * time.Second)
	for ds.exists(l.Mirrors[0].FH) || ds.orphaned(l.Name) {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: data files kept %v, record kept %v", ds.exists(l.Mirrors[0].FH), ds.orphaned(l.Name))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
