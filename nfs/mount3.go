package nfs

import (
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// MOUNT version 3 (RFC 1813 appendix I), program 100005: what a v3 client
// asks for the root handle of the export it mounts. It is served on the
// NFS port (clients mount with mountport=) and, with --mountd-port, on a
// port of its own.

// MOUNT procedures.
const (
	mountNull = iota
	mountMnt
	mountDump
	mountUmnt
	mountUmntall
	mountExport
	mountNumProcs
)

var mountProcNames = [mountNumProcs]string{"NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT"}

// mountstat3 values.
const (
	mnt3OK          = 0
	mnt3ErrNoent    = 2
	mnt3ErrAcces    = 13
	mnt3ErrNotdir   = 20
	mnt3ErrInval    = 22
	mnt3ErrNametoo  = 63
	mnt3ErrNotsupp  = 10004
	mnt3ErrFault    = 10006
	mountPathLen    = 1024
	mountNameLen    = 255
	maxMountEntries = 4096 // DUMP's list is bounded: clients that never UMNT
)

// mountList is what DUMP reports: who mounted what (informational only,
// as in knfsd's rmtab; nothing depends on it).
type mountList struct {
	mu      sync.Mutex
	entries map[mountEntry]struct{}
}

type mountEntry struct{ host, dir string }

func (s *Server) mountList() *mountList { return &s.v3.mounts }

// handleMount serves one MOUNT call.
func (s *Server) handleMount(conn *Conn, cl *call, d *xdr.Decoder, rep *Reply) {
	e := rep.Enc
	if cl.vers != mountVersion {
		s.replyAccepted(cl, rep, nfs4.AcceptProgMismatch)
		e.Uint32(mountVersion)
		e.Uint32(mountVersion)
		s.countProc(conn, progMount, cl.vers, cl.proc, "PROG_MISMATCH")
		return
	}
	if cl.proc >= mountNumProcs {
		s.replyAccepted(cl, rep, nfs4.AcceptProcUnavail)
		s.countProc(conn, progMount, cl.vers, cl.proc, "PROC_UNAVAIL")
		return
	}
	statPos := s.replyAccepted(cl, rep, nfs4.AcceptSuccess)
	c := s.newCall(conn, cl, d, rep)
	status := "OK"
	switch cl.proc {
	case mountMnt:
		p := d.String(mountPathLen)
		if d.Err() != nil {
			break
		}
		st := c.mnt(string(p))
		status = mountStatName(st)
	case mountDump:
		s.mountList().encode(e)
	case mountUmnt:
		p := d.String(mountPathLen)
		if d.Err() == nil {
			s.mountList().remove(conn.addr.String(), string(p))
		}
	case mountUmntall:
		s.mountList().remove(conn.addr.String(), "")
	case mountExport:
		s.encodeExports(e)
	}
	if d.Err() != nil {
		replyGarbage(rep, statPos)
		status = "GARBAGE_ARGS"
	}
	s.countProc(conn, progMount, cl.vers, cl.proc, status)
}

func mountStatName(st uint32) string {
	switch st {
	case mnt3OK:
		return "MNT3_OK"
	case mnt3ErrNoent:
		return "MNT3ERR_NOENT"
	case mnt3ErrAcces:
		return "MNT3ERR_ACCES"
	case mnt3ErrNotdir:
		return "MNT3ERR_NOTDIR"
	}
	return "MNT3ERR_OTHER"
}

// mountNames are the paths a client may mount export e by: its name as
// the pseudo-root places it, and its directory on the server.
func (t *exportTable) mountNames(e *export) []string {
	names := []string{e.root}
	if strings.HasPrefix(e.name, "/") {
		names = append(names, e.name)
	} else if e.name != "" {
		names = append(names, "/"+e.name)
	}
	if !t.pseudo {
		names = append(names, "/")
	}
	return names
}

// mountTarget finds the export a MOUNT path names (the longest match) and
// the path below its root.
func (s *Server) mountTarget(p string) (*export, string) {
	p = path.Clean("/" + p)
	t := s.table()
	var best *export
	bestLen, rel := -1, ""
	for _, e := range t.exports {
		for _, name := range t.mountNames(e) {
			name = path.Clean(name)
			var r string
			switch {
			case p == name:
				r = ""
			case name == "/":
				r = p[1:]
			case strings.HasPrefix(p, name+"/"):
				r = p[len(name)+1:]
			default:
				continue
			}
			if len(name) > bestLen {
				best, bestLen, rel = e, len(name), r
			}
		}
	}
	return best, rel
}

// mnt answers MNT: the handle of the directory p names, in an export the
// caller's address may use (its client specs, secure ports), with the
// flavors the server accepts.
func (c *compound) mnt(p string) uint32 {
	e := c.e
	fail := func(st uint32) uint32 {
		e.Uint32(st)
		return st
	}
	exp, rel := c.s.mountTarget(p)
	if exp == nil {
		return fail(mnt3ErrNoent)
	}
	// The caller's flavour is not checked: MNT lists the export's and the
	// client picks one for its NFS calls, where it is checked (putfh3).
	// A Linux client sends MNT with AUTH_SYS even for sec=krb5 mounts, and
	// rpc.mountd answers it the same.
	if c.admit(exp) != nfs4.OK {
		return fail(mnt3ErrAcces)
	}
	n := c.s.exportRoot(exp)
	if n == nil {
		return fail(mnt3ErrFault)
	}
	if rel != "" {
		sub, err := c.s.nodeOfPath(exp, rel)
		if err != nil {
			switch errno(err) {
			case nfs4.ErrNotdir:
				return fail(mnt3ErrNotdir)
			case nfs4.ErrAccess:
				return fail(mnt3ErrAcces)
			case nfs4.ErrNametoolong:
				return fail(mnt3ErrNametoo)
			}
			return fail(mnt3ErrNoent)
		}
		n = sub
	}
	if len(n.handle) > nfs3Max {
		return fail(mnt3ErrNotsupp)
	}
	e.Uint32(mnt3OK)
	e.Opaque(n.handle)
	c.encodeMountFlavors(exp)
	c.s.mountList().add(c.conn.addr.String(), path.Clean("/"+p))
	return mnt3OK
}

// encodeMountFlavors writes MNT's auth_flavors: the export's sec= list
// for the caller's address in its order, sys as AUTH_SYS and AUTH_NONE,
// krb5, krb5i and krb5p as their pseudo-flavours 390003-390005 (RFC 2623
// section 2.2), those only with a keytab.
func (c *compound) encodeMountFlavors(exp *export) {
	c.encodeFlavorList(c.secListOf(exp), func(f exports.SecFlavor) {
		c.e.Uint32(uint32(f-exports.SecKrb5) + authKrb5)
	})
}

// authKrb5 is the pseudo-flavour of RPCSEC_GSS with Kerberos 5 and no
// protection of the body; krb5i and krb5p follow it.
const authKrb5 = 390003

func (m *mountList) add(host, dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[mountEntry]struct{}{}
	}
	if len(m.entries) < maxMountEntries {
		m.entries[mountEntry{host, dir}] = struct{}{}
	}
}

// remove forgets host's mount of dir ("": all of host's).
func (m *mountList) remove(host, dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.entries {
		if k.host == host && (dir == "" || k.dir == path.Clean("/"+dir)) {
			delete(m.entries, k)
		}
	}
}

// encode writes mountlist (DUMP's result), sorted.
func (m *mountList) encode(e *xdr.Encoder) {
	m.mu.Lock()
	list := make([]mountEntry, 0, len(m.entries))
	for k := range m.entries {
		list = append(list, k)
	}
	m.mu.Unlock()
	sort.Slice(list, func(i, j int) bool {
		if list[i].host != list[j].host {
			return list[i].host < list[j].host
		}
		return list[i].dir < list[j].dir
	})
	for _, k := range list {
		e.Bool(true)
		e.String(trimTo(k.host, mountNameLen))
		e.String(trimTo(k.dir, mountPathLen))
	}
	e.Bool(false)
}

func trimTo(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// encodeExports writes exports (EXPORT's result): each export by the
// name clients mount it by, with its client specs as groups.
func (s *Server) encodeExports(e *xdr.Encoder) {
	t := s.table()
	for _, x := range t.exports {
		names := t.mountNames(x)
		dir := names[len(names)-1]
		if len(names) > 1 && names[1] != "/" {
			dir = names[1]
		}
		e.Bool(true)
		e.String(trimTo(dir, mountPathLen))
		if rules := x.rules.Load(); rules != nil {
			for _, r := range *rules {
				e.Bool(true)
				e.String(trimTo(r.Spec, mountNameLen))
			}
		}
		e.Bool(false)
	}
	e.Bool(false)
}
