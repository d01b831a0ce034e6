package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// fakeWorkload is a Builder of two phases, "one" and "two", that log
// "REP:SERVER:OP" when they run and count rep*10 ops (plus 1 on server b),
// so that medians are known; no server is needed.
type fakeWorkload struct {
	log    []string
	builds map[string]int
	fail   map[string]bool // "REP:SERVER:OP" that fails
}

func (f *fakeWorkload) build(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	if f.builds == nil {
		f.builds = map[string]int{}
	}
	f.builds[t.Label()]++
	rep := f.builds[t.Label()]
	var out []*Phase
	for _, op := range []string{"one", "two"} {
		out = append(out, &Phase{Workload: "fake", Op: op, Run: func(ctx context.Context, m *Measure) error {
			id := fmt.Sprintf("%d:%s:%s", rep, t.Label(), op)
			f.log = append(f.log, id)
			n := int64(rep * 10)
			if t.Label() == "b" {
				n++
			}
			m.Add(n*100, n)
			if f.fail[id] {
				return errors.New("boom")
			}
			return nil
		}})
	}
	return out, nil
}

func fakeTargets() []*Target { return []*Target{{Name: "a"}, {Name: "b"}} }

// With Repeat N the whole workload runs N times, rebuilt each time, phase
// by phase; the servers' order is swapped every other repetition and every
// result is tagged with its repetition.
func TestRepeatAlternatesOrder(t *testing.T) {
	f := &fakeWorkload{}
	r := &Runner{Cfg: &Config{}, Targets: fakeTargets(), Repeat: 4}
	res, err := r.Run(context.Background(), f.build)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1:a:one", "1:b:one", "1:a:two", "1:b:two",
		"2:b:one", "2:a:one", "2:b:two", "2:a:two",
		"3:a:one", "3:b:one", "3:a:two", "3:b:two",
		"4:b:one", "4:a:one", "4:b:two", "4:a:two",
	}
	if !slices.Equal(f.log, want) {
		t.Fatalf("order\n got %q\nwant %q", f.log, want)
	}
	if f.builds["a"] != 4 || f.builds["b"] != 4 {
		t.Errorf("builds %v, want 4 each", f.builds)
	}
	if len(res) != len(want) {
		t.Fatalf("%d results", len(res))
	}
	for i, x := range res {
		w := strings.Split(want[i], ":") // rep, server, op
		if x.Tags["rep"] != w[0] || x.Server != w[1] || x.Op != w[2] {
			t.Errorf("result %d: server %s tags %v, want %s", i, x.Server, x.Tags, want[i])
		}
	}
}

// Without Repeat (or with 1) the order and the results are as before: a
// then b, no rep tag.
func TestRepeatOnce(t *testing.T) {
	for _, n := range []int{0, 1} {
		f := &fakeWorkload{}
		r := &Runner{Cfg: &Config{}, Targets: fakeTargets(), Repeat: n}
		res, err := r.Run(context.Background(), f.build)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"1:a:one", "1:b:one", "1:a:two", "1:b:two"}; !slices.Equal(f.log, want) {
			t.Errorf("Repeat %d: order %q, want %q", n, f.log, want)
		}
		for _, x := range res {
			if x.Tags != nil {
				t.Errorf("Repeat %d: tags %v", n, x.Tags)
			}
		}
	}
}

// Medians folds each server's repetitions of a phase into their medians,
// the failed ones left out but named; WriteRatios over them is the ratio
// of the medians.
func TestRepeatMedians(t *testing.T) {
	f := &fakeWorkload{fail: map[string]bool{"2:a:two": true}}
	r := &Runner{Cfg: &Config{}, Targets: fakeTargets(), Repeat: 3}
	res, err := r.Run(context.Background(), f.build)
	if err != nil {
		t.Fatal(err)
	}
	med := Medians(res)
	var got []string
	for _, m := range med {
		got = append(got, fmt.Sprintf("%s %s %d %d %q", m.Server, m.Op, m.Ops, m.Bytes, m.Error))
	}
	// a: 10, 20, 30 ops (median 20); b: 11, 21, 31 (21). a's phase two
	// failed in rep 2: the median of 10 and 30 is 20, and the error stays.
	want := []string{
		`a one 20 2000 ""`, `b one 21 2100 ""`,
		`a two 20 2000 "rep 2: boom"`, `b two 21 2100 ""`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("medians\n got %q\nwant %q", got, want)
	}

	// Ratios of medians, with server CPU (optional) and latencies.
	p := func(v float64) *float64 { return &v }
	mk := func(server string, rep int, ops, cpu, p99 float64) *Result {
		return &Result{Workload: "w", Server: server, Op: "READ", OpsPerSec: ops, ServerCPUPerOpUS: p(cpu),
			LatencyUS: map[string]float64{"p99": p99}, Tags: map[string]string{"rep": fmt.Sprint(rep)}}
	}
	rs := []*Result{
		mk("a", 1, 100, 5, 90), mk("b", 1, 100, 10, 10),
		mk("b", 2, 50, 8, 30), mk("a", 2, 300, 4, 70),
		mk("a", 3, 200, 6, 80), mk("b", 3, 400, 12, 20),
	}
	med = Medians(rs)
	if len(med) != 2 || med[0].Server != "a" || med[0].OpsPerSec != 200 || *med[0].ServerCPUPerOpUS != 5 ||
		med[0].LatencyUS["p99"] != 80 || med[1].OpsPerSec != 100 || *med[1].ServerCPUPerOpUS != 10 {
		t.Fatalf("medians %+v %+v", med[0], med[1])
	}
	var b strings.Builder
	WriteRatios(&b, med, "a", "b")
	if !strings.Contains(b.String(), "2.00x") || !strings.Contains(b.String(), "0.50x") {
		t.Errorf("ratios of medians (ops/s 200/100, µs/op 5/10):\n%s", b.String())
	}
	// Server CPU unknown in one repetition: unknown in the median.
	rs[2].ServerCPUPerOpUS = nil
	if m := Medians(rs)[1]; m.ServerCPUPerOpUS != nil {
		t.Errorf("server CPU %v, want unknown", *m.ServerCPUPerOpUS)
	}
	// Every repetition failed: no numbers, every error.
	for _, x := range rs {
		x.Error = "down"
	}
	if m := Medians(rs)[0]; m.OpsPerSec != 0 || math.IsNaN(m.Seconds) || m.Error != "rep 1: down; rep 2: down; rep 3: down" {
		t.Errorf("all failed: %+v", m)
	}
}
