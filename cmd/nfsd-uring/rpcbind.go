package main

import (
	"errors"
	"log/slog"
	"net"
	"strconv"

	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/rpcbind"
)

// rpcProgram is an RPC program the server answers, for rpcbind: on the
// NFS port, or (mountd) on --mountd-port when that is set.
type rpcProgram struct {
	prog, vers uint32
	mountd     bool
}

// rpcPrograms are registered with rpcbind at start and removed at exit.
// Programs served elsewhere in the tree add themselves here.
var rpcPrograms = []rpcProgram{
	{prog: 100003, vers: 3},
	{prog: 100003, vers: 4},
	{prog: 100005, vers: 3, mountd: true},
}

// rpcbindAddr and rpcbindSocket are the portmapper registered with (tests
// point them elsewhere).
var rpcbindAddr, rpcbindSocket = rpcbind.DefaultAddr, rpcbind.DefaultSocket

// startV3 serves MOUNT on its own port when mountdPort is not 0 (it is
// always served on the NFS port too) and registers rpcPrograms with the
// local rpcbind when register is set. No rpcbind running is one log line,
// not an error. The returned stop unregisters and closes the listener.
func startV3(log *slog.Logger, srv *nfs.Server, opts engine.Options, nfsAddr *net.TCPAddr, mountdPort int, register bool) (stop func(), err error) {
	var closers []func()
	stop = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	port := uint16(nfsAddr.Port)
	mport := port
	if mountdPort != 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(nfsAddr.IP.String(), strconv.Itoa(mountdPort)))
		if err != nil {
			return stop, err
		}
		// MOUNT is a handful of calls per client: the portable engine
		// serves its port with the same handler.
		eng, err := engine.New("portable", srv, opts)
		if err != nil {
			ln.Close()
			return stop, err
		}
		go eng.Serve(ln)
		closers = append(closers, func() { eng.Close() })
		mport = uint16(ln.Addr().(*net.TCPAddr).Port)
		log.Info("serving MOUNT", "addr", ln.Addr().String())
	}
	if !register {
		return stop, nil
	}
	pm := &rpcbind.Client{Addr: rpcbindAddr, Socket: rpcbindSocket}
	var done []rpcbind.Mapping
	for _, p := range rpcPrograms {
		m := rpcbind.Mapping{Prog: p.prog, Vers: p.vers, Prot: rpcbind.IPProtoTCP, Port: port}
		if p.mountd {
			m.Port = mport
		}
		if err := pm.Set(m); err != nil {
			if errors.Is(err, rpcbind.ErrNoRpcbind) {
				log.Info("no rpcbind running: NFSv3 clients need port= and mountport=", "nfs_port", port, "mount_port", mport)
				break
			}
			log.Warn("cannot register with rpcbind", "program", p.prog, "version", p.vers, "err", err)
			continue
		}
		done = append(done, m)
	}
	if len(done) > 0 {
		log.Info("registered with rpcbind", "programs", len(done))
	}
	closers = append(closers, func() {
		for _, m := range done {
			pm.Unset(m)
		}
	})
	return stop, nil
}
