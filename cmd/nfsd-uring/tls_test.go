package main

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/rpctls"
	"github.com/nfsd-uring/nfsd-uring/rpctls/tlstest"
)

func TestTLSFlags(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	defer func() { *tlsCert, *tlsKey, *tlsClientCA = "", "", "" }()
	for _, c := range []struct {
		cert, key, ca string
		err           string // "" : accepted
	}{
		{"", "", "", ""},
		{f.Cert, f.Key, "", ""},
		{f.Cert, f.Key, f.CA, ""},
		{f.Cert, "", "", "go together"},
		{"", "", f.CA, "needs --tls-cert"},
		{f.Cert, f.CA, "", "tls:"},
		{f.Cert, f.Key, f.Key, "no PEM certificate"},
	} {
		*tlsCert, *tlsKey, *tlsClientCA = c.cert, c.key, c.ca
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got, err := tlsListen(ln, log, metrics.New())
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%+v: %v", c, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%+v: error %v, want %q", c, err, c.err)
		case err == nil:
			_, wrapped := got.(*rpctls.Listener)
			if wrapped != (c.cert != "") {
				t.Errorf("%+v: listener %T", c, got)
			}
			got.Close()
		}
		ln.Close()
	}
}
