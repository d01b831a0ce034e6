package nfs

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// File handle layout (opaque to clients, at most NFS4_FHSIZE = 128 bytes):
//
//	[0]       version (fhVersion)
//	[1]       kind: fhPseudo or fhObject
//	[2]       reserved, zero
//	[3]       length k of the kernel handle (0 when the filesystem gives none)
//	[4:12]    export id: stable across restarts and reordered --export lists
//	[12:20]   filesystem id within the export: 0 for the export's own
//	          filesystem, else the crossed mount's (crossmnt only)
//	[20:28]   inode number
//	[28:32]   kernel handle type (name_to_handle_at)
//	[32:32+k] kernel handle bytes: inode and generation, so a reused inode
//	          number gives a different handle
//	[32+k:]   MAC: HMAC-SHA256 of the bytes before it under the server's
//	          handle key, truncated to fhMACLen
//
// The MAC is what makes handles safe to accept: a forged or bit-flipped
// handle is refused before any filesystem work (no walk, no
// open_by_handle_at). The key lives in the state directory, so handles
// survive restarts.
const (
	fhVersion   = 2
	fhPseudo    = 0
	fhObject    = 1
	fhHeader    = 32
	fhMaxKernel = 64
	fhMACLen    = 16
	fhMax       = fhHeader + fhMaxKernel + fhMACLen
)

// pseudoHandle is the synthetic root's handle: fixed, public, no MAC.
var pseudoHandle = []byte{fhVersion, fhPseudo, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// fhFields are a parsed object handle.
type fhFields struct {
	export uint64
	fs     uint64
	ino    uint64
	ktype  int32
	kernel []byte // aliases the handle
}

// parseHandle checks an object handle's shape (not its MAC).
func parseHandle(h []byte) (fhFields, bool) {
	if len(h) < fhHeader+fhMACLen || h[0] != fhVersion || h[1] != fhObject || h[2] != 0 {
		return fhFields{}, false
	}
	k := int(h[3])
	if k > fhMaxKernel || len(h) != fhHeader+k+fhMACLen {
		return fhFields{}, false
	}
	return fhFields{
		export: binary.BigEndian.Uint64(h[4:]),
		fs:     binary.BigEndian.Uint64(h[12:]),
		ino:    binary.BigEndian.Uint64(h[20:]),
		ktype:  int32(binary.BigEndian.Uint32(h[28:])),
		kernel: h[fhHeader : fhHeader+k],
	}, true
}

// handleKey signs and checks handles.
type handleKey struct {
	pool sync.Pool // of hash.Hash (HMAC-SHA256 under the key)
}

func newHandleKey(key []byte) *handleKey {
	k := append([]byte(nil), key...)
	return &handleKey{pool: sync.Pool{New: func() any { return hmac.New(sha256.New, k) }}}
}

// sum appends the MAC of b to out.
func (k *handleKey) sum(out, b []byte) []byte {
	m := k.pool.Get().(hash.Hash)
	m.Reset()
	m.Write(b)
	var buf [sha256.Size]byte
	out = append(out, m.Sum(buf[:0])[:fhMACLen]...)
	k.pool.Put(m)
	return out
}

// valid reports whether h (already shape-checked) carries a good MAC.
func (k *handleKey) valid(h []byte) bool {
	body := h[:len(h)-fhMACLen]
	var buf [fhMACLen]byte
	return hmac.Equal(k.sum(buf[:0], body), h[len(body):])
}

// makeHandle builds and signs the handle of file (fs, ino) of export e;
// kh is its kernel handle, or nil.
func (k *handleKey) makeHandle(e *export, fs, ino uint64, kh *unix.FileHandle) []byte {
	h := make([]byte, fhHeader, fhMax)
	h[0], h[1] = fhVersion, fhObject
	binary.BigEndian.PutUint64(h[4:], e.id)
	binary.BigEndian.PutUint64(h[12:], fs)
	binary.BigEndian.PutUint64(h[20:], ino)
	if kh != nil && len(kh.Bytes()) <= fhMaxKernel {
		h[3] = byte(len(kh.Bytes()))
		binary.BigEndian.PutUint32(h[28:], uint32(kh.Type()))
		h = append(h, kh.Bytes()...)
	}
	return k.sum(h, h)
}

// sameHandle reports whether h is exactly the handle n was issued.
func sameHandle(n *node, h []byte) bool { return bytes.Equal(n.handle, h) }

// loadHandleKey reads the handle key from dir/handle.key, creating it (32
// random bytes, mode 0600) on first start. An empty dir gives a key for
// this process only: handles then do not survive a restart.
func loadHandleKey(dir string) ([]byte, error) {
	if dir == "" {
		key := make([]byte, 32)
		_, err := rand.Read(key)
		return key, err
	}
	p := filepath.Join(dir, "handle.key")
	key, err := os.ReadFile(p)
	if err == nil {
		if len(key) < 32 {
			return nil, fmt.Errorf("nfs: %s: short key (%d bytes); remove it to make a new one (every handle changes)", p, len(key))
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("nfs: state directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nfs: state directory: %w", err)
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	// Write then rename, so a crash never leaves a half key behind.
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, key, 0o600); err != nil {
		return nil, fmt.Errorf("nfs: state directory: %w", err)
	}
	if f, err := os.Open(tmp); err == nil {
		f.Sync()
		f.Close()
	}
	if err := os.Rename(tmp, p); err != nil {
		return nil, fmt.Errorf("nfs: state directory: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return key, nil
}
