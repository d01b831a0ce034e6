package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// TestMountdPort: --mountd-port serves MOUNT on a port of its own, and
// registering with no rpcbind running is one log line, not a failure.
func TestMountdPort(t *testing.T) {
	srv, err := nfs.NewServer(nfs.Config{Exports: []nfs.Export{{Path: t.TempDir()}}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	saved, savedSock := rpcbindAddr, rpcbindSocket
	rpcbindAddr, rpcbindSocket = closed.Addr().String(), "-"
	closed.Close()
	defer func() { rpcbindAddr, rpcbindSocket = saved, savedSock }()
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	stop, err := startV3(log, srv, engine.Options{Logger: log}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2049}, port, -1, true)
	defer stop()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "no rpcbind running") {
		t.Fatalf("log: %s", logs.String())
	}
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// MOUNT v3 MNT "/", AUTH_NONE.
	w := []uint32{1<<31 | 48, 9, 0, 2, 100005, 3, 1, 0, 0, 0, 0, 1, 0x2f000000}
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.BigEndian.PutUint32(b[4*i:], v)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(c, hdr); err != nil {
		t.Fatal(err)
	}
	rep := make([]byte, binary.BigEndian.Uint32(hdr)&^(1<<31))
	if _, err := io.ReadFull(c, rep); err != nil {
		t.Fatal(err)
	}
	if len(rep) < 28 || binary.BigEndian.Uint32(rep[20:]) != 0 || binary.BigEndian.Uint32(rep[24:]) != 0 {
		t.Fatalf("MNT reply %x", rep)
	}
}
