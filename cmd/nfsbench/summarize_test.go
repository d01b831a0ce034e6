package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nfsbench summarize reads several --json files, groups by a --tag field
// and prints the goal's verdict.
func TestSummarize(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "r1.json")
	b := filepath.Join(dir, "r2.json")
	os.WriteFile(a, []byte(`{"workload":"mdtest-easy","server":"old","op":"create","ops_per_sec":100,"tags":{"cores":"1"}}
{"workload":"mdtest-easy","server":"new","op":"create","ops_per_sec":150,"tags":{"cores":"1"}}
`), 0o644)
	os.WriteFile(b, []byte(`{"workload":"mdtest-easy","server":"new","op":"create","ops_per_sec":170,"tags":{"cores":"1"}}
{"workload":"mdtest-easy","server":"old","op":"create","ops_per_sec":120,"tags":{"cores":"1"}}
`), 0o644)
	var out strings.Builder
	err := summarize([]string{"--rows", "workload,op,cores", "--base", "old", "--metrics", "ops_per_sec",
		"--goal", "faster: ops_per_sec new/old >= 1.2", a, b}, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| mdtest-easy | create | 1 | 2 | 110 | 160 | 1.45x |",
		"- faster: **MET** (target >= 1.2x) — mdtest-easy/create/1: 1.45x",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
	if err := summarize([]string{"--goal", "nonsense", a}, &out); err == nil {
		t.Error("a bad --goal was accepted")
	}
	if err := summarize([]string{filepath.Join(dir, "missing.json")}, &out); err == nil {
		t.Error("a missing file was accepted")
	}
}
