package rpcbind

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakePortmapper answers PMAPPROC_SET and UNSET over TCP with true and
// records the calls.
type fakePortmapper struct {
	ln    net.Listener
	mu    sync.Mutex
	calls [][]uint32 // proc, prog, vers, prot, port
}

func newFake(t *testing.T) *fakePortmapper { return newFakeOn(t, "tcp", "127.0.0.1:0") }

func newFakeOn(t *testing.T, network, addr string) *fakePortmapper {
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePortmapper{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakePortmapper) serve(c net.Conn) {
	defer c.Close()
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:])&^(1<<31))
	if _, err := io.ReadFull(c, b); err != nil {
		return
	}
	u := func(i int) uint32 { return binary.BigEndian.Uint32(b[4*i:]) }
	f.mu.Lock()
	f.calls = append(f.calls, []uint32{u(5), u(10), u(11), u(12), u(13)})
	f.mu.Unlock()
	rep := []uint32{1<<31 | 28, u(0), 1, 0, 0, 0, 0, 1}
	out := make([]byte, 4*len(rep))
	for i, v := range rep {
		binary.BigEndian.PutUint32(out[4*i:], v)
	}
	c.Write(out)
}

func TestSetUnset(t *testing.T) {
	f := newFake(t)
	c := &Client{Addr: f.ln.Addr().String(), Socket: "-"}
	if err := c.Set(Mapping{Prog: 100003, Vers: 3, Prot: IPProtoTCP, Port: 2049}); err != nil {
		t.Fatal(err)
	}
	if err := c.Unset(Mapping{Prog: 100005, Vers: 3}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	want := [][]uint32{{procSet, 100003, 3, 6, 2049}, {procUnset, 100005, 3, 0, 0}}
	if len(f.calls) != len(want) {
		t.Fatalf("calls %v", f.calls)
	}
	for i := range want {
		for j := range want[i] {
			if f.calls[i][j] != want[i][j] {
				t.Fatalf("call %d = %v, want %v", i, f.calls[i], want[i])
			}
		}
	}
}

func TestNoPortmapper(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c := &Client{Addr: addr, Socket: filepath.Join(t.TempDir(), "none.sock"), Timeout: time.Second}
	start := time.Now()
	err = c.Set(Mapping{Prog: 100003, Vers: 3, Prot: IPProtoTCP, Port: 2049})
	if !errors.Is(err, ErrNoRpcbind) {
		t.Fatalf("err = %v, want ErrNoRpcbind", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("took too long")
	}
}

func TestDecodeReplyMalformed(t *testing.T) {
	for _, b := range [][]byte{nil, make([]byte, 23), make([]byte, 100)} {
		if _, err := decodeReply(1, b); err == nil {
			t.Fatalf("accepted %x", b)
		}
	}
}

// TestLocalSocket: the local socket is tried first (a default rpcbind
// accepts SET only there).
func TestLocalSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rpcbind.sock")
	f := newFakeOn(t, "unix", sock)
	c := &Client{Addr: "127.0.0.1:1", Socket: sock}
	if err := c.Set(Mapping{Prog: 100005, Vers: 3, Prot: IPProtoTCP, Port: 20048}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) != 1 || f.calls[0][0] != procSet || f.calls[0][4] != 20048 {
		t.Fatalf("calls %v", f.calls)
	}
}
