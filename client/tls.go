package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// authTLS is the AUTH_TLS credential flavor (RFC 9289 section 4.1).
const authTLS = 7

// StartTLS turns conn into RPC-with-TLS (RFC 9289): it sends the AUTH_TLS
// probe (an RPC NULL call to NFS version 4 with an AUTH_TLS credential),
// expects the STARTTLS verifier back, and runs a TLS 1.3 handshake with
// ALPN "sunrpc" on the same connection. cfg's NextProtos and MinVersion
// are set for it; ServerName should name the server.
func StartTLS(ctx context.Context, conn net.Conn, cfg *tls.Config) (*tls.Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	var x [4]byte
	rand.Read(x[:])
	xid := binary.BigEndian.Uint32(x[:])
	call := binary.BigEndian.AppendUint32(nil, 0x80000000|40)
	for _, w := range []uint32{xid, 0, 2, 100003, 4, 0, authTLS, 0, 0, 0} {
		call = binary.BigEndian.AppendUint32(call, w)
	}
	if _, err := conn.Write(call); err != nil {
		return nil, err
	}
	var mark [4]byte
	if _, err := io.ReadFull(conn, mark[:]); err != nil {
		return nil, fmt.Errorf("AUTH_TLS probe: %w", err)
	}
	n := binary.BigEndian.Uint32(mark[:]) & 0x7fffffff
	if n < 24 || n > 1024 {
		return nil, fmt.Errorf("AUTH_TLS probe: reply of %d bytes", n)
	}
	rep := make([]byte, n)
	if _, err := io.ReadFull(conn, rep); err != nil {
		return nil, fmt.Errorf("AUTH_TLS probe: %w", err)
	}
	w := func(i int) uint32 { return binary.BigEndian.Uint32(rep[4*i:]) }
	// xid, REPLY, MSG_ACCEPTED, verifier flavor, length, "STARTTLS", SUCCESS.
	if w(0) != xid || w(1) != 1 || w(2) != 0 || w(3) != 0 || w(4) != 8 || n < 32 || string(rep[20:28]) != "STARTTLS" {
		return nil, fmt.Errorf("AUTH_TLS probe: the server does not offer RPC-with-TLS")
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"sunrpc"}
	cfg.MinVersion = tls.VersionTLS13
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// dialTLS is StartTLS for Dial: ServerName defaults to addr's host, and
// conn is closed on failure.
func dialTLS(ctx context.Context, conn net.Conn, addr string, cfg *tls.Config) (net.Conn, error) {
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc, err := StartTLS(ctx, conn, cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}
