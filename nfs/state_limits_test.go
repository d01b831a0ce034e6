package nfs

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// Client admission (issue 21 findings 1 and 2): what a client owner may
// make the server write, and how much of the client table and the reply
// cache budget one address may take.

// from returns a client of h's server on a connection from remote
// ("ip:port"), with its own owner and uid.
func (h *harness) from(remote string, uid uint32, owner string) *harness {
	p := h.peer(uid, owner)
	p.conn = NewConn(remote)
	p.state = h.state
	return p
}

// joinWire runs EXCHANGE_ID (owner, verf), CREATE_SESSION and
// RECLAIM_COMPLETE on the wire and returns the first status that is not
// OK, with the op that got it (0 and OK when all three passed).
func (h *harness) joinWire(owner string, verf [8]byte) (op uint32, st nfs4.Status) {
	h.t.Helper()
	d, st, _ := h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed(verf[:])
		e.Opaque([]byte(owner))
		e.Uint32(nfs4.ExchgIDUseNonPNFS)
		e.Uint32(nfs4.SP4None)
		e.Uint32(0)
	})
	if st != nfs4.OK {
		return nfs4.OpExchangeID, st
	}
	opResult(h.t, d, nfs4.OpExchangeID, nfs4.OK)
	h.clid = d.Uint64()
	seq := d.Uint32()
	st, id := h.createSession(h.clid, seq, defaultFore)
	if st != nfs4.OK {
		return nfs4.OpCreateSession, st
	}
	h.sess, h.seq = id, 0
	if st := h.reclaimCompleteWire(); st != nfs4.OK {
		return nfs4.OpReclaimComplete, st
	}
	return 0, nfs4.OK
}

// TestEmptyOwnerRefused is issue 21 finding 1: EXCHANGE_ID with a
// zero-length co_ownerid, then CREATE_SESSION and RECLAIM_COMPLETE, all
// answered OK, wrote a clients line the next start could not read, and
// that start failed. The empty owner is now NFS4ERR_BADXDR (as knfsd's
// decoder), and the server restarts.
func TestEmptyOwnerRefused(t *testing.T) {
	h := newHarness(t)
	if op, st := h.joinWire("", [8]byte{1}); op != nfs4.OpExchangeID || st != nfs4.ErrBadXDR {
		t.Fatalf("empty owner: op %d answered %d, want EXCHANGE_ID BADXDR", op, st)
	}
	if op, st := h.joinWire("x", [8]byte{1}); st != nfs4.OK {
		t.Fatalf("one-byte owner: op %d answered %d", op, st)
	}
	if _, err := NewServer(Config{Exports: []Export{{Path: h.dir}}, StateDir: h.state}); err != nil {
		t.Fatalf("restart: %v", err)
	}
}

// Peer addresses of the tests below: attackers, and the newcomer who must
// get in beside them.
const (
	attacker  = "10.0.0.1:700"
	attacker2 = "10.0.0.3:700"
	newcomer  = "10.0.0.2:700"
)

// newcomerJoins checks that a client from another address gets a client
// id and a session, within a second, and returns its session's slots.
func newcomerJoins(t *testing.T, h *harness) int {
	t.Helper()
	start := time.Now()
	b := h.from(newcomer, 0, "newcomer")
	if op, st := b.joinWire("newcomer", [8]byte{2}); st != nfs4.OK {
		t.Fatalf("newcomer from another address: op %d answered %d", op, st)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("newcomer took %v", d)
	}
	return len(h.s.state.session(b.sess[:]).slots)
}

// ownedBy sums the client records whose owner starts with prefix, and the
// reply cache memory their sessions reserved.
func ownedBy(h *harness, prefix string) (records int, drc int64) {
	h.s.state.mu.Lock()
	defer h.s.state.mu.Unlock()
	for _, c := range h.s.state.clients {
		if strings.HasPrefix(c.owner, prefix) {
			records++
			for _, sess := range c.sessions {
				drc += sess.drc
			}
		}
	}
	return records, drc
}

// checkAddrUse checks that the per-address counts add up to the table's.
func checkAddrUse(t *testing.T, h *harness) {
	t.Helper()
	st := h.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	var clients int
	var drc int64
	for a, u := range st.byAddr {
		if u.clients < 0 || u.drc < 0 || u.clients == 0 && u.drc == 0 {
			t.Errorf("address %v: %+v", a, *u)
		}
		clients += u.clients
		drc += u.drc
	}
	if clients != len(st.clients) || drc != st.drcUsed {
		t.Errorf("addresses hold %d records and %d bytes, the table %d and %d", clients, drc, len(st.clients), st.drcUsed)
	}
}

// TestOneHostCannotFillClientTable is issue 21 finding 2: one address
// making more live clients than the table holds (each confirmed with a
// session) used to fill it, and every other client's EXCHANGE_ID
// answered NFS4ERR_DELAY. Now the address fills the quiet half of the
// table, then (over its share of an eighth) gets DELAY itself; the
// newcomer gets in.
func TestOneHostCannotFillClientTable(t *testing.T) {
	h := newHarness(t)
	max := h.s.cfg.MaxClients
	share := max / 2
	a := h.from(attacker, 0, "")
	fore := [6]uint32{0, 2 << 20, 2 << 20, 1024, 16, 4}
	var ok, delayed int
	for i := range max + 16 {
		st, id, _ := a.exchangeID(fmt.Sprintf("attacker-%d", i), "verifier", 0)
		if st == nfs4.ErrDelay {
			delayed++
			continue
		}
		if st != nfs4.OK {
			t.Fatalf("attacker's EXCHANGE_ID %d: %d", i, st)
		}
		if st, _ := a.createSession(id, 1, fore); st != nfs4.OK {
			t.Fatalf("attacker's CREATE_SESSION %d: %d", i, st)
		}
		ok++
	}
	if ok != share || delayed != max+16-share {
		t.Fatalf("attacker got %d clients and %d DELAYs, want its share %d", ok, delayed, share)
	}
	newcomerJoins(t, h)
	checkAddrUse(t, h)
}

// TestOneHostCannotSpendReplyCache is issue 21 finding 2: 64 sessions of
// 128 slots from one address used to spend --reply-cache-mem, and every
// other CREATE_SESSION answered NFS4ERR_DELAY. Now the address's sessions
// get fewer slots once half the budget is spent and the address is over
// its share (an eighth), never none, and the newcomer gets a full
// session.
func TestOneHostCannotSpendReplyCache(t *testing.T) {
	h := newHarness(t)
	full := [6]uint32{0, 2 << 20, 2 << 20, 16 << 10, 16, 128}
	for i := range 8 {
		a := h.from(attacker, 0, "")
		st, id, _ := a.exchangeID(fmt.Sprintf("attacker-%d", i), "verifier", 0)
		if st != nfs4.OK {
			t.Fatalf("attacker's EXCHANGE_ID %d: %d", i, st)
		}
		for j := range 8 {
			st, sid := a.createSession(id, uint32(j+1), full)
			if st != nfs4.OK {
				t.Fatalf("attacker's CREATE_SESSION %d.%d: %d", i, j, st)
			}
			if n := len(h.s.state.session(sid[:]).slots); n < 1 {
				t.Fatalf("attacker's session %d.%d has no slot", i, j)
			}
		}
	}
	_, spent := ownedBy(h, "attacker-")
	// Half the budget, one session more, and one slot for each session.
	half := h.s.cfg.ReplyCacheMemory / 2
	if most := half + slotsCost(128, 16<<10) + 64*slotsCost(1, 16<<10); spent > most {
		t.Fatalf("attacker holds %d bytes of reply cache, at most %d allowed", spent, most)
	}
	if n := newcomerJoins(t, h); n != 64 {
		t.Fatalf("newcomer's session has %d slots, want the 64 it asked for", n)
	}
	checkAddrUse(t, h)
	h.s.state.expire(time.Now().Add(time.Hour)) // every lease runs out
	checkAddrUse(t, h)
	if n := len(h.s.state.byAddr); n != 0 {
		t.Errorf("%d addresses left after every client went", n)
	}
}

// TestUnconfirmedFloodFromOneHost is issue 21 finding 2: a stream of
// EXCHANGE_IDs never confirmed used to fill the table (records younger
// than 15 s were never dropped), and every other client got DELAY. Now
// the address's own oldest unconfirmed record makes room for its next
// one once it holds half the table (the second flooder: its share of 16),
// a full table drops unconfirmed records whatever their age, and the
// newcomer gets in.
func TestUnconfirmedFloodFromOneHost(t *testing.T) {
	h := newHarnessCfg(t, func(c *Config) { c.MaxClients = 64 })
	share := 16
	for i, from := range []string{attacker, attacker2} {
		a := h.from(from, 0, "")
		for j := range 200 {
			if st, _, _ := a.exchangeID(fmt.Sprintf("flood-%d-%d", i, j), "verifier", 0); st != nfs4.OK {
				t.Fatalf("flood %d's EXCHANGE_ID %d: %d", i, j, st)
			}
		}
		want := []int{32, share}[i]
		if n, _ := ownedBy(h, fmt.Sprintf("flood-%d-", i)); n != want {
			t.Fatalf("flooding address %d holds %d records, want %d", i, n, want)
		}
	}
	newcomerJoins(t, h)

	// A full table of unconfirmed records from many addresses: the
	// newcomer's EXCHANGE_ID drops one of them.
	for i := range 8 {
		a := h.from(fmt.Sprintf("10.1.0.%d:700", i), 0, "")
		for j := range share {
			a.exchangeID(fmt.Sprintf("many-%d-%d", i, j), "verifier", 0)
		}
	}
	h.s.state.mu.Lock()
	full := len(h.s.state.clients) == h.s.cfg.MaxClients
	h.s.state.mu.Unlock()
	if !full {
		t.Fatal("the table did not fill")
	}
	b := h.from(newcomer, 0, "")
	if op, st := b.joinWire("second-newcomer", [8]byte{3}); st != nfs4.OK {
		t.Fatalf("newcomer beside a full table of unconfirmed records: op %d answered %d", op, st)
	}
	checkAddrUse(t, h)
}

// TestNoExportAccessCostsOneRecord: a client whose address no export
// admits gets a client id, but CREATE_SESSION answers NFS4ERR_PERM, so its
// record stays unconfirmed; its address holds one record however many
// EXCHANGE_IDs it sends, and no session.
func TestNoExportAccessCostsOneRecord(t *testing.T) {
	dir := t.TempDir()
	o := ShorthandOptions()
	rules := []ClientRule{{Spec: "10.0.0.2", Nets: []netip.Prefix{netip.MustParsePrefix("10.0.0.2/32")}, Options: o}}
	s, err := NewServer(Config{Exports: []Export{{Path: dir, Clients: rules}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	h := &harness{t: t, s: s, conn: NewConn(attacker), dir: dir}
	for i := range 100 {
		st, id, _ := h.exchangeID(fmt.Sprintf("outsider-%d", i), "verifier", 0)
		if st != nfs4.OK {
			t.Fatalf("outsider's EXCHANGE_ID %d: %d", i, st)
		}
		if st, _ := h.createSession(id, 1, defaultFore); st != nfs4.ErrPerm {
			t.Fatalf("outsider's CREATE_SESSION %d: %d, want PERM", i, st)
		}
	}
	if n, _ := ownedBy(h, "outsider-"); n != 1 {
		t.Fatalf("outsider holds %d records, want 1", n)
	}
	if n := s.state.sessions.len(); n != 0 {
		t.Fatalf("outsider holds %d sessions", n)
	}
	newcomerJoins(t, h)
	checkAddrUse(t, h)
}
