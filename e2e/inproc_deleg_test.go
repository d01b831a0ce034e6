package e2e

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Delegations over the back channel: the server calls the client back on
// the client's own connection (CB_RECALL, CB_GETATTR), on the engine the
// suite runs on (NFSD_ENGINE).

// startDelegServer serves an empty export with the given lease.
func startDelegServer(t *testing.T, lease uint32, deleg bool) string {
	t.Helper()
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}, LeaseTime: lease, Delegations: deleg}, engine.Options{})
	return addr
}

func dialDeleg(t *testing.T, addr string, opts client.Options) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// makeFile creates name in the root and returns the root's handle.
func makeFile(t *testing.T, c *client.Client, name string) []byte {
	t.Helper()
	ctx := context.Background()
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.OpenWith(ctx, root, &client.OpenArgs{Access: nfs4.ShareAccessBoth | nfs4.ShareAccessWantNoDeleg,
		Name: name, Create: true, CreateMode: nfs4.CreateUnchecked})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CloseFile(ctx, f.FH, f.Stateid); err != nil {
		t.Fatal(err)
	}
	return root
}

// A read delegation is granted to a client with a back channel; another
// client's write open recalls it (CB_RECALL on the holder's connection),
// the holder returns it, and the open then succeeds.
func TestDelegationRecall(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	b := dialDeleg(t, addr, client.Options{})
	root := makeFile(t, a, "f")

	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("read open by a client with a back channel got delegation type %d, want read", fa.Open.Deleg)
	}
	// A read open by another client does not conflict with a read
	// delegation; b has no back channel, so it gets none itself.
	fb, err := b.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if fb.Open.Deleg != nfs4.DelegateNone || a.Recalls() != 0 {
		t.Fatalf("read open by b: delegation %d, recalls %d; want none, 0", fb.Open.Deleg, a.Recalls())
	}
	// A write open conflicts: recalled, returned, then served.
	fw, err := b.Open(ctx, root, "f", nfs4.ShareAccessWrite)
	if err != nil {
		t.Fatalf("conflicting open after recall: %v", err)
	}
	if a.Recalls() != 1 || a.DelegReturns() != 1 {
		t.Fatalf("recalls %d, returns %d; want 1, 1", a.Recalls(), a.DelegReturns())
	}
	st, err := a.TestStateid(ctx, fa.Open.DelegSid)
	if err != nil || st[0] != nfs4.ErrBadStateid {
		t.Fatalf("returned delegation's stateid: %v %v, want BAD_STATEID", st, err)
	}
	// While b holds the file open for writing, a gets no delegation.
	fa2, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if fa2.Open.Deleg != nfs4.DelegateNone {
		t.Fatalf("read open while another client writes got delegation %d", fa2.Open.Deleg)
	}
	for _, c := range []struct {
		c *client.Client
		f *client.File
	}{{a, fa}, {a, fa2}, {b, fb}, {b, fw}} {
		if err := c.c.CloseFile(ctx, c.f.FH, c.f.Stateid); err != nil {
			t.Fatal(err)
		}
	}
}

// The want flags: OPEN4_SHARE_ACCESS_WANT_NO_DELEG gets
// OPEN_DELEGATE_NONE_EXT with WND4_NOT_WANTED, and a client without a
// back channel that asks for one gets none, with a reason.
func TestDelegationWants(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	b := dialDeleg(t, addr, client.Options{})
	root := makeFile(t, a, "f")
	for _, tc := range []struct {
		c      *client.Client
		access uint32
		typ    uint32
		why    uint32
	}{
		{a, nfs4.ShareAccessRead | nfs4.ShareAccessWantNoDeleg, nfs4.DelegateNoneExt, nfs4.WhyNoDelegNotWanted},
		{b, nfs4.ShareAccessRead | nfs4.ShareAccessWantReadDeleg, nfs4.DelegateNoneExt, nfs4.WhyNoDelegResource},
		{b, nfs4.ShareAccessRead, nfs4.DelegateNone, 0},
		// Unknown hint flags above the want field are ignored.
		{a, nfs4.ShareAccessBoth | nfs4.ShareAccessWantWriteDeleg | nfs4.ShareAccessWantSignalDelegWhenResrcAvail, nfs4.DelegateWrite, 0},
	} {
		f, err := tc.c.Open(ctx, root, "f", tc.access)
		if err != nil {
			t.Fatalf("access %#x: %v", tc.access, err)
		}
		if f.Open.Deleg != tc.typ || f.Open.WhyNoDeleg != tc.why {
			t.Errorf("access %#x: delegation %d (why %d), want %d (why %d)", tc.access, f.Open.Deleg, f.Open.WhyNoDeleg, tc.typ, tc.why)
		}
		if f.Open.Deleg == nfs4.DelegateWrite {
			if err := tc.c.DelegReturn(ctx, f.FH, f.Open.DelegSid); err != nil {
				t.Fatal(err)
			}
		}
		if err := tc.c.CloseFile(ctx, f.FH, f.Stateid); err != nil {
			t.Fatal(err)
		}
	}
}

// A holder that never returns a recalled delegation loses it a lease
// after the recall: the other client's open is served, the holder's
// stateid answers NFS4ERR_DELEG_REVOKED and its SEQUENCE replies carry
// SEQ4_STATUS_RECALLABLE_STATE_REVOKED until it frees the stateid.
func TestDelegationRevoked(t *testing.T) {
	addr := startDelegServer(t, 1, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true, Callbacks: client.Callbacks{
		OnRecall: func(nfs4.Stateid, []byte) {}, // answers CB_RECALL, never returns
	}})
	b := dialDeleg(t, addr, client.Options{DelayRetries: 1000, DelayMax: 100 * time.Millisecond})
	root := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil || fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	// a keeps its lease while b waits (the 1 s lease is a's too).
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				a.Access(ctx, root, nfs4.AccessRead)
			}
		}
	}()
	fb, err := b.Open(ctx, root, "f", nfs4.ShareAccessWrite)
	close(stop)
	<-renewed
	if err != nil {
		t.Fatalf("open after revocation: %v", err)
	}
	if a.Recalls() != 1 {
		t.Fatalf("recalls %d, want 1", a.Recalls())
	}
	_, _, err = a.Read(ctx, fa.FH, fa.Open.DelegSid, 0, 10)
	if !client.IsStatus(err, nfs4.ErrDelegRevoked) {
		t.Fatalf("READ with the revoked delegation: %v, want NFS4ERR_DELEG_REVOKED", err)
	}
	if a.SeqStatusFlags()&nfs4.SeqStatusRecallableStateRevoked == 0 {
		t.Fatalf("SEQUENCE flags %#x lack RECALLABLE_STATE_REVOKED", a.SeqStatusFlags())
	}
	st, err := a.TestStateid(ctx, fa.Open.DelegSid)
	if err != nil || st[0] != nfs4.ErrDelegRevoked {
		t.Fatalf("TEST_STATEID: %v %v, want DELEG_REVOKED", st, err)
	}
	if err := a.FreeStateid(ctx, fa.Open.DelegSid); err != nil {
		t.Fatalf("FREE_STATEID of the revoked delegation: %v", err)
	}
	if _, err := a.TestStateid(ctx, fa.Open.DelegSid); err != nil {
		t.Fatal(err)
	}
	if a.SeqStatusFlags()&nfs4.SeqStatusRecallableStateRevoked != 0 {
		t.Fatalf("SEQUENCE flags %#x still say RECALLABLE_STATE_REVOKED after FREE_STATEID", a.SeqStatusFlags())
	}
	if err := b.CloseFile(ctx, fb.FH, fb.Stateid); err != nil {
		t.Fatal(err)
	}
}

// Another client's GETATTR of a file under a write delegation asks the
// holder (CB_GETATTR) and reports the size and a new change attribute
// when the holder says it wrote.
func TestDelegationCBGetattr(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := context.Background()
	var change atomic.Uint64
	a := dialDeleg(t, addr, client.Options{BackChannel: true, Callbacks: client.Callbacks{
		OnGetattr: func([]byte) (uint64, uint64, bool) { return 5, change.Load() + 1, true },
	}})
	b := dialDeleg(t, addr, client.Options{})
	root := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessBoth)
	if err != nil || fa.Open.Deleg != nfs4.DelegateWrite {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	before, err := a.Getattr(ctx, fa.FH, nfs4.BitmapOf(nfs4.AttrChange, nfs4.AttrSize))
	if err != nil {
		t.Fatal(err)
	}
	change.Store(before.Change)
	got, err := b.Getattr(ctx, fa.FH, nfs4.BitmapOf(nfs4.AttrChange, nfs4.AttrSize))
	if err != nil {
		t.Fatal(err)
	}
	if a.CBGetattrs() != 1 || got.Size != 5 || got.Change == before.Change {
		t.Fatalf("CB_GETATTRs %d, size %d, change %d (before %d); want 1, 5, changed", a.CBGetattrs(), got.Size, got.Change, before.Change)
	}
	// The holder's own GETATTR does not call it back.
	if _, err := a.Getattr(ctx, fa.FH, nfs4.BitmapOf(nfs4.AttrSize)); err != nil || a.CBGetattrs() != 1 {
		t.Fatalf("holder's GETATTR: %v, CB_GETATTRs %d", err, a.CBGetattrs())
	}
	if err := a.DelegReturn(ctx, fa.FH, fa.Open.DelegSid); err != nil {
		t.Fatal(err)
	}
	if err := a.CloseFile(ctx, fa.FH, fa.Stateid); err != nil {
		t.Fatal(err)
	}
}

// Without Config.Delegations nothing is granted, even to a client with a
// back channel that asks.
func TestDelegationsOff(t *testing.T) {
	addr := startDelegServer(t, 90, false)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	root := makeFile(t, a, "f")
	f, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead|nfs4.ShareAccessWantReadDeleg)
	if err != nil {
		t.Fatal(err)
	}
	if f.Open.Deleg != nfs4.DelegateNoneExt {
		t.Fatalf("delegation %d granted with delegations off", f.Open.Deleg)
	}
}

// REMOVE by another client recalls a delegation on the file first.
func TestDelegationRecallOnRemove(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	b := dialDeleg(t, addr, client.Options{})
	root := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil || fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	if err := a.CloseFile(ctx, fa.FH, fa.Stateid); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx, root, "f"); err != nil {
		t.Fatalf("REMOVE: %v", err)
	}
	if a.Recalls() != 1 {
		t.Fatalf("recalls %d, want 1", a.Recalls())
	}
}

// A recall whose reply never comes (the holder's reply lost, as with a
// dropped connection) is sent again, and the holder returns the
// delegation then, well before the lease after the recall runs out and the
// server would revoke it (pynfs DSESS9003, where the second recall goes
// over a session the client makes after destroying the first).
func TestDelegationRecallResent(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a callback timeout")
	}
	addr := startDelegServer(t, 60, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true, Callbacks: client.Callbacks{DropRecalls: 1}})
	b := dialDeleg(t, addr, client.Options{DelayRetries: 1000, DelayMax: 200 * time.Millisecond})
	root := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil || fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	start := time.Now()
	fb, err := b.Open(ctx, root, "f", nfs4.ShareAccessWrite)
	if err != nil {
		t.Fatalf("conflicting open: %v", err)
	}
	// The first recall waits out its timeout (10 s), the second is
	// answered and the delegation returned; revocation would take 60 s.
	if took := time.Since(start); took > 40*time.Second {
		t.Fatalf("conflicting open took %v: the delegation was revoked, not returned", took)
	}
	if a.Recalls() != 1 || a.DelegReturns() != 1 {
		t.Fatalf("answered recalls %d, returns %d; want 1, 1 (the first recall dropped)", a.Recalls(), a.DelegReturns())
	}
	if a.SeqStatusFlags()&nfs4.SeqStatusRecallableStateRevoked != 0 {
		t.Fatal("the delegation was revoked")
	}
	for _, c := range []struct {
		c *client.Client
		f *client.File
	}{{a, fa}, {b, fb}} {
		if err := c.c.CloseFile(ctx, c.f.FH, c.f.Stateid); err != nil {
			t.Fatal(err)
		}
	}
}

// startDelegServerDir serves dir with delegations on.
func startDelegServerDir(t *testing.T, dir string) string {
	t.Helper()
	addr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, LeaseTime: 90, Delegations: true}, engine.Options{})
	return addr
}

// waitRecalls waits up to 10 s for c to have answered want CB_RECALLs.
func waitRecalls(t *testing.T, c *client.Client, want uint64) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); c.Recalls() < want; {
		if time.Now().After(end) {
			t.Fatalf("recalls %d, want %d", c.Recalls(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openLocally opens path on the host, as a process other than the server
// would, and reports when the open returned: a delegation's lease holds it
// until the delegation is returned.
func openLocally(path string, flags int) <-chan error {
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, flags, 0)
		if err == nil {
			if flags&os.O_WRONLY != 0 {
				_, err = f.WriteString("written on the host\n")
			}
			f.Close()
		}
		done <- err
	}()
	return done
}

// A process on the server's host that opens a read-delegated file for
// writing recalls the delegation (the server's kernel lease on the file
// breaks); its open goes on once the holder returned it. A local read
// open does not conflict with a read delegation.
func TestDelegationLocalWriteRecalls(t *testing.T) {
	dir := t.TempDir()
	addr := startDelegServerDir(t, dir)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	root := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil || fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	if err := <-openLocally(filepath.Join(dir, "f"), os.O_RDONLY); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if a.Recalls() != 0 {
		t.Fatalf("a local read open recalled the read delegation")
	}
	done := openLocally(filepath.Join(dir, "f"), os.O_WRONLY)
	waitRecalls(t, a, 1)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the local open was still held 10 s after the delegation was returned")
	}
	st, err := a.TestStateid(ctx, fa.Open.DelegSid)
	if err != nil || st[0] != nfs4.ErrBadStateid {
		t.Fatalf("returned delegation's stateid: %v %v, want BAD_STATEID", st, err)
	}
	if err := a.CloseFile(ctx, fa.FH, fa.Stateid); err != nil {
		t.Fatal(err)
	}
}

// Any local open of a write-delegated file recalls the delegation (the
// lease is a write lease); the holder's own reads and writes meanwhile
// go through the leased descriptor and recall nothing.
func TestDelegationLocalOpenRecallsWrite(t *testing.T) {
	dir := t.TempDir()
	addr := startDelegServerDir(t, dir)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	root := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessBoth|nfs4.ShareAccessWantWriteDeleg)
	if err != nil || fa.Open.Deleg != nfs4.DelegateWrite {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	if _, err := a.Write(ctx, fa.FH, fa.Open.DelegSid, 0, nfs4.FileSync4, []byte("by the holder\n")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Read(ctx, fa.FH, fa.Open.DelegSid, 0, 100); err != nil {
		t.Fatal(err)
	}
	if a.Recalls() != 0 {
		t.Fatalf("the holder's own I/O recalled its write delegation")
	}
	done := openLocally(filepath.Join(dir, "f"), os.O_RDONLY)
	waitRecalls(t, a, 1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := a.CloseFile(ctx, fa.FH, fa.Stateid); err != nil {
		t.Fatal(err)
	}
}

// A rename or an unlink made on the host recalls a delegation (inotify:
// a plain lease does not break for them); a chmod the holder itself makes
// through the server does not.
func TestDelegationLocalRenameUnlinkRecalls(t *testing.T) {
	dir := t.TempDir()
	addr := startDelegServerDir(t, dir)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true})
	root := makeFile(t, a, "f")
	makeFile(t, a, "g")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil || fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("open f: %v, delegation %v", err, fa)
	}
	ga, err := a.Open(ctx, root, "g", nfs4.ShareAccessRead)
	if err != nil || ga.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("open g: %v, delegation %v", err, ga)
	}
	var mode client.Attrs
	mode.Mask.Set(nfs4.AttrMode)
	mode.Mode = 0o600
	if _, err := a.Setattr(ctx, fa.FH, nfs4.Stateid{}, &mode); err != nil {
		t.Fatal(err)
	}
	// Past the server's window for taking an inotify event for the
	// holder's own change (selfEventWindow, 250 ms).
	time.Sleep(400 * time.Millisecond)
	if a.Recalls() != 0 {
		t.Fatalf("the holder's own SETATTR recalled its delegation")
	}
	if err := os.Rename(filepath.Join(dir, "f"), filepath.Join(dir, "f2")); err != nil {
		t.Fatal(err)
	}
	waitRecalls(t, a, 1)
	if err := os.Remove(filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	waitRecalls(t, a, 2)
}

// A client whose back channel does not answer the server's CB_NULL probe
// gets no delegation, and once the probe has failed its SEQUENCE replies
// carry SEQ4_STATUS_CB_PATH_DOWN (pynfs CSESS20/21 check the probe is
// sent).
func TestDelegationNeedsCBNull(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true, Callbacks: client.Callbacks{IgnoreNull: true}})
	root := makeFile(t, a, "f")
	f, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead|nfs4.ShareAccessWantReadDeleg)
	if err != nil {
		t.Fatal(err)
	}
	if f.Open.Deleg != nfs4.DelegateNoneExt || f.Open.WhyNoDeleg != nfs4.WhyNoDelegResource {
		t.Fatalf("delegation %d (why %d) for a client that does not answer CB_NULL; want none (resource)", f.Open.Deleg, f.Open.WhyNoDeleg)
	}
	if testing.Short() {
		return
	}
	// The probe gives up after 5 s.
	for end := time.Now().Add(15 * time.Second); a.SeqStatusFlags()&nfs4.SeqStatusCBPathDown == 0; {
		if time.Now().After(end) {
			t.Fatalf("SEQUENCE flags %#x, want SEQ4_STATUS_CB_PATH_DOWN", a.SeqStatusFlags())
		}
		time.Sleep(200 * time.Millisecond)
		if _, err := a.TestStateid(ctx, f.Stateid); err != nil {
			t.Fatal(err)
		}
	}
}

// The holder of a read delegation may open the file for writing itself
// (pynfs DELEG23): the open succeeds at once. The server's write
// descriptor would break its own lease, so it lets the lease go and
// recalls the delegation (knfsd keeps it: its lease knows the breaker
// is the holder, which F_SETLEASE cannot).
func TestDelegationHolderWriteOpen(t *testing.T) {
	addr := startDelegServer(t, 90, true)
	ctx := context.Background()
	a := dialDeleg(t, addr, client.Options{BackChannel: true, DelayRetries: -1})
	root := makeFile(t, a, "f")
	fa, err := a.Open(ctx, root, "f", nfs4.ShareAccessRead)
	if err != nil || fa.Open.Deleg != nfs4.DelegateRead {
		t.Fatalf("open: %v, delegation %v", err, fa)
	}
	fw, err := a.Open(ctx, root, "f", nfs4.ShareAccessWrite)
	if err != nil {
		t.Fatalf("the holder's own write open: %v", err)
	}
	if _, err := a.Write(ctx, fw.FH, fw.Stateid, 0, nfs4.FileSync4, []byte("x")); err != nil {
		t.Fatal(err)
	}
	waitRecalls(t, a, 1)
}
