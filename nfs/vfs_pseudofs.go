package nfs

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// exportTable is the server's set of exports and the pseudo-filesystem
// above them. It is never changed once built: Reload builds a new one and
// swaps it in, so a COMPOUND sees one table or the other, never a mix.
type exportTable struct {
	exports []*export
	// pseudo: the exports hang under a synthetic root (several exports,
	// or exports placed by path); else the one export is the root.
	pseudo   bool
	root     *pseudoDir
	byHandle map[string]*pseudoDir // every pseudo directory, by handle
	parent   map[*export]*pseudoDir
}

// pseudoDir is a directory of the pseudo-filesystem: the root, and for
// exports placed by path (/srv/data) every directory on the way (/srv),
// as knfsd's pseudo-root mirrors the exported paths.
type pseudoDir struct {
	node    *node // exp nil; rel is the path ("/" for the root)
	up      *pseudoDir
	entries []pseudoEntry // sorted by name
}

// pseudoEntry is a name in a pseudo directory: another pseudo directory,
// or an export's root.
type pseudoEntry struct {
	name string
	dir  *pseudoDir
	exp  *export
}

// visible reports whether a client at a may see the entry: it leads to an
// export one of whose client specs names a (the source port is checked
// when the client enters the export).
func (en *pseudoEntry) visible(a netip.Addr) bool {
	if en.exp != nil {
		_, ok := en.exp.access(a)
		return ok
	}
	return en.dir.visible(a)
}

// visible reports whether any export under d is visible to a.
func (d *pseudoDir) visible(a netip.Addr) bool {
	for i := range d.entries {
		if d.entries[i].visible(a) {
			return true
		}
	}
	return false
}

func (d *pseudoDir) find(name string) *pseudoEntry {
	i, ok := slices.BinarySearchFunc(d.entries, name, func(en pseudoEntry, n string) int { return strings.Compare(en.name, n) })
	if !ok {
		return nil
	}
	return &d.entries[i]
}

// table returns the exports in force.
func (s *Server) table() *exportTable { return s.tab.Load() }

// pseudoDirOf returns the pseudo directory node n stands for in the
// current table (nil: n is an export's node, or a pseudo directory a
// reload removed).
func (s *Server) pseudoDirOf(n *node) *pseudoDir {
	if n == nil || n.exp != nil {
		return nil
	}
	return s.table().byHandle[string(n.handle)]
}

// namePath splits an export's name into the components of its place under
// the pseudo-root. A name starting with "/" is a path (/srv/data: the
// directory srv, then data); any other is one component.
func namePath(name string) []string {
	if !strings.HasPrefix(name, "/") {
		return []string{name}
	}
	var out []string
	for _, c := range strings.Split(name, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// newPseudoDir makes the pseudo directory at path p (components).
func newPseudoDir(p []string, up *pseudoDir) *pseudoDir {
	rel := "/" + strings.Join(p, "/")
	h := pseudoHandle
	ino := uint64(pseudoRootIno)
	if len(p) > 0 {
		// Stable across restarts and reloads: a function of the path.
		sum := sha256.Sum256([]byte(rel))
		id := binary.BigEndian.Uint64(sum[:]) | 1<<63
		h = make([]byte, len(pseudoHandle))
		copy(h, pseudoHandle)
		binary.BigEndian.PutUint64(h[4:], id)
		ino = id
	}
	return &pseudoDir{up: up, node: &node{rel: rel, ino: ino, mode: unix.S_IFDIR, handle: h, fd: -1, direct: -1, wfd: -1, dwfd: -1, pfd: -1}}
}

// buildTable opens the exports of list (reusing those of the table in
// force whose directory and handle options are the same) and builds the
// pseudo-filesystem. On error every export it opened is closed again.
func (s *Server) buildTable(list []Export) (tab *exportTable, err error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("nfs: no export configured")
	}
	old := map[exportKey]*export{}
	if t := s.table(); t != nil {
		for _, e := range t.exports {
			old[e.key] = e
		}
	}
	tab = &exportTable{byHandle: map[string]*pseudoDir{}, parent: map[*export]*pseudoDir{}}
	var opened []*export
	defer func() {
		if err != nil {
			for _, e := range opened {
				e.close()
			}
		}
	}()
	ids := map[uint64]string{}
	for _, cfg := range list {
		e, fresh, err := s.openExport(cfg, old)
		if err != nil {
			return nil, err
		}
		if fresh {
			opened = append(opened, e)
		}
		if other, dup := ids[e.id]; dup {
			return nil, fmt.Errorf("nfs: %sexports %s and %s have the same id (same fsid= option?)", lineOf(cfg), other, e.root)
		}
		ids[e.id] = e.root
		tab.exports = append(tab.exports, e)
	}
	tab.pseudo = len(list) > 1 || strings.HasPrefix(list[0].Name, "/") && len(namePath(list[0].Name)) > 0
	tab.root = newPseudoDir(nil, nil)
	tab.byHandle[string(tab.root.node.handle)] = tab.root
	if tab.pseudo {
		for i, cfg := range list {
			if err := tab.place(tab.exports[i], cfg); err != nil {
				return nil, err
			}
		}
	}
	return tab, nil
}

// exportKey is what makes two configurations the same export object: the
// directory (symlinks resolved) and the options that shape handles and
// crossing.
type exportKey struct {
	root     string
	fsid     string
	crossmnt bool
}

func lineOf(cfg Export) string {
	if cfg.Line > 0 {
		return fmt.Sprintf("line %d: ", cfg.Line)
	}
	return ""
}

// openExport returns the export for cfg: one of old when the same,
// else a newly opened one (fresh).
func (s *Server) openExport(cfg Export, old map[exportKey]*export) (e *export, fresh bool, err error) {
	p, err := filepath.Abs(cfg.Path)
	if err == nil {
		p, err = filepath.EvalSymlinks(p)
	}
	if err != nil {
		return nil, false, fmt.Errorf("nfs: %sexport %s: %w", lineOf(cfg), cfg.Path, err)
	}
	key := exportKey{root: p, fsid: cfg.FSID, crossmnt: cfg.CrossMnt}
	if e := old[key]; e != nil {
		return e, false, nil
	}
	e, err = newExport(cfg, canSwitch)
	if err != nil {
		if cfg.Line > 0 {
			err = fmt.Errorf("line %d: %w", cfg.Line, err)
		}
		return nil, false, err
	}
	e.key = key
	if !e.crossmnt && !e.detached {
		s.log.Warn("cannot isolate the export from filesystems mounted inside it (needs CAP_SYS_ADMIN): their mount points are not served", "export", e.root)
	}
	return e, true, nil
}

// place puts export e at its name's path in the pseudo-filesystem.
func (t *exportTable) place(e *export, cfg Export) error {
	name := cfg.Name
	if name == "" {
		name = e.name
	}
	p := namePath(name)
	if len(p) == 0 || slices.Contains(p, ".") || slices.Contains(p, "..") {
		return fmt.Errorf("nfs: %sexport %s: %q cannot be a name under the pseudo-root (with several exports, / cannot be one of them)", lineOf(cfg), cfg.Path, name)
	}
	d := t.root
	for i, c := range p {
		en := d.find(c)
		last := i == len(p)-1
		switch {
		case en != nil && (last || en.exp != nil):
			return fmt.Errorf("nfs: %sexport %s: %q is already taken by another export or lies inside one (nested exports are not supported)", lineOf(cfg), cfg.Path, name)
		case en != nil:
			d = en.dir
		case last:
			d.add(pseudoEntry{name: c, exp: e})
			t.parent[e] = d
		default:
			sub := newPseudoDir(p[:i+1], d)
			t.byHandle[string(sub.node.handle)] = sub
			d.add(pseudoEntry{name: c, dir: sub})
			d = sub
		}
	}
	return nil
}

func (d *pseudoDir) add(en pseudoEntry) {
	i, _ := slices.BinarySearchFunc(d.entries, en.name, func(x pseudoEntry, n string) int { return strings.Compare(x.name, n) })
	d.entries = slices.Insert(d.entries, i, en)
}

// Reload replaces the exports with list, as on SIGHUP: exports whose
// directory and fsid=/crossmnt stay the same keep their state (open
// files, handles); their client specs and options change at once, for
// the next COMPOUND. Connections are not touched. An export no longer
// listed refuses every client from then on (its handles are stale). On
// error nothing changes.
func (s *Server) Reload(list []Export) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	tab, err := s.buildTable(list)
	if err != nil {
		return err
	}
	for i, e := range tab.exports {
		e.setRules(list[i].Clients, s.cfg.AnonUID, s.cfg.AnonGID)
	}
	kept := map[*export]bool{}
	for _, e := range tab.exports {
		kept[e] = true
	}
	old := s.table()
	s.tab.Store(tab)
	for _, e := range old.exports {
		if !kept[e] {
			e.refuseAll()
			s.files.dropExport(e)
			s.retired = append(s.retired, e)
		}
	}
	return nil
}

// dropExport forgets the nodes of export e, so a new export object for
// the same directory (same handle id) does not find them.
func (t *fileTable) dropExport(e *export) {
	t.mu.RLock()
	var gone []*node
	for _, n := range t.nodes.all() {
		if n.exp == e {
			gone = append(gone, n)
		}
	}
	t.mu.RUnlock()
	for _, n := range gone {
		t.drop(n)
	}
}

// pseudoLookup is LOOKUP in pseudo directory d: a name the caller may not
// see does not exist for it; entering an export checks its client specs.
func (c *compound) pseudoLookup(d *pseudoDir, name string) nfs4.Status {
	en := d.find(name)
	if en == nil || !en.visible(c.conn.addr) {
		return nfs4.ErrNoent
	}
	if en.dir != nil {
		c.setFH(en.dir.node)
		return nfs4.OK
	}
	if s := c.admit(en.exp); s != nfs4.OK {
		return s
	}
	n := c.s.exportRoot(en.exp)
	if n == nil {
		return nfs4.ErrStale
	}
	c.setFH(n)
	return nfs4.OK
}

// pseudoParent is LOOKUPP from n, a pseudo directory or an export's root.
func (c *compound) pseudoParent(n *node) nfs4.Status {
	t := c.s.table()
	var up *pseudoDir
	if n.exp != nil {
		up = t.parent[n.exp]
	} else if d := t.byHandle[string(n.handle)]; d != nil {
		up = d.up
	}
	if !t.pseudo || up == nil {
		return nfs4.ErrNoent
	}
	c.setFH(up.node)
	return nfs4.OK
}

// pseudoList lists pseudo directory d as a client at a sees it: entry i
// has cookie firstCookie+i.
type pseudoList struct {
	d *pseudoDir
	a netip.Addr
	i int
}

func (l *pseudoList) next() (dirent, bool, error) {
	for l.i < len(l.d.entries) {
		l.i++
		if en := &l.d.entries[l.i-1]; en.visible(l.a) {
			return dirent{name: en.name, cookie: firstCookie + uint64(l.i-1)}, true, nil
		}
	}
	return dirent{}, false, nil
}

// listPseudo starts the listing of d after cookie.
func listPseudo(d *pseudoDir, a netip.Addr, cookie uint64) *pseudoList {
	l := &pseudoList{d: d, a: a}
	if cookie >= firstCookie {
		l.i = int(min(cookie-firstCookie+1, uint64(len(d.entries))))
	}
	return l
}

// pseudoEntryNode is the node of entry name of pseudo directory d, for
// READDIR's attributes.
func (s *Server) pseudoEntryNode(d *pseudoDir, name string) *node {
	en := d.find(name)
	switch {
	case en == nil:
		return nil
	case en.dir != nil:
		return en.dir.node
	}
	return s.exportRoot(en.exp)
}
