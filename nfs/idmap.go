package nfs

import (
	"bufio"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// Owner strings (RFC 8881 section 5.9): the owner and owner_group
// attributes, and the "who" of an ACE, name a user or group as
// "name@domain" or, as knfsd sends and takes them for AUTH_SYS callers
// by default (nfs4_disable_idmapping), as the decimal id. This file maps
// them both ways through the system's name service (os/user: the
// passwd and group files, or libc's NSS where the binary has cgo), as
// nfsidmap's nsswitch method does for knfsd:
//
//   - Encoding: an AUTH_SYS (or AUTH_NONE) caller gets numeric strings,
//     unless Config.IdmapNames; an RPCSEC_GSS caller gets
//     "name@domain" (Config.IdmapDomain). An id with no name is
//     encoded numerically, as knfsd falls back to when the upcall fails.
//   - Decoding: a numeric string is the id; "name@domain" with this
//     server's domain (case-insensitive, as nfsidmap compares) is looked
//     up; a bare "name" too. Another domain, or a name the name service
//     does not know, is NFS4ERR_BADOWNER.
//
// Lookups are cached (idmapCacheSize entries, idmapTTL), failed ones too,
// so a client repeating an unknown name does not reach the name service
// each time.

const (
	idmapCacheSize = 4096
	idmapTTL       = 600 * time.Second
)

// idNames maps ids and owner strings both ways.
type idNames struct {
	domain string // lower case
	names  bool   // names for AUTH_SYS callers too (--idmap-names)

	// lookup functions; tests replace them.
	userByID, groupByID     func(id uint32) (string, bool)
	userByName, groupByName func(name string) (uint32, bool)

	mu    sync.Mutex
	cache map[idKey]idEntry
	now   func() time.Time
}

// idKey is a cache key: a kind (kindUID... below) and either an id or a
// name.
type idKey struct {
	kind byte
	id   uint32
	name string
}

const (
	kindUID   = 'u' // uid to name
	kindGID   = 'g' // gid to name
	kindUName = 'U' // user name to uid
	kindGName = 'G' // group name to gid
)

type idEntry struct {
	name    string
	id      uint32
	ok      bool
	expires time.Time
}

// newIDNames returns a mapper for domain (empty: defaultIdmapDomain).
func newIDNames(domain string, names bool) *idNames {
	if domain == "" {
		domain = defaultIdmapDomain()
	}
	return &idNames{
		domain:      strings.ToLower(domain),
		names:       names,
		userByID:    lookupUserByID,
		groupByID:   lookupGroupByID,
		userByName:  lookupUserByName,
		groupByName: lookupGroupByName,
		cache:       make(map[idKey]idEntry),
		now:         time.Now,
	}
}

// Domain is the NFSv4 domain owner strings carry.
func (m *idNames) Domain() string { return m.domain }

// useNames reports whether a caller of flavor gets names rather than
// numeric strings.
func (m *idNames) useNames(flavor uint32) bool {
	return m != nil && (m.names || flavor == nfs4.AuthGSS)
}

// defaultIdmapDomain is nfsidmap's default: the host's DNS domain (the
// part of its fully qualified name after the first dot, or resolv.conf's
// domain or first search entry), else "localdomain".
func defaultIdmapDomain() string {
	if h, err := os.Hostname(); err == nil {
		if _, d, ok := strings.Cut(h, "."); ok && d != "" {
			return d
		}
	}
	if f, err := os.Open("/etc/resolv.conf"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && (fields[0] == "domain" || fields[0] == "search") && fields[1] != "." {
				return strings.TrimSuffix(fields[1], ".")
			}
		}
	}
	return "localdomain"
}

func lookupUserByID(id uint32) (string, bool) {
	u, err := user.LookupId(strconv.FormatUint(uint64(id), 10))
	if err != nil {
		return "", false
	}
	return u.Username, true
}

func lookupGroupByID(id uint32) (string, bool) {
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(id), 10))
	if err != nil {
		return "", false
	}
	return g.Name, true
}

func lookupUserByName(name string) (uint32, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, false
	}
	id, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(id), err == nil
}

func lookupGroupByName(name string) (uint32, bool) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, false
	}
	id, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(id), err == nil
}

// get returns k's cached answer, if one is there and current.
func (m *idNames) get(k idKey, now time.Time) (idEntry, bool) {
	m.mu.Lock()
	e, ok := m.cache[k]
	m.mu.Unlock()
	return e, ok && now.Before(e.expires)
}

// put caches e (an answer or a failure) for k until idmapTTL from now.
func (m *idNames) put(k idKey, e idEntry, now time.Time) {
	e.expires = now.Add(idmapTTL)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.cache) >= idmapCacheSize {
		// Drop the expired entries, and when that is not enough an
		// arbitrary eighth: the cache stays bounded whatever clients
		// ask.
		for key, old := range m.cache {
			if !now.Before(old.expires) {
				delete(m.cache, key)
			}
		}
		for key := range m.cache {
			if len(m.cache) < idmapCacheSize-idmapCacheSize/8 {
				break
			}
			delete(m.cache, key)
		}
	}
	m.cache[k] = e
}

// appendOwner appends the owner string for uid (group: gid) as a caller
// of flavor sees it.
func (m *idNames) appendOwner(b []byte, id uint32, group bool, flavor uint32) []byte {
	if !m.useNames(flavor) {
		return strconv.AppendUint(b, uint64(id), 10)
	}
	kind := byte(kindUID)
	look := m.userByID
	if group {
		kind, look = kindGID, m.groupByID
	}
	k, now := idKey{kind: kind, id: id}, m.now()
	e, ok := m.get(k, now)
	if !ok {
		name, found := look(id)
		if found {
			name += "@" + m.domain
		}
		e = idEntry{name: name, ok: found}
		m.put(k, e, now)
	}
	if !e.ok {
		return strconv.AppendUint(b, uint64(id), 10)
	}
	return append(b, e.name...)
}

// ownerString is appendOwner as a string.
func (m *idNames) ownerString(id uint32, group bool, flavor uint32) string {
	var buf [64]byte
	return string(m.appendOwner(buf[:0], id, group, flavor))
}

// parse maps an owner string to a uid (group: gid). Numeric strings are
// taken for every flavor; names must carry this server's domain (or
// none) and be known to the name service, else NFS4ERR_BADOWNER.
func (m *idNames) parse(s string, group bool) (uint32, nfs4.Status) {
	if id, ok := numericID(s); ok {
		return id, nfs4.OK
	}
	if m == nil {
		return 0, nfs4.ErrBadowner
	}
	name, dom, hasDom := strings.Cut(s, "@")
	if name == "" || hasDom && !strings.EqualFold(dom, m.domain) {
		return 0, nfs4.ErrBadowner
	}
	kind := byte(kindUName)
	look := m.userByName
	if group {
		kind, look = kindGName, m.groupByName
	}
	k, now := idKey{kind: kind, name: name}, m.now()
	e, ok := m.get(k, now)
	if !ok {
		id, found := look(name)
		e = idEntry{id: id, ok: found}
		m.put(k, e, now)
	}
	if !e.ok {
		return 0, nfs4.ErrBadowner
	}
	return e.id, nfs4.OK
}

// numericID parses a decimal id (digits only, fitting 32 bits).
func numericID(s string) (uint32, bool) {
	if s == "" || len(s) > 32 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseUint(s, 10, 32)
	return uint32(id), err == nil
}
