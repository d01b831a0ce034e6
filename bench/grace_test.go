package bench

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// serveState serves dir with state kept in stateDir and a 2 s grace
// period; stop ends it (also at the end of the test).
func serveState(t *testing.T, dir, stateDir string) (addr string, stop func()) {
	t.Helper()
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: dir}}, StateDir: stateDir, GraceTime: 2})
	if err != nil {
		t.Fatal(err)
	}
	name := os.Getenv("NFSD_ENGINE")
	if name == "" {
		name = "portable"
	}
	eng, err := engine.New(name, srv, engine.Options{})
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
	var once sync.Once
	stop = func() {
		once.Do(func() {
			eng.Close()
			<-done
			srv.Close()
		})
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// A server restarted with a remembered client is in its grace period and
// answers OPEN with NFS4ERR_GRACE: nfsbench waits it out, saying so once,
// as a real client does, instead of failing the phase.
func TestWorkloadWaitsOutGrace(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	addr, stop := serveState(t, dir, stateDir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A client that sent RECLAIM_COMPLETE is on the server's list; the
	// server stops under it, so its state is to be reclaimed.
	old, err := client.Dial(ctx, addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	old.Close()

	addr, _ = serveState(t, dir, stateDir)
	var mu sync.Mutex
	var said []string
	cfg := &Config{Conns: 2, Depth: 4, Files: 3, GraceWait: 20 * time.Second,
		Warn: func(s string) { mu.Lock(); said = append(said, s); mu.Unlock() }}
	cfg.SetDefaults()
	start := time.Now()
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, MDTestEasy)
	if took := time.Since(start); took < time.Second {
		t.Errorf("the workload took %v: was the server in grace at all?", took)
	}
	// The wait came before the timed phases.
	for _, r := range res {
		if r.Seconds > 1 {
			t.Errorf("%s %s took %.1fs: the grace period was timed", r.Workload, r.Op, r.Seconds)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(said) != 1 || !strings.HasPrefix(said[0], "server in grace period: waiting") {
		t.Errorf("said %q, want one line \"server in grace period: waiting ...\"", said)
	}
}
