package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Row is one result as read back from --json output: its fields by JSON
// name, with the --tag fields (Result.Tags) beside them, and nested
// objects reachable by dotted names ("latency_us.p99").
type Row map[string]any

// ReadRows reads JSON objects, one after another (nfsbench --json files,
// several concatenated; a fio JSON report becomes a row too, see fioRow). A result with bytes gets
// client_cpu_seconds_per_gib (nfsbench reports the client's CPU seconds
// only). An iperf3 -J report (an object with
// end.sum_received) becomes one row: server "iperf3", workload "iperf3",
// op "TCP", mb_per_sec, and the sender's and receiver's CPU per GiB
// (client_cpu_seconds_per_gib, server_cpu_seconds_per_gib), so that
// scripts can set nfsbench beside it.
func ReadRows(r io.Reader) ([]Row, error) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var out []Row
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if tags, ok := m["tags"].(map[string]any); ok {
			for k, v := range tags {
				m[k] = v
			}
			delete(m, "tags")
		}
		if ip, ok := iperf3Row(Row(m)); ok {
			m = ip
		}
		if fr, ok := fioRow(m); ok {
			m = fr
		}
		addDataServerFields(m)
		cpu, ok1 := Row(m).Num("client_cpu_seconds")
		bytes, ok2 := Row(m).Num("bytes")
		if _, had := m["client_cpu_seconds_per_gib"]; !had && ok1 && ok2 && bytes > 0 {
			m["client_cpu_seconds_per_gib"] = cpu / (bytes / (1 << 30))
		}
		out = append(out, Row(m))
	}
}

// addDataServerFields derives, from a pNFS result's data_servers (the
// bytes sent straight to each data server), fields that goals can check:
// ds_count (data servers that moved data), ds_fraction (their bytes over
// the phase's bytes: 1 when nothing went through the MDS) and ds_balance
// (the least-used data server's bytes over the most-used one's).
func addDataServerFields(m map[string]any) {
	list, ok := m["data_servers"].([]any)
	if !ok || len(list) == 0 {
		return
	}
	var sum, lo, hi float64
	n := 0
	for _, x := range list {
		d, ok := x.(map[string]any)
		if !ok {
			continue
		}
		b := Row(d).numOr("read_bytes") + Row(d).numOr("write_bytes")
		if b <= 0 {
			continue
		}
		if n == 0 || b < lo {
			lo = b
		}
		hi = max(hi, b)
		sum += b
		n++
	}
	m["ds_count"] = float64(n)
	if total, ok := Row(m).Num("bytes"); ok && total > 0 {
		m["ds_fraction"] = sum / total
	}
	if hi > 0 {
		m["ds_balance"] = lo / hi
	}
}

func (r Row) numOr(k string) float64 {
	v, _ := r.Num(k)
	return v
}

// iperf3Row turns an iperf3 -J report into a row.
func iperf3Row(m Row) (Row, bool) {
	bytes, ok1 := m.Num("end.sum_received.bytes")
	secs, ok2 := m.Num("end.sum_received.seconds")
	if !ok1 || !ok2 || secs <= 0 || bytes <= 0 {
		return nil, false
	}
	gib := bytes / (1 << 30)
	out := Row{"server": "iperf3", "workload": "iperf3", "op": "TCP", "bytes": bytes, "seconds": secs,
		"mb_per_sec": bytes / 1e6 / secs}
	// cpu_utilization_percent: host is the side that ran iperf3 -c.
	if pct, ok := m.Num("end.cpu_utilization_percent.host_total"); ok {
		out["client_cpu_seconds_per_gib"] = pct / 100 * secs / gib
	}
	if pct, ok := m.Num("end.cpu_utilization_percent.remote_total"); ok {
		out["server_cpu_seconds_per_gib"] = pct / 100 * secs / gib
	}
	return out, true
}

// fioRow turns a fio --output-format=json report into a row of its first
// job's reads: server "fio", workload "fio", op "READ", mb_per_sec.
func fioRow(m map[string]any) (map[string]any, bool) {
	jobs, ok := m["jobs"].([]any)
	if !ok || len(jobs) == 0 {
		return nil, false
	}
	job, ok := jobs[0].(map[string]any)
	if !ok {
		return nil, false
	}
	bw, ok := Row(job).Num("read.bw_bytes")
	if !ok {
		return nil, false
	}
	return map[string]any{"server": "fio", "workload": "fio", "op": "READ", "mb_per_sec": bw / 1e6}, true
}

// get finds a field by dotted name.
func (r Row) get(name string) (any, bool) {
	var v any = map[string]any(r)
	for _, part := range strings.Split(name, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			if rm, isRow := v.(Row); isRow {
				m, ok = map[string]any(rm), true
			}
		}
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// Num is a numeric field.
func (r Row) Num(name string) (float64, bool) {
	v, ok := r.get(name)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// Str is a field as text for a table's key columns; "cache" is the
// cached field spelled as nfsbench's tables do ("cached", "uncached").
func (r Row) Str(name string) string {
	if name == "cache" {
		if c, ok := r["cached"].(bool); ok {
			return map[bool]string{true: "cached", false: "uncached"}[c]
		}
		return ""
	}
	v, ok := r.get(name)
	if !ok || v == nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// Median of v; NaN when empty.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Goal is a target checked against the medians: the ratio of Metric's
// median on Side to its median on Base (or the median itself, with no
// Base), compared with Limit, in every table row that matches Where. A
// Base of "@NAME" is the median of Metric over every result of side NAME,
// whatever its row (e.g. "@iperf3", the loopback's limit).
type Goal struct {
	Name       string
	Metric     string
	Side, Base string
	Op         string // "<=" or ">="
	Limit      float64
	Where      map[string]string
}

// ParseGoal parses "[NAME: ]METRIC SIDE[/BASE] <=|>= LIMIT [where K=V,...]",
// e.g. "goal 6: server_cpu_us_per_op cores2/cores1 <= 1 where conns=4".
func ParseGoal(s string) (Goal, error) {
	var g Goal
	// The name may hold ": " itself; the spec never does.
	if i := strings.LastIndex(s, ": "); i >= 0 {
		g.Name, s = s[:i], s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) != 4 && !(len(f) == 6 && f[4] == "where") {
		return g, fmt.Errorf("goal %q: want METRIC SIDE[/BASE] <=|>= LIMIT [where K=V,...]", s)
	}
	g.Metric = f[0]
	g.Side, g.Base, _ = strings.Cut(f[1], "/")
	g.Op = f[2]
	if g.Op != "<=" && g.Op != ">=" {
		return g, fmt.Errorf("goal %q: comparison %q: want <= or >=", s, g.Op)
	}
	var err error
	if g.Limit, err = strconv.ParseFloat(f[3], 64); err != nil {
		return g, fmt.Errorf("goal %q: limit: %w", s, err)
	}
	if len(f) == 6 {
		if g.Where, err = ParseWhere(f[5]); err != nil {
			return g, fmt.Errorf("goal %q: %w", s, err)
		}
	}
	if g.Name == "" {
		g.Name = s
	}
	return g, nil
}

// ParseWhere parses "K=V,K=V".
func ParseWhere(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		out[k] = v
	}
	return out, nil
}

func (r Row) matches(where map[string]string) bool {
	for k, v := range where {
		if r.Str(k) != v {
			return false
		}
	}
	return true
}

// Summary tabulates rows: one table row per distinct value of the Rows
// fields, with the median of each metric on each side (the values of the
// Side field, e.g. the servers) and the ratio of every side to Base.
type Summary struct {
	Rows    []string // key fields of a table row
	Side    string   // the field whose values are compared; default "server"
	Base    string   // the side ratios divide by; default the first seen
	Metrics []string
	Where   map[string]string // only rows matching these fields
	Goals   []Goal
	// IO500 prints the IO500-style score (io500Score) of every side
	// against the base; Rows must start with workload and Metrics hold
	// mb_per_sec and ops_per_sec. A goal's metric "io500_score" is it.
	IO500 bool
	// Runs lists each cell's values after the medians of the first metric.
	Runs bool
}

type cell struct {
	key  []string
	vals map[string]map[string][]float64 // side -> metric -> values
}

// table groups the rows that pass Where and carry no error.
func (s *Summary) table(rows []Row) (cells []*cell, sides []string) {
	side := cmpOr(s.Side, "server")
	byKey := map[string]*cell{}
	for _, r := range rows {
		if !r.matches(s.Where) || r.Str("error") != "" {
			continue
		}
		var key []string
		for _, k := range s.Rows {
			key = append(key, r.Str(k))
		}
		id := strings.Join(key, "\x00")
		c := byKey[id]
		if c == nil {
			c = &cell{key: key, vals: map[string]map[string][]float64{}}
			byKey[id] = c
			cells = append(cells, c)
		}
		sd := r.Str(side)
		if !slices.Contains(sides, sd) {
			sides = append(sides, sd)
		}
		if c.vals[sd] == nil {
			c.vals[sd] = map[string][]float64{}
		}
		for _, m := range s.Metrics {
			if v, ok := r.Num(m); ok {
				c.vals[sd][m] = append(c.vals[sd][m], v)
			}
		}
	}
	if s.Base != "" && slices.Contains(sides, s.Base) {
		sides = slices.DeleteFunc(sides, func(x string) bool { return x == s.Base })
		sides = slices.Insert(sides, 0, s.Base)
	}
	return cells, sides
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (c *cell) median(side, metric string) float64 { return Median(c.vals[side][metric]) }

// Write prints the failed rows, the table (markdown) and the goals.
func (s *Summary) Write(w io.Writer, rows []Row) {
	for _, r := range rows {
		if e := r.Str("error"); e != "" && r.matches(s.Where) {
			var key []string
			for _, k := range append([]string{cmpOr(s.Side, "server")}, s.Rows...) {
				key = append(key, r.Str(k))
			}
			fmt.Fprintf(w, "ERROR: %s: %s\n", strings.Join(key, " "), e)
		}
	}
	cells, sides := s.table(rows)
	if len(cells) == 0 {
		fmt.Fprintln(w, "(no results)")
	} else {
		s.writeTable(w, cells, sides)
	}
	if s.IO500 && len(sides) > 1 {
		for _, sd := range sides[1:] {
			bw, md, score := io500Score(cells, sd, sides[0])
			fmt.Fprintf(w, "IO500-style %s/%s: bandwidth %s metadata %s score %s (geometric means of the ior and of the mdtest phases' ratios; not an official IO500 score)\n",
				sd, sides[0], FormatRatio(bw), FormatRatio(md), FormatRatio(score))
		}
	}
	for _, g := range s.Goals {
		if g.Metric == "io500_score" {
			_, _, score := io500Score(cells, g.Side, g.Base)
			cells := []*cell{{key: []string{"score"}, vals: map[string]map[string][]float64{
				g.Side: {g.Metric: {score}}, g.Base: {g.Metric: {1}}}}}
			fmt.Fprintln(w, g.verdict(cells, []string{""}, math.NaN()))
			continue
		}
		fmt.Fprintln(w, g.verdict(cells, s.Rows, s.overall(rows, g)))
	}
}

func (s *Summary) writeTable(w io.Writer, cells []*cell, sides []string) {
	head := slices.Clone(s.Rows)
	head = append(head, "n")
	for _, m := range s.Metrics {
		for _, sd := range sides {
			head = append(head, sd+" "+m)
		}
		for _, sd := range sides[1:] {
			head = append(head, m+" "+sd+"/"+sides[0])
		}
	}
	if s.Runs && len(s.Metrics) > 0 {
		head = append(head, "runs "+s.Metrics[0])
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
	align := make([]string, len(head))
	for i := range align {
		align[i] = "---:"
		if i < len(s.Rows) {
			align[i] = "---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
	for _, c := range cells {
		line := slices.Clone(c.key)
		n := 0
		for _, sd := range sides {
			for _, m := range s.Metrics {
				n = max(n, len(c.vals[sd][m]))
			}
		}
		line = append(line, strconv.Itoa(n))
		for _, m := range s.Metrics {
			for _, sd := range sides {
				line = append(line, FormatNum(c.median(sd, m)))
			}
			for _, sd := range sides[1:] {
				line = append(line, FormatRatio(c.median(sd, m)/c.median(sides[0], m)))
			}
		}
		if s.Runs && len(s.Metrics) > 0 {
			var runs []string
			for _, sd := range sides {
				var v []string
				for _, x := range c.vals[sd][s.Metrics[0]] {
					v = append(v, FormatNum(x))
				}
				if len(v) > 0 {
					runs = append(runs, sd+": "+strings.Join(v, ", "))
				}
			}
			line = append(line, strings.Join(runs, "; "))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(line, " | "))
	}
}

// io500Score is the IO500-style score of side against base over cells
// whose first key field is the workload (not an official IO500 score):
// the geometric mean of the ior phases' MB/s ratios (bw) and of the
// mdtest phases' ops/s ratios (md), and the square root of their product.
func io500Score(cells []*cell, side, base string) (bw, md, score float64) {
	var b, m []float64
	for _, c := range cells {
		switch {
		case len(c.key) == 0:
		case strings.HasPrefix(c.key[0], "ior-"):
			b = append(b, c.median(side, "mb_per_sec")/c.median(base, "mb_per_sec"))
		case strings.HasPrefix(c.key[0], "mdtest-"):
			m = append(m, c.median(side, "ops_per_sec")/c.median(base, "ops_per_sec"))
		}
	}
	bw, md = orNaN(geomean(b)), orNaN(geomean(m))
	return bw, md, math.Sqrt(bw * md)
}

// orNaN: io500.go's geomean answers 0 for no or bad values.
func orNaN(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

// overall is the median of g's metric over every result of side
// g.Base[1:] when g.Base is "@NAME"; NaN otherwise.
func (s *Summary) overall(rows []Row, g Goal) float64 {
	name, ok := strings.CutPrefix(g.Base, "@")
	if !ok {
		return math.NaN()
	}
	var v []float64
	for _, r := range rows {
		if r.Str(cmpOr(s.Side, "server")) != name || r.Str("error") != "" {
			continue
		}
		if x, ok := r.Num(g.Metric); ok {
			v = append(v, x)
		}
	}
	return Median(v)
}

// value is what the goal compares in c: a ratio of medians, or a median;
// ref is the median of an "@NAME" base.
func (g Goal) value(c *cell, ref float64) float64 {
	v := c.median(g.Side, g.Metric)
	switch {
	case strings.HasPrefix(g.Base, "@"):
		v /= ref
	case g.Base != "":
		v /= c.median(g.Base, g.Metric)
	}
	return v
}

// verdict is the goal's line: MET when every matching table row passes,
// NOT MET otherwise, with each row's value; "not measured" when no row
// has both medians.
func (g Goal) verdict(cells []*cell, names []string, ref float64) string {
	var parts []string
	pass, total := 0, 0
	for _, c := range cells {
		if !keyMatches(c, names, g.Where) {
			continue
		}
		v := g.value(c, ref)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		total++
		ok := v <= g.Limit
		if g.Op == ">=" {
			ok = v >= g.Limit
		}
		if ok {
			pass++
		}
		s := FormatNum(v)
		if g.Base != "" {
			s = FormatRatio(v)
		}
		if k := strings.Join(slices.DeleteFunc(slices.Clone(c.key), func(x string) bool { return x == "" }), "/"); k != "" {
			s = k + ": " + s
		}
		parts = append(parts, s)
	}
	target := fmt.Sprintf("%s %s", g.Op, strconv.FormatFloat(g.Limit, 'f', -1, 64))
	if g.Base != "" {
		target += "x"
	}
	state := "MET"
	switch {
	case total == 0:
		return fmt.Sprintf("- %s: not measured (target %s)", g.Name, target)
	case pass == 0:
		state = "NOT MET"
	case pass < total:
		state = fmt.Sprintf("NOT MET (%d/%d pass)", pass, total)
	}
	return fmt.Sprintf("- %s: **%s** (target %s) — %s", g.Name, state, target, strings.Join(parts, "; "))
}

// keyMatches: a goal's Where names key fields of the table (names).
func keyMatches(c *cell, names []string, where map[string]string) bool {
	for k, v := range where {
		i := slices.Index(names, k)
		if i < 0 || c.key[i] != v {
			return false
		}
	}
	return true
}

// FormatNum prints v with about three significant digits; NaN as "-".
func FormatNum(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.01 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// FormatRatio prints a ratio as "1.23x"; NaN as "-".
func FormatRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}
