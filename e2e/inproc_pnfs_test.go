package e2e

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// memDataServers is an in-memory nfs.DataServers: one data server, data
// files keyed by handle.
type memDataServers struct {
	mu    sync.Mutex
	files map[string][]byte
	n     int
}

var memDev = nfs.DeviceID{0xd5, 1}

func (m *memDataServers) Device(id nfs.DeviceID) (nfs.DataServer, bool) {
	return nfs.DataServer{ID: memDev, Addr: "127.0.0.1:2049", RSize: 1 << 20, WSize: 1 << 20}, id == memDev
}

func (m *memDataServers) Devices() []nfs.DataServer {
	d, _ := m.Device(memDev)
	return []nfs.DataServer{d}
}

func (m *memDataServers) Create(_ context.Context, name string) (nfs.FileLayout, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	fh := "ds-" + name
	m.files[fh] = nil
	return nfs.FileLayout{Name: name, UID: 20000, GID: 20000, Mirrors: []nfs.DSFile{{Device: memDev, FH: []byte(fh)}}}, nil
}

func (m *memDataServers) Fence(_ context.Context, l nfs.FileLayout) (nfs.FileLayout, error) {
	l.UID++
	l.GID++
	return l, nil
}

func (m *memDataServers) SetSize(_ context.Context, l nfs.FileLayout, size uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.files[string(l.Mirrors[0].FH)]
	if uint64(len(b)) > size {
		b = b[:size]
	}
	m.files[string(l.Mirrors[0].FH)] = append(b, make([]byte, size-uint64(len(b)))...)
	return nil
}

func (m *memDataServers) Remove(_ context.Context, l nfs.FileLayout) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, string(l.Mirrors[0].FH))
	return nil
}

func (m *memDataServers) ReadAt(_ context.Context, l nfs.FileLayout, p []byte, off uint64) (int, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[string(l.Mirrors[0].FH)]
	if !ok {
		return 0, false, errors.New("no such data file")
	}
	if off >= uint64(len(b)) {
		return 0, true, nil
	}
	n := copy(p, b[off:])
	return n, off+uint64(n) == uint64(len(b)), nil
}

func (m *memDataServers) WriteAt(_ context.Context, l nfs.FileLayout, p []byte, off uint64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.files[string(l.Mirrors[0].FH)]
	if end := off + uint64(len(p)); end > uint64(len(b)) {
		b = append(b, make([]byte, end-uint64(len(b)))...)
	}
	copy(b[off:], p)
	m.files[string(l.Mirrors[0].FH)] = b
	return len(p), nil
}

func (m *memDataServers) Failed(nfs.DeviceID, nfs4.Status) {}

// TestPNFSProxyIO: against a metadata server (Config.DataServers set),
// a client that does not ask for layouts creates a file, writes it and
// reads it back through the MDS, on the engine the suite runs on: every
// byte is right, the bytes are on the data server, and the export file
// is sparse (only its size is kept there).
func TestPNFSProxyIO(t *testing.T) {
	dir := t.TempDir()
	ds := &memDataServers{files: map[string][]byte{}}
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, DataServers: ds}, engine.Options{})
	c, err := client.Dial(ctxT(t), addr, client.Options{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t)
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.OpenCreate(ctx, root, "f", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3<<20+123)
	rand.NewChaCha8([32]byte{3}).Read(data)
	for off := 0; off < len(data); off += 512 << 10 {
		end := min(off+512<<10, len(data))
		if _, err := c.Write(ctx, f.FH, f.Stateid, uint64(off), nfs4.Unstable4, data[off:end]); err != nil {
			t.Fatalf("WRITE at %d: %v", off, err)
		}
	}
	if err := c.CloseFile(ctx, f.FH, f.Stateid); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(context.Context, string, uint32) ([]byte, error){c.ReadFile, c.ReadFilePlus} {
		got, err := read(ctx, "f", 256<<10)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back: %v, %d bytes, first difference at %d", err, len(got), firstDiff(got, data))
		}
	}
	ds.mu.Lock()
	onDS := len(ds.files) == 1
	for _, b := range ds.files {
		onDS = onDS && bytes.Equal(b, data)
	}
	ds.mu.Unlock()
	if !onDS {
		t.Error("the data server does not hold the file's bytes")
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(dir, "f"), &st); err != nil || st.Size != int64(len(data)) || st.Blocks*512 > 4096 {
		t.Errorf("export file: size %d, %d blocks (%v): want %d bytes and no data block", st.Size, st.Blocks, err, len(data))
	}
}
