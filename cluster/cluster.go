// Package cluster keeps the metadata server's shared state in etcd: the
// data-server registry, the synthetic-id counter of the flexfiles role
// (package pnfs) and the election of the active metadata server. With no
// endpoints it runs a single-node etcd inside the process, its data under
// the state directory, so a lone server needs nothing else.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"
)

// Prefix begins every key the server writes.
const Prefix = "/nfsd-uring/"

// Options configure Open.
type Options struct {
	// StateDir holds the embedded etcd's data (StateDir/etcd); used only
	// without Endpoints.
	StateDir string
	// Endpoints are the etcd servers to use (http://HOST:PORT); none:
	// the embedded one.
	Endpoints []string
	// DialTimeout bounds connecting to Endpoints (default 5s).
	DialTimeout time.Duration
	Logger      *slog.Logger
}

// Cluster is a connection to the cluster store, and the embedded etcd when
// it runs one.
type Cluster struct {
	cli  *clientv3.Client
	etcd *embed.Etcd // nil with external endpoints
	lock *os.File    // flock on StateDir/etcd.lock while embedded
	log  *slog.Logger
	// sock is the embedded etcd's client socket; sockDir, when set, the
	// private directory made for it (socketPath), removed by Close.
	sock, sockDir string
	// closing silences the embedded etcd while it stops: it logs its
	// listeners closing as errors.
	closing atomic.Bool
}

// ParseURL parses --cluster's value, etcd://HOST:PORT[,HOST:PORT...], into
// client endpoints.
func ParseURL(v string) ([]string, error) {
	rest, ok := strings.CutPrefix(v, "etcd://")
	if !ok {
		return nil, fmt.Errorf("cluster %q: want etcd://HOST:PORT[,HOST:PORT...]", v)
	}
	var eps []string
	for _, hp := range strings.Split(rest, ",") {
		hp = strings.TrimSuffix(hp, "/")
		if _, _, err := net.SplitHostPort(hp); err != nil {
			return nil, fmt.Errorf("cluster %q: %w", v, err)
		}
		eps = append(eps, "http://"+hp)
	}
	return eps, nil
}

// Open connects to the cluster store, first starting the embedded etcd
// when o names no endpoints. Two processes (or two Opens in one) cannot
// run the embedded etcd of one state directory at once: the second fails
// at once with an error saying so.
func Open(ctx context.Context, o Options) (*Cluster, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
	c := &Cluster{log: o.Logger}
	eps := o.Endpoints
	if len(eps) == 0 {
		if err := c.startEmbedded(ctx, o.StateDir); err != nil {
			return nil, err
		}
		eps = []string{"unix://" + c.sock}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: o.DialTimeout, Logger: zap.NewNop(), Context: ctx})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c.cli = cli
	// clientv3.New does not wait for a server: ask one now, so a wrong
	// endpoint fails here rather than at the first create.
	sctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	if _, err := cli.Get(sctx, Prefix+"ping"); err != nil {
		c.Close()
		return nil, fmt.Errorf("cluster %v: %w", eps, err)
	}
	return c, nil
}

// startEmbedded runs a single-node etcd, its clients served on a unix
// socket (socketPath, mode 0600) and its peer port on 127.0.0.1 (chosen
// free; a single member takes no peers), data in dir/etcd, logging
// errors only.
func (c *Cluster) startEmbedded(ctx context.Context, dir string) error {
	if dir == "" {
		return errors.New("cluster: no state directory for the embedded etcd")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	lock, err := lockDir(filepath.Join(dir, "etcd.lock"))
	if err != nil {
		return err
	}
	c.lock = lock
	ports, err := freePorts(1)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	cfg := embed.NewConfig()
	cfg.Name = "nfsd-uring"
	cfg.Dir = filepath.Join(dir, "etcd")
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	sock, err := c.socketPath(dir)
	if err != nil {
		c.Close()
		return err
	}
	// Clients reach it through a unix socket only the server's user may
	// connect to, not a loopback port: etcd has no authentication here,
	// and what it holds (the orphaned data files the MDS removes, the
	// data servers' states) must not be writable by every local user.
	client := url.URL{Scheme: "unix", Path: sock}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenMetricsUrls = nil
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.Logger, cfg.LogLevel, cfg.LogOutputs = "zap", "error", []string{"stderr"}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(c.etcdLogger())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		c.Close()
		return fmt.Errorf("cluster: embedded etcd in %s: %w", cfg.Dir, err)
	}
	c.etcd = e
	if err := os.Chmod(sock, 0o600); err != nil {
		c.Close()
		return fmt.Errorf("cluster: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		c.Close()
		return fmt.Errorf("cluster: embedded etcd: %w", err)
	case <-time.After(60 * time.Second):
		c.Close()
		return errors.New("cluster: embedded etcd did not start in 60s")
	case <-ctx.Done():
		c.Close()
		return ctx.Err()
	}
	c.log.Info("embedded etcd started", "dir", cfg.Dir, "client", client.String())
	return nil
}

// socketPath is where the embedded etcd's client socket goes: dir/etcd.sock
// when the path fits a socket address (108 bytes), else a private
// directory of its own under the system's temporary directory, removed
// by Close.
func (c *Cluster) socketPath(dir string) (string, error) {
	abs, err := filepath.Abs(filepath.Join(dir, "etcd.sock"))
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	if len(abs) < 100 {
		c.sock = abs
		return abs, nil
	}
	tmp, err := os.MkdirTemp("", "nfsd-uring-etcd")
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	c.sockDir = tmp
	c.sock = filepath.Join(tmp, "etcd.sock")
	return c.sock, nil
}

// lockDir takes an exclusive flock on path, failing at once if it is
// held: etcd's own lock on its database would make a second server wait
// forever instead.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("cluster: the embedded etcd in %s is in use by another server", filepath.Dir(path))
		}
		return nil, fmt.Errorf("cluster: lock %s: %w", path, err)
	}
	return f, nil
}

// freePorts finds n free TCP ports on 127.0.0.1. Another process may take
// one before etcd listens; startup then fails and says so.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Client is the etcd client, for what this package does not wrap.
func (c *Cluster) Client() *clientv3.Client { return c.cli }

// Embedded reports whether the store is the in-process etcd.
func (c *Cluster) Embedded() bool { return c.etcd != nil }

// Close ends the client, stops the embedded etcd and releases its lock.
func (c *Cluster) Close() error {
	var err error
	if c.cli != nil {
		err = c.cli.Close()
		c.cli = nil
	}
	if c.etcd != nil {
		c.closing.Store(true)
		c.etcd.Close()
		c.etcd = nil
	}
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
	if c.sockDir != "" {
		os.RemoveAll(c.sockDir)
		c.sockDir = ""
	}
	return err
}

// Put stores value under Prefix+key.
func (c *Cluster) Put(ctx context.Context, key string, value []byte) error {
	_, err := c.cli.Put(ctx, Prefix+key, string(value))
	return err
}

// Get returns the value under Prefix+key; found is false when there is
// none.
func (c *Cluster) Get(ctx context.Context, key string) (value []byte, found bool, err error) {
	r, err := c.cli.Get(ctx, Prefix+key)
	if err != nil || len(r.Kvs) == 0 {
		return nil, false, err
	}
	return r.Kvs[0].Value, true, nil
}

// List returns every key under Prefix+prefix (without Prefix) and its
// value.
func (c *Cluster) List(ctx context.Context, prefix string) (map[string][]byte, error) {
	r, err := c.cli.Get(ctx, Prefix+prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(r.Kvs))
	for _, kv := range r.Kvs {
		out[strings.TrimPrefix(string(kv.Key), Prefix)] = kv.Value
	}
	return out, nil
}

// Delete removes Prefix+key.
func (c *Cluster) Delete(ctx context.Context, key string) error {
	_, err := c.cli.Delete(ctx, Prefix+key)
	return err
}

// etcdLogger is the embedded etcd's logger: errors only, as JSON lines on
// stderr, none while it stops, and without the one error a fresh
// single-node etcd always logs ("failed to update storage version":
// benign, the schema is written on the next apply).
func (c *Cluster) etcdLogger() *zap.Logger {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	core := zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zapcore.ErrorLevel)
	return zap.New(quietCore{Core: core, closing: &c.closing})
}

type quietCore struct {
	zapcore.Core
	closing *atomic.Bool
}

func (q quietCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if q.closing.Load() || strings.Contains(e.Message, "storage version") {
		return ce
	}
	return q.Core.Check(e, ce)
}

func (q quietCore) With(f []zapcore.Field) zapcore.Core {
	return quietCore{Core: q.Core.With(f), closing: q.closing}
}
