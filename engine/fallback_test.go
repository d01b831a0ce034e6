package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/ring"
)

// Docker's default seccomp profile makes io_uring_setup fail with EPERM:
// --engine auto must then serve on the portable engine and say so in one
// log line, and --engine uring must refuse to start.
func TestAutoFallsBackWhenSetupRefused(t *testing.T) {
	restore := ring.FailSetup(unix.EPERM)
	defer restore()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	f := &fixture{dir: t.TempDir(), data: map[string][]byte{}}
	if _, err := New("uring", nil, Options{Logger: log}); err == nil || !strings.Contains(err.Error(), "not permitted") {
		t.Fatalf("--engine uring with setup refused: %v", err)
	}
	if logs.Len() != 0 {
		t.Fatalf("--engine uring logged: %s", logs.String())
	}
	f.serve(t, variant{name: "auto", opts: Options{Logger: log}})
	if f.eng.Name() != "portable" {
		t.Fatalf("auto chose %s", f.eng.Name())
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "using the portable engine") || !strings.Contains(lines[0], "EPERM") && !strings.Contains(lines[0], "not permitted") {
		t.Fatalf("fallback log: %q", logs.String())
	}
	t.Log(lines[0])
	c := f.dial(t, client.Options{})
	if _, err := c.RootFH(ctxT(t)); err != nil {
		t.Fatalf("served by the fallback: %v", err)
	}
}
