package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/nfsd-uring/nfsd-uring/metrics"

	"github.com/nfsd-uring/nfsd-uring/rpctls"
)

// RPC-with-TLS (RFC 9289) flags.
var (
	tlsCert     = flag.String("tls-cert", "", "offer RPC-with-TLS (RFC 9289) with this certificate chain (PEM; with --tls-key): clients that send the AUTH_TLS probe get a TLS 1.3 handshake (ALPN sunrpc) on the connection, others stay plaintext; exports choose with xprtsec=. Reloaded on SIGHUP")
	tlsKey      = flag.String("tls-key", "", "the private key of --tls-cert (PEM)")
	tlsClientCA = flag.String("tls-client-ca", "", "with --tls-cert: CA certificates (PEM) whose client certificates make a connection mutual TLS (xprtsec=mtls; the certificate authenticates the client host, callers stay the AUTH_SYS ids). Reloaded on SIGHUP")
	tlsNoKTLS   = flag.Bool("tls-no-ktls", false, "with --tls-cert: keep TLS records in user space even where the kernel has TLS (kTLS)")
)

// tlsListen wraps ln for RPC-with-TLS when --tls-cert is given, reloads
// the certificates on SIGHUP and counts the connections in stats (nil:
// not counted).
func tlsListen(ln net.Listener, log *slog.Logger, stats *metrics.Set) (net.Listener, error) {
	if *tlsCert == "" && *tlsKey == "" {
		if *tlsClientCA != "" {
			return nil, fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return ln, nil
	}
	if *tlsCert == "" || *tlsKey == "" {
		return nil, fmt.Errorf("--tls-cert and --tls-key go together")
	}
	certs, err := rpctls.LoadCerts(*tlsCert, *tlsKey, *tlsClientCA)
	if err != nil {
		return nil, err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			if err := certs.Reload(); err != nil {
				log.Error("TLS certificates not reloaded; the previous ones stay in force", "err", err)
				continue
			}
			log.Info("TLS certificates reloaded", "cert", *tlsCert)
		}
	}()
	kernel := "off (--tls-no-ktls)"
	if !*tlsNoKTLS {
		kernel = "on"
		if err := rpctls.KernelTLS(); err != nil {
			kernel = "unavailable: user space"
		}
	}
	log.Info("RPC-with-TLS offered", "cert", *tlsCert, "mtls", *tlsClientCA != "", "ktls", kernel)
	l := rpctls.Listen(ln, rpctls.Config{Certs: certs, NoKTLS: *tlsNoKTLS, Logger: log})
	if stats != nil {
		n := l.Counts()
		for _, c := range []struct {
			name, help string
			v          *atomic.Uint64
		}{
			{"rpctls_plaintext_connections_total", "connections accepted without RPC-with-TLS (no AUTH_TLS probe)", &n.Plain},
			{"rpctls_ktls_connections_total", "RPC-with-TLS connections whose records the kernel handles (kTLS)", &n.Kernel},
			{"rpctls_user_tls_connections_total", "RPC-with-TLS connections whose records are handled in user space (no kTLS)", &n.User},
			{"rpctls_refused_connections_total", "connections closed before use: failed or timed-out handshakes, too many handshakes at once", &n.Refused},
		} {
			v := c.v
			stats.AddGauge(metrics.Gauge{Name: c.name, Help: c.help, Value: func() float64 { return float64(v.Load()) }})
		}
	}
	return l, nil
}
