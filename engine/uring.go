package engine

import (
	"errors"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// errNoUringEngine is returned until the per-core io_uring engine lands.
var errNoUringEngine = errors.New("the io_uring engine is not built into this version")

// NewUring returns the per-core io_uring engine, or an error saying why it
// cannot run here.
func NewUring(h nfs.Handler, opts Options) (Engine, error) {
	return nil, errNoUringEngine
}
