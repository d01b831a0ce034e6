package bench

import (
	"fmt"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
)

// Config holds the options shared by all workloads.
type Config struct {
	Conns     int           // connections, one session each
	Depth     int           // requests in flight per connection
	Size      int64         // bytes per file (readmatrix, randread, ior-easy); the shared file for ior-hard
	RSize     uint32        // READ/READ_PLUS/WRITE size
	Dir       string        // benchmark directory under the export
	Files     int           // mdtest files per connection
	Ops       int           // randread reads
	Stonewall time.Duration // bound on each phase; 0: none
	Layouts   []string      // readmatrix files; empty: all
	Cache     []string      // readmatrix modes: "cached", "uncached"
	ReadOps   []string      // readmatrix ops: "READ", "READ_PLUS"; empty: both
	Recreate  bool          // readmatrix: rewrite files even if present
	NoVerify  bool          // skip checking data read
	UID, GID  uint32
	// Krb5, when set, makes the connections RPCSEC_GSS with Kerberos
	// (nfsbench --sec krb5|krb5i|krb5p) instead of AUTH_SYS UID/GID.
	Krb5 *client.Krb5
	// BackChannel asks for a back channel on each connection, so a
	// server may grant delegations (the client answers recalls).
	BackChannel bool
	// GraceWait bounds how long an OPEN or LOCK answered NFS4ERR_GRACE
	// (the server's grace period after a restart) is retried, as a real
	// client waits it out; 0: the phase fails with NFS4ERR_GRACE.
	GraceWait time.Duration
	// PNFS is PNFSAuto, PNFSOn or PNFSOff (pnfs.go): whether READ and
	// WRITE of ior-easy, ior-hard, randread and io500's ior phases go
	// through flexible-files layouts straight to the data servers.
	// Empty is off (nfsbench's flag defaults to auto).
	PNFS     string
	Progress bool             // live progress line on stderr
	Warn     func(msg string) // remarks about options that cannot be honoured

	// Vers is the NFS version: 4 (0: 4) or 3 (nfs3.go: V3Builders).
	Vers int
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.Conns <= 0 {
		c.Conns = 1
	}
	if c.Depth <= 0 {
		c.Depth = 16
	}
	if c.Size <= 0 {
		c.Size = 1 << 30
	}
	if c.RSize == 0 {
		c.RSize = 1 << 20
	}
	if c.Dir == "" {
		c.Dir = "nfsbench"
	}
	if c.Files <= 0 {
		c.Files = 1000
	}
	if c.Ops <= 0 {
		c.Ops = 100000
	}
	if len(c.Cache) == 0 {
		c.Cache = []string{"uncached", "cached"}
	}
}

// deadline is when a phase started now must stop taking new work.
func (c *Config) deadline(start time.Time) time.Time {
	if c.Stonewall <= 0 {
		return time.Time{}
	}
	return start.Add(c.Stonewall)
}

func (c *Config) warn(format string, args ...any) {
	if c.Warn != nil {
		c.Warn(fmt.Sprintf(format, args...))
	}
}

var timeZero time.Time

func timeNow() time.Time { return time.Now() }
