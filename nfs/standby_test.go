package nfs

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// lockedLedger is a LayoutLedger in memory: held is what this server
// recorded, prev what the one before it did.
type lockedLedger struct {
	mu     sync.Mutex
	held   map[string]map[string][]byte
	prev   map[string][][]byte
	forgot bool
}

func (l *lockedLedger) Held(owner string, fh []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[string]map[string][]byte{}
	}
	if l.held[owner] == nil {
		l.held[owner] = map[string][]byte{}
	}
	l.held[owner][string(fh)] = fh
	return nil
}

func (l *lockedLedger) Released(owner string, fh []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.held[owner], string(fh))
	return nil
}

func (l *lockedLedger) Previous(context.Context) (map[string][][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.prev, nil
}

func (l *lockedLedger) ForgetPrevious(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgot = true
	return nil
}

// snapshot is what the next server's Previous returns.
func (l *lockedLedger) snapshot() map[string][][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][][]byte{}
	for o, m := range l.held {
		for _, fh := range m {
			out[o] = append(out[o], fh)
		}
	}
	return out
}

type lockedRecords struct {
	mu   sync.Mutex
	data []byte
}

func (r *lockedRecords) Load() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.data, nil
}

func (r *lockedRecords) Save(b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data = append([]byte(nil), b...)
	return nil
}

// takeoverHarness is an MDS on dir over ds made with a Takeover of key.
func takeoverHarness(t *testing.T, dir string, ds *fakeDS, recs *lockedRecords, tk *Takeover) *harness {
	t.Helper()
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, DataServers: ds, ClientRecords: recs, Takeover: tk, GraceTime: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &harness{t: t, s: s, conn: NewConn("test"), dir: dir}
}

func waitUntil(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTakeoverFencesAbsentClients: the first server records the client's
// layout in the ledger; the server that takes over (same key: the same
// handle and server owner) fences the file once grace is over, since the
// client did not come back, and then lifts its grace (GraceDone); a
// client that does come back and reclaims keeps its file unfenced.
func TestTakeoverFencesAbsentClients(t *testing.T) {
	for _, comesBack := range []bool{false, true} {
		ds := newFakeDS(1)
		key := bytes.Repeat([]byte{7}, 32)
		dir := t.TempDir()
		recs := &lockedRecords{}
		la := &lockedLedger{}
		a := takeoverHarness(t, dir, ds, recs, &Takeover{HandleKey: key, Ledger: la})
		a.owner = "client-x"
		a.session()
		st, open, fh := a.create("f", nfs4.CreateUnchecked, "")
		if st != nfs4.OK {
			t.Fatalf("create: %d", st)
		}
		if st, _ := a.layoutget(fh, open, nfs4.LayoutIOModeRW, 0); st != nfs4.OK {
			t.Fatalf("LAYOUTGET: %d", st)
		}
		waitUntil(t, "the ledger entry", func() bool { return len(la.snapshot()["client-x"]) == 1 })
		a.s.Depose()
		if rep := a.record(nullCall(99)); rep != nil {
			t.Fatalf("a deposed server answered: %x", rep)
		}

		lb := &lockedLedger{prev: la.snapshot()}
		done := make(chan struct{})
		b := takeoverHarness(t, dir, ds, recs, &Takeover{HandleKey: key, Ledger: lb, GraceDone: func() { close(done) }})
		if !bytes.Equal(a.s.owner, b.s.owner) {
			t.Fatalf("server owners differ: %q %q", a.s.owner, b.s.owner)
		}
		if comesBack {
			b.owner = "client-x"
			b.session() // RECLAIM_COMPLETE within grace
			if got := b.lookupFH("f"); !bytes.Equal(got, fh) {
				t.Fatal("the file's handle changed across the takeover")
			}
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("GraceDone not called")
		}
		ds.mu.Lock()
		fences := ds.fences
		ds.mu.Unlock()
		if want := map[bool]int{false: 1, true: 0}[comesBack]; fences != want {
			t.Fatalf("client came back %v: %d fences, want %d", comesBack, fences, want)
		}
		lb.mu.Lock()
		forgot := lb.forgot
		lb.mu.Unlock()
		if !forgot {
			t.Fatal("the previous ledger was not dropped")
		}
	}
}

// TestTakeoverLeaseLapse: once Valid says the role is no longer surely
// held, requests are dropped unanswered and the server is deposed.
func TestTakeoverLeaseLapse(t *testing.T) {
	var valid sync.Map
	valid.Store("v", true)
	key := bytes.Repeat([]byte{1}, 32)
	h := takeoverHarness(t, t.TempDir(), newFakeDS(1), &lockedRecords{}, &Takeover{HandleKey: key, Valid: func() bool {
		v, _ := valid.Load("v")
		return v.(bool)
	}})
	if rep := h.record(nullCall(1)); rep == nil {
		t.Fatal("NULL not answered while the lease is valid")
	}
	valid.Store("v", false)
	if rep := h.record(nullCall(2)); rep != nil {
		t.Fatal("answered after the lease lapsed")
	}
	if !h.s.Deposed() {
		t.Fatal("not deposed")
	}
	valid.Store("v", true)
	if rep := h.record(nullCall(3)); rep != nil {
		t.Fatal("a deposed server answered again")
	}
	if _, err := NewServer(Config{Exports: []Export{{Path: t.TempDir()}}, Takeover: &Takeover{HandleKey: key[:8]}}); err == nil {
		t.Fatal("a short takeover key was accepted")
	}
}

// nullCall is the record of an NFSv4 NULL call.
func nullCall(xid uint32) []byte {
	e := xdr.NewEncoder(128)
	callHeader(e, xid, nfs4.ProgramNFS, nfs4.NFSVersion, nfs4.ProcNull)
	return e.AppendTo(nil)
}

// TestLedgerFollowsLayouts: the ledger holds a layout while the client
// does, and drops one fenced at the client's lease end only once its
// data files are fenced.
func TestLedgerFollowsLayouts(t *testing.T) {
	ds := newFakeDS(1)
	l := &lockedLedger{}
	h := takeoverHarness(t, t.TempDir(), ds, &lockedRecords{}, &Takeover{HandleKey: bytes.Repeat([]byte{3}, 32), Ledger: l})
	h.session()
	st, open, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatalf("create: %d", st)
	}
	if st, _ := h.layoutget(fh, open, nfs4.LayoutIOModeRW, 0); st != nfs4.OK {
		t.Fatalf("LAYOUTGET: %d", st)
	}
	waitUntil(t, "the ledger entry", func() bool { return len(l.snapshot()["owner-1"]) == 1 })
	h.silence(2 * time.Duration(h.s.cfg.LeaseTime) * time.Second)
	h.s.state.layoutsOverdue(time.Now())
	waitUntil(t, "the fence and the ledger entry's removal", func() bool {
		ds.mu.Lock()
		fences := ds.fences
		ds.mu.Unlock()
		return fences == 1 && len(l.snapshot()["owner-1"]) == 0
	})
}
