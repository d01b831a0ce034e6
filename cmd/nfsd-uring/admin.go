package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/metrics/prom"
)

const usageHead = `nfsd-uring: a user-space NFSv4.1/4.2 server whose data path runs on io_uring.

Usage: nfsd-uring [flags]

Examples:
  nfsd-uring                                   serve ./data (created with sample files) on 127.0.0.1
  nfsd-uring --export /srv/data                clients mount SERVER:/
  nfsd-uring --export a=/srv/a --export b=/srv/b
                                               a pseudo-root with /a and /b
  nfsd-uring --cores 0 --export /srv/data      one event loop per CPU
  nfsd-uring --export /srv/data --metrics 127.0.0.1:9249
                                               Prometheus metrics at http://127.0.0.1:9249/metrics
  nfsd-uring --metrics 127.0.0.1:9249 --debug  the same, plus net/http/pprof at /debug/pprof/
  nfsd-uring --export /srv/meta --data-server 10.0.0.11:2049 --data-server 10.0.0.12:2049 --mirrors 2
                                               pNFS flexible-files metadata server: file data on the
                                               data servers (their exports no_root_squash for this host)
  nfsd-uring --version

Flags:
`

// usage prints the examples, then the flags.
func usage() {
	out := flag.CommandLine.Output()
	fmt.Fprint(out, usageHead)
	flag.PrintDefaults()
}

// buildVersion returns the module version and VCS revision the binary was
// built from ("(devel)" and "" when unknown, as for go run).
func buildVersion() (version, revision string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)", ""
	}
	version = bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		revision += "+dirty"
	}
	return version, revision
}

func printVersion() {
	v, r := buildVersion()
	fmt.Printf("nfsd-uring %s", v)
	if r != "" {
		fmt.Printf(" (revision %s)", r)
	}
	fmt.Printf(" %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// settings are the flag values checked by validate.
type settings struct {
	cores, maxIO, slots                       int
	maxClients, maxSessions, maxOpens, maxLks int
	maxClientsAddr                            int
	maxCached, maxConns, maxPartial, maxQueue int
	cacheMem                                  int64
	prof, metricsAddr                         string
	debug                                     bool
}

// maxIOLimit: a READ or WRITE payload larger than this is not useful
// (knfsd's maximum is 1 MiB, 4 MiB on big-memory machines) and each
// record buffer would be as large.
const maxIOLimit = 64 << 20

// validate refuses flag values the server cannot honour, rather than
// silently changing them.
func validate(s settings) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.cores < 0 {
		bad("--cores %d: want 0 (one event loop per CPU) or more", s.cores)
	}
	if s.maxIO < 4096 || s.maxIO > maxIOLimit {
		bad("--max-io %d: want 4096 to %d bytes", s.maxIO, maxIOLimit)
	}
	if s.slots < 1 || s.slots > 1024 {
		bad("--slots %d: want 1 to 1024", s.slots)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"max-clients", int64(s.maxClients)}, {"max-clients-per-addr", int64(s.maxClientsAddr)}, {"max-sessions", int64(s.maxSessions)}, {"max-opens", int64(s.maxOpens)},
		{"max-lock-ranges", int64(s.maxLks)}, {"max-cached-reply", int64(s.maxCached)}, {"reply-cache-mem", s.cacheMem},
		{"max-conns", int64(s.maxConns)}, {"max-partial-bytes", int64(s.maxPartial)}, {"max-queued-bytes", int64(s.maxQueue)}} {
		if f.v < 0 {
			bad("--%s %d: must not be negative (0 means the default)", f.name, f.v)
		}
	}
	switch s.prof {
	case "", "cpu", "mem", "block", "mutex", "trace":
	default:
		bad("--profile %q: want cpu, mem, block, mutex or trace", s.prof)
	}
	if s.debug && s.metricsAddr == "" {
		bad("--debug serves pprof on the --metrics listener: give --metrics ADDR too")
	}
	return errors.Join(errs...)
}

// loopCount is the event loops for --cores: 0 means one per CPU the
// process may run on.
func loopCount(cores int) int {
	if cores == 0 {
		return runtime.NumCPU()
	}
	return cores
}

// newLogger is the server's logger: each cause (message) writes at most
// 20 lines a minute, then one "suppressed N" line, so a flood of bad
// requests cannot flood the log.
func newLogger(level slog.Level) *slog.Logger {
	h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	return slog.New(metrics.RateLimit(h, 20, time.Minute))
}

// serveMetrics serves /metrics (and pprof with debug) on addr.
func serveMetrics(log *slog.Logger, addr string, set *metrics.Set, debugOn bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	v, r := buildVersion()
	srv := &http.Server{Handler: prom.Handler(prom.NewCollector(set, v, r), debugOn), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	what := "/metrics"
	if debugOn {
		what += " and /debug/pprof/"
	}
	log.Info("serving "+what, "addr", ln.Addr().String())
	return nil
}

// notifyReady tells systemd (Type=notify) that the server is serving, by
// sending READY=1 to the datagram socket named in $NOTIFY_SOCKET (sd_notify
// without libsystemd). Without the variable it does nothing.
func notifyReady() error {
	return sdNotify(os.Getenv("NOTIFY_SOCKET"), "READY=1\nSTATUS=serving")
}

func sdNotify(path, state string) error {
	if path == "" {
		return nil
	}
	// A leading '@' names an abstract socket; package net maps it.
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}
