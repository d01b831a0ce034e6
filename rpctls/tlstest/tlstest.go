// Package tlstest makes throw-away certificates for tests of RPC-with-TLS:
// a CA, a server certificate for 127.0.0.1 and "localhost", a client
// certificate from the CA and one from an unrelated CA.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are PEM files in a test's directory.
type Files struct {
	CA                    string // the CA's certificate
	Cert, Key             string // the server's
	ClientCert, ClientKey string // a client's, from CA
	OtherCert, OtherKey   string // a client's, from another CA
	pool                  *x509.CertPool
}

// RootCAs is a pool holding CA, for clients.
func (f *Files) RootCAs() *x509.CertPool { return f.pool }

// Client returns a client configuration trusting CA, with the client
// certificate when withCert.
func (f *Files) Client(t testing.TB, withCert bool) *tls.Config {
	cfg := &tls.Config{RootCAs: f.pool, ServerName: "127.0.0.1"}
	if withCert {
		c, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg
}

type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial int64 = 1

func make1(t testing.TB, tmpl *x509.Certificate, by *issuer) (*issuer, []byte, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	parent, pkey := tmpl, key
	if by != nil {
		parent, pkey = by.cert, by.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, pkey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &issuer{cert, key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func write(t testing.TB, dir, name string, b []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// New writes a fresh set of certificates into dir.
func New(t testing.TB, dir string) *Files {
	caT := &x509.Certificate{Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	ca, caPEM, _ := make1(t, caT, nil)
	otherT := *caT
	otherT.Subject.CommonName = "other CA"
	other, _, _ := make1(t, &otherT, nil)
	_, sc, sk := make1(t, &x509.Certificate{Subject: pkix.Name{CommonName: "server"}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}, ca)
	clientT := func() *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: "client.test"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			KeyUsage: x509.KeyUsageDigitalSignature}
	}
	_, cc, ck := make1(t, clientT(), ca)
	_, oc, ok := make1(t, clientT(), other)
	f := &Files{
		CA: write(t, dir, "ca.pem", caPEM), Cert: write(t, dir, "server.pem", sc), Key: write(t, dir, "server.key", sk),
		ClientCert: write(t, dir, "client.pem", cc), ClientKey: write(t, dir, "client.key", ck),
		OtherCert: write(t, dir, "other.pem", oc), OtherKey: write(t, dir, "other.key", ok),
		pool: x509.NewCertPool(),
	}
	f.pool.AddCert(ca.cert)
	return f
}
