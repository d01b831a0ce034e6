package bench

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

// serveConfig serves cfg in process on 127.0.0.1 until the test ends.
func serveConfig(t *testing.T, cfg nfs.Config) string {
	t.Helper()
	srv, err := nfs.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.NewPortable(srv, engine.Options{})
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	t.Cleanup(func() {
		eng.Close()
		<-done
		srv.Close()
	})
	return ln.Addr().String()
}

// startMDS serves a metadata server over n in-process data servers.
func startMDS(t *testing.T, n int) string {
	t.Helper()
	cfg := pnfs.Config{Logger: slog.New(slog.DiscardHandler), ProbeInterval: 100 * time.Millisecond, DialTimeout: time.Second}
	for range n {
		addr := serveConfig(t, nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}, StateDir: t.TempDir()})
		cfg.Servers = append(cfg.Servers, pnfs.ServerConfig{Addr: addr, Path: pnfs.DefaultPath})
	}
	pool, err := pnfs.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return serveConfig(t, nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}, StateDir: t.TempDir(), DataServers: pool})
}

// TestPNFSIOR: ior-easy, ior-hard, randread and io500's ior phases through layouts put every byte on
// the data servers, and the results count them per data server.
func TestPNFSIOR(t *testing.T) {
	addr := startMDS(t, 2)
	cfg := tinyConfig()
	cfg.Size = 4 << 20
	cfg.PNFS = PNFSOn
	builders := []Builder{IOREasy, IORHard, RandRead, IO500}
	for i, b := range append(builders, IOREasy) {
		if i == len(builders) {
			cfg.PNFS = PNFSAuto // finds the MDS with its probe connection
		}
		for _, r := range run(t, cfg, &Target{Addr: addr, Export: "/"}, b) {
			if strings.HasPrefix(r.Workload, "mdtest") {
				continue // metadata, and small files through the MDS
			}
			var sum uint64
			for _, d := range r.DataServers {
				sum += d.ReadBytes + d.WriteBytes
			}
			if r.MDSFallbacks != 0 || sum != uint64(r.Bytes) || len(r.DataServers) == 0 {
				t.Errorf("%s %s: %d bytes, %d to data servers %+v, %d through the MDS", r.Workload, r.Op, r.Bytes, sum, r.DataServers, r.MDSFallbacks)
			}
		}
	}
}
