package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/bench"
)

// With --repeat the table shows medians under a heading naming the order,
// and --json keeps every repetition, tagged rep=K beside the --tag labels,
// for nfsbench summarize, whose medians are the table's.
func TestRepeatReportAndJSON(t *testing.T) {
	var results []*bench.Result
	for i, ops := range []float64{100, 300, 200} {
		rep := map[string]string{"rep": string(rune('1' + i))}
		results = append(results,
			&bench.Result{Workload: "randread", Server: "a", Op: "READ 4KiB", OpsPerSec: ops, Tags: rep},
			&bench.Result{Workload: "randread", Server: "b", Op: "READ 4KiB", OpsPerSec: ops / 2, Tags: map[string]string{"rep": rep["rep"]}})
	}
	addTags(results, map[string]string{"conns": "4"})
	o := &options{repeat: 3}
	targets := []*bench.Target{{Name: "a"}, {Name: "b"}}
	var out strings.Builder
	report(&out, "randread", o, targets, bench.Medians(results))
	for _, want := range []string{"medians of 3 repetitions (a first in odd ones, b in even ones)", "  200  ", "2.00x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	dir := t.TempDir()
	o.jsonOut = filepath.Join(dir, "r.json")
	if err := writeFiles(o, results, bench.Medians(results)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(o.jsonOut)
	if n := strings.Count(string(b), `"tags":{"conns":"4","rep":"`); n != 6 {
		t.Errorf("%d of 6 results tagged rep and conns:\n%s", n, b)
	}
	out.Reset()
	if err := summarize([]string{"--rows", "op,conns", "--base", "b", "--metrics", "ops_per_sec", o.jsonOut}, &out); err != nil {
		t.Fatal(err)
	}
	if want := "| READ 4KiB | 4 | 3 | 100 | 200 | 2.00x |"; !strings.Contains(out.String(), want) {
		t.Errorf("summarize lacks %q:\n%s", want, out.String())
	}
}
