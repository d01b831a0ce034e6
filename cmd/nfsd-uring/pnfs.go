package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/nfsd-uring/nfsd-uring/cluster"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

// dataServerList collects --data-server values as given; they are parsed
// once --ds-path is known.
type dataServerList []string

func (l *dataServerList) String() string { return strings.Join(*l, " ") }

func (l *dataServerList) Set(v string) error {
	if _, err := pnfs.ParseServer(v, pnfs.DefaultPath); err != nil {
		return err
	}
	*l = append(*l, v)
	return nil
}

// pnfsSettings are the flags of the metadata-server role.
type pnfsSettings struct {
	servers  dataServerList
	mirrors  int
	cluster  string // --cluster etcd://...; empty: embedded under stateDir
	dsPath   string
	stateDir string

	// stripeUnit and stripeWidth are --stripe-unit and --stripe-width.
	stripeUnit  stripeUnit
	stripeWidth int
	// opened is the cluster --standby connected to for its election
	// (standby.go); it closes it.
	opened *cluster.Cluster
}

// metadataRole is what the metadata-server role adds to nfs.Config.
type metadataRole struct {
	dataServers nfs.DataServers
	// records keeps the client records in the cluster store, so a
	// standby taking over knows who may reclaim.
	records nfs.ClientRecordStore
	close   func() // pool first, then the cluster store
}

// setupDataServers makes the data-server pool and the cluster store it
// keeps its state in, when --data-server is given; without it there is
// neither (no etcd at all) and the server is an ordinary one.
func setupDataServers(ctx context.Context, s pnfsSettings, log *slog.Logger, stats *metrics.Set) (metadataRole, error) {
	none := metadataRole{close: func() {}}
	if len(s.servers) == 0 {
		if s.cluster != "" && s.opened == nil {
			return none, errors.New("--cluster needs --data-server (the metadata-server role)")
		}
		if s.stripeUnit != 0 || s.stripeWidth != 0 {
			return none, errors.New("--stripe-unit and --stripe-width need --data-server (the metadata-server role)")
		}
		return none, nil
	}
	var cfgs []pnfs.ServerConfig
	for _, v := range s.servers {
		c, err := pnfs.ParseServer(v, s.dsPath)
		if err != nil {
			return none, err
		}
		cfgs = append(cfgs, c)
	}
	cl, closeCl, err := openCluster(ctx, s, log)
	if err != nil {
		return none, err
	}
	pool, err := pnfs.New(ctx, pnfs.Config{Servers: cfgs, Mirrors: s.mirrors, StripeUnit: uint64(s.stripeUnit), Width: s.stripeWidth, Registry: cl, Logger: log, Metrics: stats})
	if err != nil {
		closeCl()
		return none, fmt.Errorf("--data-server: %w", err)
	}
	log.Info("metadata-server role (pNFS flexible files)", "data_servers", len(cfgs), "in_service", len(pool.Devices()),
		"mirrors", max(s.mirrors, 1), "stripe_unit", uint64(s.stripeUnit), "cluster", clusterName(s.cluster, cl))
	// The state directory's clients file seeds the cluster's list the
	// first time, so clients of a run without clustering still reclaim.
	seed := ""
	if s.stateDir != "" {
		seed = filepath.Join(s.stateDir, "clients")
	}
	return metadataRole{dataServers: pool, records: cl.ClientRecords(seed), close: func() {
		pool.Close()
		closeCl()
	}}, nil
}

// openCluster connects to the cluster store (--cluster, else the embedded
// one), or returns the one --standby opened, which is not this role's to
// close.
func openCluster(ctx context.Context, s pnfsSettings, log *slog.Logger) (*cluster.Cluster, func(), error) {
	if s.opened != nil {
		return s.opened, func() {}, nil
	}
	opts := cluster.Options{StateDir: s.stateDir, Logger: log}
	var err error
	if s.cluster != "" {
		if opts.Endpoints, err = cluster.ParseURL(s.cluster); err != nil {
			return nil, nil, err
		}
	}
	cl, err := cluster.Open(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	return cl, func() { cl.Close() }, nil
}

func clusterName(url string, cl *cluster.Cluster) string {
	if cl.Embedded() {
		return "embedded etcd"
	}
	return url
}
