package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nfsd-uring/nfsd-uring/cluster"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

var (
	standbyOn  = flag.Bool("standby", false, "with --cluster etcd://...: run as one of several metadata servers sharing the cluster and the export's filesystem; the one elected serves, the others wait (listening on nothing) and take over when it is gone, the clients reclaiming their state in a grace period")
	standbyTTL = flag.Int("standby-ttl", 5, "with --standby: the election lease in seconds (at least 2): a server that stops renewing it stops serving within this time, and a standby takes over after it")
)

// standby is a won election (--standby); nil without --standby. Its
// methods are nil-safe, so main.go calls them unconditionally.
type standby struct {
	cl  *cluster.Cluster
	st  *cluster.Standing
	tk  *nfs.Takeover
	log *slog.Logger
}

// standbyWait, with --standby, connects to the cluster, waits until this
// server is elected (SIGINT or SIGTERM meanwhile end it), and starts its
// grace epoch; the metadata-server role then uses that cluster.
func standbyWait(ps *pnfsSettings, addr string, log *slog.Logger, stats *metrics.Set) (*standby, error) {
	if !*standbyOn {
		return nil, nil
	}
	if ps.cluster == "" {
		return nil, errors.New("--standby needs --cluster etcd://HOST:PORT[,...] (the servers must share an etcd cluster, not an embedded one)")
	}
	if *standbyTTL < 2 {
		return nil, fmt.Errorf("--standby-ttl %d: at least 2 seconds", *standbyTTL)
	}
	eps, err := cluster.ParseURL(ps.cluster)
	if err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := cluster.Open(ctx, cluster.Options{Endpoints: eps, Logger: log})
	if err != nil {
		return nil, err
	}
	if v, found, err := cl.Leader(ctx); err == nil && found {
		log.Info("standby: waiting to take over from the active metadata server", "active", v, "ttl", *standbyTTL)
	}
	start := time.Now()
	st, err := cl.Stand(ctx, addr, *standbyTTL)
	if err != nil {
		cl.Close()
		if ctx.Err() != nil {
			return nil, errors.New("stopped while standing by")
		}
		return nil, err
	}
	sb := &standby{cl: cl, st: st, log: log}
	fail := func(err error) (*standby, error) {
		sb.close()
		return nil, err
	}
	cur, rec, err := st.BeginGrace(ctx)
	if err != nil {
		return fail(fmt.Errorf("standby: grace epoch: %w", err))
	}
	key, err := cl.HandleKey(ctx, cluster.ReadSeedKey(ps.stateDir))
	if err != nil {
		return fail(err)
	}
	sb.tk = &nfs.Takeover{HandleKey: key, Valid: st.Valid, Ledger: st.Ledger(), GraceDone: func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := st.EndGrace(ctx); err != nil {
			log.Warn("standby: recovery epoch not lifted", "err", err)
			return
		}
		log.Info("standby: grace period over", "epoch", cur)
	}}
	ps.opened = cl
	stats.AddGauge(metrics.Gauge{Name: "standby_epoch", Help: "grace epoch this metadata server took over in (--standby)", Value: func() float64 { return float64(cur) }})
	stats.AddGauge(metrics.Gauge{Name: "standby_lease_seconds", Help: "seconds the election lease is surely valid for (--standby); the server stops serving at 0",
		Value: func() float64 { return st.ValidFor().Seconds() }})
	log.Info("standby: elected the active metadata server", "epoch", cur, "recovery_epoch", rec, "waited", time.Since(start).Round(time.Millisecond))
	return sb, nil
}

// adjust makes the role keep the client list through the election, so a
// server that lost it cannot overwrite its successor's.
func (sb *standby) adjust(role *metadataRole, stateDir string) {
	if sb == nil {
		return
	}
	seed := ""
	if stateDir != "" {
		seed = filepath.Join(stateDir, "clients")
	}
	role.records = sb.st.ClientRecords(seed)
}

// takeover is nfs.Config.Takeover: nil without --standby.
func (sb *standby) takeover() *nfs.Takeover {
	if sb == nil {
		return nil
	}
	return sb.tk
}

// lost is closed when the role is lost; nil (never) without --standby.
func (sb *standby) lost() <-chan struct{} {
	if sb == nil {
		return nil
	}
	return sb.st.Done()
}

// close gives the role up (a standby takes over at once) and closes the
// cluster connection.
func (sb *standby) close() {
	if sb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sb.st.Resign(ctx); err != nil {
		sb.log.Debug("standby: resigning the role failed; a standby takes over when the lease ends", "err", err)
	}
	sb.cl.Close()
}
