package nfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// TestClientRecordsRandomRoundTrip: clients with random owners (any
// bytes, 0 to 1024 of them), verifiers and principals join and send
// RECLAIM_COMPLETE; after a restart every one the server accepted is in
// the grace period's list, so it wrote only lines it reads back.
func TestClientRecordsRandomRoundTrip(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(21, 1))
	want := map[clientRecord]bool{}
	for i := range 40 {
		n := rng.IntN(nfs4.OpaqueLimit + 1)
		if i < 5 {
			n = []int{0, 1, 2, nfs4.OpaqueLimit - 1, nfs4.OpaqueLimit}[i]
		}
		owner := make([]byte, n)
		for j := range owner {
			owner[j] = byte(rng.Uint32())
		}
		var verf [8]byte
		for j := range verf {
			verf[j] = byte(rng.Uint32())
		}
		uid := rng.Uint32()
		p := h.peer(uid, "")
		op, st := p.joinWire(string(owner), verf)
		if n == 0 && op == nfs4.OpExchangeID && st == nfs4.ErrBadXDR {
			continue // refused: nothing to keep
		}
		if st != nfs4.OK {
			t.Fatalf("client %d (owner of %d bytes): op %d answered %d", i, n, op, st)
		}
		want[clientRecord{string(owner), uid}] = true
	}
	s, err := NewServer(Config{Exports: []Export{{Path: h.dir}}, StateDir: h.state})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s.Close()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	if len(s.state.grace.pending) != len(want) {
		t.Fatalf("%d clients may reclaim after the restart, want %d", len(s.state.grace.pending), len(want))
	}
	for r := range want {
		if !s.state.grace.pending[r] {
			t.Errorf("client with owner %q (uid %d) lost", r.owner, r.principal)
		}
	}
}

// FuzzClientRecords: whatever records the server is asked to keep, the
// file it writes parses back to exactly the valid ones, with no damaged
// line.
func FuzzClientRecords(f *testing.F) {
	f.Add([]byte(""), uint32(0), []byte("b\x00\n owner"), uint32(7))
	f.Add([]byte("a"), uint32(1<<31), bytes.Repeat([]byte("x"), 1025), uint32(0))
	f.Fuzz(func(t *testing.T, o1 []byte, p1 uint32, o2 []byte, p2 uint32) {
		in := []clientRecord{{string(o1), p1}, {string(o2), p2}}
		out, bad, err := parseClientRecords(formatClientRecords(append([]clientRecord(nil), in...)))
		if err != nil || len(bad) > 0 {
			t.Fatalf("the server's own file: %v, damaged lines %v", err, bad)
		}
		var valid []clientRecord
		for _, r := range in {
			if r.valid() {
				valid = append(valid, r)
			}
		}
		if len(out) != len(valid) {
			t.Fatalf("wrote %d records, read %d back", len(valid), len(out))
		}
		for _, r := range valid {
			if out[0] != r && out[len(out)-1] != r {
				t.Fatalf("lost %q", r.owner)
			}
		}
	})
}

// TestDamagedClientLineSkipped: a clients file line that cannot be read
// (bad hex, an empty owner, one far too long) is logged and skipped; the
// server starts, and the clients on the good lines reclaim.
func TestDamagedClientLineSkipped(t *testing.T) {
	h := newHarness(t)
	h.owner = "good"
	h.session()
	good := clientsFile(t, h.state)
	damaged := good + "0 zz\n0 \n7 " + strings.Repeat("ab", 5000) + "\nnot a line\n"
	if err := os.WriteFile(filepath.Join(h.state, "clients"), []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	a := h.restart(nil)
	if !inGrace(a.s) {
		t.Fatal("no grace period: the good line was not read")
	}
	if st := a.openReq(&openReq{fh: h.s.root().handle, reclaim: true, owner: "o", access: nfs4.ShareAccessRead}); st == nfs4.ErrReclaimBad || st == nfs4.ErrNoGrace {
		t.Fatalf("the good client's reclaim: %d", st)
	}
	if st := a.reclaimCompleteWire(); st != nfs4.OK {
		t.Fatalf("RECLAIM_COMPLETE: %d", st)
	}
	if inGrace(a.s) {
		t.Fatal("grace period goes on after the only readable client's RECLAIM_COMPLETE")
	}
}

// TestClientsFileWithoutHeader: a file that is not a clients list at all
// still stops the start, with a clear error.
func TestClientsFileWithoutHeader(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "clients"), []byte("something else\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewServer(Config{Exports: []Export{{Path: t.TempDir()}}, StateDir: state})
	if err == nil || !strings.Contains(err.Error(), "header") {
		t.Fatalf("NewServer with a foreign clients file: %v", err)
	}
}

// memRecords is a ClientRecordStore in memory.
type memRecords struct{ data []byte }

func (m *memRecords) Load() ([]byte, error)  { return m.data, nil }
func (m *memRecords) Save(data []byte) error { m.data = append([]byte(nil), data...); return nil }

// TestClientRecordStore: with Config.ClientRecords the client list goes
// there instead of the state directory, and a restart reads it from
// there.
func TestClientRecordStore(t *testing.T) {
	h := newHarness(t)
	mem := &memRecords{}
	useMem := func(c *Config) { c.ClientRecords = mem }
	a := h.restart(useMem)
	a.noReclaimComplete = false
	a.owner = "clustered"
	a.session()
	if !strings.Contains(string(mem.data), hexOf("clustered")) {
		t.Fatalf("store holds %q", mem.data)
	}
	if f := clientsFile(t, h.state); f != "" {
		t.Errorf("the state directory's clients file was written too: %q", f)
	}
	b := a.restart(useMem)
	b.s.state.mu.Lock()
	ok := b.s.state.grace.pending[clientRecord{owner: "clustered", principal: a.uid}]
	b.s.state.mu.Unlock()
	if !ok {
		t.Fatal("the client kept in the store may not reclaim after a restart")
	}
}
