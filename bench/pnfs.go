package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// pNFS modes of Config.PNFS.
const (
	PNFSAuto = "auto" // through layouts when the server says it is a pNFS MDS
	PNFSOn   = "on"   // through layouts; fail when the server is no MDS
	PNFSOff  = "off"  // everything through the server named, as before
)

// exchangeFlags are the EXCHANGE_ID flags a connection sends in mode:
// with pNFS possible, the client says it can use the server as an MDS or
// not (RFC 8881 section 13.1; the server's answer decides).
func exchangeFlags(mode string) uint32 {
	if mode == PNFSOff || mode == "" {
		return 0
	}
	return nfs4.ExchgIDUseNonPNFS | nfs4.ExchgIDUsePNFSMDS
}

// setupPNFS gives each connection a pNFS driver when cfg.PNFS asks for it
// and the server is a pNFS metadata server.
func (t *Target) setupPNFS(cfg *Config) error {
	if cfg.PNFS == PNFSOff || cfg.PNFS == "" {
		return nil
	}
	if t.conns[0].ExchangeFlags()&nfs4.ExchgIDUsePNFSMDS == 0 {
		if cfg.PNFS == PNFSOn {
			return fmt.Errorf("--pnfs on: %s is no pNFS metadata server (EXCHANGE_ID flags %#x)", t.Label(), t.conns[0].ExchangeFlags())
		}
		return nil
	}
	for _, c := range t.conns {
		t.pnfs = append(t.pnfs, client.NewPNFS(c, client.PNFSOptions{
			DS: client.Options{Slots: uint32(cfg.Depth) + 1, NoHoleFill: cfg.NoVerify},
		}))
	}
	return nil
}

// PNFS reports whether the target's I/O goes through layouts.
func (t *Target) PNFS() bool { return len(t.pnfs) > 0 }

// layouts maps each open (a *client.File of some target's connection) to
// its pNFS wrapper while it is open, so that the workloads' I/O helpers,
// which pass opens around, find it.
var layouts sync.Map // *client.File -> *client.PNFSFile

func pnfsOf(f *client.File) *client.PNFSFile {
	if v, ok := layouts.Load(f); ok {
		return v.(*client.PNFSFile)
	}
	return nil
}

// wrapOpen registers f, opened on connection i, for I/O through layouts.
func (t *Target) wrapOpen(i int, f *client.File, write bool) {
	if !t.PNFS() {
		return
	}
	mode := uint32(client.IOModeRead)
	if write {
		mode = client.IOModeRW
	}
	layouts.Store(f, t.pnfs[i%len(t.pnfs)].Open(f, mode))
}

// closeOpen closes f on connection c: through its pNFS wrapper (COMMIT,
// LAYOUTCOMMIT, LAYOUTRETURN, CLOSE) when it has one.
func closeOpen(ctx context.Context, c *client.Client, f *client.File) error {
	if v, ok := layouts.LoadAndDelete(f); ok {
		return v.(*client.PNFSFile).Close(ctx)
	}
	return c.CloseFile(ctx, f.FH, f.Stateid)
}

// DSResult is what one phase sent to one data server.
type DSResult struct {
	Addr       string `json:"addr"`
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
	Reads      uint64 `json:"reads"`
	Writes     uint64 `json:"writes"`
	Commits    uint64 `json:"commits"`
	Errors     uint64 `json:"errors,omitempty"`
}

// pnfsCounts is the running per-data-server totals of all connections,
// and the I/Os that went through the MDS.
type pnfsCounts struct {
	ds        map[string]DSResult
	fallbacks uint64
	reports   uint64
}

func (t *Target) pnfsCounts() pnfsCounts {
	out := pnfsCounts{ds: map[string]DSResult{}}
	for _, p := range t.pnfs {
		for _, s := range p.Stats() {
			r := out.ds[s.Addr]
			r.Addr = s.Addr
			r.ReadBytes += s.ReadBytes
			r.WriteBytes += s.WriteBytes
			r.Reads += s.Reads
			r.Writes += s.Writes
			r.Commits += s.Commits
			r.Errors += s.Errors
			out.ds[s.Addr] = r
		}
		out.fallbacks += p.Fallbacks()
		out.reports += p.Reports()
	}
	return out
}

// fillPNFS sets the result's per-data-server counts from the totals
// before and after the phase.
func (r *Result) fillPNFS(before, after pnfsCounts) {
	for addr, a := range after.ds {
		b := before.ds[addr]
		d := DSResult{Addr: addr, ReadBytes: a.ReadBytes - b.ReadBytes, WriteBytes: a.WriteBytes - b.WriteBytes,
			Reads: a.Reads - b.Reads, Writes: a.Writes - b.Writes, Commits: a.Commits - b.Commits, Errors: a.Errors - b.Errors}
		if d != (DSResult{Addr: addr}) {
			r.DataServers = append(r.DataServers, d)
		}
	}
	sort.Slice(r.DataServers, func(i, j int) bool { return r.DataServers[i].Addr < r.DataServers[j].Addr })
	r.MDSFallbacks = after.fallbacks - before.fallbacks
	if n := after.reports - before.reports; n > 0 {
		r.Note = joinNote(r.Note, fmt.Sprintf("%d data-server error(s) reported to the MDS", n))
	}
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// writeDataServers prints each phase's per-data-server bytes and ops.
func writeDataServers(w io.Writer, results []*Result) {
	any := slices.ContainsFunc(results, func(r *Result) bool { return len(r.DataServers) > 0 || r.MDSFallbacks > 0 })
	if !any {
		return
	}
	fmt.Fprintln(w, "\npNFS data servers (bytes and ops straight from this client; fallback: READs/WRITEs through the MDS)")
	for _, r := range results {
		if len(r.DataServers) == 0 && r.MDSFallbacks == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s %s %s:", r.Server, r.Workload, r.Op)
		for _, d := range r.DataServers {
			fmt.Fprintf(w, "  %s write %.1f MB/%d read %.1f MB/%d", d.Addr, float64(d.WriteBytes)/1e6, d.Writes, float64(d.ReadBytes)/1e6, d.Reads)
			if d.Errors > 0 {
				fmt.Fprintf(w, " errors %d", d.Errors)
			}
		}
		if r.MDSFallbacks > 0 {
			fmt.Fprintf(w, "  fallback %d", r.MDSFallbacks)
		}
		fmt.Fprintln(w)
	}
}

// closePNFS closes the data-server connections.
func (t *Target) closePNFS() {
	for _, p := range t.pnfs {
		p.Close()
	}
	t.pnfs = nil
}
