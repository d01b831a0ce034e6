package nfs

import (
	"strings"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// nsmCall answers one NSM call into e and returns the status to count it
// under: "", having encoded nothing, when the arguments do not decode.
func (n *nlmState) nsmCall(c *Conn, cl *call, d *xdr.Decoder, e *xdr.Encoder) string {
	ns := &n.nsm
	status := "OK"
	switch cl.proc {
	case nsmProcNull:
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	case nsmProcStat:
		d.String(nsmMaxName)
		if d.Err() != nil {
			return ""
		}
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
		e.Uint32(nsmStatSucc)
		e.Uint32(ns.state)
	case nsmProcMon:
		m := decodeNSMMon(d, true)
		if d.Err() != nil {
			return ""
		}
		// Only a lock manager on this host may register (as rpc.statd
		// checks): a remote caller could otherwise grow the table.
		stat := uint32(nsmStatFail)
		status = "STAT_FAIL"
		if c.addr.IsLoopback() {
			ns.monitor(m)
			stat, status = nsmStatSucc, "OK"
		}
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
		e.Uint32(stat)
		e.Uint32(ns.state)
	case nsmProcUnmon:
		m := decodeNSMMon(d, false)
		if d.Err() != nil {
			return ""
		}
		if c.addr.IsLoopback() {
			ns.unmonitor(m.monName, &m.id)
		}
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
		e.Uint32(ns.state)
	case nsmProcUnmonAll:
		id := decodeNSMMyID(d)
		if d.Err() != nil {
			return ""
		}
		if c.addr.IsLoopback() {
			ns.unmonitor("", &id)
		}
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
		e.Uint32(ns.state)
	case nsmProcSimuCrash:
		// Nothing is simulated: a real restart notifies the hosts.
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	case nsmProcNotify:
		a := decodeNSMNotify(d)
		if d.Err() != nil {
			return ""
		}
		n.rebooted(c, string(a.monName), a.state)
		encodeAccepted(e, cl.xid, nfs4.AcceptSuccess)
	default:
		encodeAccepted(e, cl.xid, nfs4.AcceptProcUnavail)
		status = "PROC_UNAVAIL"
	}
	return status
}

// nsmMaxMonitors bounds the SM_MON registrations.
const nsmMaxMonitors = 4096

func (ns *nsmState) monitor(m nsmMon) {
	ns.monMu.Lock()
	defer ns.monMu.Unlock()
	list := ns.monitors[m.monName]
	for i, x := range list {
		if x.id == m.id {
			list[i] = m
			return
		}
	}
	total := 0
	for _, l := range ns.monitors {
		total += len(l)
	}
	if total >= nsmMaxMonitors {
		return
	}
	ns.monitors[m.monName] = append(list, m)
}

// unmonitor drops the registrations of id for monName ("": for every
// host).
func (ns *nsmState) unmonitor(monName string, id *nsmMyID) {
	ns.monMu.Lock()
	defer ns.monMu.Unlock()
	for name, list := range ns.monitors {
		if monName != "" && name != monName {
			continue
		}
		out := list[:0]
		for _, x := range list {
			if x.id != *id {
				out = append(out, x)
			}
		}
		if len(out) == 0 {
			delete(ns.monitors, name)
		} else {
			ns.monitors[name] = out
		}
	}
}

// rebooted is SM_NOTIFY from a host that restarted: the locks, blocked
// requests and shares of the NLM hosts of that name go (knfsd's
// nlm_host_rebooted). The notification must come from the host's own
// address, as rpc.statd checks, so that another machine cannot release
// them; the name may be the host's caller_name or its address.
func (n *nlmState) rebooted(c *Conn, monName string, state int32) {
	t := n.s.state
	defer n.syncHostsLogged()
	t.mu.Lock()
	defer t.mu.Unlock()
	freed := 0
	for k, h := range n.hosts {
		if !strings.EqualFold(k.name, monName) && k.addr.String() != monName {
			continue
		}
		if c.addr.IsValid() && k.addr != c.addr {
			continue
		}
		n.freeHostLocked(h)
		freed++
	}
	n.s.log.Info("nsm: host rebooted", "host", monName, "addr", c.addr, "state", state, "hosts freed", freed)
}
