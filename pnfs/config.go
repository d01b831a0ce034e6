// Package pnfs is the data-server side of the pNFS flexible-files
// metadata-server role (RFC 8435): Pool implements nfs.DataServers over
// plain NFSv4.1+ servers (nfsd-uring, knfsd, NFS-Ganesha), reached with the
// project's own client as root. Loose coupling (RFC 8435 section 2.2):
// each data file is owned by a synthetic uid and gid that clients present
// with AUTH_SYS, and a client is fenced by giving the file new ones
// (section 14); the data servers know nothing of the metadata server.
//
// A data server's export must let the metadata server act as root
// (no_root_squash for the MDS's address): it creates the data files and
// changes their owners.
package pnfs

import (
	"crypto/sha256"
	"fmt"
	"net"
	"path"
	"strings"

	"github.com/nfsd-uring/nfsd-uring/nfs"
)

// DefaultPath is the directory on a data server that holds the data files
// when --data-server names none: a directory of its own, so the data files
// never mix with what else the export holds.
const DefaultPath = "/nfsd-uring-ds"

// ServerConfig is one data server as configured (--data-server
// HOST:PORT[/PATH][,advertise=HOST:PORT]).
type ServerConfig struct {
	// Addr is the host:port the metadata server connects to.
	Addr string
	// Path is the directory, in the data server's NFS namespace, that
	// holds the data files (flat: one file per mirror of each file).
	// It is created at startup when missing.
	Path string
	// Advertise is the host:port clients are told (ff_device_addr4);
	// empty: Addr.
	Advertise string
}

// ParseServer parses a --data-server value. A missing PATH is defPath.
func ParseServer(v, defPath string) (ServerConfig, error) {
	spec, opts, _ := strings.Cut(v, ",")
	var s ServerConfig
	s.Addr, s.Path = spec, defPath
	if i := strings.IndexByte(spec, '/'); i >= 0 {
		s.Addr, s.Path = spec[:i], spec[i:]
	}
	if err := checkHostPort(s.Addr); err != nil {
		return s, fmt.Errorf("data server %q: %w", v, err)
	}
	s.Path = path.Clean("/" + s.Path)
	for _, o := range strings.Split(opts, ",") {
		switch k, val, _ := strings.Cut(o, "="); k {
		case "":
		case "advertise":
			if err := checkHostPort(val); err != nil {
				return s, fmt.Errorf("data server %q: advertise: %w", v, err)
			}
			s.Advertise = val
		default:
			return s, fmt.Errorf("data server %q: unknown option %q (known: advertise=HOST:PORT)", v, o)
		}
	}
	return s, nil
}

func checkHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return err
	}
	if host == "" || port == "" {
		return fmt.Errorf("%q: want HOST:PORT", a)
	}
	return nil
}

// ID is the server's device id: the first 16 bytes of SHA-256 of
// "HOST:PORT/PATH", so it names the same server across restarts (layouts
// kept with files stay valid) and changes when the data moves.
func (s ServerConfig) ID() nfs.DeviceID {
	sum := sha256.Sum256([]byte(s.Addr + s.Path))
	var id nfs.DeviceID
	copy(id[:], sum[:])
	return id
}

// String is the HOST:PORT/PATH form.
func (s ServerConfig) String() string { return s.Addr + s.Path }

// clientAddr is the address clients are told.
func (s ServerConfig) clientAddr() string {
	if s.Advertise != "" {
		return s.Advertise
	}
	return s.Addr
}
