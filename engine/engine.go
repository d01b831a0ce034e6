// Package engine moves bytes for nfsd-uring: it owns sockets, threads and
// buffers, reassembles RPC records, hands each to the protocol layer
// (nfs.Handler), performs the file reads the reply asks for, and sends the
// reply as an iovec list.
package engine

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// Engine serves the NFS protocol on listeners.
type Engine interface {
	// Serve accepts connections on ln until Close; it returns nil after
	// Close and the accept error otherwise.
	Serve(ln net.Listener) error
	// Close stops accepting, closes every connection and waits for their
	// requests to finish.
	Close() error
	// Name says which engine this is, for logs and benchmarks.
	Name() string
}

// Options tune an engine.
type Options struct {
	Logger *slog.Logger
	// MaxInFlight bounds the requests a connection may have in progress:
	// a client that sends faster than it reads replies stalls its own
	// connection, not the server (default 128).
	MaxInFlight int
	// Cores is the number of event loops for engines that have them.
	Cores int
	// DirectIO is the O_DIRECT policy for file reads (both engines):
	// "auto" (default: O_DIRECT for ranges not in the page cache, buffered
	// for cached ones), "on" or "off". See plan.go.
	DirectIO string
	// MaxQueuedBytes caps, per connection, the reply bytes read and
	// waiting to be sent, and separately the bytes of received requests not
	// yet handled: past either the engine stops receiving from the
	// connection (and the io_uring engine stops reading files for it), so
	// TCP pushes back on the client (default 8 MiB; one request or reply
	// bigger than that still goes through alone).
	MaxQueuedBytes int
	// IdleTimeout closes a connection that has sent nothing and taken no
	// reply bytes for this long while none of its requests is in the works
	// (or while a reply it does not read waits to be sent). Default 6
	// minutes, as knfsd; negative: never.
	IdleTimeout time.Duration
	// RecordTimeout closes a connection whose request record is not
	// complete this long after it began (default 30 s; negative: never).
	// Time the engine itself stopped reading (flow control) does not count.
	RecordTimeout time.Duration
	// MaxConns caps the open connections; further connections are closed
	// as they are accepted, with a rate-limited warning (default 4096).
	MaxConns int
	// MaxPartialBytes bounds the memory of request records still being
	// received, all connections together (default 256 MiB). Past it the
	// connection whose partial record is the oldest is closed.
	MaxPartialBytes int
	// FileIO, when set, is the server's write path (nfs.Config.IO): the
	// io_uring engine routes its writes, syncs and allocations through
	// io_uring while it runs.
	FileIO *FileIO
	// SendZC makes the io_uring engine send large replies (64 KiB and up)
	// with SENDMSG_ZC. Off by default: see BENCHMARKS.md.
	SendZC bool
	// Metrics receives the engine's counters (nil: a private set).
	Metrics *metrics.Set
	// PlainWait makes the io_uring engine's loops always wait in
	// io_uring_enter as an ordinary system call, giving their P back to
	// the Go scheduler (--held-wait=false); see loop.wait.
	PlainWait bool
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 128
	}
	if o.Cores <= 0 {
		o.Cores = 1
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	o.limitDefaults()
}

// Names lists the engines New accepts besides "auto".
var Names = []string{"uring", "portable"}

// New returns the engine called name: "uring", "portable", or "auto" (the
// io_uring engine where the kernel allows it, else the portable engine with
// one clear log line saying why).
func New(name string, h nfs.Handler, opts Options) (Engine, error) {
	opts.defaults()
	if _, err := parseDIO(opts.DirectIO); err != nil {
		return nil, err
	}
	switch name {
	case "portable":
		return NewPortable(h, opts), nil
	case "uring", "auto":
		eng, err := NewUring(h, opts)
		if err == nil {
			return eng, nil
		}
		if name == "uring" {
			return nil, fmt.Errorf("io_uring engine unavailable: %w", err)
		}
		opts.Logger.Warn("io_uring engine unavailable, using the portable engine (pread/writev, goroutine per connection)", "reason", err.Error())
		return NewPortable(h, opts), nil
	}
	return nil, fmt.Errorf("unknown engine %q: want auto, uring or portable", name)
}
