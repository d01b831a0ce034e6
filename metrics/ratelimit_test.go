package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A flood of one cause writes burst lines, then one summary with the count
// of the others; another cause is not held back by it, and a new period
// starts afresh.
func TestRateLimit(t *testing.T) {
	var buf bytes.Buffer
	h := RateLimit(slog.NewTextHandler(&buf, nil), 3, time.Hour).(*rateHandler)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log := func(at time.Time, msg string) {
		rec := slog.NewRecord(at, slog.LevelWarn, msg, 0)
		rec.AddAttrs(slog.String("remote", "10.0.0.1:700"))
		if err := h.Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	for range 1000 {
		log(t0, "bad record")
	}
	log(t0, "other cause")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 || strings.Count(buf.String(), `msg="bad record"`) != 3 || !strings.Contains(lines[3], "other cause") {
		t.Fatalf("flood wrote:\n%s", buf.String())
	}
	buf.Reset()
	h.flush(rateKey{slog.LevelWarn, "bad record"}) // what the period's timer does
	if !strings.Contains(buf.String(), `msg="suppressed 997 similar log lines" cause="bad record"`) {
		t.Fatalf("summary: %q", buf.String())
	}
	buf.Reset()
	log(t0.Add(2*time.Hour), "bad record")
	if strings.Count(buf.String(), `msg="bad record"`) != 1 {
		t.Fatalf("new period: %q", buf.String())
	}
	// Attributes added with With share the limit of their cause.
	buf.Reset()
	hw := h.WithAttrs([]slog.Attr{slog.Int("loop", 1)})
	for range 10 {
		hw.Handle(context.Background(), slog.NewRecord(t0.Add(2*time.Hour), slog.LevelWarn, "bad record", 0))
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("WithAttrs: %d lines, want 2 (3 per period):\n%s", n, buf.String())
	}
}

func TestBuckets(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want int
	}{{0, 0}, {1, 0}, {1024, 0}, {1025, 1}, {2048, 1}, {2049, 2}, {1 << 40, NumBuckets - 1}} {
		if got := bucketOf(c.ns); got != c.want {
			t.Errorf("bucketOf(%d) = %d, want %d", c.ns, got, c.want)
		}
		if c.want < NumBuckets-1 && float64(c.ns)/1e9 > BucketBound(c.want) {
			t.Errorf("%d ns above bucket %d's bound %v", c.ns, c.want, BucketBound(c.want))
		}
	}
}
