package rpctls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync/atomic"
)

// Certs are the server's certificate and key, and the certificate
// authorities whose client certificates make a connection mutual TLS;
// Reload reads the files again (SIGHUP), and connections made after it use
// the new ones.
type Certs struct {
	certFile, keyFile, caFile string
	cur                       atomic.Pointer[tls.Config]
}

// LoadCerts reads the server's certificate chain and key (PEM) and, when
// caFile is not empty, the client CAs (PEM).
func LoadCerts(certFile, keyFile, caFile string) (*Certs, error) {
	c := &Certs{certFile: certFile, keyFile: keyFile, caFile: caFile}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the files again; on an error the certificates in use stay.
func (c *Certs) Reload() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS13,
		NextProtos:   []string{ALPN},
		Certificates: []tls.Certificate{cert},
		// A ticket would be sent under the application traffic keys
		// before kTLS takes over, moving the sequence numbers; RPC
		// clients reconnect rarely enough to do full handshakes.
		SessionTicketsDisabled: true,
	}
	if c.caFile != "" {
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("tls: %s: no PEM certificate", c.caFile)
		}
		cfg.ClientCAs = pool
		// A client without a certificate still gets TLS (for exports
		// with xprtsec=tls); a certificate it shows must verify.
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	c.cur.Store(cfg)
	return nil
}

// config returns a copy of the current configuration for one handshake.
func (c *Certs) config() *tls.Config { return c.cur.Load().Clone() }

// ALPN is the application protocol RPC-with-TLS negotiates (RFC 9289
// section 5.2).
const ALPN = "sunrpc"
