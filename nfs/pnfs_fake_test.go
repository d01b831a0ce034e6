package nfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// fakeDS is an in-memory DataServers: data files keyed by handle, each
// with the synthetic owner a client must present (writeAs), so that a
// fence is observable.
type fakeDS struct {
	mu        sync.Mutex
	devs      []DataServer
	down      map[DeviceID]bool
	files     map[string]*fakeFile
	mirrors   int
	nextID    uint32
	createErr error
	failed    []fakeFailure
	fences    int
	removed   int
	onDown    func(DeviceID)                      // OnOutOfService's
	rsv       func(context.Context, string) error // BeforeResilver's
	orphans   map[string]FileLayout               // OrphanStore's
}

type fakeFile struct {
	data     []byte
	uid, gid uint32
}

type fakeFailure struct {
	id DeviceID
	st nfs4.Status
}

var errFakeOwner = errors.New("fake DS: wrong owner (fenced)")

func newFakeDS(n int) *fakeDS {
	f := &fakeDS{down: map[DeviceID]bool{}, files: map[string]*fakeFile{}, mirrors: 1, nextID: 10000, orphans: map[string]FileLayout{}}
	for i := 0; i < n; i++ {
		var id DeviceID
		id[0], id[15] = 0xd5, byte(i+1)
		f.devs = append(f.devs, DataServer{ID: id, Addr: fmt.Sprintf("127.0.0.%d:2049", i+1), RSize: 1 << 20, WSize: 1 << 20})
	}
	return f
}

// newMDSHarness is newHarness with the metadata-server role on over ds.
func newMDSHarness(t *testing.T, ds *fakeDS) *harness {
	t.Helper()
	dir, state := t.TempDir(), t.TempDir()
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: state, DataServers: ds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &harness{t: t, s: s, conn: NewConn("test"), dir: dir, state: state}
}

func (f *fakeDS) Device(id DeviceID) (DataServer, bool) {
	for _, d := range f.devs {
		if d.ID == id {
			return d, true
		}
	}
	return DataServer{}, false
}

func (f *fakeDS) Devices() []DataServer {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []DataServer
	for _, d := range f.devs {
		if !f.down[d.ID] {
			out = append(out, d)
		}
	}
	return out
}

func (f *fakeDS) Create(_ context.Context, name string) (FileLayout, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return FileLayout{}, f.createErr
	}
	f.nextID++
	l := FileLayout{Name: name, UID: f.nextID, GID: f.nextID}
	for i := 0; i < f.mirrors; i++ {
		fh := []byte(fmt.Sprintf("fh-%d-%s", i, name))
		f.files[string(fh)] = &fakeFile{uid: l.UID, gid: l.GID}
		l.Mirrors = append(l.Mirrors, DSFile{Device: f.devs[i%len(f.devs)].ID, FH: fh})
	}
	return l, nil
}

func (f *fakeDS) Fence(_ context.Context, l FileLayout) (FileLayout, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	l.UID, l.GID = f.nextID, f.nextID
	for _, m := range l.Mirrors {
		if ff := f.files[string(m.FH)]; ff != nil {
			ff.uid, ff.gid = l.UID, l.GID
		}
	}
	f.fences++
	return l, nil
}

func (f *fakeDS) SetSize(_ context.Context, l FileLayout, size uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range l.Mirrors {
		ff := f.files[string(m.FH)]
		if ff == nil {
			return errors.New("fake DS: no such file")
		}
		if uint64(len(ff.data)) > size {
			ff.data = ff.data[:size]
		} else {
			ff.data = append(ff.data, make([]byte, size-uint64(len(ff.data)))...)
		}
	}
	return nil
}

func (f *fakeDS) Remove(_ context.Context, l FileLayout) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range l.Mirrors {
		delete(f.files, string(m.FH))
	}
	f.removed++
	return nil
}

func (f *fakeDS) ReadAt(_ context.Context, l FileLayout, p []byte, off uint64) (int, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ff := f.files[string(l.Mirrors[0].FH)]
	if ff == nil {
		return 0, false, errors.New("fake DS: no such file")
	}
	if off >= uint64(len(ff.data)) {
		return 0, true, nil
	}
	n := copy(p, ff.data[off:])
	return n, off+uint64(n) >= uint64(len(ff.data)), nil
}

func (f *fakeDS) WriteAt(_ context.Context, l FileLayout, p []byte, off uint64) (int, error) {
	for _, m := range l.Mirrors {
		if err := f.writeAs(m.FH, l.UID, l.GID, p, off); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// writeAs writes as a client presenting uid and gid would: refused once
// the file was fenced to other ids.
func (f *fakeDS) writeAs(fh []byte, uid, gid uint32, p []byte, off uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ff := f.files[string(fh)]
	if ff == nil {
		return errors.New("fake DS: no such file")
	}
	if ff.uid != uid || ff.gid != gid {
		return errFakeOwner
	}
	if end := off + uint64(len(p)); end > uint64(len(ff.data)) {
		ff.data = append(ff.data, make([]byte, end-uint64(len(ff.data)))...)
	}
	copy(ff.data[off:], p)
	return nil
}

func (f *fakeDS) Failed(id DeviceID, st nfs4.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = append(f.failed, fakeFailure{id, st})
}

func (f *fakeDS) data(fh []byte) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ff := f.files[string(fh)]; ff != nil {
		return append([]byte(nil), ff.data...)
	}
	return nil
}

// OnOutOfService makes the fake a DeviceWatcher: takeDown calls f.
func (f *fakeDS) OnOutOfService(fn func(DeviceID)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onDown = fn
}

// takeDown takes device i out of service, as the pool does when it stops
// answering, and tells the watcher.
func (f *fakeDS) takeDown(i int) {
	f.mu.Lock()
	id := f.devs[i].ID
	f.down[id] = true
	fn := f.onDown
	f.mu.Unlock()
	if fn != nil {
		fn(id)
	}
}

// BeforeResilver makes the fake a Resilverer: the test calls rsv.
func (f *fakeDS) BeforeResilver(fn func(context.Context, string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rsv = fn
}

// PutOrphan, DropOrphan and Orphans make the fake an OrphanStore.
func (f *fakeDS) PutOrphan(_ context.Context, l FileLayout) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.orphans[l.Name] = l
	return nil
}

func (f *fakeDS) DropOrphan(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.orphans, name)
	return nil
}

func (f *fakeDS) Orphans(context.Context) ([]FileLayout, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []FileLayout
	for _, l := range f.orphans {
		out = append(out, l)
	}
	return out, nil
}

func (f *fakeDS) orphaned(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.orphans[name]
	return ok
}

func (f *fakeDS) exists(fh []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.files[string(fh)] != nil
}
