package nfs

import (
	"context"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// The metadata-server role (pNFS flexible files, RFC 8435). With
// Config.DataServers set, a regular file created through NFS keeps its
// name, attributes and state on the export as any other, and its data in
// one file per mirror on the data servers; the server hands clients
// layouts naming those files (LAYOUTGET, GETDEVICEINFO) and clients read
// and write them directly. The data servers are plain NFSv4.1+ servers
// (loose coupling, RFC 8435 section 2.2): the MDS reaches them as a client
// (package pnfs implements DataServers with the project's own client), and
// fences a client by changing the data file's synthetic owner (section 14).
//
// What nfs decides: which files have layouts, which layouts a client
// holds, when to recall and fence. What DataServers does: the NFS calls to
// the data servers. Files that existed before the role was on, and files
// whose layout cannot be made, keep their data on the export and are
// served as before (LAYOUTGET answers NFS4ERR_LAYOUTUNAVAILABLE).

// DeviceID names one data server in layouts (deviceid4). It is stable
// across restarts: it is derived from the data server's configured
// address, so a layout stored with a file names the same server after a
// restart.
type DeviceID [nfs4.DeviceIDSize]byte

// DataServer is one data server as clients are told about it
// (ff_device_addr4, RFC 8435 section 5.1).
type DataServer struct {
	ID DeviceID
	// Addr is the host:port clients connect to (--data-server's
	// advertise=, else the address the MDS uses).
	Addr string
	// RSize and WSize are the largest READ and WRITE clients should send
	// it (ffdv_rsize, ffdv_wsize).
	RSize, WSize uint32
}

// DSFile is one mirror's data file on a data server.
type DSFile struct {
	Device DeviceID
	FH     []byte // the file's handle on the data server
}

// FileLayout is where one regular file's data lives, as the MDS keeps it
// (in an extended attribute of the file on the export, layoutXattr): one
// DSFile per mirror, and the synthetic owner clients present with
// AUTH_SYS to the data servers (RFC 8435 section 2.2). Fencing changes
// UID and GID.
type FileLayout struct {
	// Name is the data files' name on every mirror (Create's name):
	// REMOVE needs it, a file handle alone cannot remove a file.
	Name     string
	Mirrors  []DSFile
	UID, GID uint32
	// StripeUnit is ffl_stripe_unit; 0: no striping (one data file per
	// mirror holds the whole file).
	StripeUnit uint64
	// Width is how many data servers each mirror stripes over
	// (pnfs_stripe.go); 0 or 1: none. Mirrors then holds Width data
	// files per mirror, mirror after mirror.
	Width int
}

// DataServers is what the metadata-server role needs from its data
// servers. Implementations are safe for concurrent use; every method that
// talks to a data server takes a context and may block (it runs on a
// worker, never on an event loop).
type DataServers interface {
	// Device returns the data server id names, whether in service or not.
	Device(id DeviceID) (DataServer, bool)
	// Devices returns the data servers in service (GETDEVICELIST).
	Devices() []DataServer
	// Create makes the data files of a new regular file, owned by fresh
	// synthetic ids with mode 0640 (RFC 8435 section 2.2), on data
	// servers in service chosen by the placement policy. name is unique
	// and stable for the file on this MDS (it names the data files).
	Create(ctx context.Context, name string) (FileLayout, error)
	// Fence gives l's data files new synthetic owner ids, so a client
	// holding a layout with the old ones can no longer read or write
	// them (RFC 8435 section 14), and returns the layout with the new
	// ids.
	Fence(ctx context.Context, l FileLayout) (FileLayout, error)
	// SetSize truncates or extends every mirror's data file to size.
	SetSize(ctx context.Context, l FileLayout, size uint64) error
	// Remove removes l's data files.
	Remove(ctx context.Context, l FileLayout) error
	// ReadAt reads from the first mirror in service (the MDS serving a
	// client that does not speak pNFS). Of a striped layout it reads
	// stripe unit by stripe unit, what a stripe's data file lacks as
	// zeros (pnfs_stripe.go); SetSize, WriteAt and SpaceOps map onto the
	// stripes likewise, Fence and Remove reach every data file.
	ReadAt(ctx context.Context, l FileLayout, p []byte, off uint64) (n int, eof bool, err error)
	// WriteAt writes p at off to every mirror, stably (FILE_SYNC).
	WriteAt(ctx context.Context, l FileLayout, p []byte, off uint64) (n int, err error)
	// Failed records an error a client reported for a data server
	// (LAYOUTERROR, or LAYOUTRETURN's error report) or the MDS saw: the
	// server is left out of new placements and layouts until it answers
	// again.
	Failed(id DeviceID, status nfs4.Status)
}

// StaleMirrors is what DataServers may also offer: the mirrors of l that
// missed writes while their data server was out of service. LAYOUTGET
// leaves them out (and a RW layout is then unavailable) until they are
// copied over again (Resilverer).
type StaleMirrors interface {
	StaleMirrors(l FileLayout) []DeviceID
}

// DeviceWatcher is what DataServers may also offer: it calls f (on a
// goroutine of its own) whenever a data server leaves service, and the
// server then recalls the layouts naming it (CB_LAYOUTRECALL). A client's
// error report (LAYOUTERROR, LAYOUTRETURN) only asks DataServers.Failed
// to check the server: one client cut off from a data server, or one
// that lies, must not make every client return its layouts.
type DeviceWatcher interface {
	OnOutOfService(f func(DeviceID))
}

// SpaceOps is what DataServers may also offer: ALLOCATE and DEALLOCATE of
// a file with a layout, done on every mirror's data file (RFC 7862
// sections 15.1 and 15.4). Without it they answer NFS4ERR_NOTSUPP.
type SpaceOps interface {
	Allocate(ctx context.Context, l FileLayout, off, length uint64) error
	Deallocate(ctx context.Context, l FileLayout, off, length uint64) error
}

// Resilverer is what DataServers may also offer: it copies stale mirrors
// over on its own once their servers are back in service, calling f
// before each file's copy. f returns once no client holds a RW layout of
// the file whose data files are named name (FileLayout.Name): recalled
// and returned, or fenced. None is granted again before the copy ends,
// since the stale mirror leaves RW layouts unavailable. An error from f
// (ctx ended, the grace period) means: try later.
type Resilverer interface {
	BeforeResilver(f func(ctx context.Context, name string) error)
}

// OrphanStore is what DataServers may also offer: a record that survives
// restarts of the layouts of removed files whose data files wait for the
// last state on them (Server.orphan), so that a restarted metadata server
// removes the data files a crash would otherwise leak.
type OrphanStore interface {
	PutOrphan(ctx context.Context, l FileLayout) error
	DropOrphan(ctx context.Context, name string) error
	Orphans(ctx context.Context) ([]FileLayout, error)
}
