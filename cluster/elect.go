package cluster

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// electionKey is the election prefix of the metadata servers: the one
// whose key under it has the lowest revision is active.
const electionKey = Prefix + "mds/leader"

// Leadership is a won election: the holder is the active metadata server
// while its lease lives (it is renewed in the background; Done is closed
// when it is lost, and the server must then stop serving at once).
type Leadership struct {
	sess *concurrency.Session
	el   *concurrency.Election
}

// Campaign waits until this server is the active metadata server, then
// returns. value says who it is (its client-facing address); ttl is the
// lease in seconds a dead holder keeps the role (at least 5).
func (c *Cluster) Campaign(ctx context.Context, value string, ttl int) (*Leadership, error) {
	sess, err := concurrency.NewSession(c.cli, concurrency.WithTTL(max(ttl, 5)), concurrency.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("cluster: election session: %w", err)
	}
	el := concurrency.NewElection(sess, electionKey)
	if err := el.Campaign(ctx, value); err != nil {
		sess.Close()
		return nil, fmt.Errorf("cluster: campaign: %w", err)
	}
	return &Leadership{sess: sess, el: el}, nil
}

// Done is closed when the leadership's lease is lost.
func (l *Leadership) Done() <-chan struct{} { return l.sess.Done() }

// Resign gives the role up (a clean shutdown), so a standby takes over at
// once instead of after the lease.
func (l *Leadership) Resign(ctx context.Context) error {
	err := l.el.Resign(ctx)
	return errors.Join(err, l.sess.Close())
}

// Leader returns the active metadata server's value; found is false when
// there is none. It reads what concurrency.Election.Leader reads (the
// oldest key under the election prefix) without a session of its own.
func (c *Cluster) Leader(ctx context.Context) (value string, found bool, err error) {
	r, err := c.cli.Get(ctx, electionKey+"/", clientv3.WithFirstCreate()...)
	if err != nil || len(r.Kvs) == 0 {
		return "", false, err
	}
	return string(r.Kvs[0].Value), true, nil
}
