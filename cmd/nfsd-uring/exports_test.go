package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// oneBadName resolves every name to 127.0.0.9 except gone.example, as a
// DNS that lost one record.
func oneBadName(_ context.Context, host string) ([]netip.Addr, error) {
	if host == "gone.example" {
		return nil, errors.New("no such host")
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.9")}, nil
}

// syncBuffer is a log destination the test reads while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An exports file naming a host that does not resolve starts the server
// and reloads, as `exportfs -ra` does: only that host's client spec is
// left out (one warning naming the line and host), and a tightening of
// another export takes effect.
func TestReloadUnresolvedHost(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	file := filepath.Join(t.TempDir(), "exports")
	write := func(bOpts string) {
		text := fmt.Sprintf("# test\n%s 127.0.0.1(rw,insecure,no_root_squash) gone.example(rw)\n%s 127.0.0.1(%s,insecure,no_root_squash) ok.example(rw)\n", a, b, bOpts)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	write("rw")
	list, err := loadExports(file, oneBadName, logUnresolved(log, file))
	if err != nil {
		t.Fatalf("start-up: %v", err)
	}
	if n := strings.Count(logs.String(), "host=gone.example"); n != 1 || !strings.Contains(logs.String(), "line=2") {
		t.Fatalf("want one warning naming gone.example and line 2:\n%s", logs.String())
	}
	addr, srv := serveList(t, list, log)
	c, err := client.Dial(context.Background(), addr, client.Options{LocalAddr: "127.0.0.1:0", UID: uint32(os.Getuid()), GID: uint32(os.Getgid())})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bFH, err := c.LookupPath(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mkdir(ctx, bFH, "before", 0o755); err != nil {
		t.Fatalf("MKDIR in %s (rw): %v", b, err)
	}

	write("ro")
	reloadExports(file, srv, oneBadName, log)
	if !strings.Contains(logs.String(), "exports reloaded") || strings.Count(logs.String(), "host=gone.example") != 2 {
		t.Fatalf("reload:\n%s", logs.String())
	}
	_, err = c.Mkdir(ctx, bFH, "after", 0o755)
	var se *client.StatusError
	if !errors.As(err, &se) || se.Status != nfs4.ErrRofs {
		t.Fatalf("MKDIR in %s after the reload to ro: %v, want NFS4ERR_ROFS", b, err)
	}
	aFH, err := c.LookupPath(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mkdir(ctx, aFH, "still", 0o755); err != nil {
		t.Fatalf("MKDIR in %s (rw, the line with the bad host): %v", a, err)
	}
}

// serveList serves list on 127.0.0.1 until the test ends.
func serveList(t *testing.T, list []nfs.Export, log *slog.Logger) (string, *nfs.Server) {
	t.Helper()
	srv, err := nfs.NewServer(nfs.Config{Exports: list, Logger: log, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	name := os.Getenv("NFSD_ENGINE")
	if name == "" {
		name = "portable"
	}
	eng, err := engine.New(name, srv, engine.Options{Logger: log})
	if err != nil {
		srv.Close()
		t.Skipf("engine %s: %v", name, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	t.Cleanup(func() {
		eng.Close()
		<-done
		srv.Close()
	})
	return ln.Addr().String(), srv
}
