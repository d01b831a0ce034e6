package bench

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// startServer serves a temporary directory with nfsd-uring in process.
func startServer(t *testing.T) (addr, dir string) {
	t.Helper()
	dir = t.TempDir()
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: dir}}})
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
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		srv.Close()
	})
	return ln.Addr().String(), dir
}

func tinyConfig() *Config {
	cfg := &Config{Conns: 2, Depth: 4, Size: 256 << 10, RSize: 64 << 10, Files: 20, Ops: 200}
	cfg.SetDefaults()
	return cfg
}

// run runs build against target t and fails on any phase error.
func run(t *testing.T, cfg *Config, tg *Target, build Builder) []*Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tg.Connect(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	r := &Runner{Cfg: cfg, Targets: []*Target{tg}}
	res, err := r.Run(ctx, build)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if x.Error != "" {
			t.Errorf("%s %s %s %s: %s", x.Workload, x.File, x.Op, cacheString(x.Cached), x.Error)
		}
	}
	return res
}

func TestReadMatrixLocal(t *testing.T) {
	addr, dir := startServer(t)
	cfg := tinyConfig()
	tg := &Target{Addr: addr, Export: "/", LocalDir: dir, ServerPID: os.Getpid()}
	res := run(t, cfg, tg, ReadMatrix)
	if len(res) != len(Layouts())*4 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Bytes != cfg.Size || r.ServerCPUSeconds == nil {
			t.Errorf("%s %s: %d bytes, server CPU %v", r.File, r.Op, r.Bytes, r.ServerCPUSeconds)
		}
	}
}

func TestReadMatrixOverNFS(t *testing.T) {
	addr, _ := startServer(t)
	cfg := tinyConfig()
	cfg.Size = 100<<10 + 4096 // not a multiple of the chunk
	cfg.Layouts = []string{"data", "hole", "mixed-4d", "mixed-32h"}
	var warned []string
	cfg.Warn = func(s string) { warned = append(warned, s) }
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, ReadMatrix)
	if len(res) != 8 || len(warned) != 1 {
		t.Fatalf("%d results, warnings %q", len(res), warned)
	}
	for _, r := range res {
		if r.Bytes != cfg.Size || !*r.Cached {
			t.Errorf("%s %s: %d bytes", r.File, r.Op, r.Bytes)
		}
	}
	// The second run finds the files and reuses them.
	res = run(t, cfg, &Target{Addr: addr, Export: "/"}, ReadMatrix)
	if len(res) != 8 {
		t.Fatalf("%d results", len(res))
	}
}

func TestRandRead(t *testing.T) {
	addr, dir := startServer(t)
	cfg := tinyConfig()
	res := run(t, cfg, &Target{Addr: addr, Export: "/", LocalDir: dir}, RandRead)
	if len(res) != 1 || res[0].Ops != int64(cfg.Ops) || res[0].Bytes != int64(cfg.Ops)*4096 || res[0].LatencyUS["p99"] <= 0 {
		t.Fatalf("%+v", res[0])
	}
	// READ and READ_PLUS, each checked against the layout.
	cfg.ReadOps = []string{"READ", "READ_PLUS"}
	res = run(t, cfg, &Target{Addr: addr, Export: "/", LocalDir: dir}, RandRead)
	if len(res) != 2 || res[0].Op != "READ 4KiB" || res[1].Op != "READ_PLUS 4KiB" {
		t.Fatalf("%d results: %+v", len(res), res)
	}
	for _, r := range res {
		if r.Error != "" || r.Ops != int64(cfg.Ops) || r.Bytes != int64(cfg.Ops)*4096 {
			t.Fatalf("%s: %+v", r.Op, r)
		}
	}
}

func TestIO500(t *testing.T) {
	addr, _ := startServer(t)
	cfg := tinyConfig()
	cfg.Size = 4 << 20
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, IO500)
	want := map[string]int64{
		"ior-easy write": 2 * 4 << 20, "ior-easy read": 2 * 4 << 20,
		"ior-hard write": 2 * (4 << 20 / 47008 / 2) * 47008, "ior-hard read": 2 * (4 << 20 / 47008 / 2) * 47008,
		"mdtest-hard create": 40 * mdtestHardSize, "mdtest-hard read": 40 * mdtestHardSize,
	}
	for _, r := range res {
		if b, ok := want[r.Workload+" "+r.Op]; ok && r.Bytes != b {
			t.Errorf("%s %s: %d bytes, want %d", r.Workload, r.Op, r.Bytes, b)
		}
		if r.Workload[:3] == "mdt" && r.Ops != 40 {
			t.Errorf("%s %s: %d ops", r.Workload, r.Op, r.Ops)
		}
	}
	s := Scores(res)
	if len(s) != 1 || s[0].Total <= 0 {
		t.Fatalf("scores %+v", s)
	}
}

func TestStonewall(t *testing.T) {
	addr, _ := startServer(t)
	cfg := tinyConfig()
	cfg.Files = 1 << 20
	cfg.Stonewall = 200 * time.Millisecond
	start := time.Now()
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, MDTestEasy)
	remove := res[len(res)-1]
	if time.Since(start) > 10*time.Second || res[0].Ops == 0 || remove.Op != "remove" || remove.Ops != res[0].Ops {
		t.Fatalf("create %d ops, %s %d, took %v", res[0].Ops, remove.Op, remove.Ops, time.Since(start))
	}
}

// TestMDTestList: the list phase lists every file made, once (checked by
// the phase), one op per entry.
func TestMDTestList(t *testing.T) {
	addr, _ := startServer(t)
	cfg := tinyConfig()
	for _, b := range []Builder{MDTestEasy, MDTestHard} {
		res := run(t, cfg, &Target{Addr: addr, Export: "/"}, b)
		var list *Result
		for _, r := range res {
			if r.Op == "list" {
				list = r
			}
		}
		if list == nil || list.Error != "" || list.Ops != res[0].Ops {
			t.Fatalf("list phase %+v, %d files made", list, res[0].Ops)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	cfg := tinyConfig()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	if err := (&Target{Addr: dead, Export: "/"}).Connect(ctx, cfg); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("dead server: %v", err)
	}
	addr, _ := startServer(t)
	if err := (&Target{Addr: addr, Export: "/no/such/export"}).Connect(ctx, cfg); err == nil || !strings.Contains(err.Error(), "export not found") {
		t.Errorf("missing export: %v", err)
	}
}

func TestTableOutput(t *testing.T) {
	addr, dir := startServer(t)
	cfg := tinyConfig()
	cfg.Layouts = []string{"mixed-8h"}
	res := run(t, cfg, &Target{Name: "a", Addr: addr, Export: "/", LocalDir: dir}, ReadMatrix)
	var b strings.Builder
	WriteTable(&b, res)
	WriteRatios(&b, append(res, renamed(res, "b")...), "a", "b")
	if err := WriteCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"READ_PLUS", "uncached", "1.00x", `"wire_bytes"`} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + out)
	}
}

func renamed(res []*Result, name string) []*Result {
	var out []*Result
	for _, r := range res {
		c := *r
		c.Server = name
		out = append(out, &c)
	}
	return out
}

// TestPNFSAutoPlainServer: --pnfs auto against a server that is no pNFS
// MDS runs as before (a probe connection finds out), and --pnfs on fails.
func TestPNFSAutoPlainServer(t *testing.T) {
	addr, _ := startServer(t)
	cfg := tinyConfig()
	cfg.PNFS = PNFSAuto
	res := run(t, cfg, &Target{Addr: addr, Export: "/"}, IOREasy)
	for _, r := range res {
		if len(r.DataServers) != 0 || r.MDSFallbacks != 0 || r.Bytes != 2*iorEasyXfer {
			t.Fatalf("%+v", r)
		}
	}
	cfg.PNFS = PNFSOn
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tg := &Target{Addr: addr, Export: "/"}
	if err := tg.Connect(ctx, cfg); err == nil || !strings.Contains(err.Error(), "no pNFS metadata server") {
		tg.Close()
		t.Fatalf("--pnfs on against a plain server: %v", err)
	}
}
