package cluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// A standby metadata server (nfs/standby.go has the design). Each server
// campaigns (Stand); the winner is the active one while its lease lives.
// What they share here, under Prefix:
//
//   - handle-key: the key that signs file handles (HandleKey), made by the
//     first server and read by every later one;
//   - clients: the clients that may reclaim (ClientRecords), written by
//     the active server only (Standing.ClientRecords);
//   - grace/current and grace/recovery: the epochs of NFS-Ganesha's
//     rados_cluster design, for one active server. Each takeover starts a
//     new current epoch; the recovery epoch is the one whose clients may
//     reclaim (0: no grace period in force), lifted when the grace period
//     ends (Standing.BeginGrace, EndGrace);
//   - ledger/<epoch>/<owner>/<file>: which client holds layouts of which
//     file (Standing.Ledger), so the next server fences the files of the
//     clients that do not come back.
//
// Every write of the active server is a transaction that holds only while
// its election key still exists (leaderCmp): once its lease lapsed and
// another server may have won, what it still tries to write is refused.
const (
	handleKeyKey = "handle-key"
	graceCurKey  = "grace/current"
	graceRecKey  = "grace/recovery"
	ledgerKey    = "ledger/"
)

// ErrNotLeader is what a write of a server that is no longer the active
// one gets.
var ErrNotLeader = errors.New("cluster: no longer the active metadata server")

// validityMargin is taken off each lease's validity as the server counts
// it, for the clock-rate difference between it and the cluster store.
const validityMargin = 100 * time.Millisecond

// Standing is a campaign for the active metadata server's role, and once
// Stand returns, the role won. The lease is renewed every third of its
// TTL; Valid says whether the role is still surely held: the lease counted
// from before the last renewal was sent, which ends before the store can
// expire it, so a server that stops serving when Valid says false is
// stopped before another can win (the TTL ordering against split brain).
type Standing struct {
	c     *Cluster
	cli   *clientv3.Client // c's, kept: Close clears c.cli
	ttl   time.Duration
	lease clientv3.LeaseID
	sess  *concurrency.Session
	el    *concurrency.Election
	epoch uint64 // this server's grace epoch (BeginGrace)

	base  time.Time    // monotonic origin of until
	until atomic.Int64 // nanoseconds after base the lease is surely valid
	done  chan struct{}
	lost  sync.Once

	kaCtx  context.Context // renewals and the session; cancelled by Resign
	kaStop context.CancelFunc
	// cut stops renewals without revoking, as a crash or a lost network
	// would (tests: abandon).
	cut      atomic.Bool
	sessStop context.CancelFunc
}

// Stand campaigns for the role and returns once this server holds it.
// value says who it is (its client-facing address); ttl is the lease in
// seconds (at least 2): how long a dead holder keeps the role.
func (c *Cluster) Stand(ctx context.Context, value string, ttl int) (*Standing, error) {
	ttl = max(ttl, 2)
	st := &Standing{c: c, cli: c.cli, ttl: time.Duration(ttl) * time.Second, base: time.Now(), done: make(chan struct{})}
	st.kaCtx, st.kaStop = context.WithCancel(context.Background())
	sent := time.Now()
	g, err := st.cli.Grant(ctx, int64(ttl))
	if err != nil {
		st.kaStop()
		return nil, fmt.Errorf("cluster: election lease: %w", err)
	}
	st.lease = g.ID
	st.renewed(sent, g.TTL)
	go st.keepAlive()
	sessCtx, sessStop := context.WithCancel(st.kaCtx)
	st.sessStop = sessStop
	st.sess, err = concurrency.NewSession(c.cli, concurrency.WithLease(g.ID), concurrency.WithTTL(ttl), concurrency.WithContext(sessCtx))
	if err != nil {
		st.abandon()
		return nil, fmt.Errorf("cluster: election session: %w", err)
	}
	st.el = concurrency.NewElection(st.sess, electionKey)
	if err := st.el.Campaign(ctx, value); err != nil {
		st.Resign(context.Background())
		return nil, fmt.Errorf("cluster: campaign: %w", err)
	}
	if !st.Valid() {
		st.Resign(context.Background())
		return nil, errors.New("cluster: the election lease lapsed while campaigning")
	}
	return st, nil
}

// renewed records a renewal sent at sent that the store answered with
// ttl seconds.
func (st *Standing) renewed(sent time.Time, ttl int64) {
	u := sent.Sub(st.base) + time.Duration(ttl)*time.Second - validityMargin
	for {
		old := st.until.Load()
		if int64(u) <= old || st.until.CompareAndSwap(old, int64(u)) {
			return
		}
	}
}

// keepAlive renews the lease every third of the TTL, and ends the role
// (Done) when it is no longer surely valid or the store says it is gone.
func (st *Standing) keepAlive() {
	every := st.ttl / 3
	for {
		left := time.Duration(st.until.Load()) - time.Since(st.base)
		if left <= 0 {
			st.end()
			return
		}
		select {
		case <-st.kaCtx.Done():
			return
		case <-time.After(min(every, left)):
		}
		if time.Duration(st.until.Load()) <= time.Since(st.base) {
			st.end()
			return
		}
		if st.cut.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(st.kaCtx, every)
		sent := time.Now()
		r, err := st.cli.KeepAliveOnce(ctx, st.lease)
		cancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && r != nil && r.TTL <= 0):
			st.end()
			return
		case err == nil && r != nil:
			st.renewed(sent, r.TTL)
		}
	}
}

func (st *Standing) end() { st.lost.Do(func() { close(st.done) }) }

// Valid reports whether the role is surely still held.
func (st *Standing) Valid() bool {
	select {
	case <-st.done:
		return false
	default:
	}
	return time.Duration(st.until.Load()) > time.Since(st.base)
}

// ValidFor is how long the role is surely held for (0 once lost).
func (st *Standing) ValidFor() time.Duration {
	if !st.Valid() {
		return 0
	}
	return time.Duration(st.until.Load()) - time.Since(st.base)
}

// Done is closed when the role is lost (Valid turned false).
func (st *Standing) Done() <-chan struct{} { return st.done }

// Epoch is this server's grace epoch (after BeginGrace).
func (st *Standing) Epoch() uint64 { return st.epoch }

// Resign gives the role up (a clean shutdown): the lease is revoked, so a
// standby takes over at once instead of after the TTL.
func (st *Standing) Resign(ctx context.Context) error {
	st.end()
	var err error
	if st.el != nil && st.el.Key() != "" {
		err = st.el.Resign(ctx)
	}
	if st.sess != nil {
		err = errors.Join(err, st.sess.Close())
	} else {
		_, rerr := st.cli.Revoke(ctx, st.lease)
		err = errors.Join(err, rerr)
	}
	st.kaStop()
	return err
}

// abandon stops renewing without revoking, as a crash or a cut network
// would (tests).
func (st *Standing) abandon() {
	st.cut.Store(true)
	if st.sessStop != nil {
		st.sessStop()
	}
}

// leaderCmp holds while this server's election key exists: it is still
// the active server.
func (st *Standing) leaderCmp() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(st.el.Key()), "=", st.el.Rev())
}

// fenced runs ops only while this server holds the role.
func (st *Standing) fenced(ctx context.Context, ops ...clientv3.Op) error {
	r, err := st.cli.Txn(ctx).If(st.leaderCmp()).Then(ops...).Commit()
	if err != nil {
		return err
	}
	if !r.Succeeded {
		return ErrNotLeader
	}
	return nil
}

// HandleKey returns the cluster's handle key, storing one first if there
// is none: seed when given (the state directory's key of a server that
// ran alone, so its handles stay valid), else 32 random bytes.
func (c *Cluster) HandleKey(ctx context.Context, seed []byte) ([]byte, error) {
	key := Prefix + handleKeyKey
	v := seed
	if len(v) < 32 {
		v = make([]byte, 32)
		if _, err := rand.Read(v); err != nil {
			return nil, err
		}
	}
	r, err := c.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(v))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return nil, fmt.Errorf("cluster: handle key: %w", err)
	}
	if r.Succeeded {
		return v, nil
	}
	kvs := r.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 || len(kvs[0].Value) < 32 {
		return nil, errors.New("cluster: handle key: stored key is short")
	}
	return kvs[0].Value, nil
}

// Epochs returns the grace epochs: current and recovery (0: no grace
// period in force).
func (c *Cluster) Epochs(ctx context.Context) (cur, rec uint64, err error) {
	cur, _, err = c.epoch(ctx, graceCurKey)
	if err == nil {
		rec, _, err = c.epoch(ctx, graceRecKey)
	}
	return cur, rec, err
}

func (c *Cluster) epoch(ctx context.Context, k string) (v uint64, modRev int64, err error) {
	r, err := c.cli.Get(ctx, Prefix+k)
	if err != nil || len(r.Kvs) == 0 {
		return 0, 0, err
	}
	v, err = strconv.ParseUint(string(r.Kvs[0].Value), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: %s: %w", k, err)
	}
	return v, r.Kvs[0].ModRevision, nil
}

// BeginGrace starts this server's epoch, as a rados_cluster node starts a
// grace period: the current epoch moves on by one and becomes this
// server's; the recovery epoch, unless a grace period is in force already
// (a takeover during one keeps the clients that had not reclaimed yet
// entitled), becomes the previous current one. It returns the new epochs.
func (st *Standing) BeginGrace(ctx context.Context) (cur, rec uint64, err error) {
	for {
		cur, curRev, err := st.c.epoch(ctx, graceCurKey)
		if err != nil {
			return 0, 0, err
		}
		rec, recRev, err := st.c.epoch(ctx, graceRecKey)
		if err != nil {
			return 0, 0, err
		}
		if rec == 0 {
			rec = cur
		}
		cur++
		r, err := st.cli.Txn(ctx).If(st.leaderCmp(),
			clientv3.Compare(clientv3.ModRevision(Prefix+graceCurKey), "=", curRev),
			clientv3.Compare(clientv3.ModRevision(Prefix+graceRecKey), "=", recRev)).
			Then(clientv3.OpPut(Prefix+graceCurKey, strconv.FormatUint(cur, 10)),
				clientv3.OpPut(Prefix+graceRecKey, strconv.FormatUint(rec, 10))).Commit()
		if err != nil {
			return 0, 0, err
		}
		if r.Succeeded {
			st.epoch = cur
			return cur, rec, nil
		}
		if !st.Valid() {
			return 0, 0, ErrNotLeader
		}
	}
}

// EndGrace lifts the recovery epoch: this server's grace period is over
// (every client of the previous epoch reclaimed, or the time is up).
func (st *Standing) EndGrace(ctx context.Context) error {
	return st.fenced(ctx, clientv3.OpPut(Prefix+graceRecKey, "0"))
}

// ClientRecords is the cluster's client list (Cluster.ClientRecords) as
// the active server keeps it: Save is refused once it is no longer the
// active one.
func (st *Standing) ClientRecords(seed string) nfs.ClientRecordStore {
	return fencedRecords{clientRecords: clientRecords{c: st.c, seed: seed}, st: st}
}

type fencedRecords struct {
	clientRecords
	st *Standing
}

func (r fencedRecords) Save(data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return r.st.fenced(ctx, clientv3.OpPut(Prefix+clientsKey, string(data)))
}

// Ledger is the layout ledger of this server (after BeginGrace).
func (st *Standing) Ledger() nfs.LayoutLedger { return &ledger{st: st} }

type ledger struct {
	st   *Standing
	prev []string // the keys Previous read
}

func (l *ledger) key(epoch uint64, owner string, fh []byte) string {
	sum := sha256.Sum256(fh)
	return fmt.Sprintf("%s%s%016x/%s/%s", Prefix, ledgerKey, epoch, hex.EncodeToString([]byte(owner)), hex.EncodeToString(sum[:16]))
}

func (l *ledger) Held(owner string, fh []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return l.st.fenced(ctx, clientv3.OpPut(l.key(l.st.epoch, owner, fh), string(fh)))
}

func (l *ledger) Released(owner string, fh []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return l.st.fenced(ctx, clientv3.OpDelete(l.key(l.st.epoch, owner, fh)))
}

// Previous returns the entries of earlier epochs, by owner.
func (l *ledger) Previous(ctx context.Context) (map[string][][]byte, error) {
	r, err := l.st.cli.Get(ctx, Prefix+ledgerKey, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	mine := fmt.Sprintf("%016x", l.st.epoch)
	out := map[string][][]byte{}
	l.prev = l.prev[:0]
	for _, kv := range r.Kvs {
		parts := strings.Split(strings.TrimPrefix(string(kv.Key), Prefix+ledgerKey), "/")
		if len(parts) != 3 || parts[0] == mine {
			continue
		}
		owner, err := hex.DecodeString(parts[1])
		if err != nil {
			continue
		}
		l.prev = append(l.prev, string(kv.Key))
		out[string(owner)] = append(out[string(owner)], kv.Value)
	}
	return out, nil
}

func (l *ledger) ForgetPrevious(ctx context.Context) error {
	var ops []clientv3.Op
	for _, k := range l.prev {
		ops = append(ops, clientv3.OpDelete(k))
		if len(ops) == 64 {
			if err := l.st.fenced(ctx, ops...); err != nil {
				return err
			}
			ops = ops[:0]
		}
	}
	if len(ops) > 0 {
		return l.st.fenced(ctx, ops...)
	}
	return nil
}

// ReadSeedKey returns the handle key in a state directory, nil if none.
func ReadSeedKey(stateDir string) []byte {
	if stateDir == "" {
		return nil
	}
	b, err := os.ReadFile(stateDir + "/handle.key")
	if err != nil || len(b) < 32 {
		return nil
	}
	return b
}
