package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
)

// IO500 runs ior-easy, mdtest-easy, ior-hard and mdtest-hard with their
// phases in IO500 order (writes, then reads and stats, then removes).
func IO500(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	return io500Of(ctx, cfg, t, []Builder{IOREasy, MDTestEasy, IORHard, MDTestHard})
}

// io500Of orders the phases of the four builders (ior-easy, mdtest-easy,
// ior-hard, mdtest-hard) as IO500 does.
func io500Of(ctx context.Context, cfg *Config, t *Target, builders []Builder) ([]*Phase, error) {
	byKey := map[string]*Phase{}
	for _, b := range builders {
		ps, err := b(ctx, cfg, t)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			byKey[p.Workload+" "+p.Op] = p
		}
	}
	order := []string{
		"ior-easy write", "mdtest-easy create", "ior-hard write", "mdtest-hard create",
		"ior-easy read", "mdtest-easy stat", "ior-hard read", "mdtest-hard stat",
		"mdtest-easy read", "mdtest-hard read", "mdtest-easy remove", "mdtest-hard remove",
	}
	out := make([]*Phase, len(order))
	for i, k := range order {
		out[i] = byKey[k]
	}
	return out, nil
}

// Score is an IO500-style summary of one server's results.
type Score struct {
	Server       string
	BandwidthGiB float64 // geometric mean of ior phases, GiB/s
	KIOPS        float64 // geometric mean of mdtest phases, kIOPS
	Total        float64 // sqrt(BandwidthGiB * KIOPS)
}

// Scores computes the summary per server from io500 results.
func Scores(results []*Result) []Score {
	var out []Score
	idx := map[string]int{}
	bw, md := map[string][]float64{}, map[string][]float64{}
	for _, r := range results {
		if _, ok := idx[r.Server]; !ok {
			idx[r.Server] = len(out)
			out = append(out, Score{Server: r.Server})
		}
		if strings.HasPrefix(r.Workload, "ior-") {
			bw[r.Server] = append(bw[r.Server], float64(r.Bytes)/(1<<30)/r.Seconds)
		} else if strings.HasPrefix(r.Workload, "mdtest-") {
			md[r.Server] = append(md[r.Server], r.OpsPerSec/1000)
		}
	}
	for i := range out {
		s := &out[i]
		s.BandwidthGiB, s.KIOPS = geomean(bw[s.Server]), geomean(md[s.Server])
		s.Total = math.Sqrt(s.BandwidthGiB * s.KIOPS)
	}
	return out
}

func geomean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range v {
		if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(v)))
}

// WriteScores prints the summary, labelled as not an official score.
func WriteScores(w io.Writer, scores []Score) {
	fmt.Fprintln(w, "IO500-style summary (not an official IO500 score: tiny sizes, no find phase, one client machine)")
	for _, s := range scores {
		fmt.Fprintf(w, "  %-20s bandwidth %8.3f GiB/s   metadata %8.3f kIOPS   sqrt(bw*md) %8.3f\n", s.Server, s.BandwidthGiB, s.KIOPS, s.Total)
	}
	if len(scores) == 2 && scores[1].Total > 0 {
		a, b := scores[0], scores[1]
		fmt.Fprintf(w, "  ratio %s/%s: bandwidth %.2fx  metadata %.2fx  score %.2fx\n", a.Server, b.Server,
			a.BandwidthGiB/b.BandwidthGiB, a.KIOPS/b.KIOPS, a.Total/b.Total)
	}
}
