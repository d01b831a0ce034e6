package pnfs

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// TestGaneshaDataServer: loose coupling with a server that knows nothing
// of us. NFS-Ganesha (FSAL VFS, bench/peer/ganesha.sh) as the data
// server: create with the synthetic owner and mode 0640, write and read
// back, fence (the old owner is refused), truncate, remove. It runs with
// PNFS_GANESHA=1 where ganesha.nfsd is installed (Debian nfs-ganesha and
// nfs-ganesha-vfs; as root).
func TestGaneshaDataServer(t *testing.T) {
	if os.Getenv("PNFS_GANESHA") != "1" {
		t.Skip("PNFS_GANESHA=1 runs it against NFS-Ganesha")
	}
	if _, err := exec.LookPath("ganesha.nfsd"); err != nil {
		t.Skip("ganesha.nfsd not installed")
	}
	run, export := t.TempDir(), t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	script, _ := filepath.Abs("../bench/peer/ganesha.sh")
	ganesha := func(cmd string) {
		c := exec.Command("bash", script, cmd, export, port)
		c.Env = append(os.Environ(), "GANESHA_RUN="+run)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("ganesha %s: %v\n%s", cmd, err, out)
		}
	}
	ganesha("start")
	t.Cleanup(func() { ganesha("stop") })

	// Ganesha's pseudo root is read-only: the data directory is inside
	// the export (--data-server HOST:PORT/export/data).
	p, err := New(context.Background(), Config{Servers: []ServerConfig{{Addr: "127.0.0.1:" + port, Path: "/export/data"}},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.Devices()) != 1 {
		t.Fatalf("not in service: %+v", p.Stats())
	}
	ctx := ctxT(t)
	l, err := p.Create(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	onDisk := filepath.Join(export, "data", "g")
	if mode, uid, gid := owner(t, onDisk); mode != 0o640 || uid != l.UID || gid != l.GID {
		t.Errorf("on disk: mode %o uid %d gid %d, want 640 %d %d", mode, uid, gid, l.UID, l.GID)
	}
	data := bytes.Repeat([]byte("ganesha "), 300000)
	if _, err := p.WriteAt(ctx, l, data, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(data))
	if n, _, err := p.ReadAt(ctx, l, buf, 0); err != nil || !bytes.Equal(buf[:n], data) {
		t.Fatalf("ReadAt: %d %v", n, err)
	}
	write := func(uid uint32) error {
		c, err := client.Dial(ctx, "127.0.0.1:"+port, client.Options{UID: uid, GID: uid})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Write(ctx, l.Mirrors[0].FH, nfs4.AnonStateid, 0, nfs4.FileSync4, []byte("x"))
		return err
	}
	if err := write(l.UID); err != nil {
		t.Fatalf("write as the synthetic owner: %v", err)
	}
	nl, err := p.Fence(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(l.UID); err == nil {
		t.Fatal("fenced owner still writes")
	}
	if err := write(nl.UID); err != nil {
		t.Fatalf("write as the new owner: %v", err)
	}
	if err := p.SetSize(ctx, nl, 10); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(onDisk); err != nil || fi.Size() != 10 {
		t.Fatalf("after SetSize: %v %v", fi, err)
	}
	if err := p.Remove(ctx, nl); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(onDisk); !os.IsNotExist(err) {
		t.Fatalf("after Remove: %v", err)
	}
}
