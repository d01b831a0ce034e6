package nfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NSM, the status monitor, for the NLM side (nlm.go). The server is its
// own statd: it records the hosts that hold locks in
// <state-dir>/nlm-hosts with its NSM state number, and after a restart
// sends SM_NOTIFY to each so that they reclaim their locks during the
// grace period; an SM_NOTIFY from a rebooted client (its sm-notify)
// releases what that client held.

// nlmHostsFile is the hosts file in the state directory: the line
// "state N" (the NSM state number of the boot that wrote it) and one line
// "host ADDR NAME" per host (NAME quoted as Go does).
const nlmHostsFile = "nlm-hosts"

// nsmState is the NSM state of the server.
type nsmState struct {
	state uint32 // this boot's state number: odd, one more than the last boot's (XNFS 11.1)
	dir   string
	// prev are the hosts of the previous boot not yet notified; guarded
	// by stateTable.mu, as nlmState's maps.
	prev map[nlmHostKey]bool
	// monitors are the SM_MON registrations, by mon_name: for a local
	// lock manager, kept as statd keeps them (in memory here).
	monMu    sync.Mutex
	monitors map[string][]nsmMon
	// gen counts changes to what the hosts file holds; written is the gen
	// last written, under fileMu.
	gen     atomic.Uint64
	written atomic.Uint64
	fileMu  sync.Mutex
}

// name is what this server calls itself in NLM and NSM calls.
func (ns *nsmState) name(s *Server) string {
	if s.cfg.NSMName != "" {
		return s.cfg.NSMName
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "nfsd-uring"
}

// load reads the hosts file of the previous boot and picks this boot's
// state number.
func (ns *nsmState) load(dir string) ([]nlmHostKey, error) {
	ns.dir = dir
	ns.state = 1
	if dir == "" {
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, nlmHostsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	last, hosts, err := parseHostsFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, nlmHostsFile), err)
	}
	ns.state = (last + 1) | 1
	if ns.state <= last { // wrapped
		ns.state = 1
	}
	ns.prev = make(map[nlmHostKey]bool, len(hosts))
	for _, h := range hosts {
		ns.prev[h] = true
	}
	return hosts, nil
}

// parseHostsFile reads the hosts file's text.
func parseHostsFile(data []byte) (uint32, []nlmHostKey, error) {
	var state uint32
	var hosts []nlmHostKey
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 4096), 16<<10)
	for line := 1; sc.Scan(); line++ {
		f := sc.Text()
		if f == "" {
			continue
		}
		kind, rest, _ := strings.Cut(f, " ")
		switch kind {
		case "state":
			v, err := strconv.ParseUint(rest, 10, 32)
			if err != nil {
				return 0, nil, fmt.Errorf("line %d: %v", line, err)
			}
			state = uint32(v)
		case "host":
			a, q, _ := strings.Cut(rest, " ")
			addr, err := netip.ParseAddr(a)
			if err != nil {
				return 0, nil, fmt.Errorf("line %d: %v", line, err)
			}
			name, err := strconv.Unquote(q)
			if err != nil || len(name) > nlmMaxName {
				return 0, nil, fmt.Errorf("line %d: bad host name", line)
			}
			hosts = append(hosts, nlmHostKey{name, addr})
		default:
			return 0, nil, fmt.Errorf("line %d: unknown %q", line, kind)
		}
	}
	return state, hosts, sc.Err()
}

// hostsFileLocked is the text the hosts file should hold: the hosts that
// hold locks now and those of the previous boot still to be notified.
// The caller holds stateTable.mu.
func (n *nlmState) hostsFileLocked() []byte {
	seen := make(map[nlmHostKey]bool)
	var lines []string
	add := func(k nlmHostKey) {
		if !seen[k] {
			seen[k] = true
			lines = append(lines, fmt.Sprintf("host %s %s\n", k.addr, strconv.Quote(k.name)))
		}
	}
	for k, h := range n.hosts {
		if h.monitored {
			add(k)
		}
	}
	for k := range n.nsm.prev {
		add(k)
	}
	sort.Strings(lines)
	return []byte(fmt.Sprintf("state %d\n", n.nsm.state) + strings.Join(lines, ""))
}

// syncHosts writes the hosts file if it changed. Callers run it after
// releasing stateTable.mu and before their reply goes.
func (n *nlmState) syncHosts() error {
	ns := &n.nsm
	if ns.dir == "" || ns.gen.Load() == ns.written.Load() {
		return nil
	}
	ns.fileMu.Lock()
	defer ns.fileMu.Unlock()
	t := n.s.state
	t.mu.Lock()
	gen := ns.gen.Load()
	data := n.hostsFileLocked()
	t.mu.Unlock()
	if gen == ns.written.Load() {
		return nil
	}
	if err := writeFileAtomic(ns.dir, nlmHostsFile, data); err != nil {
		return err
	}
	ns.written.Store(gen)
	return nil
}

func (n *nlmState) syncHostsLogged() {
	if err := n.syncHosts(); err != nil {
		n.s.log.Warn("nlm: cannot save the hosts file: hosts may not be told to reclaim their locks after a restart", "err", err)
	}
}

// notifyAll sends SM_NOTIFY to the hosts of the previous boot, each to its
// statd found through its rpcbind, over UDP, as sm-notify does: retried
// with backoff for about a quarter of an hour, errors logged, never
// fatal. A host notified (or given up on) leaves the hosts file.
func (n *nlmState) notifyAll(hosts []nlmHostKey) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			n.notifyHost(h)
		}()
	}
	wg.Wait()
}

func (n *nlmState) notifyHost(h nlmHostKey) {
	delay := time.Second
	var err error
	for try := 0; try < 12; try++ {
		if err = n.sendNotify(h.addr); err == nil {
			n.s.log.Info("nsm: host notified of the restart", "host", h.name, "addr", h.addr)
			break
		}
		select {
		case <-n.s.stop:
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Minute)
	}
	if err != nil {
		n.s.log.Warn("nsm: cannot notify a host of the restart; it may not reclaim its locks", "host", h.name, "addr", h.addr, "err", err)
	}
	t := n.s.state
	t.mu.Lock()
	delete(n.nsm.prev, h)
	n.nsm.gen.Add(1)
	t.mu.Unlock()
	n.syncHostsLogged()
}

// sendNotify sends one SM_NOTIFY (stat_chge: our name, our state) to the
// statd of the host at addr.
func (n *nlmState) sendNotify(addr netip.Addr) error {
	port, err := n.getport(addr, NSMProgram, NSMVersion, ipprotoUDP)
	if err != nil {
		return err
	}
	name := n.nsm.name(n.s)
	_, err = rpcCall("udp", netip.AddrPortFrom(addr, port), NSMProgram, NSMVersion, nsmProcNotify, name, func(e *xdr.Encoder) {
		e.String(name)
		e.Uint32(n.nsm.state)
	})
	return err
}

// ServeNSM answers NSM (and NLM) calls arriving as datagrams on pc, until
// pc is closed or the server stops. Calls to other programs are dropped:
// NFSv4 is not served over UDP.
func (s *Server) ServeNSM(pc net.PacketConn) error {
	buf := make([]byte, 64<<10)
	for {
		m, from, err := pc.ReadFrom(buf)
		if err != nil {
			select {
			case <-s.stop:
				return nil
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if m < 16 {
			continue
		}
		prog := uint32(buf[12])<<24 | uint32(buf[13])<<16 | uint32(buf[14])<<8 | uint32(buf[15])
		if prog != NSMProgram && prog != NLMProgram {
			continue
		}
		rep := NewReply()
		s.Handle(NewConn(from.String()), buf[:m], rep)
		if !rep.Drop {
			s.Complete(rep)
			var out []byte
			for _, b := range rep.Iovecs() {
				out = append(out, b...)
			}
			if len(out) > 4 {
				pc.WriteTo(out[4:], from) // the record mark is for streams only
			}
		}
		rep.Reset()
	}
}

var (
	errShortReply = errors.New("rpc: short or malformed reply")
	errRPCDenied  = errors.New("rpc: call rejected")
)

var rpcXID atomic.Uint32

// rpcCall makes one ONC RPC call (AUTH_SYS as root of machine name) over
// "tcp" or "udp" and returns the result body of a successful reply.
func rpcCall(network string, to netip.AddrPort, prog, vers, proc uint32, machine string, args func(*xdr.Encoder)) ([]byte, error) {
	xid := rpcXID.Add(1) ^ uint32(time.Now().UnixNano())
	e := xdr.NewEncoder(256)
	e.Uint32(xid)
	e.Uint32(nfs4.MsgCall)
	e.Uint32(nfs4.RPCVersion)
	e.Uint32(prog)
	e.Uint32(vers)
	e.Uint32(proc)
	e.Uint32(nfs4.AuthSys)
	cred := xdr.NewEncoder(64)
	cred.Uint32(uint32(time.Now().Unix()))
	if len(machine) > 255 {
		machine = machine[:255]
	}
	cred.String(machine)
	cred.Uint32(0)
	cred.Uint32(0)
	cred.Uint32(0)
	e.Opaque(cred.Header())
	e.Uint32(nfs4.AuthNone)
	e.Uint32(0)
	if args != nil {
		args(e)
	}
	msg := e.AppendTo(nil)
	conn, err := net.DialTimeout(network, to.String(), nlmCallTimeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(nlmCallTimeout))
	var rep []byte
	if network == "udp" {
		if _, err := conn.Write(msg); err != nil {
			return nil, err
		}
		buf := make([]byte, 64<<10)
		for {
			m, err := conn.Read(buf)
			if err != nil {
				return nil, err
			}
			if m >= 4 && uint32(buf[0])<<24|uint32(buf[1])<<16|uint32(buf[2])<<8|uint32(buf[3]) == xid {
				rep = buf[:m]
				break
			}
		}
	} else {
		rec := make([]byte, 4, 4+len(msg))
		mark := xdr.RecordMark(len(msg))
		rec[0], rec[1], rec[2], rec[3] = byte(mark>>24), byte(mark>>16), byte(mark>>8), byte(mark)
		if _, err := conn.Write(append(rec, msg...)); err != nil {
			return nil, err
		}
		rr := xdr.NewRecordReader(conn, 64<<10)
		for {
			r, err := rr.Next()
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return nil, err
			}
			if len(r) >= 4 && uint32(r[0])<<24|uint32(r[1])<<16|uint32(r[2])<<8|uint32(r[3]) == xid {
				rep = r
				break
			}
		}
	}
	return parseRPCReply(rep)
}

// parseRPCReply checks a reply's header and returns its body.
func parseRPCReply(rep []byte) ([]byte, error) {
	d := xdr.NewDecoder(rep)
	d.Uint32() // xid
	if d.Uint32() != nfs4.MsgReply {
		return nil, errShortReply
	}
	if d.Uint32() != nfs4.MsgAccepted {
		if d.Err() != nil {
			return nil, errShortReply
		}
		return nil, errRPCDenied
	}
	d.Uint32()
	d.Opaque(nfs4.MaxAuthBytes)
	stat := d.Uint32()
	if d.Err() != nil {
		return nil, errShortReply
	}
	if stat != nfs4.AcceptSuccess {
		return nil, fmt.Errorf("rpc: accept status %d", stat)
	}
	return d.Rest(), nil
}

// rpcbindGetport asks the rpcbind at to (PMAPPROC_GETPORT, over UDP) for
// the port of a program; 0 (not registered) is an error.
func rpcbindGetport(to netip.AddrPort, prog, vers, proto uint32) (uint16, error) {
	body, err := rpcCall("udp", to, rpcbindProgram, rpcbindVersion, rpcbindProcGetport, "", func(e *xdr.Encoder) {
		e.Uint32(prog)
		e.Uint32(vers)
		e.Uint32(proto)
		e.Uint32(0)
	})
	if err != nil {
		return 0, fmt.Errorf("rpcbind %s: %w", to, err)
	}
	d := xdr.NewDecoder(body)
	port := d.Uint32()
	if d.Err() != nil || port == 0 || port > 65535 {
		return 0, fmt.Errorf("rpcbind %s: program %d version %d not registered", to, prog, vers)
	}
	return uint16(port), nil
}
