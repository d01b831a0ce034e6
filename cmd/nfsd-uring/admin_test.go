package main

import (
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func okSettings() settings { return settings{cores: 1, maxIO: 1 << 20, slots: 128} }

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*settings)
		want string // "" for accepted
	}{
		{"defaults", func(*settings) {}, ""},
		{"cores 0 is one per CPU", func(s *settings) { s.cores = 0 }, ""},
		{"negative cores", func(s *settings) { s.cores = -2 }, "--cores -2"},
		{"max-io too small", func(s *settings) { s.maxIO = 100 }, "--max-io 100"},
		{"max-io too big", func(s *settings) { s.maxIO = 1 << 30 }, "--max-io"},
		{"no slots", func(s *settings) { s.slots = 0 }, "--slots 0"},
		{"negative cap", func(s *settings) { s.maxOpens = -1 }, "--max-opens -1"},
		{"negative cache memory", func(s *settings) { s.cacheMem = -5 }, "--reply-cache-mem -5"},
		{"unknown profile", func(s *settings) { s.prof = "heap" }, `--profile "heap"`},
		{"debug without metrics", func(s *settings) { s.debug = true }, "--debug"},
		{"debug with metrics", func(s *settings) { s.debug, s.metricsAddr = true, "127.0.0.1:0" }, ""},
	} {
		s := okSettings()
		c.mod(&s)
		err := validate(s)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error naming %q", c.name, err, c.want)
		}
	}
	if loopCount(0) != runtime.NumCPU() || loopCount(3) != 3 {
		t.Errorf("loopCount: 0 -> %d, 3 -> %d", loopCount(0), loopCount(3))
	}
}

// sdNotify sends READY=1 as one datagram to $NOTIFY_SOCKET, as systemd's
// Type=notify expects, and does nothing without the variable.
func TestSdNotify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("NOTIFY_SOCKET", path)
	if err := notifyReady(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	n, err := ln.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "READY=1") {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
	if err := sdNotify("", "READY=1"); err != nil {
		t.Errorf("no socket: %v", err)
	}
}
