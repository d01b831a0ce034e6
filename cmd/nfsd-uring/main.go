// Command nfsd-uring is a user-space NFSv4.1/4.2 server.
//
// With no --export it serves ./data, creating it with a small sample tree
// (a sparse file included) so a first run needs no setup.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/profile"
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

type exportList []nfs.Export

func (l *exportList) String() string { return fmt.Sprint(*l) }

// Set takes DIR or NAME=DIR.
func (l *exportList) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok {
		name, path = "", v
	}
	*l = append(*l, nfs.Export{Name: name, Path: path})
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "nfsd-uring:", err)
		os.Exit(1)
	}
}

func run() error {
	var exports exportList
	flag.Var(&exports, "export", "directory to export, as DIR or NAME=DIR (repeatable; several exports appear under a pseudo-root by NAME)")
	listen := flag.String("listen", "", "address to listen on (default :2049, or 127.0.0.1:2049 / 127.0.0.1:12049 for the sample export)")
	cores := flag.Int("cores", 1, "event loops (one pinned OS thread each) for the io_uring engine")
	engineName := flag.String("engine", "auto", "I/O engine: auto, uring or portable")
	maxIO := flag.Int("max-io", 1<<20, "largest READ/WRITE payload in bytes")
	slots := flag.Int("slots", 128, "session slots offered to each client")
	splitWrites := flag.Bool("split-writes", true, "with --io-mode direct, split misaligned large writes into buffered head, O_DIRECT middle, buffered tail (false: write them whole, buffered with RWF_DONTCACHE)")
	sendZC := flag.Bool("send-zc", false, "io_uring engine: send replies of 64 KiB and more with SENDMSG_ZC (measured slower over loopback; try it on a real NIC)")
	directIO := flag.String("direct-reads", "auto", "O_DIRECT for file reads in the io_uring engine: auto (where measured to pay: buffered on page-cache-hot data), on or off")
	ioMode := flag.String("io-mode", "direct", "write I/O: direct (O_DIRECT for aligned large writes, split head/middle/tail for misaligned ones), dontcache (RWF_DONTCACHE) or buffered")
	idleTimeout := flag.Duration("idle-timeout", 6*time.Minute, "close a connection idle this long (nothing received, no reply taken, no request in progress), as knfsd; negative: never")
	recordTimeout := flag.Duration("record-timeout", 30*time.Second, "close a connection whose request record is not complete this long after it began; negative: never")
	maxConns := flag.Int("max-conns", 4096, "most open connections; further ones are closed as they are accepted")
	maxPartial := flag.Int("max-partial-bytes", 256<<20, "memory for request records still being received, all connections together; past it the connection with the oldest partial record is closed")
	maxQueued := flag.Int("max-queued-bytes", 8<<20, "per connection: reply bytes waiting to be sent, and request bytes waiting to be handled, before the server stops reading from it")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	prof := flag.String("profile", "", "write a profile on exit: cpu, mem, block, mutex or trace")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	if p := profileMode(*prof); p != nil {
		defer profile.Start(p, profile.ProfilePath("."), profile.Quiet, profile.NoShutdownHook).Stop()
	}

	sample := len(exports) == 0
	if sample {
		dir, err := makeSample("data")
		if err != nil {
			return err
		}
		exports = exportList{{Path: dir}}
	}
	// Clients send the modes they want; the server's umask must not
	// change them (and a create then needs no extra chmod).
	unix.Umask(0)
	addr := *listen
	if addr == "" {
		addr = defaultListen(sample)
	}
	mode, err := engine.ParseIOMode(*ioMode)
	if err != nil {
		return err
	}
	fio := engine.NewFileIO(mode)
	fio.NoSplit = !*splitWrites
	srv, err := nfs.NewServer(nfs.Config{Exports: exports, MaxIO: *maxIO, Slots: *slots, Logger: log, IO: fio})
	if err != nil {
		return err
	}
	defer srv.Close()
	eng, err := engine.New(*engineName, srv, engine.Options{Logger: log, Cores: *cores, DirectIO: *directIO, FileIO: fio, SendZC: *sendZC,
		IdleTimeout: *idleTimeout, RecordTimeout: *recordTimeout, MaxConns: *maxConns, MaxPartialBytes: *maxPartial, MaxQueuedBytes: *maxQueued})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "engine", eng.Name(), "exports", exports.String())
	printMount(ln.Addr().(*net.TCPAddr))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- eng.Serve(ln) }()
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		eng.Close()
		return nil
	case err := <-errc:
		eng.Close()
		return err
	}
}

func defaultListen(sample bool) string {
	switch {
	case !sample:
		return ":2049"
	case os.Geteuid() == 0:
		return "127.0.0.1:2049"
	}
	return "127.0.0.1:12049"
}

func printMount(a *net.TCPAddr) {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "SERVER"
	}
	fmt.Fprintf(os.Stderr, "mount with: mount -t nfs4 -o vers=4.2,port=%d %s:/ /mnt\n", a.Port, host)
}

func profileMode(name string) func(*profile.Profile) {
	switch name {
	case "cpu":
		return profile.CPUProfile
	case "mem":
		return profile.MemProfile
	case "block":
		return profile.BlockProfile
	case "mutex":
		return profile.MutexProfile
	case "trace":
		return profile.TraceProfile
	}
	return nil
}
