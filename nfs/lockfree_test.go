package nfs

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// closeOpen sends CLOSE of sid on fh and returns its status.
func (h *harness) closeOpen(fh []byte, sid nfs4.Stateid) nfs4.Status {
	_, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpClose)
		e.Uint32(0)
		sid.Encode(e)
	})
	return st
}

// downgrade sends OPEN_DOWNGRADE of sid on fh to access (deny none) and
// returns the status and the new stateid.
func (h *harness) downgrade(fh []byte, sid nfs4.Stateid, access uint32) (nfs4.Status, nfs4.Stateid) {
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpOpenDowngrade)
		sid.Encode(e)
		e.Uint32(0)
		e.Uint32(access)
		e.Uint32(nfs4.ShareDenyNone)
	})
	if st != nfs4.OK {
		return st, nfs4.Stateid{}
	}
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpOpenDowngrade, nfs4.OK)
	return st, nfs4.DecodeStateid(d)
}

// destroySession sends DESTROY_SESSION of h's session alone.
func (h *harness) destroySession() nfs4.Status {
	_, st, _ := h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpDestroySession)
		e.Fixed(h.sess[:])
	})
	return st
}

// TestStateLookupsUnderChurn: SEQUENCE and READ find sessions and
// stateids without the state lock (issue 10 goal 5). While one session of
// a client reads with its stateids, another session of the same client
// upgrades the open they name, opens, locks, writes, downgrades and closes
// other state, and a second client does the same and creates and
// destroys sessions. Every status must be the one the state says: the
// reader's seqid-0 stateid always reads, its first seqid reads until the
// upgrade makes it OLD_STATEID and never again after, another client's
// stateid is BAD_STATEID, closed state is BAD_STATEID, a downgraded open
// cannot write, a destroyed session is BADSESSION. Run with -race.
func TestStateLookupsUnderChurn(t *testing.T) {
	h := newHarness(t)
	h.owner = "reader"
	h.session()
	h.write("f", []byte("hello, world"))
	fh := h.lookupFH("f")
	st, first := h.openFile("f", "r", nfs4.ShareAccessRead)
	if st != nfs4.OK {
		t.Fatalf("open: %d", st)
	}
	// Same client, second session: it upgrades the reader's open.
	same := h.peer(0, "reader")
	same.noReclaimComplete = true // the client did it already
	same.session()
	other := h.peer(0, "other")
	other.session()
	other.write("o", []byte("other's file"))
	ofh := other.lookupFH("o")

	const rounds = 150
	var (
		reader, churners sync.WaitGroup
		done             atomic.Bool                  // the churners finished
		foreign          atomic.Pointer[nfs4.Stateid] // a live stateid of other's
		upgrades         atomic.Int32
		sawOld           bool
	)
	stale := first
	stale.Other[0] ^= 0xff
	bad := first
	bad.Other[11] ^= 0xff

	reader.Add(1)
	go func() {
		defer reader.Done()
		seq0 := nfs4.Stateid{Other: first.Other}
		// At least rounds reads, and one after the churners finished.
		for i := 0; ; i++ {
			last := done.Load()
			if last && i >= rounds {
				return
			}
			if got := h.readWith(fh, seq0); got != nfs4.OK {
				t.Errorf("READ with seqid 0: %d", got)
				return
			}
			ups := upgrades.Load()
			switch got := h.readWith(fh, first); {
			case got == nfs4.ErrOldStateid:
				sawOld = true
			case got != nfs4.OK || sawOld:
				t.Errorf("READ with the first seqid: %d (old seen before: %v)", got, sawOld)
				return
			case ups > 0:
				t.Errorf("READ with the first seqid after an upgrade: OK")
				return
			}
			for _, c := range []struct {
				sid  nfs4.Stateid
				want nfs4.Status
			}{{stale, nfs4.ErrStaleStateid}, {bad, nfs4.ErrBadStateid}} {
				if got := h.readWith(fh, c.sid); got != c.want {
					t.Errorf("READ with %v: %d, want %d", c.sid, got, c.want)
					return
				}
			}
			if sid := foreign.Load(); sid != nil {
				if got := h.readWith(ofh, *sid); got != nfs4.ErrBadStateid {
					t.Errorf("READ with another client's stateid: %d", got)
					return
				}
			}
		}
	}()

	churners.Add(2)
	go func() { // the same client's second session
		defer churners.Done()
		for i := range rounds {
			if i == rounds/2 {
				st, _ := same.openFile("f", "r", nfs4.ShareAccessRead)
				if st != nfs4.OK {
					t.Errorf("upgrade: %d", st)
					return
				}
				upgrades.Add(1)
			}
			if !churn(t, same, "s") {
				return
			}
		}
	}()

	go func() { // another client
		defer churners.Done()
		for range rounds {
			st, sid := other.openFile("o", "x", nfs4.ShareAccessRead)
			if st != nfs4.OK {
				t.Errorf("other's open: %d", st)
				return
			}
			foreign.Store(&sid)
			if got := other.readWith(ofh, sid); got != nfs4.OK {
				t.Errorf("other's READ: %d", got)
				return
			}
			if !churn(t, other, "x") {
				return
			}
			extra := other.peer(0, "other")
			extra.noReclaimComplete = true
			extra.session()
			if st := extra.destroySession(); st != nfs4.OK {
				t.Errorf("DESTROY_SESSION: %d", st)
				return
			}
			if _, st := extra.ops(1, func(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }); st != nfs4.ErrBadsession {
				t.Errorf("SEQUENCE on a destroyed session: %d", st)
				return
			}
		}
	}()
	churners.Wait()
	done.Store(true)
	reader.Wait()
	if !sawOld && !t.Failed() {
		t.Error("the reader never saw its first seqid become old")
	}
}

// churn opens a file of its own for h (owner owner), writes through the
// open, locks with it, reads with the lock stateid, unlocks, downgrades
// the open so that it no longer writes, closes it, and checks that the
// open and lock stateids are then unknown. It reports whether all went as
// the state says.
func churn(t *testing.T, h *harness, owner string) bool {
	name := "churn-" + owner
	st, open := h.openFile(name, owner, nfs4.ShareAccessBoth)
	if st == nfs4.OK {
		// READ too: OPEN_DOWNGRADE goes only to an access opened with.
		st, open = h.openFile(name, owner, nfs4.ShareAccessRead)
	}
	if st != nfs4.OK {
		t.Errorf("%s: open: %d", owner, st)
		return false
	}
	fh := h.lookupFH(name)
	if st, _, _, _ := h.writeOp(fh, open, 0, nfs4.Unstable4, []byte("data")); st != nfs4.OK {
		t.Errorf("%s: WRITE: %d", owner, st)
		return false
	}
	st, lk := h.lock(fh, open, nfs4.Stateid{}, 0, 10)
	if st != nfs4.OK {
		t.Errorf("%s: LOCK: %d", owner, st)
		return false
	}
	if got := h.readWith(fh, lk); got != nfs4.OK {
		t.Errorf("%s: READ with the lock stateid: %d", owner, got)
		return false
	}
	if got := h.unlock(fh, lk, 0, 10); got != nfs4.OK {
		t.Errorf("%s: LOCKU: %d", owner, got)
		return false
	}
	st, ro := h.downgrade(fh, open, nfs4.ShareAccessRead)
	if st != nfs4.OK {
		t.Errorf("%s: OPEN_DOWNGRADE: %d", owner, st)
		return false
	}
	if st, _, _, _ := h.writeOp(fh, ro, 0, nfs4.Unstable4, []byte("data")); st != nfs4.ErrOpenmode {
		t.Errorf("%s: WRITE through a read-only open: %d, want OPENMODE", owner, st)
		return false
	}
	if st := h.closeOpen(fh, ro); st != nfs4.OK {
		t.Errorf("%s: CLOSE: %d", owner, st)
		return false
	}
	for _, sid := range []nfs4.Stateid{ro, {Other: ro.Other}, lk} {
		if got := h.readWith(fh, sid); got != nfs4.ErrBadStateid {
			t.Errorf("%s: READ with closed state: %d, want BAD_STATEID", owner, got)
			return false
		}
	}
	return true
}

// TestPinnedDescriptorStaysOpen: a reply that pinned a node and took its
// descriptors (readFD, writeFD and their O_DIRECT ones) without the node's
// lock keeps them open while the fd cache sweeps and the node is dropped
// (issue 10 goal 5 made all of these lock-free). The closer opens other
// files all the while, so a descriptor closed too early would soon name
// another file; fstat would show it.
func TestPinnedDescriptorStaysOpen(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("data"))
	h.write("other", []byte("x"))
	h.lookupFH("f") // makes the node
	var want unix.Stat_t
	if err := unix.Stat(filepath.Join(h.dir, "f"), &want); err != nil {
		t.Fatal(err)
	}
	n := h.s.files.get(nodeKey{h.s.table().exports[0].id, 0, want.Ino})
	if n == nil {
		t.Fatal("no node for f")
	}
	const rounds = 3000
	var wg sync.WaitGroup
	var stop atomic.Bool
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				n.pin()
				fd, err := n.readFD()
				if err != nil {
					n.unpin()
					t.Errorf("readFD: %v", err)
					return
				}
				wfd, err := n.writeFD(Cred{})
				if err != nil {
					n.unpin()
					t.Errorf("writeFD: %v", err)
					return
				}
				fds := []int{fd, wfd}
				for _, d := range []int{n.directFD(), n.directWriteFD()} {
					if d >= 0 { // -1 where O_DIRECT is refused
						fds = append(fds, d)
					}
				}
				for _, fd := range fds {
					var st unix.Stat_t
					if err := unix.Fstat(fd, &st); err != nil || st.Ino != want.Ino {
						t.Errorf("pinned descriptor %d: ino %d, err %v; want ino %d", fd, st.Ino, err, want.Ino)
						n.unpin()
						return
					}
				}
				n.unpin()
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; !stop.Load(); i++ {
			n.tryClose()
			if f, err := os.Open(filepath.Join(h.dir, "other")); err == nil {
				f.Close()
			}
			if i == 100 {
				// As a REMOVE would: from now on the last unpin closes
				// the descriptors too.
				h.s.files.drop(n)
			}
		}
	}()
	wg.Wait()
	stop.Store(true)
	<-done
	if n.pins.Load() != 0 {
		t.Fatalf("pins %d after all unpinned", n.pins.Load())
	}
}

// TestOneSessionManyConnections: a session's slots have their own locks
// and its bound connections are read without one (issue 10 goal 5), so
// check what they guard with many connections of one session at once (a
// Linux client with nconnect): each connection on its own slot gets every
// reply right, a retransmit on a slot gets the cached reply, and then
// every one of those connections is bound (it may DESTROY_SESSION) while
// one that never sent SEQUENCE is not. Run with -race.
func TestOneSessionManyConnections(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", []byte("hello"))
	fh := h.lookupFH("f")
	const conns, rounds = 8, 100
	var wg sync.WaitGroup
	peers := make([]*harness, conns)
	for i := range peers {
		p := *h
		p.conn = NewConn("nconnect")
		peers[i] = &p
	}
	for i, p := range peers {
		slot := uint32(i + 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint32(1); seq <= rounds; seq++ {
				read := func(e *xdr.Encoder) {
					p.sequenceSlot(e, slot, seq, true)
					e.Uint32(nfs4.OpPutfh)
					e.Opaque(fh)
					e.Uint32(nfs4.OpRead)
					nfs4.AnonStateid.Encode(e)
					e.Uint64(0)
					e.Uint32(5)
				}
				for try := range 2 { // the second is a retransmit
					_, st, _ := p.compound(3, read)
					if st != nfs4.OK {
						t.Errorf("slot %d seq %d try %d: status %d", slot, seq, try, st)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	stranger := *h
	stranger.conn = NewConn("stranger")
	if st := stranger.destroySession(); st != nfs4.ErrConnNotBound {
		t.Fatalf("DESTROY_SESSION on a connection never bound: %d", st)
	}
	if st := peers[conns-1].destroySession(); st != nfs4.OK {
		t.Fatalf("DESTROY_SESSION on a bound connection: %d", st)
	}
}

// TestBoundConnsBounded: a session's bound connections stay bounded, the
// newest kept; and nconnect's 16 connections plus some more stay bound
// together (past the bound, every SEQUENCE would rebind under the lock).
func TestBoundConnsBounded(t *testing.T) {
	sess := &session{}
	conns := make([]*Conn, maxBoundConns+10)
	for i := range conns {
		conns[i] = NewConn("c")
		sess.bind(conns[i])
	}
	if n := len(*sess.conns.Load()); n > maxBoundConns {
		t.Fatalf("%d connections bound, bound %d", n, maxBoundConns)
	}
	for _, c := range conns[len(conns)-maxBoundConns/2:] {
		if !sess.boundTo(c) {
			t.Fatal("a recent connection was forgotten")
		}
	}
	fresh := &session{}
	for range 3 {
		for _, c := range conns[:20] {
			fresh.bind(c)
		}
	}
	for _, c := range conns[:20] {
		if !fresh.boundTo(c) {
			t.Fatal("one of 20 connections used in turn is not bound")
		}
	}
}
