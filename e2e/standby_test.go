package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// startEtcd runs a single-node etcd in the test process, serving clients
// on a loopback port: the cluster store two server processes share (the
// embedded one of a server would die with it).
func startEtcd(t *testing.T) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	peer := url.URL{Scheme: "http", Host: freeAddr(t)}
	cli := url.URL{Scheme: "http", Host: freeAddr(t)}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cli}, []url.URL{cli}
	cfg.ListenMetricsUrls = nil
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel, cfg.LogOutputs = "fatal", []string{"stderr"} // its shutdown logs errors
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		t.Fatal("etcd did not start")
	}
	return cli.Host
}

// standbyTTL is the election lease of the standby tests
// (NFSD_STANDBY_TTL, default 2 seconds).
func standbyTTL() int {
	if v, err := strconv.Atoi(os.Getenv("NFSD_STANDBY_TTL")); err == nil && v >= 2 {
		return v
	}
	return 2
}

// mds is one nfsd-uring --standby process.
type mds struct {
	cmd  *exec.Cmd
	addr string
	exit chan error
}

// startMDS starts a standby server on export dir with its own state
// directory, sharing the cluster at etcd.
func startMDS(t *testing.T, bin, dir, etcd, name string, extra ...string) *mds {
	t.Helper()
	m := &mds{addr: freeAddr(t), exit: make(chan error, 1)}
	state := filepath.Join(t.TempDir(), "state-"+name)
	m.cmd = exec.Command(bin, "--export", dir, "--listen", m.addr, "--state-dir", state, "--log-level", "info",
		"--cluster", "etcd://"+etcd, "--standby", "--standby-ttl", strconv.Itoa(standbyTTL()), "--lease-time", "30")
	m.cmd.Args = append(m.cmd.Args, extra...)
	m.cmd.Stderr = prefixWriter{name}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.exit <- m.cmd.Wait() }()
	t.Cleanup(func() {
		m.cmd.Process.Kill()
		<-m.exit
		m.exit <- nil
	})
	return m
}

type prefixWriter struct{ name string }

func (p prefixWriter) Write(b []byte) (int, error) {
	for _, l := range bytes.SplitAfter(b, []byte{'\n'}) {
		if len(l) > 0 {
			fmt.Fprintf(os.Stderr, "[%s] %s", p.name, l)
		}
	}
	return len(b), nil
}

// listening reports whether something accepts connections at addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// waitServing waits until m answers an NFS client, and returns when.
func waitServing(t *testing.T, m *mds, within time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if listening(m.addr) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c, err := client.Dial(ctx, m.addr, client.Options{})
			cancel()
			if err == nil {
				at := time.Now()
				c.Close()
				return at
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s not serving within %v", m.addr, within)
	return time.Time{}
}

// standbyPair starts two servers on one export and one etcd: the first
// serves, the second stands by (not listening).
func standbyPair(t *testing.T) (a, b *mds, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the server binary and an etcd")
	}
	bin := buildServer(t)
	etcd := startEtcd(t)
	dir = t.TempDir()
	a = startMDS(t, bin, dir, etcd, "mds-a")
	waitServing(t, a, 30*time.Second)
	b = startMDS(t, bin, dir, etcd, "mds-b")
	time.Sleep(time.Second)
	if listening(b.addr) {
		t.Fatal("the standby listens while the first server is active")
	}
	return a, b, dir
}

const standbyOwner = "e2e-standby-client"

// TestStandbyTakeover: a client holds an open and a write lock on the
// active server and wrote through it; the server is killed; the client
// reconnects to the standby, which took over, reclaims its open and lock
// in the grace period (same file handle: the key is shared), and reads
// its data. Another client's conflicting lock is then denied: the lock
// was reclaimed, not lost.
func TestStandbyTakeover(t *testing.T) {
	a, b, _ := standbyPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c1, err := client.Dial(ctx, a.addr, client.Options{Owner: standbyOwner})
	if err != nil {
		t.Fatal(err)
	}
	root, err := c1.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := openCreate(ctx, c1, root, "f")
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("standby takeover|"), 1000)
	if _, err := c1.Write(ctx, f.FH, f.Stateid, 0, nfs4.FileSync4, data); err != nil {
		t.Fatal(err)
	}
	if _, err := lock(ctx, c1, f.FH, f.Stateid, false, "lock-owner-1"); err != nil {
		t.Fatal(err)
	}

	killed := time.Now()
	a.cmd.Process.Signal(syscall.SIGKILL)
	serving := waitServing(t, b, 60*time.Second)
	t.Logf("standby serving %v after the active server was killed (TTL %ds)", serving.Sub(killed).Round(10*time.Millisecond), standbyTTL())

	// The client comes back to the standby's address under its owner.
	conn, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	c2 := client.Connect(conn, client.Options{Owner: standbyOwner})
	defer c2.Close()
	ex, err := c2.ExchangeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.CreateSession(ctx, ex.ClientID, ex.Seqid); err != nil {
		t.Fatal(err)
	}
	// A new client's OPEN waits for the grace period.
	c3, err := client.Dial(ctx, b.addr, client.Options{Owner: "e2e-standby-other"})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if _, err := c3.Open(ctx, root, "f", nfs4.ShareAccessRead); !client.IsStatus(err, nfs4.ErrGrace) {
		t.Fatalf("new OPEN during the takeover's grace period: %v, want NFS4ERR_GRACE", err)
	}
	osid, err := reclaimOpen(ctx, c2, f.FH)
	if err != nil {
		t.Fatalf("OPEN CLAIM_PREVIOUS on the standby: %v", err)
	}
	if _, err := lock(ctx, c2, f.FH, osid, true, "lock-owner-1"); err != nil {
		t.Fatalf("LOCK reclaim on the standby: %v", err)
	}
	if err := c2.ReclaimComplete(ctx); err != nil {
		t.Fatal(err)
	}
	got, _, err := c2.Read(ctx, f.FH, osid, 0, uint32(len(data)))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read after takeover: %d bytes, %v", len(got), err)
	}
	// Grace ended with the only client's RECLAIM_COMPLETE: the other
	// client opens now, and its lock conflicts with the reclaimed one.
	f3, err := c3.Open(ctx, root, "f", nfs4.ShareAccessBoth)
	if err != nil {
		t.Fatalf("OPEN after grace: %v", err)
	}
	if _, err := lock(ctx, c3, f3.FH, f3.Stateid, false, "lock-owner-3"); !client.IsStatus(err, nfs4.ErrDenied) {
		t.Fatalf("conflicting LOCK after the reclaim: %v, want NFS4ERR_DENIED", err)
	}
}

// TestStandbyKill9 measures how long after a kill -9 of the active server
// the standby serves (NFSD_STANDBY_TTL=5 for the default lease).
func TestStandbyKill9(t *testing.T) {
	a, b, _ := standbyPair(t)
	killed := time.Now()
	a.cmd.Process.Signal(syscall.SIGKILL)
	serving := waitServing(t, b, 60*time.Second)
	d := serving.Sub(killed)
	t.Logf("standby serving %v after kill -9 of the active server (TTL %ds)", d.Round(10*time.Millisecond), standbyTTL())
	if d > time.Duration(standbyTTL()+10)*time.Second {
		t.Errorf("takeover took %v", d)
	}
}

// TestStandbyResign: a clean shutdown (SIGTERM) of the active server
// gives the role up, so the standby serves at once, not a TTL later.
func TestStandbyResign(t *testing.T) {
	a, b, _ := standbyPair(t)
	stopped := time.Now()
	a.cmd.Process.Signal(syscall.SIGTERM)
	serving := waitServing(t, b, 60*time.Second)
	d := serving.Sub(stopped)
	t.Logf("standby serving %v after SIGTERM of the active server (TTL %ds)", d.Round(10*time.Millisecond), standbyTTL())
	if d >= time.Duration(standbyTTL())*time.Second {
		t.Errorf("took %v: the role was not given up", d)
	}
	select {
	case err := <-a.exit:
		a.exit <- err
		if err != nil {
			t.Errorf("the server stopped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit")
	}
}

// TestStandbyDeposed: the active server is frozen (SIGSTOP) past its
// lease; the standby takes over; thawed, the old server answers nothing
// more, not even the request that waited in its socket while it was
// frozen, and exits.
func TestStandbyDeposed(t *testing.T) {
	a, b, _ := standbyPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c1, err := client.Dial(ctx, a.addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	a.cmd.Process.Signal(syscall.SIGSTOP)
	waitServing(t, b, 60*time.Second)
	// A request sent to the frozen server waits in its socket.
	answered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := c1.RootFH(ctx)
		answered <- err
	}()
	time.Sleep(200 * time.Millisecond)
	a.cmd.Process.Signal(syscall.SIGCONT)
	if err := <-answered; err == nil {
		t.Fatal("the deposed server answered a request")
	}
	select {
	case err := <-a.exit:
		t.Logf("deposed server exited: %v", err)
		a.exit <- err
	case <-time.After(10 * time.Second):
		t.Fatal("the deposed server did not exit")
	}
	if listening(a.addr) {
		t.Fatal("the deposed server still listens")
	}
}

// TestStandbyFencesLayouts: with data servers, a client holding a RW
// layout from the active server that does not come back after the
// takeover is fenced by the new server once its grace period is over:
// the layout's synthetic ids no longer write the data file (RFC 8435
// section 14), known from the layout ledger in etcd.
func TestStandbyFencesLayouts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary and an etcd")
	}
	bin := buildServer(t)
	etcd := startEtcd(t)
	dsAddr, _ := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}, StateDir: t.TempDir()}, engine.Options{})
	dir := t.TempDir()
	extra := []string{"--data-server", dsAddr, "--grace", "2"}
	a := startMDS(t, bin, dir, etcd, "mds-a", extra...)
	waitServing(t, a, 30*time.Second)
	b := startMDS(t, bin, dir, etcd, "mds-b", extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c1, err := client.Dial(ctx, a.addr, client.Options{Owner: "e2e-standby-gone", ExchangeFlags: nfs4.ExchgIDUsePNFSMDS})
	if err != nil {
		t.Fatal(err)
	}
	root, err := c1.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := openCreate(ctx, c1, root, "f")
	if err != nil {
		t.Fatal(err)
	}
	_, l, err := c1.FFLayoutGet(ctx, f.FH, nfs4.LayoutIOModeRW, f.Stateid)
	if err != nil {
		t.Fatal(err)
	}
	ds := l.Mirrors[0].Servers[0]
	uid, err1 := strconv.ParseUint(ds.User, 10, 32)
	gid, err2 := strconv.ParseUint(ds.Group, 10, 32)
	if err1 != nil || err2 != nil || len(ds.FHs) == 0 {
		t.Fatalf("layout's data server %+v", ds)
	}
	write := func() error {
		c, err := client.Dial(ctx, dsAddr, client.Options{UID: uint32(uid), GID: uint32(gid)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Write(ctx, ds.FHs[0], nfs4.AnonStateid, 0, nfs4.FileSync4, []byte("written with the layout"))
		return err
	}
	if err := write(); err != nil {
		t.Fatalf("write to the data server with the layout: %v", err)
	}
	killed := time.Now()
	a.cmd.Process.Signal(syscall.SIGKILL)
	waitServing(t, b, 60*time.Second)
	for {
		err := write()
		if client.IsStatus(err, nfs4.ErrAccess) || client.IsStatus(err, nfs4.ErrPerm) {
			t.Logf("fenced %v after the kill", time.Since(killed).Round(10*time.Millisecond))
			break
		}
		if err != nil {
			t.Fatalf("write after the takeover: %v", err)
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatal("the absent client's layout still writes 30 s after the takeover")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// openCreate opens name in dir for reading and writing, creating it.
func openCreate(ctx context.Context, c *client.Client, dir []byte, name string) (*client.File, error) {
	f := &client.File{}
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, dir)
		client.EncodeOpen(e, &client.OpenArgs{Access: nfs4.ShareAccessBoth, ClientID: c.ClientID(), Owner: []byte("open-owner-1"),
			Name: name, Create: true, CreateMode: nfs4.CreateUnchecked})
		client.EncodeGetfh(e)
		return 3
	}, func(r *client.Reply) (err error) {
		if err = r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err = r.Op(nfs4.OpOpen); err != nil {
			return err
		}
		if f.Open, err = client.DecodeOpenRes(r.D); err != nil {
			return err
		}
		f.Stateid = f.Open.Stateid
		if err = r.Op(nfs4.OpGetfh); err != nil {
			return err
		}
		f.FH = append([]byte(nil), r.D.Opaque(nfs4.FHSize)...)
		return nil
	})
	return f, err
}

// reclaimOpen is OPEN CLAIM_PREVIOUS of fh, as openCreate's owner.
func reclaimOpen(ctx context.Context, c *client.Client, fh []byte) (nfs4.Stateid, error) {
	var sid nfs4.Stateid
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, fh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessBoth)
		e.Uint32(0)
		e.Uint64(c.ClientID())
		e.Opaque([]byte("open-owner-1"))
		e.Uint32(nfs4.OpenNoCreate)
		e.Uint32(nfs4.ClaimPrevious)
		e.Uint32(nfs4.DelegateNone)
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpOpen); err != nil {
			return err
		}
		res, err := client.DecodeOpenRes(r.D)
		sid = res.Stateid
		return err
	})
	return sid, err
}

// lock takes a write lock on bytes 0-99 of fh for a new lock owner.
func lock(ctx context.Context, c *client.Client, fh []byte, open nfs4.Stateid, reclaim bool, owner string) (nfs4.Stateid, error) {
	var sid nfs4.Stateid
	err := c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, fh)
		e.Uint32(nfs4.OpLock)
		e.Uint32(2) // WRITE_LT
		e.Bool(reclaim)
		e.Uint64(0)
		e.Uint64(100)
		e.Bool(true) // a new lock owner
		e.Uint32(0)
		open.Encode(e)
		e.Uint32(0)
		e.Uint64(c.ClientID())
		e.Opaque([]byte(owner))
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpLock); err != nil {
			return err
		}
		sid = nfs4.DecodeStateid(r.D)
		return nil
	})
	return sid, err
}
