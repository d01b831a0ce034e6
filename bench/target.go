package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"path"
	"sync"
	"syscall"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Target is one server under test.
type Target struct {
	Name      string // label in tables; default the address
	Addr      string // HOST:PORT
	Export    string // path of the export from the server's root
	LocalDir  string // the export's directory on this machine, if local
	ServerPID int    // server process for CPU accounting; 0: unknown
	// MountPort is the TCP port of the MOUNT service on Addr's host for
	// --vers 3 (0: the NFS port, as nfsd-uring serves it; NFS-Ganesha
	// has a port of its own).
	MountPort int
	// TLS, when set, makes the connections RPC-with-TLS (RFC 9289).
	TLS *tls.Config

	conns []*client.Client
	pnfs  []*client.PNFS // one per connection with pNFS on (pnfs.go)
	// noDeleg: the back channel is there for layout recalls only, so
	// OPENs say OPEN4_SHARE_ACCESS_WANT_NO_DELEG and the runs get no
	// more delegations than without pNFS.
	noDeleg   bool
	dir       []byte    // handle of the benchmark directory
	graceOnce sync.Once // "server in grace period" is said once
	v3        *v3Target // --vers 3 (nfs3.go)
}

// Label is the target's name in output.
func (t *Target) Label() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Addr
}

// Connect opens n connections (one session each) and finds or makes the
// benchmark directory sub under the export.
func (t *Target) Connect(ctx context.Context, cfg *Config) error {
	if cfg.Vers == 3 {
		return t.connect3(ctx, cfg) // nfs3.go
	}
	back, err := t.wantBackChannel(ctx, cfg)
	if err != nil {
		return dialError(t.Addr, err)
	}
	t.noDeleg = back && !cfg.BackChannel
	for range cfg.Conns {
		c, err := client.Dial(ctx, t.Addr, client.Options{UID: cfg.UID, GID: cfg.GID, Slots: uint32(cfg.Depth) + 1, BackChannel: back, NoHoleFill: cfg.NoVerify,
			ExchangeFlags: exchangeFlags(cfg.PNFS), TLS: t.TLS,
			Krb5:      cfg.Krb5,
			GraceWait: cfg.GraceWait, OnGrace: func() {
				t.graceOnce.Do(func() { cfg.warn("server in grace period: waiting (%s, at most %v)", t.Label(), cfg.GraceWait) })
			}})
		if err != nil {
			t.Close()
			return dialError(t.Addr, err)
		}
		t.conns = append(t.conns, c)
	}
	if err := t.setupPNFS(cfg); err != nil {
		t.Close()
		return err
	}
	root, err := t.conns[0].LookupPath(ctx, t.Export)
	if err != nil {
		t.Close()
		return lookupError(t, t.Export, err)
	}
	t.dir, err = lookupOrMkdir(ctx, t.conns[0], root, cfg.Dir)
	if err != nil {
		t.Close()
		return lookupError(t, path.Join(t.Export, cfg.Dir), err)
	}
	return nil
}

// graceProbe is the file awaitGrace opens and removes.
const graceProbe = ".nfsbench-grace-probe"

// awaitGrace opens (creating) and removes a file in the benchmark
// directory before any phase is timed: a server in its grace period
// after a restart answers the OPEN with NFS4ERR_GRACE, which the client
// waits out (Config.GraceWait), so that no phase's time includes the
// wait.
func (t *Target) awaitGrace(ctx context.Context) error {
	if t.v3 != nil {
		return nil // NFSv3 has no grace period for I/O
	}
	c := t.conns[0]
	f, err := t.openFile(ctx, c, t.dir, graceProbe, true, 0o600)
	if err != nil {
		return fmt.Errorf("%s: OPEN of %s: %w", t.Label(), graceProbe, err)
	}
	if err := c.CloseFile(ctx, f.FH, f.Stateid); err != nil {
		return fmt.Errorf("%s: CLOSE of %s: %w", t.Label(), graceProbe, err)
	}
	return c.Remove(ctx, t.dir, graceProbe)
}

// wantBackChannel says whether the connections ask for a back channel:
// with --back-channel, and with pNFS, for CB_LAYOUTRECALL. In auto mode a
// first connection, closed at once, finds whether the server is a pNFS
// MDS, so that servers that are not get the same sessions as before.
func (t *Target) wantBackChannel(ctx context.Context, cfg *Config) (bool, error) {
	switch {
	case cfg.BackChannel || cfg.PNFS == PNFSOn:
		return true, nil
	case cfg.PNFS != PNFSAuto:
		return false, nil
	}
	c, err := client.Dial(ctx, t.Addr, client.Options{UID: cfg.UID, GID: cfg.GID, Slots: 1, ExchangeFlags: exchangeFlags(cfg.PNFS), GraceWait: cfg.GraceWait, TLS: t.TLS, Krb5: cfg.Krb5})
	if err != nil {
		return false, err
	}
	defer c.Close()
	return c.ExchangeFlags()&nfs4.ExchgIDUsePNFSMDS != 0, nil
}

// openFile opens name in dir on connection c: for reading, or for
// reading and writing with create (UNCHECKED4, mode) when create is set.
func (t *Target) openFile(ctx context.Context, c *client.Client, dir []byte, name string, create bool, mode uint32) (*client.File, error) {
	a := &client.OpenArgs{Access: nfs4.ShareAccessRead, Name: name}
	if create {
		a.Access, a.Create, a.CreateMode = nfs4.ShareAccessBoth, true, nfs4.CreateUnchecked
		a.Attrs = &client.Attrs{Mask: nfs4.BitmapOf(nfs4.AttrMode), Mode: mode}
	}
	if t.noDeleg {
		a.Access |= nfs4.ShareAccessWantNoDeleg
	}
	return c.OpenWith(ctx, dir, a)
}

// Close ends every connection.
func (t *Target) Close() {
	if t.v3 != nil {
		t.v3.close()
		t.v3 = nil
	}
	t.closePNFS()
	for _, c := range t.conns {
		c.Close()
	}
	t.conns = nil
}

// Conn returns connection i modulo the count.
func (t *Target) Conn(i int) *client.Client { return t.conns[i%len(t.conns)] }

// Stats sums the connections' counters, and the pNFS data-server
// connections' bytes on the wire.
func (t *Target) Stats() client.Stats {
	var s client.Stats
	for _, c := range t.conns {
		x := c.Stats()
		s.BytesSent += x.BytesSent
		s.Writes += x.Writes
		s.BytesReceived += x.BytesReceived
		s.ReadBytes += x.ReadBytes
		s.ReadPlusDelivered += x.ReadPlusDelivered
		s.WriteBytes += x.WriteBytes
	}
	if t.v3 != nil {
		for _, c := range t.v3.conns {
			out, in := c.rpc.Bytes()
			s.BytesSent += out
			s.BytesReceived += in
		}
	}
	for _, p := range t.pnfs {
		out, in := p.WireBytes()
		s.BytesSent += out
		s.BytesReceived += in
	}
	return s
}

func lookupOrMkdir(ctx context.Context, c *client.Client, dir []byte, name string) ([]byte, error) {
	fh, err := c.Lookup(ctx, dir, name)
	if client.IsStatus(err, nfs4.ErrNoent) {
		fh, err = c.Mkdir(ctx, dir, name, 0o755)
		if client.IsStatus(err, nfs4.ErrExist) {
			fh, err = c.Lookup(ctx, dir, name)
		}
	}
	return fh, err
}

func dialError(addr string, err error) error {
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("server %s unreachable: connection refused (is it running on that port?)", addr)
	case errors.As(err, &op):
		return fmt.Errorf("server %s unreachable: %w", addr, err)
	}
	var re *client.RPCError
	if errors.As(err, &re) && re.Denied {
		return fmt.Errorf("server %s denied the call (AUTH_SYS credentials rejected?): %w", addr, err)
	}
	return fmt.Errorf("server %s: NFSv4.1+ session setup failed: %w", addr, err)
}

func lookupError(t *Target, p string, err error) error {
	switch {
	case client.IsStatus(err, nfs4.ErrNoent):
		return fmt.Errorf("export not found: %s has no %q (%w)", t.Addr, p, err)
	case client.IsStatus(err, nfs4.ErrAccess), client.IsStatus(err, nfs4.ErrPerm), client.IsStatus(err, nfs4.ErrWrongsec):
		return fmt.Errorf("permission denied on %s:%s (%w)", t.Addr, p, err)
	case client.IsStatus(err, nfs4.ErrRofs):
		return fmt.Errorf("%s:%s is read-only; nfsbench needs to write its files (%w)", t.Addr, p, err)
	}
	return fmt.Errorf("%s:%s: %w", t.Addr, p, err)
}
