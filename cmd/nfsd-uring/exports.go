package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// loadExports reads and parses an exports(5) file (resolving hostnames
// with resolve; nil: the system's resolver) and checks that every
// exported directory exists. A hostname that does not resolve leaves out
// only its client spec, as `exportfs -ra` does; warn is told of each.
func loadExports(path string, resolve exports.Resolver, warn func(exports.UnresolvedHost)) ([]nfs.Export, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, unresolved, err := exports.ReadExports(f, resolve)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, u := range unresolved {
		warn(u)
	}
	for _, e := range list {
		if fi, err := os.Stat(e.Path); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s: line %d: %s is not a directory", path, e.Line, e.Path)
		}
	}
	return list, nil
}

// logUnresolved is loadExports's warn for the server: one line per
// client spec left out, naming the file, line and host.
func logUnresolved(log *slog.Logger, path string) func(exports.UnresolvedHost) {
	return func(u exports.UnresolvedHost) {
		msg := "exports: hostname does not resolve; its client spec is left out"
		if u.NoClientLeft {
			msg += ", and the export, which has no client left"
		}
		log.Warn(msg, "file", path, "line", u.Line, "host", u.Host, "export", u.Path, "err", u.Err)
	}
}

// checkExports is `nfsd-uring exports --check FILE`: parse the file and
// print the table as the server would use it, or the bad lines.
func checkExports(args []string) error {
	fs := flag.NewFlagSet("exports", flag.ContinueOnError)
	check := fs.String("check", "", "exports(5) file to validate; the parsed table is printed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *check == "" {
		return fmt.Errorf("usage: nfsd-uring exports --check FILE")
	}
	list, err := loadExports(*check, nil, func(u exports.UnresolvedHost) {
		fmt.Fprintf(os.Stderr, "nfsd-uring exports: warning: %s: %v\n", *check, u)
	})
	if err != nil {
		return err
	}
	exports.FormatExports(os.Stdout, list)
	return nil
}

// reloadOnHUP re-reads the exports file on SIGHUP and swaps the table in
// without touching connections; a file that does not parse (or names a
// directory that cannot be exported) leaves the old table in force. A
// hostname that does not resolve only leaves out its own client spec.
func reloadOnHUP(path string, srv *nfs.Server, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
			}
			reloadExports(path, srv, nil, log)
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// reloadExports is one reload: it reads path and swaps the table in, or
// logs why the previous table stays in force.
func reloadExports(path string, srv *nfs.Server, resolve exports.Resolver, log *slog.Logger) {
	list, err := loadExports(path, resolve, logUnresolved(log, path))
	if err == nil {
		err = srv.Reload(list)
	}
	if err != nil {
		log.Error("exports not reloaded; the previous table stays in force", "file", path, "err", err)
		return
	}
	log.Info("exports reloaded", "file", path, "exports", len(list))
}

// warnShorthand says loudly what --export grants.
func warnShorthand(log *slog.Logger, exports []nfs.Export) {
	for _, e := range exports {
		log.Warn("--export gives EVERY client read-write access, root included (rw,no_root_squash,insecure,async): use --exports FILE to restrict it", "export", e.Path)
	}
}

// exportNames lists the exported directories for the log.
func exportNames(list []nfs.Export) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.Path)
	}
	return out
}
