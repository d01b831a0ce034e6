package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// loadExports reads and parses an exports(5) file and checks that every
// exported directory exists.
func loadExports(path string) ([]nfs.Export, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := nfs.ParseExports(f, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range list {
		if fi, err := os.Stat(e.Path); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s: line %d: %s is not a directory", path, e.Line, e.Path)
		}
	}
	return list, nil
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
	list, err := loadExports(*check)
	if err != nil {
		return err
	}
	nfs.FormatExports(os.Stdout, list)
	return nil
}

// reloadOnHUP re-reads the exports file on SIGHUP and swaps the table in
// without touching connections; a file that does not parse (or names a
// directory that cannot be exported) leaves the old table in force.
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
			list, err := loadExports(path)
			if err == nil {
				err = srv.Reload(list)
			}
			if err != nil {
				log.Error("exports not reloaded; the previous table stays in force", "file", path, "err", err)
				continue
			}
			log.Info("exports reloaded", "file", path, "exports", len(list))
		}
	}()
	return func() { signal.Stop(hup); close(done) }
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
