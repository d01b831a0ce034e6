package main

import (
	"errors"
	"fmt"
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
	udp        bool // on the NSM datagram port (--statd-port), not TCP
}

// rpcPrograms are registered with rpcbind at start and removed at exit.
// Programs served elsewhere in the tree add themselves here.
var rpcPrograms = []rpcProgram{
	{prog: 100003, vers: 3},
	{prog: 100003, vers: 4},
	{prog: 100005, vers: 3, mountd: true},
	// NFSv3 locking (nfs/nlm.go): NLM 4 and NSM 1 on the NFS port, and
	// both over UDP on the port ServeNSM answers (clients' statd sends
	// SM_NOTIFY there).
	{prog: nfs.NLMProgram, vers: nfs.NLMVersion},
	{prog: nfs.NSMProgram, vers: nfs.NSMVersion},
	{prog: nfs.NLMProgram, vers: nfs.NLMVersion, udp: true},
	{prog: nfs.NSMProgram, vers: nfs.NSMVersion, udp: true},
}

// rpcbindAddr and rpcbindSocket are the portmapper registered with (tests
// point them elsewhere).
var rpcbindAddr, rpcbindSocket = rpcbind.DefaultAddr, rpcbind.DefaultSocket

// startV3 serves MOUNT on its own port when mountdPort is not 0 (it is
// always served on the NFS port too), NSM and NLM datagrams on statdPort
// (0: any free port; -1: none), and registers rpcPrograms with the local
// rpcbind when register is set. No rpcbind running is one log line, not
// an error. The returned stop unregisters and closes the listeners.
func startV3(log *slog.Logger, srv *nfs.Server, opts engine.Options, nfsAddr *net.TCPAddr, mountdPort, statdPort int, register bool) (stop func(), err error) {
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
	var uport uint16
	if statdPort >= 0 {
		pc, err := net.ListenPacket("udp", net.JoinHostPort(nfsAddr.IP.String(), strconv.Itoa(statdPort)))
		if err != nil {
			return stop, fmt.Errorf("--statd-port: %w", err)
		}
		go srv.ServeNSM(pc)
		closers = append(closers, func() { pc.Close() })
		uport = uint16(pc.LocalAddr().(*net.UDPAddr).Port)
		log.Info("serving NSM and NLM over UDP", "addr", pc.LocalAddr().String())
	}
	if !register {
		return stop, nil
	}
	pm := &rpcbind.Client{Addr: rpcbindAddr, Socket: rpcbindSocket}
	var done []rpcbind.Mapping
	// Another server's registrations, or our previous run's, go first.
	unset := map[[2]uint32]bool{}
	for _, p := range rpcPrograms {
		if k := [2]uint32{p.prog, p.vers}; !unset[k] {
			unset[k] = true
			pm.Unset(rpcbind.Mapping{Prog: p.prog, Vers: p.vers})
		}
	}
	for _, p := range rpcPrograms {
		m := rpcbind.Mapping{Prog: p.prog, Vers: p.vers, Prot: rpcbind.IPProtoTCP, Port: port}
		switch {
		case p.mountd:
			m.Port = mport
		case p.udp && uport == 0:
			continue
		case p.udp:
			m.Prot, m.Port = rpcbind.IPProtoUDP, uport
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
