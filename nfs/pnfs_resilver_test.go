package nfs

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// TestQuiesceForResilver: the function the server hands a Resilverer
// recalls the RW layout of the file named, and returns only once it is
// returned (before that, when its context ends, with an error); no
// fence is needed then.
func TestQuiesceForResilver(t *testing.T) {
	ds := newFakeDS(1)
	h, fh, _, lsid, _ := layoutSetup(t, ds)
	recalls := h.layoutRecalls()
	ds.mu.Lock()
	quiesce := ds.rsv
	ds.mu.Unlock()
	if quiesce == nil {
		t.Fatal("the server did not hand the Resilverer its function")
	}
	name := h.storedLayout("f").Name
	if err := quiesce(context.Background(), "another-file"); err != nil {
		t.Fatalf("a file without layouts: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err := quiesce(ctx, name)
	cancel()
	if err == nil {
		t.Fatal("returned while a RW layout is out")
	}
	select {
	case got := <-recalls:
		if !bytes.Equal(got, fh) {
			t.Fatalf("CB_LAYOUTRECALL of %x, want %x", got, fh)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no CB_LAYOUTRECALL")
	}
	done := make(chan error, 1)
	go func() { done <- quiesce(context.Background(), name) }()
	select {
	case err := <-done:
		t.Fatalf("returned before the LAYOUTRETURN: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	_, st := h.layoutreturn(fh, nfs4.Stateid{Seqid: lsid.Seqid + 1, Other: lsid.Other}, nil)
	if st != nfs4.OK {
		t.Fatalf("LAYOUTRETURN: %d", st)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after the LAYOUTRETURN: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting after the LAYOUTRETURN")
	}
	ds.mu.Lock()
	fences := ds.fences
	ds.mu.Unlock()
	if fences != 0 {
		t.Errorf("%d fences for a layout given back", fences)
	}
}

// TestQuiesceFencesOverdue: a RW layout recalled more than a lease ago
// is dropped and the file fenced before the function returns, so its
// holder's ids no longer write the data files when the copy starts.
func TestQuiesceFencesOverdue(t *testing.T) {
	ds := newFakeDS(1)
	h, _, _, _, l := layoutSetup(t, ds)
	m := l.mirrors[0]
	uid := parseID(t, m.user)
	t0 := h.s.state
	t0.mu.Lock()
	for _, ls := range t0.layouts {
		ls.recalled = time.Now().Add(-2 * time.Duration(h.s.cfg.LeaseTime) * time.Second)
	}
	t0.mu.Unlock()
	ds.mu.Lock()
	quiesce := ds.rsv
	ds.mu.Unlock()
	if err := quiesce(context.Background(), h.storedLayout("f").Name); err != nil {
		t.Fatal(err)
	}
	if err := ds.writeAs(m.fh, uid, uid, []byte("late"), 0); err != errFakeOwner {
		t.Fatalf("write with the overdue layout's ids after the wait: %v, want refused", err)
	}
	if stored := h.storedLayout("f"); stored == nil || stored.UID == uid {
		t.Fatalf("stored layout: %+v", stored)
	}
}
