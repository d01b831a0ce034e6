package bench

import (
	"math"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 {
		t.Error("Median sorted its argument")
	}
}

// Three repetitions of two servers, as nfsbench --compare --json --tag
// writes them, one failed phase, and an iperf3 -J report.
const fixture = `{"workload":"randread","server":"cores1","op":"READ 4KiB","ops_per_sec":1000,"server_cpu_us_per_op":10,"latency_us":{"p99":50},"tags":{"conns":"4","rep":"1"}}
{"workload":"randread","server":"cores2","op":"READ 4KiB","ops_per_sec":1500,"server_cpu_us_per_op":9,"tags":{"conns":"4","rep":"1"}}
{"workload":"randread","server":"cores1","op":"READ 4KiB","ops_per_sec":1100,"server_cpu_us_per_op":12,"tags":{"conns":"4","rep":"2"}}
{"workload":"randread","server":"cores2","op":"READ 4KiB","ops_per_sec":1300,"server_cpu_us_per_op":13,"tags":{"conns":"4","rep":"2"}}
{"workload":"randread","server":"cores1","op":"READ 4KiB","ops_per_sec":900,"server_cpu_us_per_op":11,"tags":{"conns":"4","rep":"3"}}
{"workload":"randread","server":"cores2","op":"READ 4KiB","ops_per_sec":1400,"server_cpu_us_per_op":10,"tags":{"conns":"4","rep":"3"}}
{"workload":"randread","server":"cores1","op":"READ 4KiB","ops_per_sec":500,"server_cpu_us_per_op":20,"tags":{"conns":"1","rep":"1"}}
{"workload":"randread","server":"cores2","op":"READ 4KiB","ops_per_sec":400,"server_cpu_us_per_op":30,"tags":{"conns":"1","rep":"1"}}
{"workload":"randread","server":"cores2","op":"READ 4KiB","error":"OPEN: NFS4ERR_GRACE","tags":{"conns":"1","rep":"2"}}
`

func TestReadRows(t *testing.T) {
	iperf := `{"start":{},"end":{"sum_received":{"bytes":2147483648,"seconds":2},"cpu_utilization_percent":{"host_total":50,"remote_total":25}}}`
	rows, err := ReadRows(strings.NewReader(fixture + iperf))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.Str("conns") != "4" || r.Str("server") != "cores1" || r.Str("rep") != "1" {
		t.Errorf("tags not beside the fields: %v", r)
	}
	if v, ok := r.Num("latency_us.p99"); !ok || v != 50 {
		t.Errorf("latency_us.p99 = %v, %v", v, ok)
	}
	if _, ok := r.Num("latency_us.p50"); ok {
		t.Error("a missing field was found")
	}
	ip := rows[9]
	if ip.Str("server") != "iperf3" || ip.Str("op") != "TCP" {
		t.Fatalf("iperf3 row %v", ip)
	}
	// 2 GiB in 2 s: 1073.7 MB/s; 50 % of 2 s is 1 s of CPU for 2 GiB.
	mb, _ := ip.Num("mb_per_sec")
	cli, _ := ip.Num("client_cpu_seconds_per_gib")
	srv, _ := ip.Num("server_cpu_seconds_per_gib")
	if math.Abs(mb-1073.74) > 0.01 || cli != 0.5 || srv != 0.25 {
		t.Errorf("iperf3: %v MB/s, client %v s/GiB, server %v s/GiB", mb, cli, srv)
	}
	cached := Row{"cached": true}
	if cached.Str("cache") != "cached" || (Row{"cached": false}).Str("cache") != "uncached" || (Row{}).Str("cache") != "" {
		t.Error("cache spelled wrong")
	}
	withCPU := `{"server":"s","bytes":2147483648,"client_cpu_seconds":3}`
	rows, err = ReadRows(strings.NewReader(withCPU))
	if v, _ := rows[0].Num("client_cpu_seconds_per_gib"); err != nil || v != 1.5 {
		t.Errorf("client_cpu_seconds_per_gib = %v, %v", v, err)
	}
	if _, err := ReadRows(strings.NewReader(`{"a":1} {`)); err == nil {
		t.Error("a truncated file read without error")
	}
}

func TestSummaryTableAndGoals(t *testing.T) {
	rows, err := ReadRows(strings.NewReader(fixture))
	if err != nil {
		t.Fatal(err)
	}
	var goals []Goal
	for _, spec := range []string{
		"goal 6 (4 connections: cores2 no dearer): server_cpu_us_per_op cores2/cores1 <= 1 where conns=4",
		"ops: ops_per_sec cores2/cores1 >= 1.2",
		"server_cpu_us_per_op cores2 <= 15",
		"absent: mb_per_sec cores2/cores1 >= 1",
		"vs all of cores1: ops_per_sec cores2/@cores1 >= 1.5 where conns=4",
	} {
		g, err := ParseGoal(spec)
		if err != nil {
			t.Fatal(err)
		}
		goals = append(goals, g)
	}
	s := &Summary{Rows: []string{"conns"}, Base: "cores1", Metrics: []string{"ops_per_sec", "server_cpu_us_per_op"}, Goals: goals, Runs: true}
	var b strings.Builder
	s.Write(&b, rows)
	out := b.String()
	for _, want := range []string{
		"ERROR: cores2 1: OPEN: NFS4ERR_GRACE\n",
		"| conns | n | cores1 ops_per_sec | cores2 ops_per_sec | ops_per_sec cores2/cores1 | cores1 server_cpu_us_per_op | cores2 server_cpu_us_per_op | server_cpu_us_per_op cores2/cores1 | runs ops_per_sec |\n",
		// medians: cores1 1000 ops/s 11 µs, cores2 1400 ops/s 10 µs
		"| 4 | 3 | 1000 | 1400 | 1.40x | 11.0 | 10.0 | 0.91x | cores1: 1000, 1100, 900; cores2: 1500, 1300, 1400 |\n",
		"| 1 | 1 | 500 | 400 | 0.80x | 20.0 | 30.0 | 1.50x | cores1: 500; cores2: 400 |\n",
		"- goal 6 (4 connections: cores2 no dearer): **MET** (target <= 1x) — 4: 0.91x\n",
		"- ops: **NOT MET (1/2 pass)** (target >= 1.2x) — 4: 1.40x; 1: 0.80x\n",
		"- server_cpu_us_per_op cores2 <= 15: **NOT MET (1/2 pass)** (target <= 15) — 4: 10.0; 1: 30.0\n",
		"- absent: not measured (target >= 1x)\n",
		// cores1's median over all four results: (900+1000)/2 = 950
		"- vs all of cores1: **NOT MET** (target >= 1.5x) — 4: 1.47x\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// --where keeps matching results only; the base comes first even
	// when seen second.
	s = &Summary{Rows: []string{"workload"}, Base: "cores2", Metrics: []string{"ops_per_sec"}, Where: map[string]string{"conns": "1"}}
	b.Reset()
	s.Write(&b, rows)
	if want := "| randread | 1 | 400 | 500 | 1.25x |\n"; !strings.Contains(b.String(), want) {
		t.Errorf("where/base: lacks %q:\n%s", want, b.String())
	}
}

func TestParseGoalErrors(t *testing.T) {
	for _, bad := range []string{
		"ops_per_sec a/b",
		"ops_per_sec a/b < 1",
		"ops_per_sec a/b <= x",
		"ops_per_sec a/b <= 1 when conns=4",
		"ops_per_sec a/b <= 1 where conns",
	} {
		if _, err := ParseGoal(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestFormatNum(t *testing.T) {
	for v, want := range map[float64]string{1234.5: "1234", 12.34: "12.3", 1.234: "1.23", 0: "0.00", 0.001234: "0.00123", math.NaN(): "-"} {
		if got := FormatNum(v); got != want {
			t.Errorf("FormatNum(%v) = %q, want %q", v, got, want)
		}
	}
}

// IO500-style score and a fio report, as peer-compare.sh reads them.
func TestSummaryIO500AndFio(t *testing.T) {
	text := `{"workload":"ior-easy","server":"uring","op":"write","mb_per_sec":400}
{"workload":"ior-easy","server":"ganesha","op":"write","mb_per_sec":100}
{"workload":"mdtest-easy","server":"uring","op":"create","ops_per_sec":2000}
{"workload":"mdtest-easy","server":"ganesha","op":"create","ops_per_sec":1000}
{"workload":"mdtest-easy","server":"uring","op":"stat","ops_per_sec":8000}
{"workload":"mdtest-easy","server":"ganesha","op":"stat","ops_per_sec":1000}
{"jobs":[{"jobname":"device","read":{"bw_bytes":2500000000}}]}
`
	rows, err := ReadRows(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if fio := rows[6]; fio.Str("server") != "fio" || fio.Str("op") != "READ" {
		t.Fatalf("fio row %v", fio)
	} else if mb, _ := fio.Num("mb_per_sec"); mb != 2500 {
		t.Fatalf("fio MB/s %v", mb)
	}
	g1, _ := ParseGoal("goal 1: io500_score uring/ganesha >= 3")
	g2, _ := ParseGoal("weakest phase: ops_per_sec uring/ganesha >= 1.5 where workload=mdtest-easy")
	s := &Summary{Rows: []string{"workload", "op"}, Base: "ganesha", Metrics: []string{"mb_per_sec", "ops_per_sec"},
		IO500: true, Goals: []Goal{g1, g2}}
	var b strings.Builder
	s.Write(&b, rows[:6])
	// bandwidth 4x; metadata sqrt(2*8) = 4x; score 4x.
	for _, want := range []string{
		"IO500-style uring/ganesha: bandwidth 4.00x metadata 4.00x score 4.00x",
		"- goal 1: **MET** (target >= 3x) — score: 4.00x",
		"- weakest phase: **MET** (target >= 1.5x) — mdtest-easy/create: 2.00x; mdtest-easy/stat: 8.00x",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReadRowsDataServerFields(t *testing.T) {
	in := `{"workload":"ior-easy","server":"mds","op":"write","bytes":4000,"data_servers":[` +
		`{"addr":"10.77.1.2:2049","write_bytes":1000,"writes":1},{"addr":"10.77.2.2:2049","write_bytes":3000,"writes":3},` +
		`{"addr":"10.77.3.2:2049","commits":1}]}` + "\n" + `{"workload":"ior-easy","server":"plain","op":"write","bytes":5}`
	rows, err := ReadRows(strings.NewReader(in))
	if err != nil || len(rows) != 2 {
		t.Fatal(rows, err)
	}
	for k, want := range map[string]float64{"ds_count": 2, "ds_fraction": 1, "ds_balance": 1.0 / 3} {
		if got, ok := rows[0].Num(k); !ok || got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if _, ok := rows[1].Num("ds_count"); ok {
		t.Error("ds_count on a result without data servers")
	}
}
