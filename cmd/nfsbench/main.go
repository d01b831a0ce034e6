// Command nfsbench is the NFSv4.2 load generator of nfsd-uring.
//
//	nfsbench <workload> --server HOST:PORT --export PATH [options]
//
// Workloads: readmatrix, randread, ior-easy, ior-hard, mdtest-easy,
// mdtest-hard, io500. See BENCHMARKS.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/nfsd-uring/nfsd-uring/bench"
)

var workloads = map[string]bench.Builder{
	"readmatrix":  bench.ReadMatrix,
	"randread":    bench.RandRead,
	"ior-easy":    bench.IOREasy,
	"ior-hard":    bench.IORHard,
	"mdtest-easy": bench.MDTestEasy,
	"mdtest-hard": bench.MDTestHard,
	"io500":       bench.IO500,
}

type options struct {
	tags            map[string]string
	cfg             bench.Config
	main, other     bench.Target
	size            string
	layouts, cache  string
	jsonOut, csvOut string
	plotOut         string
	noProgress      bool
	repeat          int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "summarize" {
		if err := summarize(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "nfsbench summarize:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) < 2 || workloads[os.Args[1]] == nil {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	o := parseFlags(name, os.Args[2:])
	if err := run(name, o); err != nil {
		fmt.Fprintln(os.Stderr, "nfsbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: nfsbench readmatrix|randread|ior-easy|ior-hard|mdtest-easy|mdtest-hard|io500 --server HOST:PORT --export PATH [options]")
	fmt.Fprintln(os.Stderr, "       nfsbench summarize [--rows F,...] [--base SIDE] [--goal SPEC]... FILE...   medians and ratios of --json files")
	fmt.Fprintln(os.Stderr, "       nfsbench WORKLOAD -h   for the options")
}

func parseFlags(name string, args []string) *options {
	o := &options{}
	fs := flag.NewFlagSet("nfsbench "+name, flag.ExitOnError)
	fs.StringVar(&o.main.Addr, "server", "", "server HOST:PORT (required)")
	fs.StringVar(&o.main.Export, "export", "/", "export path from the server's root (pseudo-fs path)")
	fs.StringVar(&o.main.Name, "name", "", "label of --server in output (default HOST:PORT)")
	fs.StringVar(&o.main.LocalDir, "local-dir", "", "the export's directory on this machine: files are made on disk, uncached runs evict with posix_fadvise")
	fs.IntVar(&o.main.ServerPID, "server-pid", 0, "server process id, for server CPU per GiB and per op")
	fs.StringVar(&o.other.Addr, "compare", "", "second server HOST:PORT, run alternately with --server; ratios printed")
	fs.StringVar(&o.other.Export, "compare-export", "", "export path on --compare (default: --export)")
	fs.StringVar(&o.other.Name, "compare-name", "", "label of --compare")
	fs.StringVar(&o.other.LocalDir, "compare-local-dir", "", "--local-dir of --compare")
	fs.IntVar(&o.other.ServerPID, "compare-pid", 0, "--server-pid of --compare")
	fs.IntVar(&o.cfg.Conns, "conns", 1, "connections, one session each")
	fs.IntVar(&o.cfg.Depth, "depth", 16, "requests in flight per connection")
	fs.StringVar(&o.size, "size", "1G", "bytes per file: 4096, 64k, 64KiB, 1G, 1GiB... (k/K/KiB, m/M/MiB, g/G/GiB, t/T/TiB: powers of 2)")
	rsize := fs.String("rsize", "1M", "READ/READ_PLUS/WRITE size, with the suffixes of --size")
	fs.StringVar(&o.cfg.Dir, "dir", "nfsbench", "benchmark directory under the export")
	fs.IntVar(&o.cfg.Files, "files", 1000, "mdtest: files per connection")
	fs.IntVar(&o.cfg.Ops, "ops", 100000, "randread: number of reads")
	fs.DurationVar(&o.cfg.Stonewall, "stonewall", 0, "bound on each phase (e.g. 30s); 0: none")
	fs.StringVar(&o.layouts, "layouts", "", "readmatrix: comma-separated files (default all: data,hole,mixed-{4,8,16,32}{d,h})")
	fs.StringVar(&o.cache, "cache", "uncached,cached", "readmatrix: cache modes to run")
	readOps := fs.String("read-ops", "READ,READ_PLUS", "readmatrix, randread: operations to run (randread's default: READ)")
	fs.BoolVar(&o.cfg.Recreate, "recreate", false, "readmatrix: rewrite the files even if present")
	fs.BoolVar(&o.cfg.NoVerify, "no-verify", false, "do not check the data read")
	fs.IntVar(&o.main.MountPort, "mount-port", 0, "with --vers 3: TCP port of the MOUNT service on --server's host (0: the NFS port)")
	fs.IntVar(&o.other.MountPort, "compare-mount-port", 0, "--mount-port of --compare")
	fs.IntVar(&o.cfg.Vers, "vers", 4, "NFS version: 4 (4.1/4.2), or 3 (randread, readmatrix with READ only, ior-easy, ior-hard, mdtest-easy, mdtest-hard, io500; MOUNT on the NFS port unless --mount-port; --depth calls in flight per connection, as over v4)")
	fs.StringVar(&o.cfg.PNFS, "pnfs", bench.PNFSAuto, "auto|on|off: READ/WRITE of ior-easy, ior-hard, randread and io500's ior phases go through flexible-files layouts straight to the data servers (auto: when the server says it is a pNFS MDS; on: fail if it is not)")
	fs.BoolVar(&o.cfg.BackChannel, "back-channel", false, "ask for a back channel (the server may then grant delegations; recalls are answered)")
	uid := fs.Uint("uid", 0, "AUTH_SYS uid")
	gid := fs.Uint("gid", 0, "AUTH_SYS gid")
	var k5 krb5Flags
	k5.register(fs)
	fs.StringVar(&o.jsonOut, "json", "", "write one JSON object per phase to FILE")
	fs.StringVar(&o.csvOut, "csv", "", "write a CSV row per phase to FILE")
	fs.StringVar(&o.plotOut, "plot", "", "readmatrix: draw MB/s bars to FILE.png")
	fs.BoolVar(&o.noProgress, "no-progress", false, "no live progress line even on a terminal")
	o.tags = map[string]string{}
	fs.Func("tag", "label every --json result with KEY=VALUE (repeatable), for nfsbench summarize --rows", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE")
		}
		o.tags[k] = v
		return nil
	})
	fs.IntVar(&o.repeat, "repeat", 1, "run the whole workload N times, the --compare order swapped every other time; the table shows medians, --json every run tagged rep=K")
	fs.DurationVar(&o.cfg.GraceWait, "grace-wait", 5*time.Minute, "how long to wait out a server's grace period after its restart (OPEN/LOCK answered NFS4ERR_GRACE); 0: fail at once")
	tf := tlsFlags(fs)
	fs.Parse(args)
	if err := tf.apply(o); err != nil {
		fmt.Fprintln(os.Stderr, "nfsbench:", err)
		os.Exit(2)
	}
	if o.main.Addr == "" {
		fmt.Fprintln(os.Stderr, "nfsbench: --server is required")
		os.Exit(2)
	}
	if o.cfg.PNFS != bench.PNFSAuto && o.cfg.PNFS != bench.PNFSOn && o.cfg.PNFS != bench.PNFSOff {
		fmt.Fprintln(os.Stderr, "nfsbench: --pnfs must be auto, on or off")
		os.Exit(2)
	}
	if o.repeat < 1 {
		fmt.Fprintln(os.Stderr, "nfsbench: --repeat must be at least 1")
		os.Exit(2)
	}
	if _, ok := o.tags["rep"]; ok && o.repeat > 1 {
		fmt.Fprintln(os.Stderr, "nfsbench: --tag rep=... and --repeat > 1 both name the repetition")
		os.Exit(2)
	}
	o.cfg.Size = mustSize("--size", o.size, math.MaxInt64)
	o.cfg.RSize = uint32(mustSize("--rsize", *rsize, math.MaxUint32))
	o.cfg.UID, o.cfg.GID = uint32(*uid), uint32(*gid)
	if kc, err := k5.config(o.main.Addr); err != nil {
		fmt.Fprintln(os.Stderr, "nfsbench:", err)
		os.Exit(2)
	} else {
		o.cfg.Krb5 = kc
	}
	o.cfg.Layouts = splitList(o.layouts)
	o.cfg.Cache = splitList(o.cache)
	o.cfg.ReadOps = splitList(strings.ToUpper(*readOps))
	if name == "randread" && !flagSet(fs, "read-ops") {
		o.cfg.ReadOps = []string{"READ"}
	}
	o.cfg.Progress = !o.noProgress
	o.cfg.Warn = func(s string) { fmt.Fprintln(os.Stderr, "nfsbench:", s) }
	if o.other.Export == "" {
		o.other.Export = o.main.Export
	}
	return o
}

// flagSet reports whether the command line gave flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// mustSize parses a size flag (bench.ParseSize: 4096, 64k, 64KiB, 1M,
// 1GiB...) and exits on anything else or on a size that is not positive or
// above max.
func mustSize(flagName, s string, max int64) int64 {
	n, err := bench.ParseSize(s)
	if err == nil && (n <= 0 || n > max) {
		err = fmt.Errorf("%s out of range (1 to %s)", s, bench.FormatSize(max))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nfsbench: %s: %v\n", flagName, err)
		os.Exit(2)
	}
	return n
}

func run(name string, o *options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o.cfg.SetDefaults()
	targets := []*bench.Target{&o.main}
	if o.other.Addr != "" {
		targets = append(targets, &o.other)
	}
	for _, t := range targets {
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := t.Connect(dctx, &o.cfg)
		cancel()
		if err != nil {
			return err
		}
		defer t.Close()
	}
	r := &bench.Runner{Cfg: &o.cfg, Targets: targets, Repeat: o.repeat}
	build := workloads[name]
	if o.cfg.Vers == 3 {
		if build = bench.V3Builders[name]; build == nil {
			fmt.Fprintf(os.Stderr, "nfsbench: %s does not run over NFSv3 (--vers 3: randread, readmatrix, ior-easy, ior-hard, mdtest-easy, mdtest-hard, io500)\n", name)
			os.Exit(2)
		}
	}
	results, err := r.Run(ctx, build)
	addTags(results, o.tags)
	shown := results
	if o.repeat > 1 {
		shown = bench.Medians(results)
	}
	report(os.Stdout, name, o, targets, shown)
	if werr := writeFiles(o, results, shown); err == nil {
		err = werr
	}
	if err == nil {
		err = firstError(results)
	}
	return err
}

// addTags adds the --tag labels to every result's own tags (rep=K).
func addTags(results []*bench.Result, tags map[string]string) {
	if len(tags) == 0 {
		return
	}
	for _, res := range results {
		if res.Tags == nil {
			res.Tags = map[string]string{}
		}
		for k, v := range tags {
			res.Tags[k] = v
		}
	}
}

// report prints the table of results (with --repeat, their medians),
// the ratios of the two servers and io500's scores.
func report(w io.Writer, name string, o *options, targets []*bench.Target, results []*bench.Result) {
	if o.repeat > 1 {
		fmt.Fprintf(w, "medians of %d repetitions", o.repeat)
		if len(targets) == 2 {
			fmt.Fprintf(w, " (%s first in odd ones, %s in even ones)", targets[0].Label(), targets[1].Label())
		}
		fmt.Fprintln(w)
	}
	bench.WriteTable(w, results)
	if len(targets) == 2 {
		bench.WriteRatios(w, results, targets[0].Label(), targets[1].Label())
	}
	if name == "io500" {
		fmt.Fprintln(w)
		bench.WriteScores(w, bench.Scores(results))
	}
}

// writeFiles writes --json and --csv with every result (each repetition's)
// and --plot with the shown ones (medians with --repeat).
func writeFiles(o *options, results, shown []*bench.Result) error {
	write := func(path string, results []*bench.Result, f func(io.Writer, []*bench.Result) error) error {
		if path == "" {
			return nil
		}
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f(out, results); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	return errors.Join(
		write(o.jsonOut, results, bench.WriteJSON),
		write(o.csvOut, results, bench.WriteCSV),
		write(o.plotOut, shown, func(w io.Writer, r []*bench.Result) error { return bench.Plot(w, r) }),
	)
}

func firstError(results []*bench.Result) error {
	n := 0
	for _, r := range results {
		if r.Error != "" {
			n++
		}
	}
	if n > 0 {
		return fmt.Errorf("%d phase(s) failed; see ERROR lines above", n)
	}
	return nil
}
