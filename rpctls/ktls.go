package rpctls

import (
	"bufio"
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net"
	"sync"

	"golang.org/x/sys/unix"
)

// Kernel TLS (linux/tls.h); golang.org/x/sys has SOL_TLS and TCP_ULP only.
const (
	tlsTX          = 1
	tlsRX          = 2
	tls13Version   = 0x0304
	cipherAES128   = 51
	cipherAES256   = 52
	cipherChaCha20 = 54
)

// keyLog collects a connection's TLS 1.3 application traffic secrets from
// tls.Config.KeyLogWriter (the only way crypto/tls gives them out).
type keyLog struct {
	mu             sync.Mutex
	client, server []byte // CLIENT_/SERVER_TRAFFIC_SECRET_0
}

func (k *keyLog) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(p))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) != 3 {
			continue
		}
		s, err := hex.DecodeString(string(f[2]))
		if err != nil {
			continue
		}
		switch string(f[0]) {
		case "CLIENT_TRAFFIC_SECRET_0":
			k.client = s
		case "SERVER_TRAFFIC_SECRET_0":
			k.server = s
		}
	}
	return len(p), nil
}

func (k *keyLog) secrets() (client, server []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.client, k.server
}

// suiteParams are a TLS 1.3 cipher suite's hash, key length and kTLS
// cipher type.
func suiteParams(suite uint16) (func() hash.Hash, int, uint16, error) {
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256:
		return sha256.New, 16, cipherAES128, nil
	case tls.TLS_AES_256_GCM_SHA384:
		return sha512.New384, 32, cipherAES256, nil
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return sha256.New, 32, cipherChaCha20, nil
	}
	return nil, 0, 0, fmt.Errorf("cipher suite %s has no kernel TLS", tls.CipherSuiteName(suite))
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context (RFC
// 8446 section 7.1).
func expandLabel(h func() hash.Hash, secret []byte, label string, n int) ([]byte, error) {
	info := make([]byte, 0, 4+6+len(label))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0)
	return hkdf.Expand(h, secret, string(info), n)
}

// cryptoInfo is the kernel's struct tls12_crypto_info_* for a TLS 1.3
// traffic secret, record sequence number 0: version, cipher type, then
// for AES-GCM iv[8] key salt[4] rec_seq[8] (the 12-byte TLS 1.3 IV split
// as salt = its first 4 bytes, iv = the other 8), for ChaCha20-Poly1305
// iv[12] key rec_seq[8].
func cryptoInfo(suite uint16, secret []byte) ([]byte, error) {
	h, keyLen, cipher, err := suiteParams(suite)
	if err != nil {
		return nil, err
	}
	key, err := expandLabel(h, secret, "key", keyLen)
	if err != nil {
		return nil, err
	}
	iv, err := expandLabel(h, secret, "iv", 12)
	if err != nil {
		return nil, err
	}
	b := binary.NativeEndian.AppendUint16(nil, tls13Version)
	b = binary.NativeEndian.AppendUint16(b, cipher)
	if cipher == cipherChaCha20 {
		b = append(b, iv...)
		b = append(b, key...)
	} else {
		b = append(b, iv[4:]...)
		b = append(b, key...)
		b = append(b, iv[:4]...)
	}
	return append(b, make([]byte, 8)...), nil
}

// errNoULP: the kernel has no "tls" upper layer protocol (module tls not
// loaded or not built); user-space TLS takes over.
var errNoULP = errors.New("kernel TLS unavailable")

// enableKTLS gives tc's record layer to the kernel: TCP_ULP "tls", then
// the transmit and receive keys of the application traffic secrets, both
// at sequence number 0 (the handshake read and wrote no application
// record: see recordReader, and session tickets are off). An error that
// wraps errNoULP left the socket as it was; any other leaves it unusable.
func enableKTLS(tc *net.TCPConn, suite uint16, tx, rx []byte) error {
	txInfo, err := cryptoInfo(suite, tx)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoULP, err)
	}
	rxInfo, err := cryptoInfo(suite, rx)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoULP, err)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		if e := unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_ULP, "tls"); e != nil {
			serr = fmt.Errorf("%w: setsockopt TCP_ULP tls: %v", errNoULP, e)
			return
		}
		if e := unix.SetsockoptString(int(fd), unix.SOL_TLS, tlsTX, string(txInfo)); e != nil {
			// The ULP without keys passes bytes through unchanged.
			serr = fmt.Errorf("%w: setsockopt TLS_TX: %v", errNoULP, e)
			return
		}
		if e := unix.SetsockoptString(int(fd), unix.SOL_TLS, tlsRX, string(rxInfo)); e != nil {
			serr = fmt.Errorf("setsockopt TLS_RX: %v", e)
		}
	}); err != nil {
		return err
	}
	return serr
}

// KernelTLS reports whether this kernel offers the "tls" upper layer
// protocol (loads it, where modules load on demand), by trying it on a
// connected loopback socket.
func KernelTLS() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		return err
	}
	defer s.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	rc.Control(func(fd uintptr) { serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_ULP, "tls") })
	return serr
}
