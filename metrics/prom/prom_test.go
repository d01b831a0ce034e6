package prom

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// scrape returns the text exposition of h's /metrics.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// value finds the sample whose name and labels are exactly series.
func value(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no series %s in:\n%s", series, text)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCollectorUnit(t *testing.T) {
	set := metrics.New()
	sh := set.Shard(7)
	sh.Op(nfs4.OpRead, uint32(nfs4.OK), 1500)  // bucket le 2.048 µs
	sh.Op(nfs4.OpRead, uint32(nfs4.OK), 3<<20) // ~3 ms
	sh.Op(nfs4.OpRead, uint32(nfs4.ErrStale), 100)
	sh.Op(nfs4.OpIllegal, uint32(nfs4.ErrOpIllegal), -1)
	set.Shard(8).Op(nfs4.OpRead, uint32(nfs4.OK), 900)
	set.Reject(metrics.MaxConns)
	set.AddGauge(metrics.Gauge{Name: "clients", Help: "h", Value: func() float64 { return 3 }})
	text := scrape(t, Handler(NewCollector(set, "v1.2.3", "abc"), false))
	for series, want := range map[string]float64{
		`nfsd_uring_operations_total{op="READ",status="NFS4_OK"}`:               3,
		`nfsd_uring_operations_total{op="READ",status="NFS4ERR_STALE"}`:         1,
		`nfsd_uring_operations_total{op="ILLEGAL",status="NFS4ERR_OP_ILLEGAL"}`: 1,
		`nfsd_uring_operation_seconds_count{op="READ"}`:                         4,
		`nfsd_uring_operation_seconds_bucket{op="READ",le="1.024e-06"}`:         2,
		`nfsd_uring_operation_seconds_bucket{op="READ",le="2.048e-06"}`:         3,
		`nfsd_uring_operation_seconds_bucket{op="READ",le="+Inf"}`:              4,
		`nfsd_uring_rejected_total{cause="max-conns"}`:                          1,
		`nfsd_uring_clients`: 3,
		`nfsd_uring_build_info{revision="abc",version="v1.2.3"}`: 1,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if strings.Contains(text, `op="WRITE"`) {
		t.Error("operations never seen have series")
	}
}

// TestServerMetrics reads through a real server on both engines and checks
// that the scrape accounts for every byte and segment.
func TestServerMetrics(t *testing.T) {
	for _, name := range []string{"portable", "uring"} {
		t.Run(name, func(t *testing.T) {
			if name == "uring" && ring.Available() != nil {
				t.Skip("no io_uring")
			}
			testServerMetrics(t, name)
		})
	}
}

func testServerMetrics(t *testing.T, engName string) {
	dir := t.TempDir()
	plain := make([]byte, 100<<10)
	for i := range plain {
		plain[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), plain, 0o644); err != nil {
		t.Fatal(err)
	}
	// sparse: 64 KiB of data, a 896 KiB hole, 64 KiB of data.
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(plain[:64<<10], 0)
	f.WriteAt(plain[:64<<10], 960<<10)
	f.Close()

	set := metrics.New()
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: dir}}, Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	eng, err := engine.New(engName, srv, engine.Options{Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- eng.Serve(ln) }()
	defer func() { eng.Close(); <-done }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, ln.Addr().String(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.ReadFile(ctx, "plain", 32<<10)
	if err != nil || len(got) != len(plain) {
		t.Fatalf("READ: %d bytes, %v", len(got), err)
	}
	got, err = c.ReadFilePlus(ctx, "sparse", 1<<20)
	if err != nil || len(got) != 1<<20 {
		t.Fatalf("READ_PLUS: %d bytes, %v", len(got), err)
	}
	if _, err := c.OpenPath(ctx, "missing"); err == nil {
		t.Fatal("opened a missing file")
	}

	text := scrape(t, Handler(NewCollector(set, "test", ""), true))
	for series, want := range map[string]float64{
		`nfsd_uring_file_bytes_total{dir="read"}`:                       100<<10 + 128<<10,
		`nfsd_uring_read_plus_segments_total{type="hole"}`:              1,
		`nfsd_uring_read_plus_segments_total{type="data"}`:              2,
		`nfsd_uring_read_plus_hole_bytes_total`:                         896 << 10,
		`nfsd_uring_operations_total{op="OPEN",status="NFS4ERR_NOENT"}`: 1,
		`nfsd_uring_connections`:                                        1,
		`nfsd_uring_clients`:                                            1,
		`nfsd_uring_sessions`:                                           1,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	// READ: 4 chunks of 32 KiB, maybe one more at eof; each one timed.
	reads := value(t, text, `nfsd_uring_operations_total{op="READ",status="NFS4_OK"}`)
	if timed := value(t, text, `nfsd_uring_operation_seconds_count{op="READ"}`); reads < 4 || timed != reads {
		t.Errorf("READ: %v ok, %v timed", reads, timed)
	}
	// The sparse file's first READ_PLUS walked it with lseeks; a second
	// read is planned from its extent cache alone.
	seeks := value(t, text, `nfsd_uring_read_plus_lseeks_total`)
	hits := value(t, text, `nfsd_uring_read_plus_extent_cache_hits_total`)
	if seeks == 0 {
		t.Error("no READ_PLUS lseeks counted")
	}
	if _, err := c.ReadFilePlus(ctx, "sparse", 1<<20); err != nil {
		t.Fatal(err)
	}
	again := scrape(t, Handler(NewCollector(set, "test", ""), true))
	if v := value(t, again, `nfsd_uring_read_plus_lseeks_total`); v != seeks {
		t.Errorf("a second READ_PLUS made %v more lseeks, want 0", v-seeks)
	}
	if v := value(t, again, `nfsd_uring_read_plus_extent_cache_hits_total`); v <= hits {
		t.Errorf("extent cache hits %v after a second READ_PLUS, were %v", v, hits)
	}
	if engName == "uring" {
		if v := value(t, text, `nfsd_uring_ring_submissions_total{loop="0"}`); v == 0 {
			t.Error("no ring submissions counted")
		}
		if v := value(t, text, `nfsd_uring_ring_completions_total{loop="0"}`); v == 0 {
			t.Error("no ring completions counted")
		}
	}
	reads4 := value(t, text, `nfsd_uring_file_io_total{dir="read",mode="buffered"}`) + value(t, text, `nfsd_uring_file_io_total{dir="read",mode="direct"}`)
	if reads4 < reads+1 {
		t.Errorf("file reads %v, want at least %v", reads4, reads+1)
	}
	// A record mark announcing 2 GiB: refused, the connection closed.
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte{0xff, 0xff, 0xff, 0xff})
	if _, err := raw.Read(make([]byte, 1)); err == nil {
		t.Fatal("a 2 GiB record mark was answered")
	}
	raw.Close()

	text = scrape(t, Handler(NewCollector(set, "test", ""), false))
	if v := value(t, text, `nfsd_uring_rejected_total{cause="record-too-big"}`); v != 1 {
		t.Errorf("record-too-big refusals: %v, want 1", v)
	}
	// --debug serves pprof on the same listener.
	ts := httptest.NewServer(Handler(NewCollector(set, "test", ""), true))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/debug/pprof/cmdline")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("pprof: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestNoPprofWithoutDebug(t *testing.T) {
	ts := httptest.NewServer(Handler(NewCollector(metrics.New(), "", ""), false))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("pprof without --debug: status %d", resp.StatusCode)
	}
}

// Every nfsd_uring metric the Grafana dashboard queries is one the
// collector exports, so the two cannot drift apart.
func TestDashboardNamesExported(t *testing.T) {
	dash, err := os.ReadFile("../../contrib/grafana/nfsd-uring.json")
	if err != nil {
		t.Fatal(err)
	}
	set := metrics.New()
	set.Shard(0).Op(nfs4.OpRead, uint32(nfs4.OK), 1000)
	set.NewLoop()
	set.Reject(metrics.MaxConns)
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}, Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	eng := engine.NewPortable(srv, engine.Options{Metrics: set})
	defer eng.Close()
	text := scrape(t, Handler(NewCollector(set, "", ""), false))
	names := regexp.MustCompile(`\b(nfsd_uring|process|go)_[a-z_]+`).FindAllString(string(dash), -1)
	if len(names) < 10 {
		t.Fatalf("dashboard names: %v", names)
	}
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^` + n + `[{ ]`).MatchString(text) {
			t.Errorf("dashboard queries %s, which the server does not export", n)
		}
	}
}
