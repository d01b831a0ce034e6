package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestNFS3ReadCPU compares the server CPU of NFSv3 READ with NFSv4.2 READ
// in one run, against one server: 4 KiB random reads and 1 MiB sequential
// reads of a page-cached 64 MiB file, 8 connections each. The server runs
// in a child process (this test binary, TestNFS3BenchServer), so its CPU
// (utime + stime of /proc/PID/stat) is the server's alone. Run with
// NFSD_BENCH_V3=1 (NFSD_ENGINE picks the engine; uring by default here).
func TestNFS3ReadCPU(t *testing.T) {
	if os.Getenv("NFSD_BENCH_V3") == "" {
		t.Skip("NFSD_BENCH_V3=1 runs it")
	}
	dir := t.TempDir()
	const size = 64 << 20
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	eng := os.Getenv("NFSD_ENGINE")
	if eng == "" {
		eng = "uring"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNFS3BenchServer$", "-test.v")
	cmd.Env = append(os.Environ(), "NFSD_V3_BENCH_SERVER="+dir, "NFSD_ENGINE="+eng)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("the server child did not start")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	pid := cmd.Process.Pid
	const conns = 8
	type phase struct {
		name  string
		count uint32
		ops   int // per connection
		rand  bool
	}
	phases := []phase{{"4KiB", 4 << 10, 5000, true}, {"1MiB", 1 << 20, 384, false}}
	for _, ph := range phases {
		// Rounds alternate the versions; the first warms up, and each
		// version's least CPU of the others is reported (the machine may
		// be shared).
		best3, best4 := time.Duration(1<<62), time.Duration(1<<62)
		for round := 0; round < 4; round++ {
			var v3cpu, v4cpu time.Duration
			// NFSv3.
			vs := make([]*v3conn, conns)
			fhs := make([][]byte, conns)
			for i := range vs {
				vs[i] = dialV3(t, addr)
				_, root := vs[i].mount("/")
				_, fhs[i] = vs[i].lookup(root, "f")
			}
			before := procCPU(t, pid)
			run(conns, func(i int) {
				r := rand.New(rand.NewPCG(uint64(i), 9))
				for k := 0; k < ph.ops; k++ {
					off := uint64(k) * uint64(ph.count) % size
					if ph.rand {
						off = uint64(r.IntN(size/int(ph.count))) * uint64(ph.count)
					}
					st, d := vs[i].nfs(v3Read, func(e *xdr.Encoder) { e.Opaque(fhs[i]); e.Uint64(off); e.Uint32(ph.count) })
					if st != nfs3OK || d.Err() != nil {
						t.Errorf("v3 READ: %d", st)
						return
					}
				}
			})
			v3cpu = procCPU(t, pid) - before
			// NFSv4.2, an open's stateid.
			cs := make([]*client.Client, conns)
			files := make([]*client.File, conns)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			for i := range cs {
				c, err := client.Dial(ctx, addr, client.Options{})
				if err != nil {
					t.Fatal(err)
				}
				cs[i] = c
				if files[i], err = c.OpenPath(ctx, "/f"); err != nil {
					t.Fatal(err)
				}
			}
			before = procCPU(t, pid)
			run(conns, func(i int) {
				r := rand.New(rand.NewPCG(uint64(i), 9))
				buf := make([]byte, ph.count)
				for k := 0; k < ph.ops; k++ {
					off := uint64(k) * uint64(ph.count) % size
					if ph.rand {
						off = uint64(r.IntN(size/int(ph.count))) * uint64(ph.count)
					}
					if _, _, err := cs[i].ReadInto(ctx, files[i].FH, files[i].Stateid, off, buf); err != nil {
						t.Errorf("v4 READ: %v", err)
						return
					}
				}
			})
			v4cpu = procCPU(t, pid) - before
			for _, c := range cs {
				c.Close()
			}
			cancel()
			for _, v := range vs {
				v.c.Close()
			}
			if round > 0 {
				best3, best4 = min(best3, v3cpu), min(best4, v4cpu)
			}
		}
		{
			v3cpu, v4cpu := best3, best4
			n := float64(conns * ph.ops)
			if ph.rand {
				t.Logf("%s %s READ server CPU: v3 %.2f us/op, v4.2 %.2f us/op (%d ops each, least of 3 rounds)", eng, ph.name,
					float64(v3cpu.Microseconds())/n, float64(v4cpu.Microseconds())/n, int(n))
			} else {
				gib := n * float64(ph.count) / (1 << 30)
				t.Logf("%s %s READ server CPU: v3 %.3f s/GiB, v4.2 %.3f s/GiB (%.1f GiB each, least of 3 rounds)", eng, ph.name,
					v3cpu.Seconds()/gib, v4cpu.Seconds()/gib, gib)
			}
		}
	}
}

func run(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// procCPU is the user + system time of process pid (clock ticks of
// /proc/PID/stat, 100 per second).
func procCPU(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// TestNFS3BenchServer is TestNFS3ReadCPU's server, in a child process.
func TestNFS3BenchServer(t *testing.T) {
	dir := os.Getenv("NFSD_V3_BENCH_SERVER")
	if dir == "" {
		t.Skip("the server of TestNFS3ReadCPU")
	}
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: dir}}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(os.Getenv("NFSD_ENGINE"), srv, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	eng.Serve(ln) // until the parent kills the process
}
