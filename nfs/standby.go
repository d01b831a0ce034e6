package nfs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// A standby metadata server (ARCHITECTURE.md, "pNFS: the metadata-server
// role"). Two servers share the cluster store (package cluster, etcd) and
// the export's filesystem; the one that wins the election serves, the
// other waits. The winner is made with Config.Takeover: the handle key
// and server owner are the cluster's, not the state directory's, so the
// handles clients hold and the server they reclaim from stay the same;
// the client list (Config.ClientRecords) is the cluster's, so the grace
// period lets the previous server's clients reclaim; and the layout
// ledger says which clients held layouts on which files, so that after
// grace the files of those that did not come back are fenced (their
// layouts still name the data files' synthetic owner, RFC 8435 section 14).
//
// Split brain: the server serves only while its lease on the election is
// valid (Takeover.Valid, which turns false before the cluster store can
// let another server win: the lease is counted from before each renewal
// was sent). From then on every request is dropped unanswered, and Depose
// stops the rest (the lease reaper, recalls, fences), so two servers never
// answer at once.

// Takeover is what a metadata server that won the election serves with.
type Takeover struct {
	// HandleKey signs file handles (at least 32 bytes): the cluster's,
	// shared by every metadata server of it.
	HandleKey []byte
	// Valid reports whether the server still holds the role. Once it
	// says false, every request is dropped unanswered (Depose). nil:
	// always.
	Valid func() bool
	// Ledger keeps which clients hold layouts of which files; nil: none
	// (no fencing after a takeover).
	Ledger LayoutLedger
	// GraceDone, if set, is called (on a goroutine of its own) once the
	// grace period of this server is over and the files of clients that
	// did not come back are fenced: the cluster lifts its recovery epoch.
	GraceDone func()
}

// LayoutLedger keeps, in the cluster store, which client (co_ownerid)
// holds a layout of which file (its handle), so that the next metadata
// server can fence what the clients that do not come back still hold.
// Held and Released are called in order from one goroutine and may block;
// a failure is logged (a layout not in the ledger is not fenced after a
// takeover: its client may write to the file until it finds the server
// gone).
type LayoutLedger interface {
	Held(owner string, fh []byte) error
	Released(owner string, fh []byte) error
	// Previous returns what earlier servers recorded: handles by owner.
	Previous(ctx context.Context) (map[string][][]byte, error)
	// ForgetPrevious drops what Previous returned.
	ForgetPrevious(ctx context.Context) error
}

// standbyState is the server's part of the standby design.
type standbyState struct {
	tk       *Takeover
	deposed  atomic.Bool
	haltOnce sync.Once
	ledger   *ledgerQueue
	prev     map[string][][]byte // the ledger of earlier servers, read before serving
}

// handleKeyFor is the key handles are signed with: the takeover's when
// there is one, else the state directory's.
func (s *Server) handleKeyFor(cfg Config) ([]byte, error) {
	if tk := cfg.Takeover; tk != nil {
		if len(tk.HandleKey) < 32 {
			return nil, fmt.Errorf("nfs: takeover handle key of %d bytes (want 32 or more)", len(tk.HandleKey))
		}
		return tk.HandleKey, nil
	}
	return loadHandleKey(cfg.StateDir)
}

// clusterOwner is the server owner and scope of every metadata server of a
// cluster: from the shared key alone, not the host's name, so a client
// reclaiming from the standby sees the same server (RFC 8881 section
// 2.10.4: state is reclaimed only within one server scope).
func clusterOwner(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("server_owner4"))
	return fmt.Appendf(nil, "%s/cluster/%x", serverImplDomain, m.Sum(nil)[:8])
}

// startTakeover sets up what Config.Takeover asks for; called by
// NewServer before anything is served.
func (s *Server) startTakeover(key []byte) error {
	tk := s.cfg.Takeover
	if tk == nil {
		return nil
	}
	s.sb.tk = tk
	s.owner = clusterOwner(key)
	if tk.Ledger == nil {
		if tk.GraceDone != nil {
			go s.afterGrace(nil)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeoutNFS)
	prev, err := tk.Ledger.Previous(ctx)
	cancel()
	if err != nil {
		return fmt.Errorf("nfs: layout ledger: %w", err)
	}
	s.sb.prev = prev
	s.sb.ledger = newLedgerQueue(tk.Ledger, s)
	go s.afterGrace(prev)
	return nil
}

// storeTimeoutNFS bounds one read of the cluster store at startup.
const storeTimeoutNFS = 10 * time.Second

// refusing reports whether requests are dropped: the server was deposed,
// or its lease on the role may have lapsed (then it deposes itself).
func (s *Server) refusing() bool {
	if s.sb.deposed.Load() {
		return true
	}
	if tk := s.sb.tk; tk != nil && tk.Valid != nil && !tk.Valid() {
		s.Depose()
		return true
	}
	return false
}

// Depose stops the server serving: it lost the role (its lease on the
// election lapsed, or it was told to stop). Every request from now on is
// dropped unanswered, and the background work that changes shared state
// (lease expiry, recalls, fences, the client list and ledger) stops. The
// engine's listeners and connections are the caller's to close.
func (s *Server) Depose() {
	if s.sb.deposed.Swap(true) {
		return
	}
	s.log.Warn("deposed: no longer the active metadata server; every request is refused from now on")
	s.halt()
}

// Deposed reports whether Depose was called (or the lease lapsed).
func (s *Server) Deposed() bool { return s.sb.deposed.Load() }

// halt closes s.stop once (Depose and Close both end the background work).
func (s *Server) halt() {
	s.sb.haltOnce.Do(func() { close(s.stop) })
}

// afterGrace waits for the grace period to end, then fences the files that
// clients of earlier servers held layouts on and did not come back for
// (they sent no RECLAIM_COMPLETE here: not among the recorded clients),
// forgets the earlier ledger, and calls GraceDone.
func (s *Server) afterGrace(prev map[string][][]byte) {
	for s.inGrace() {
		select {
		case <-s.stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.state.mu.Lock()
	back := make(map[string]bool, len(s.state.records))
	for owner := range s.state.records {
		back[owner] = true
	}
	s.state.mu.Unlock()
	fenced := 0
	for owner, fhs := range prev {
		if back[owner] {
			continue
		}
		for _, fh := range fhs {
			if s.sb.deposed.Load() {
				return
			}
			n, st := s.resolve(fh)
			if st != nfs4.OK || n == nil || !n.isReg() {
				continue
			}
			s.fence(n)
			fenced++
		}
	}
	if s.sb.deposed.Load() {
		return
	}
	if len(prev) > 0 {
		s.log.Info("takeover: files of clients that did not come back fenced", "files", fenced)
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeoutNFS)
		if err := s.sb.tk.Ledger.ForgetPrevious(ctx); err != nil {
			s.log.Warn("takeover: earlier layout ledger not dropped (fenced again after the next takeover)", "err", err)
		}
		cancel()
	}
	if s.sb.tk.GraceDone != nil {
		s.sb.tk.GraceDone()
	}
}

// ledgerHeld notes that cl now holds a layout of n (its first).
// Called under stateTable.mu: it only queues.
func (s *Server) ledgerHeld(cl *client, n *node) {
	if q := s.sb.ledger; q != nil {
		q.push(ledgerOp{held: true, owner: cl.owner, fh: n.handle})
	}
}

// ledgerReleased notes that ls is gone (returned or fenced).
func (s *Server) ledgerReleased(ls *layoutState) {
	if q := s.sb.ledger; q != nil {
		q.push(ledgerOp{owner: ls.client.owner, fh: ls.node.handle})
	}
}

// fenceReleased fences ls's file and then drops ls from the ledger: a
// crash between the two leaves the entry, and the next server fences
// the file again rather than not at all.
func (s *Server) fenceReleased(ls *layoutState) {
	s.fence(ls.node)
	s.ledgerReleased(ls)
}

type ledgerOp struct {
	held  bool
	owner string
	fh    []byte
}

// ledgerQueue hands ledger changes, in order, to one goroutine that writes
// them to the store; pushing never blocks (it runs under the state lock,
// possibly on an event loop).
type ledgerQueue struct {
	l    LayoutLedger
	s    *Server
	mu   sync.Mutex
	ops  []ledgerOp
	wake chan struct{}
}

func newLedgerQueue(l LayoutLedger, s *Server) *ledgerQueue {
	q := &ledgerQueue{l: l, s: s, wake: make(chan struct{}, 1)}
	go q.run()
	return q
}

func (q *ledgerQueue) push(op ledgerOp) {
	q.mu.Lock()
	q.ops = append(q.ops, op)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *ledgerQueue) run() {
	warned := false
	for {
		select {
		case <-q.s.stop:
			return
		case <-q.wake:
		}
		q.mu.Lock()
		ops := q.ops
		q.ops = nil
		q.mu.Unlock()
		for _, op := range ops {
			if q.s.sb.deposed.Load() {
				return
			}
			var err error
			if op.held {
				err = q.l.Held(op.owner, op.fh)
			} else {
				err = q.l.Released(op.owner, op.fh)
			}
			if err != nil && !warned {
				warned = true
				q.s.log.Warn("pnfs: layout ledger not written: after a takeover, a client that does not come back may keep writing to its files", "err", err)
			}
		}
	}
}
