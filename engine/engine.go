// Package engine moves bytes for nfsd-uring: it owns sockets, threads and
// buffers, reassembles RPC records, hands each to the protocol layer
// (nfs.Handler), performs the file reads the reply asks for, and sends the
// reply as an iovec list.
package engine

import (
	"fmt"
	"log/slog"
	"net"

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
	// DirectIO is the io_uring engine's O_DIRECT policy for file reads:
	// "auto" (default: only where measured to pay), "on" or "off".
	DirectIO string
	// MaxQueuedBytes caps the reply bytes a connection may have read and
	// waiting to be sent before the io_uring engine stops reading files and
	// receiving requests for it (default 8 MiB).
	MaxQueuedBytes int
	// FileIO, when set, is the server's write path (nfs.Config.IO): the
	// io_uring engine routes its writes, syncs and allocations through
	// io_uring while it runs.
	FileIO *FileIO
	// SendZC makes the io_uring engine send large replies (64 KiB and up)
	// with SENDMSG_ZC. Off by default: see BENCHMARKS.md.
	SendZC bool
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
}

// Names lists the engines New accepts besides "auto".
var Names = []string{"uring", "portable"}

// New returns the engine called name: "uring", "portable", or "auto" (the
// io_uring engine where the kernel allows it, else the portable engine with
// one clear log line saying why).
func New(name string, h nfs.Handler, opts Options) (Engine, error) {
	opts.defaults()
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
