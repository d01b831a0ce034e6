package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// serverProc is nfsd-uring running as a separate process, so a test can
// kill -9 it.
type serverProc struct {
	cmd  *exec.Cmd
	addr string
}

func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nfsd-uring")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/nfsd-uring").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func startProc(t *testing.T, bin, dir, addr string) *serverProc {
	t.Helper()
	// The state directory sits beside the export, so a restarted server
	// finds the same handle key.
	state := filepath.Join(filepath.Dir(dir), "state-"+filepath.Base(dir))
	cmd := exec.Command(bin, "--export", dir, "--listen", addr, "--log-level", "warn", "--state-dir", state)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return &serverProc{cmd: cmd, addr: addr}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatal("server did not start")
	return nil
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// chunk is the content written at chunk i, recognisable on disk.
func chunk(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("chunk %08d|", i)), 5000)[:64<<10]
}

// TestCommittedDataSurvivesKill writes UNSTABLE with periodic COMMITs,
// kills the server with SIGKILL mid-stream, restarts it, and checks that
// every committed byte is on disk and that the write verifier changed, so
// a client knows to resend what it had not committed.
func TestCommittedDataSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	p := startProc(t, bin, dir, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := c.RootFH(ctx)
	f, err := c.OpenCreate(ctx, root, "stream", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	committed := -1 // chunks [0, committed] are committed
	var verf [8]byte
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			res, err := c.Write(ctx, f.FH, f.Stateid, uint64(i)*64<<10, nfs4.Unstable4, chunk(i))
			if err != nil {
				done <- err
				return
			}
			verf = res.Verifier
			if i%8 == 7 {
				v, err := c.Commit(ctx, f.FH, 0, 0)
				if err != nil {
					done <- err
					return
				}
				if v != res.Verifier {
					done <- errors.New("COMMIT verifier differs from WRITE's")
					return
				}
				mu.Lock()
				committed = i
				mu.Unlock()
			}
		}
	}()
	// Let it stream, then kill the server mid-stream.
	for {
		mu.Lock()
		n := committed
		mu.Unlock()
		if n >= 40 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("writer stopped early: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	p.cmd.Process.Kill()
	p.cmd.Wait()
	<-done
	c.Close()
	mu.Lock()
	last := committed
	mu.Unlock()

	data, err := os.ReadFile(filepath.Join(dir, "stream"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= last; i++ {
		off := i * 64 << 10
		if len(data) < off+64<<10 || !bytes.Equal(data[off:off+64<<10], chunk(i)) {
			t.Fatalf("committed chunk %d not on disk", i)
		}
	}

	p2 := startProc(t, bin, dir, addr)
	defer func() { p2.cmd.Process.Kill(); p2.cmd.Wait() }()
	c2, err := client.Dial(ctx, addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fh, err := c2.LookupPath(ctx, "stream")
	if err != nil {
		t.Fatalf("handle lookup after restart: %v", err)
	}
	if !bytes.Equal(fh, f.FH) {
		t.Fatal("file handle changed across restart")
	}
	res, err := c2.Write(ctx, fh, nfs4.AnonStateid, 0, nfs4.Unstable4, chunk(0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verifier == verf {
		t.Fatal("write verifier unchanged after restart")
	}
	t.Logf("%d chunks committed before SIGKILL, all on disk; verifier %x -> %x", last+1, verf, res.Verifier)
}
