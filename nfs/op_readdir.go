package nfs

import (
	"hash/fnv"
	"os"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

func init() { ops[nfs4.OpReaddir] = opReaddir }

// dirEntry is a name with its READDIR cookie. Cookies are a hash of the
// name, so they stay valid while other entries come and go: a client
// resuming at a cookie sees every entry whose cookie is larger.
type dirEntry struct {
	cookie uint64
	name   string
}

// dirCookie maps a name to a cookie outside the reserved values 0, 1, 2.
func dirCookie(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()>>1 | 1<<62
}

// dirListing is a directory's entries sorted by cookie, kept while the
// directory's ctime holds.
type dirListing struct {
	ctime   unix.Timespec
	entries []dirEntry
}

// listDir returns the sorted entries of directory n (whose attributes are
// st), from cache when the directory is unchanged.
func (s *Server) listDir(n *node, st *unix.Stat_t) ([]dirEntry, uint32) {
	if n.exp == nil {
		var out []dirEntry
		for _, e := range s.exports {
			out = append(out, dirEntry{dirCookie(e.name), e.name})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].cookie < out[j].cookie })
		return out, nfs4.OK
	}
	n.mu.Lock()
	if l := n.dir; l != nil && l.ctime == st.Ctim {
		n.mu.Unlock()
		return l.entries, nfs4.OK
	}
	rel := n.rel
	n.mu.Unlock()
	fd, err := n.exp.open(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, errno(err)
	}
	f := os.NewFile(uintptr(fd), rel)
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, errno(err)
	}
	out := make([]dirEntry, len(names))
	for i, name := range names {
		out[i] = dirEntry{dirCookie(name), name}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cookie < out[j].cookie })
	n.mu.Lock()
	n.dir = &dirListing{ctime: st.Ctim, entries: out}
	n.mu.Unlock()
	return out, nfs4.OK
}

func opReaddir(c *compound) uint32 {
	if s := c.mayReaddir(); s != nfs4.OK {
		return s
	}
	d := c.d
	cookie := d.Uint64()
	d.Fixed(8) // cookie verifier: cookies never go stale, so it is not checked
	dircount := d.Uint32()
	maxcount := d.Uint32()
	req := nfs4.DecodeBitmap(d)
	if d.Err() != nil {
		return nfs4.ErrBadXDR
	}
	var st unix.Stat_t
	if s := c.needDir(&st); s != nfs4.OK {
		return s
	}
	if cookie == 1 || cookie == 2 {
		return nfs4.ErrBadCookie
	}
	entries, s := c.s.listDir(c.cfh, &st)
	if s != nfs4.OK {
		return s
	}
	i := 0
	if cookie != 0 {
		i = sort.Search(len(entries), func(i int) bool { return entries[i].cookie > cookie })
	}
	limit := min(int(maxcount), c.room()-readOverhead)
	return c.encodeDirlist(entries[i:], req, int(dircount), limit)
}

// encodeDirlist writes READDIR4resok: as many entries as fit in maxcount
// bytes (and dircount bytes of names and cookies, when given).
func (c *compound) encodeDirlist(entries []dirEntry, req nfs4.Bitmap, dircount, maxcount int) uint32 {
	e := c.e
	start := e.Pos()
	e.Uint64(0) // cookie verifier
	used := 0
	count := 0
	for _, ent := range entries {
		mark := e.Pos()
		e.Bool(true)
		e.Uint64(ent.cookie)
		e.String(ent.name)
		c.encodeEntryAttrs(ent.name, req)
		dirBytes := 8 + 4 + len(ent.name)
		// 8 more bytes: the closing "no more entries" and eof bools.
		if e.Pos()-start+8 > maxcount || (dircount > 0 && count > 0 && used+dirBytes > dircount) {
			e.Truncate(mark)
			if count == 0 {
				return nfs4.ErrToosmall
			}
			e.Bool(false)
			e.Bool(false)
			return nfs4.OK
		}
		used += dirBytes
		count++
	}
	e.Bool(false)
	e.Bool(true)
	return nfs4.OK
}

// encodeEntryAttrs writes the fattr4 of one directory entry; an entry that
// vanished or cannot be read reports rdattr_error when asked for, else an
// empty attribute set.
func (c *compound) encodeEntryAttrs(name string, req nfs4.Bitmap) {
	dir := c.cfh
	var st unix.Stat_t
	var n *node
	var err error
	if dir.exp == nil {
		for _, ex := range c.s.exports {
			if ex.name == name {
				n = c.s.exportRoot(ex)
			}
		}
		if s := c.s.statNode(n, &st); s != nfs4.OK {
			err = unix.EIO
		}
	} else {
		n, err = c.s.lookupChild(dir, name, &st)
	}
	if err != nil {
		if req.Has(nfs4.AttrRdattrError) {
			b := nfs4.BitmapOf(nfs4.AttrRdattrError)
			b.Encode(c.e)
			c.e.Uint32(4)
			c.e.Uint32(errno(err))
			return
		}
		nfs4.Bitmap{}.Encode(c.e)
		c.e.Uint32(0)
		return
	}
	c.s.encodeFattr(c.e, req, &attrSource{n: n, st: &st})
}
