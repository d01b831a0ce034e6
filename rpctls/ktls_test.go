package rpctls

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/rpctls/tlstest"
)

// record layer of TLS 1.3 as the kernel does it from cryptoInfo's bytes:
// the keys a handshake leaves, at sequence number 0, must decrypt what the
// peer's crypto/tls sends first after the handshake and encrypt what it
// reads first. This checks the key derivation and that the handshake read
// no byte past the client's Finished (recordReader), without kTLS.
// (crypto/tls chooses the TLS 1.3 suite itself: AES-128-GCM where the CPU
// has AES instructions; the others' layouts are checked by
// TestCryptoInfoLayout.)
func TestKTLSKeys(t *testing.T) {
	f := tlstest.New(t, t.TempDir())
	certs, err := LoadCerts(f.Cert, f.Key, "")
	if err != nil {
		t.Fatal(err)
	}
	srvCfg := certs.config()
	cliCfg := f.Client(t, false)
	cliCfg.NextProtos = []string{ALPN}
	a, b := tcpPair(t)
	keys := &keyLog{}
	srvCfg.KeyLogWriter = keys
	srv := tls.Server(&recordReader{Conn: a}, srvCfg)
	cli := tls.Client(b, cliCfg)
	errc := make(chan error, 1)
	go func() {
		if err := cli.Handshake(); err != nil {
			errc <- err
			return
		}
		_, err := cli.Write([]byte("first rpc"))
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.HandshakeContext(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	suite := srv.ConnectionState().CipherSuite
	t.Logf("suite %s", tls.CipherSuiteName(suite))
	cs, ss := keys.secrets()
	rx, err := cryptoInfo(suite, cs)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := cryptoInfo(suite, ss)
	if err != nil {
		t.Fatal(err)
	}
	// The client's first record, from the socket.
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(a, hdr); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(a, body); err != nil {
		t.Fatal(err)
	}
	aead, nonce := aeadOf(t, rx)
	plain, err := aead.Open(nil, nonce, body, hdr)
	if err != nil {
		t.Fatalf("decrypting the client's first record at sequence 0: %v", err)
	}
	if string(plain) != "first rpc\x17" {
		t.Fatalf("decrypted %q", plain)
	}
	// The server's first record, made here, read by crypto/tls.
	aead, nonce = aeadOf(t, tx)
	msg := append([]byte("first reply"), 0x17)
	out := []byte{0x17, 3, 3, 0, byte(len(msg) + aead.Overhead())}
	out = aead.Seal(out, nonce, msg, out[:5])
	if _, err := a.Write(out); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 11)
	cli.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(cli, got); err != nil || string(got) != "first reply" {
		t.Fatalf("client read %q, %v", got, err)
	}
}

// aeadOf makes the cipher a kernel crypto_info describes, and the nonce of
// sequence number 0 (the IV itself).
func aeadOf(t *testing.T, info []byte) (cipher.AEAD, []byte) {
	typ := binary.NativeEndian.Uint16(info[2:])
	var key, iv []byte
	switch typ {
	case cipherAES128:
		iv = append(append([]byte{}, info[28:32]...), info[4:12]...)
		key = info[12:28]
	case cipherAES256:
		iv = append(append([]byte{}, info[44:48]...), info[4:12]...)
		key = info[12:44]
	default:
		t.Skipf("cipher type %d: no AEAD for it in the standard library", typ)
	}
	blk, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cipher.NewGCM(blk)
	if err != nil {
		t.Fatal(err)
	}
	return a, iv
}

func tcpPair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

func TestCryptoInfoLayout(t *testing.T) {
	secret := make([]byte, 48)
	for suite, want := range map[uint16][2]int{
		tls.TLS_AES_128_GCM_SHA256:       {40, cipherAES128},
		tls.TLS_AES_256_GCM_SHA384:       {56, cipherAES256},
		tls.TLS_CHACHA20_POLY1305_SHA256: {56, cipherChaCha20},
	} {
		info, err := cryptoInfo(suite, secret)
		if err != nil {
			t.Fatal(err)
		}
		if len(info) != want[0] || binary.NativeEndian.Uint16(info) != tls13Version || int(binary.NativeEndian.Uint16(info[2:])) != want[1] {
			t.Errorf("%s: %x", tls.CipherSuiteName(suite), info)
		}
		for _, b := range info[len(info)-8:] {
			if b != 0 {
				t.Errorf("%s: record sequence not 0", tls.CipherSuiteName(suite))
			}
		}
	}
	if _, err := cryptoInfo(tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, secret); err == nil {
		t.Error("TLS 1.2 suite accepted")
	}
}
