package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"os"
)

// tlsOpts are the RPC-with-TLS flags.
type tlsOpts struct {
	on, compare   bool
	ca, cert, key string
	serverName    string
}

func tlsFlags(fs *flag.FlagSet) *tlsOpts {
	t := &tlsOpts{}
	fs.BoolVar(&t.on, "tls", false, "RPC-with-TLS (RFC 9289): the AUTH_TLS probe, then TLS 1.3 on each connection")
	fs.BoolVar(&t.compare, "compare-tls", false, "run the workload on --server twice, plaintext and RPC-with-TLS, alternately (as --compare), ratios printed")
	fs.StringVar(&t.ca, "tls-ca", "", "CA certificates (PEM) that sign the server's certificate (default: the system's)")
	fs.StringVar(&t.cert, "tls-cert", "", "client certificate (PEM) for mutual TLS, with --tls-key")
	fs.StringVar(&t.key, "tls-key", "", "the private key of --tls-cert (PEM)")
	fs.StringVar(&t.serverName, "tls-server-name", "", "name the server's certificate must have (default: --server's host)")
	return t
}

// apply sets the targets' TLS configuration.
func (t *tlsOpts) apply(o *options) error {
	if !t.on && !t.compare {
		if t.ca != "" || t.cert != "" || t.key != "" || t.serverName != "" {
			return fmt.Errorf("--tls-ca, --tls-cert, --tls-key and --tls-server-name need --tls or --compare-tls")
		}
		return nil
	}
	if t.compare && o.other.Addr != "" {
		return fmt.Errorf("--compare-tls and --compare cannot be combined")
	}
	cfg := &tls.Config{ServerName: t.serverName}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(o.main.Addr)
	}
	if t.ca != "" {
		pem, err := os.ReadFile(t.ca)
		if err != nil {
			return err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--tls-ca %s: no PEM certificate", t.ca)
		}
	}
	if (t.cert == "") != (t.key == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if t.cert != "" {
		c, err := tls.LoadX509KeyPair(t.cert, t.key)
		if err != nil {
			return err
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	if !t.compare {
		o.main.TLS = cfg
		return nil
	}
	// The same server; --compare-export and --compare-local-dir may name
	// another export for the TLS side (workloads that remove their files,
	// such as ior-easy, need one each).
	m := &o.main
	o.other.Addr, o.other.ServerPID = m.Addr, m.ServerPID
	if o.other.Export == "" {
		o.other.Export, o.other.LocalDir = m.Export, m.LocalDir
	}
	o.other.TLS = cfg
	if o.main.Name == "" {
		o.main.Name = "plaintext"
	}
	o.other.Name = "tls"
	return nil
}
