package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nfsd-uring/nfsd-uring/bench"
)

const summarizeUsage = `usage: nfsbench summarize [flags] FILE...

Reads nfsbench --json files (and iperf3 -J reports) and prints, as a
markdown table, the median of each metric per side (--side, the server by
default) for each distinct value of the --rows fields, the ratio of every
side to --base, and each --goal's verdict. A field is any JSON field of a
result, a --tag key, or a dotted path (latency_us.p99); "cache" is
cached/uncached. Rows with an error are listed and left out.

Goals: "[NAME: ]METRIC SIDE[/BASE] <=|>= LIMIT [where K=V,...]" holds when it
holds in every table row matching where (whose keys are --rows fields), e.g.
  --goal "goal 6: server_cpu_us_per_op cores2/cores1 <= 1 where conns=4"
A BASE of @NAME is the median over every result of side NAME, whatever its
row (mb_per_sec uring/@iperf3 >= 0.8). fio JSON reports are read as server
"fio", op READ.

Flags:
`

// summarize is `nfsbench summarize`.
func summarize(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("nfsbench summarize", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), summarizeUsage); fs.PrintDefaults() }
	rows := fs.String("rows", "workload,op,file,cache", "fields naming a table row, comma-separated")
	side := fs.String("side", "server", "field whose values are compared side by side")
	base := fs.String("base", "", "side the ratios divide by (default: the first seen)")
	metrics := fs.String("metrics", "mb_per_sec,ops_per_sec,server_cpu_seconds_per_gib,server_cpu_us_per_op", "metrics, comma-separated")
	where := fs.String("where", "", "only results whose fields match K=V,...")
	runs := fs.Bool("runs", false, "list every run's value of the first metric")
	io500 := fs.Bool("io500", false, "print the IO500-style score of each side against --base (--rows must start with workload); goals may name io500_score")
	var goals []bench.Goal
	fs.Func("goal", "target checked against the medians (repeatable; see above)", func(s string) error {
		g, err := bench.ParseGoal(s)
		goals = append(goals, g)
		return err
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("no FILE given")
	}
	s := &bench.Summary{Rows: splitList(*rows), Side: *side, Base: *base, Metrics: splitList(*metrics), Goals: goals, Runs: *runs, IO500: *io500}
	if *where != "" {
		var err error
		if s.Where, err = bench.ParseWhere(*where); err != nil {
			return fmt.Errorf("--where: %w", err)
		}
	}
	var all []bench.Row
	for _, name := range fs.Args() {
		rs, err := readRowsFile(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all = append(all, rs...)
	}
	s.Write(w, all)
	return nil
}

func readRowsFile(name string) ([]bench.Row, error) {
	if name == "-" {
		return bench.ReadRows(os.Stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return bench.ReadRows(f)
}
