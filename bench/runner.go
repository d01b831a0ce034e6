package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Phase is one measured step of a workload on one target.
type Phase struct {
	Workload, File, Op string
	Cache              string                                      // "cached", "uncached" or ""
	Total              int64                                       // expected bytes or ops, for progress; 0: unknown
	Prep               func(ctx context.Context) error             // untimed, before
	Run                func(ctx context.Context, m *Measure) error // timed
	After              func(ctx context.Context) error             // untimed, after
}

// Key names the phase independently of the target.
func (p *Phase) Key() string {
	return strings.Join([]string{p.Workload, p.File, p.Op, p.Cache}, "/")
}

// Builder prepares a workload's phases on one target (creating files as
// needed) and returns them in order.
type Builder func(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error)

// Runner runs one workload on one or more targets, phase by phase,
// alternating between targets.
type Runner struct {
	Cfg     *Config
	Targets []*Target
	// Repeat is how many times the whole workload runs (0 or 1: once).
	// Each repetition builds and runs every phase again, in order, so a
	// workload whose phases depend on each other (mdtest's create ... remove)
	// stays whole; the targets' order is reversed every other repetition
	// (repOrder) and results are tagged rep=K (K from 1) when Repeat > 1.
	Repeat   int
	OnResult func(r *Result) // called after each phase
}

// Run runs the workload Repeat times (see runOnce). With Config.GraceWait
// it first waits out every target's grace period (awaitGrace), untimed.
func (r *Runner) Run(ctx context.Context, build Builder) ([]*Result, error) {
	if r.Cfg.GraceWait > 0 {
		for _, t := range r.Targets {
			if err := t.awaitGrace(ctx); err != nil {
				return nil, err
			}
		}
	}
	var out []*Result
	for rep := 1; rep <= max(1, r.Repeat); rep++ {
		res, err := r.runOnce(ctx, build, rep)
		out = append(out, res...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// repOrder is the targets' order in repetition rep (from 1): as given in
// odd ones, reversed in even ones, so that with --compare neither server
// always runs first (and inherits the other's warm caches, CPU frequency
// or background work).
func repOrder(targets []*Target, rep int) []*Target {
	order := slices.Clone(targets)
	if rep%2 == 0 {
		slices.Reverse(order)
	}
	return order
}

// runOnce builds the phases on every target, then runs phase i on each
// target in turn (in repOrder) before phase i+1.
func (r *Runner) runOnce(ctx context.Context, build Builder, rep int) ([]*Result, error) {
	targets := repOrder(r.Targets, rep)
	phases := make([][]*Phase, len(targets))
	for i, t := range targets {
		ps, err := build(ctx, r.Cfg, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Label(), err)
		}
		phases[i] = ps
	}
	for i := 1; i < len(phases); i++ {
		if len(phases[i]) != len(phases[0]) {
			return nil, fmt.Errorf("%s has %d phases, %s %d", targets[i].Label(), len(phases[i]), targets[0].Label(), len(phases[0]))
		}
	}
	var out []*Result
	for j := range phases[0] {
		for i, t := range targets {
			res := r.runPhase(ctx, t, phases[i][j])
			if r.Repeat > 1 {
				res.Tags = map[string]string{"rep": strconv.Itoa(rep)}
			}
			out = append(out, res)
			if r.OnResult != nil {
				r.OnResult(res)
			}
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
		}
	}
	return out, nil
}

func (r *Runner) runPhase(ctx context.Context, t *Target, p *Phase) *Result {
	res := &Result{Workload: p.Workload, Server: t.Label(), File: p.File, Op: p.Op, Cached: cacheFlag(p.Cache)}
	if p.Prep != nil {
		if err := p.Prep(ctx); err != nil {
			res.Error = "prepare: " + err.Error()
			return res
		}
	}
	m := &Measure{progress: r.startProgress(t, p)}
	before, pBefore := t.Stats(), t.pnfsCounts()
	cpu0, srv0 := clientCPU(), serverCPU(t.ServerPID)
	start := time.Now()
	err := p.Run(ctx, m)
	res.Seconds = time.Since(start).Seconds()
	cpu1, srv1 := clientCPU(), serverCPU(t.ServerPID)
	m.progress.done()
	after := t.Stats()
	res.fill(m, cpu1-cpu0, srv0, srv1)
	res.fillPNFS(pBefore, t.pnfsCounts())
	res.WireBytes = int64(after.BytesSent + after.BytesReceived - before.BytesSent - before.BytesReceived)
	if err != nil {
		res.Error = err.Error()
	}
	if p.After != nil {
		if err := p.After(ctx); err != nil && res.Error == "" {
			res.Error = "cleanup: " + err.Error()
		}
	}
	return res
}

func cacheFlag(s string) *bool {
	if s == "" {
		return nil
	}
	b := s == "cached"
	return &b
}

// clientCPU is this process's user+system CPU seconds.
func clientCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// clockTick is USER_HZ, the unit of /proc/PID/stat times (100 on Linux).
const clockTick = 100

// serverCPU reads utime+stime of pid from /proc; -1 when unknown.
func serverCPU(pid int) float64 {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	return parseStatCPU(string(b))
}

// parseStatCPU returns fields 14 and 15 (utime, stime) of a stat line, in
// seconds. The command name (field 2) may hold spaces and parentheses.
func parseStatCPU(s string) float64 {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	k, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return float64(u+k) / clockTick
}

// percentiles returns p50, p99 and p99.9 of lat in microseconds.
func percentiles(lat []time.Duration) map[string]float64 {
	if len(lat) == 0 {
		return nil
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		i := min(len(lat)-1, int(q*float64(len(lat))))
		return float64(lat[i].Nanoseconds()) / 1e3
	}
	return map[string]float64{"p50": at(0.50), "p99": at(0.99), "p99.9": at(0.999)}
}
