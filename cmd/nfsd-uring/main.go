// Command nfsd-uring is a user-space NFSv4.1/4.2 server.
//
// With no --export it serves ./data, creating it with a small sample tree
// (a sparse file included) so a first run needs no setup.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pkg/profile"
	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/pnfs"
)

type exportList []nfs.Export

func (l *exportList) String() string { return fmt.Sprint(*l) }

// Set takes [NAME=]DIR[,OPTION...], OPTION being crossmnt or fsid=ID.
func (l *exportList) Set(v string) error {
	e, err := parseExport(v)
	if err != nil {
		return err
	}
	*l = append(*l, e)
	return nil
}

// parseExport parses one --export value.
func parseExport(v string) (nfs.Export, error) {
	spec, opts, _ := strings.Cut(v, ",")
	var e nfs.Export
	if i := strings.IndexByte(spec, '='); i >= 0 && !strings.Contains(spec[:i], "/") {
		e.Name, spec = spec[:i], spec[i+1:]
	}
	e.Path = spec
	if e.Path == "" {
		return e, fmt.Errorf("export %q: no directory", v)
	}
	for _, o := range strings.Split(opts, ",") {
		switch k, val, _ := strings.Cut(o, "="); k {
		case "":
		case "crossmnt":
			e.CrossMnt = true
		case "nocrossmnt":
			e.CrossMnt = false
		case "fsid":
			if val == "" {
				return e, fmt.Errorf("export %q: fsid= needs a value", v)
			}
			e.FSID = val
		default:
			return e, fmt.Errorf("export %q: unknown option %q (known: crossmnt, fsid=ID)", v, o)
		}
	}
	return e, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "exports" {
		if err := checkExports(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "nfsd-uring exports:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "nfsd-uring:", err)
		os.Exit(1)
	}
}

func run() error {
	var exports exportList
	flag.Var(&exports, "export", "directory to export, as [NAME=]DIR[,crossmnt][,fsid=ID] (repeatable; several exports appear under a pseudo-root by NAME; crossmnt also serves filesystems mounted inside DIR)")
	exportsFile := flag.String("exports", "", "exports(5) file (client specs and options per export; reloaded on SIGHUP); clients mount exports by path")
	stateDir := flag.String("state-dir", defaultStateDir(), "directory for state that survives restarts (the file handle key)")
	listen := flag.String("listen", "", "address to listen on (default :2049, or 127.0.0.1:2049 / 127.0.0.1:12049 for the sample export)")
	cores := flag.Int("cores", 1, "event loops (one pinned OS thread each) for the io_uring engine; 0: one per CPU")
	engineName := flag.String("engine", "auto", "I/O engine: auto, uring or portable")
	maxIO := flag.Int("max-io", 1<<20, "largest READ/WRITE payload in bytes")
	slots := flag.Int("slots", 128, "session slots offered to each client")
	splitWrites := flag.Bool("split-writes", true, "with --io-mode direct, split misaligned large writes into buffered head, O_DIRECT middle, buffered tail (false: write them whole, buffered with RWF_DONTCACHE)")
	heldWait := flag.Bool("held-wait", true, "io_uring engine: a busy loop waits for completions holding its Go P (up to 10 ms at a time, one P added per loop; the runtime's preemption signal ends the wait), which spares the Go scheduler's 20 µs polling; false: always an ordinary blocking wait")
	sendZC := flag.Bool("send-zc", false, "io_uring engine: send replies of 64 KiB and more with SENDMSG_ZC (measured slower over loopback; try it on a real NIC)")
	directIO := flag.String("direct-reads", "auto", "O_DIRECT for file reads: auto (ranges not in the page cache go O_DIRECT, cached ones buffered), on or off")
	writebackAfter := flag.Int64("writeback-after", engine.DefaultWritebackAfter, "start writing a file's dirty pages to disk once this many bytes were written to it through the page cache (sync_file_range), so a COMMIT finds them mostly written; 0: leave it to the kernel")
	ioMode := flag.String("io-mode", "direct", "write I/O: direct (O_DIRECT for aligned large writes, split head/middle/tail for misaligned ones), dontcache (RWF_DONTCACHE) or buffered")
	maxClients := flag.Int("max-clients", 0, "client records kept at once (0: default 1024); past it EXCHANGE_ID answers NFS4ERR_DELAY")
	maxClientsAddr := flag.Int("max-clients-per-addr", 0, "client records kept for one client IP address (0: max-clients/8, at least 16); past it EXCHANGE_ID from that address answers NFS4ERR_DELAY")
	maxSessions := flag.Int("max-sessions", 0, "sessions per client (0: default 16); past it CREATE_SESSION answers NFS4ERR_NOSPC")
	maxOpens := flag.Int("max-opens", 0, "open and lock stateids per client (0: default 8192); past it NFS4ERR_RESOURCE")
	maxLocks := flag.Int("max-lock-ranges", 0, "byte-range locks per client (0: default 8192); past it NFS4ERR_RESOURCE")
	cacheMem := flag.Int64("reply-cache-mem", 0, "bytes all session slots together may keep for retransmits (0: default 128 MiB); sessions made past it get fewer slots")
	maxCached := flag.Int("max-cached-reply", 0, "bytes a session slot keeps of a reply for retransmits, file data excluded (0: default 16384)")
	idleTimeout := flag.Duration("idle-timeout", 6*time.Minute, "close a connection idle this long (nothing received, no reply taken, no request in progress), as knfsd; negative: never")
	recordTimeout := flag.Duration("record-timeout", 30*time.Second, "close a connection whose request record is not complete this long after it began; negative: never")
	maxConns := flag.Int("max-conns", 4096, "most open connections; further ones are closed as they are accepted")
	maxPartial := flag.Int("max-partial-bytes", 256<<20, "memory for request records still being received, all connections together; past it the connection with the oldest partial record is closed")
	maxQueued := flag.Int("max-queued-bytes", 8<<20, "per connection: reply bytes waiting to be sent, and request bytes waiting to be handled, before the server stops reading from it")
	delegations := flag.Bool("delegations", true, "grant read and write delegations to clients whose back channel answers CB_NULL; a kernel lease and an inotify watch on each delegated file recall them when another process opens, renames, unlinks or changes it (--delegations=false: none)")
	leaseTime := flag.Uint("lease-time", 90, "lease in seconds: a client silent this long loses its lease (its opens and locks stay until another client's request conflicts with them: courteous server)")
	graceTime := flag.Uint("grace", 0, "grace period after a restart in seconds, in which clients of the previous run reclaim their opens and locks (0: the lease time); ends early once all of them have")
	logLevel := flag.String("log-level", "info", "debug, info, warn or error")
	prof := flag.String("profile", "", "write a profile on exit: cpu, mem, block, mutex or trace")
	metricsAddr := flag.String("metrics", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9249)")
	debugOn := flag.Bool("debug", false, "with --metrics: also serve net/http/pprof at /debug/pprof/ on that listener")
	showVersion := flag.Bool("version", false, "print the version and VCS revision, and exit")
	idmapDomain := flag.String("idmap-domain", "", "NFSv4 domain of owner strings (user@domain) in owner, owner_group and ACLs (default: the host's DNS domain, else localdomain); names with another domain answer NFS4ERR_BADOWNER")
	idmapNames := flag.Bool("idmap-names", false, "send owner strings as user@domain names to AUTH_SYS clients too (default: numeric ids, as knfsd; RPCSEC_GSS clients always get names)")
	mountdPort := flag.Int("mountd-port", 0, "also serve MOUNT v3 (NFSv3 mounts) on this port; 0: on the NFS port only (clients mount with mountport=)")
	nsmName := flag.String("nsm-name", "", "this server's name in NLM lock callbacks and the SM_NOTIFY it sends NFSv3 clients after a restart: the name or address clients mount it by (default: the host name)")
	statdPort := flag.Int("statd-port", 0, "UDP port for NSM (clients' statd) and NLM datagrams, registered with rpcbind; 0: any free port, -1: none")
	nsmRPCBindPort := flag.Int("nsm-rpcbind-port", 0, "for tests: the port of the NFSv3 clients' rpcbind the server asks for their statd and lockd (SM_NOTIFY, NLM callbacks); 0: 111")
	rpcbindOn := flag.Bool("rpcbind", true, "register NFS 3 and 4 and MOUNT 3 with the local rpcbind at start and unregister at exit (none running: a log line)")
	keytab := flag.String("keytab", defaultKeytab, "Kerberos keytab for RPCSEC_GSS (sec=krb5, krb5i, krb5p): tickets for its nfs/HOST@REALM principals are accepted; the default one missing leaves Kerberos off; empty: off")
	var ps pnfsSettings
	flag.Var(&ps.servers, "data-server", "make the server a pNFS flexible-files metadata server whose files keep their data on this NFSv4.1+ data server, given as HOST:PORT[/PATH][,advertise=HOST:PORT] (repeatable): PATH is the directory there for the data files (default --ds-path; created if missing), advertise= the address clients are told; the data server's export must be no_root_squash for this server's address")
	flag.IntVar(&ps.mirrors, "mirrors", 1, "with --data-server: data servers holding each file (each a full copy)")
	flag.StringVar(&ps.cluster, "cluster", "", "with --data-server or --standby: the etcd cluster keeping shared state, as etcd://HOST:PORT[,HOST:PORT...] (default: an embedded single-node etcd under --state-dir)")
	flag.Var(&ps.stripeUnit, "stripe-unit", "with --data-server: stripe each new file's data over --stripe-width data servers in units of SIZE (e.g. 1m; ffl_stripe_unit, RFC 8435); only clients that take striped layouts (Linux 6.18 and later, the project's client) get them, others do I/O through this server (0: no striping)")
	flag.IntVar(&ps.stripeWidth, "stripe-width", 0, "with --stripe-unit: data servers each mirror stripes over (0: all of them, divided by --mirrors)")
	flag.StringVar(&ps.dsPath, "ds-path", pnfs.DefaultPath, "with --data-server: the directory on a data server for the data files when HOST:PORT names none")
	flag.Usage = usage
	flag.Parse()
	if *showVersion {
		printVersion()
		return nil
	}
	if err := validate(settings{cores: *cores, maxIO: *maxIO, slots: *slots, maxClients: *maxClients, maxClientsAddr: *maxClientsAddr, maxSessions: *maxSessions,
		maxOpens: *maxOpens, maxLks: *maxLocks, maxCached: *maxCached, maxConns: *maxConns, maxPartial: *maxPartial,
		maxQueue: *maxQueued, cacheMem: *cacheMem, prof: *prof, metricsAddr: *metricsAddr, debug: *debugOn}); err != nil {
		return err
	}
	stats := metrics.New()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return err
	}
	log := newLogger(level)
	slog.SetDefault(log)
	if p := profileMode(*prof); p != nil {
		defer profile.Start(p, profile.ProfilePath("."), profile.Quiet, profile.NoShutdownHook).Stop()
	}

	if *exportsFile != "" {
		if len(exports) > 0 {
			return fmt.Errorf("--exports and --export cannot be combined")
		}
		list, err := loadExports(*exportsFile, nil, logUnresolved(log, *exportsFile))
		if err != nil {
			return err
		}
		exports = list
	} else if len(exports) > 0 {
		warnShorthand(log, exports)
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
	fio.WritebackAfter = *writebackAfter
	fio.Metrics = stats
	ps.stateDir = *stateDir
	sb, err := standbyWait(&ps, addr, log, stats) // --standby: returns once elected (standby.go)
	if err != nil {
		return err
	}
	defer sb.close()
	role, err := setupDataServers(context.Background(), ps, log, stats)
	if err != nil {
		return err
	}
	defer role.close()
	sb.adjust(&role, *stateDir)
	gssAcc, err := loadGSS(*keytab, flagGiven("keytab"), log)
	if err != nil {
		return err
	}
	srv, err := nfs.NewServer(nfs.Config{GSS: gssAcc, DataServers: role.dataServers, ClientRecords: role.records, Exports: exports, MaxIO: *maxIO, Slots: *slots, Logger: log, IO: fio, StateDir: *stateDir, Delegations: *delegations,
		MaxClients: *maxClients, MaxClientsPerAddress: *maxClientsAddr, MaxSessionsPerClient: *maxSessions, MaxOpensPerClient: *maxOpens,
		MaxLockRangesPerClient: *maxLocks, MaxCachedReply: *maxCached, ReplyCacheMemory: *cacheMem,
		LeaseTime: uint32(min(*leaseTime, 3600)), GraceTime: uint32(min(*graceTime, 3600)), Metrics: stats,
		IdmapDomain: *idmapDomain, IdmapNames: *idmapNames,
		Takeover: sb.takeover(), NSMName: *nsmName, NSMRPCBindPort: *nsmRPCBindPort})
	if err != nil {
		return err
	}
	defer srv.Close()
	if *exportsFile != "" {
		defer reloadOnHUP(*exportsFile, srv, log)()
	}
	eng, err := engine.New(*engineName, srv, engine.Options{Logger: log, Cores: loopCount(*cores), Metrics: stats, DirectIO: *directIO, FileIO: fio, SendZC: *sendZC, PlainWait: !*heldWait,
		IdleTimeout: *idleTimeout, RecordTimeout: *recordTimeout, MaxConns: *maxConns, MaxPartialBytes: *maxPartial, MaxQueuedBytes: *maxQueued})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ln, err = tlsListen(ln, log, stats); err != nil {
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "engine", eng.Name(), "exports", exportNames(exports))
	mountPath := "/"
	if *exportsFile != "" && exports[0].Path != "/" {
		mountPath = exports[0].Path
	}
	printMount(ln.Addr().(*net.TCPAddr), mountPath)
	stopV3, err := startV3(log, srv, engine.Options{Logger: log, Metrics: stats, FileIO: fio}, ln.Addr().(*net.TCPAddr), *mountdPort, *statdPort, *rpcbindOn) // rpcbind.go
	defer stopV3()
	if err != nil {
		return err
	}
	if *metricsAddr != "" {
		if err := serveMetrics(log, *metricsAddr, stats, *debugOn); err != nil {
			return err
		}
	}
	if err := notifyReady(); err != nil {
		log.Warn("cannot tell systemd the server is ready", "err", err)
	}

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
	case <-sb.lost():
		srv.Depose()
		eng.Close()
		return errors.New("standby: lost the active metadata server's role (its election lease); stopped serving")
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

func printMount(a *net.TCPAddr, path string) {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "SERVER"
	}
	fmt.Fprintf(os.Stderr, "mount with: mount -t nfs4 -o vers=4.2,port=%d %s:%s /mnt\n", a.Port, host, path)
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

// defaultStateDir is /var/lib/nfsd-uring for root, else the user's state
// directory ($XDG_STATE_HOME or ~/.local/state, then nfsd-uring).
func defaultStateDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/nfsd-uring"
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "nfsd-uring")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "nfsd-uring")
	}
	return ".nfsd-uring-state"
}
