package nfs

import (
	"crypto/rand"
	"encoding/binary"
	"net/netip"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/gss"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// RPCSEC_GSS procedures and services (RFC 2203 section 5).
const (
	gssProcData     = 0
	gssProcInit     = 1
	gssProcContinue = 2
	gssProcDestroy  = 3

	gssSvcNone  = 1 // krb5: the header is signed
	gssSvcInteg = 2 // krb5i: arguments and results too
	gssSvcPriv  = 3 // krb5p: arguments and results are encrypted

	gssMaxSeq = 0x80000000
	// gssWindow is the sequence window offered (RFC 2203 5.2.3.1); the
	// bitmap below holds this many.
	gssWindow = 128

	// Caps on contexts: past them the least recently used one of the
	// host (or of all) goes, and its client makes a new one.
	gssMaxPerHost = 64
	gssMaxTotal   = 4096
)

// gssCred is rpc_gss_cred_vers_1_t.
type gssCred struct {
	proc, seq, svc uint32
	handle         []byte // aliases the request
}

func (g *gssCred) decode(body []byte) bool {
	var d xdr.Decoder
	d.Reset(body)
	if d.Uint32() != 1 { // RPCSEC_GSS_VERS_1
		return false
	}
	g.proc = d.Uint32()
	g.seq = d.Uint32()
	g.svc = d.Uint32()
	g.handle = d.Opaque(nfs4MaxGSSHandle)
	return d.Err() == nil && d.Remaining() == 0 && g.proc <= gssProcDestroy &&
		g.svc >= gssSvcNone && g.svc <= gssSvcPriv
}

const nfs4MaxGSSHandle = 64

// gssCtx is one established context.
type gssCtx struct {
	id     uint64
	host   netip.Addr
	g      *gss.Context
	cred   Cred // what the principal maps to (before the export's squash)
	expiry time.Time
	used   atomic.Int64 // unix nanoseconds of the last call

	mu     sync.Mutex
	seqMax uint32
	seen   [gssWindow / 64]uint64 // bit i: seqMax-i was seen
	any    bool
}

// checkSeq applies the sequence window (RFC 2203 section 5.3.3.1): false
// for a number seen before or older than the window, which the caller
// drops without an answer.
func (x *gssCtx) checkSeq(seq uint32) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.any {
		x.any, x.seqMax = true, seq
		x.seen = [gssWindow / 64]uint64{1}
		return true
	}
	if seq > x.seqMax {
		shift := seq - x.seqMax
		x.shift(shift)
		x.seqMax = seq
		x.seen[0] |= 1
		return true
	}
	back := x.seqMax - seq
	if back >= gssWindow {
		return false
	}
	w, b := back/64, back%64
	if x.seen[w]&(1<<b) != 0 {
		return false
	}
	x.seen[w] |= 1 << b
	return true
}

// shift moves the bitmap n places towards older numbers.
func (x *gssCtx) shift(n uint32) {
	if n >= gssWindow {
		x.seen = [gssWindow / 64]uint64{}
		return
	}
	for ; n >= 64; n -= 64 {
		for i := len(x.seen) - 1; i > 0; i-- {
			x.seen[i] = x.seen[i-1]
		}
		x.seen[0] = 0
	}
	if n == 0 {
		return
	}
	for i := len(x.seen) - 1; i > 0; i-- {
		x.seen[i] = x.seen[i]<<n | x.seen[i-1]>>(64-n)
	}
	x.seen[0] <<= n
}

// gssServer holds the acceptor and the contexts.
type gssServer struct {
	acc      *gss.Acceptor
	anon     [2]uint32
	lookupFn func(name string) (Cred, bool) // the name service (tests replace it)

	mu     sync.Mutex
	ctxs   map[uint64]*gssCtx
	byHost map[netip.Addr]int

	refused atomic.Uint64 // calls refused: bad verifier, MIC, seal, token
	replays atomic.Uint64 // calls dropped by the sequence window
}

func newGSSServer(acc *gss.Acceptor, anonUID, anonGID uint32) *gssServer {
	if acc == nil {
		return nil
	}
	return &gssServer{acc: acc, anon: [2]uint32{anonUID, anonGID}, lookupFn: lookupUser,
		ctxs: map[uint64]*gssCtx{}, byHost: map[netip.Addr]int{}}
}

// lookupUser finds a local user through the name service (os/user:
// /etc/passwd and /etc/group without cgo).
func lookupUser(name string) (Cred, bool) {
	u, err := user.Lookup(name)
	if err != nil {
		return Cred{}, false
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return Cred{}, false
	}
	cr := Cred{UID: uint32(uid), GID: uint32(gid)}
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			n, err := strconv.ParseUint(g, 10, 32)
			if err != nil || uint32(n) == cr.GID || cr.NGIDs == maxAuxGIDs {
				continue
			}
			cr.GIDs[cr.NGIDs] = uint32(n)
			cr.NGIDs++
		}
	}
	return cr, true
}

// mapPrincipal turns a principal into the ids the server acts as:
// "user@REALM" of the service's own realm is the local user of that name;
// machine principals ("nfs/host", "host/host", any name with an
// instance), other realms and unknown users are the anonymous ids. Root
// squashing then applies to the result as to AUTH_SYS ids (root@REALM
// maps to uid 0 and is squashed unless no_root_squash).
func (g *gssServer) mapPrincipal(princ, serviceRealm string) Cred {
	cr := Cred{UID: g.anon[0], GID: g.anon[1]}
	at := strings.LastIndexByte(princ, '@')
	if at > 0 && princ[at+1:] == serviceRealm && !strings.Contains(princ[:at], "/") {
		if u, ok := g.lookupFn(princ[:at]); ok {
			cr = u
		}
	}
	cr.Flavor = 6
	cr.Principal = princ
	return cr
}

// add stores a new context for host, evicting the least recently used
// one of the host past gssMaxPerHost, or of all past gssMaxTotal.
func (g *gssServer) add(host netip.Addr, gc *gss.Context, serviceRealm string) *gssCtx {
	x := &gssCtx{host: host, g: gc, expiry: gc.Expiry, cred: g.mapPrincipal(gc.Initiator, serviceRealm)}
	x.used.Store(time.Now().UnixNano())
	var b [8]byte
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		rand.Read(b[:])
		x.id = binary.BigEndian.Uint64(b[:])
		if _, dup := g.ctxs[x.id]; !dup && x.id != 0 {
			break
		}
	}
	if g.byHost[host] >= gssMaxPerHost {
		g.evictLocked(host, true)
	}
	if len(g.ctxs) >= gssMaxTotal {
		g.evictLocked(host, false)
	}
	g.ctxs[x.id] = x
	g.byHost[host]++
	return x
}

func (g *gssServer) evictLocked(host netip.Addr, sameHost bool) {
	var old *gssCtx
	for _, x := range g.ctxs {
		if sameHost && x.host != host {
			continue
		}
		if old == nil || x.used.Load() < old.used.Load() {
			old = x
		}
	}
	if old != nil {
		g.dropLocked(old)
	}
}

func (g *gssServer) dropLocked(x *gssCtx) {
	if g.ctxs[x.id] != x {
		return
	}
	delete(g.ctxs, x.id)
	if g.byHost[x.host]--; g.byHost[x.host] <= 0 {
		delete(g.byHost, x.host)
	}
}

func (g *gssServer) drop(x *gssCtx) {
	g.mu.Lock()
	g.dropLocked(x)
	g.mu.Unlock()
}

// find returns the context of a handle.
func (g *gssServer) find(handle []byte) *gssCtx {
	if len(handle) != 8 {
		return nil
	}
	g.mu.Lock()
	x := g.ctxs[binary.BigEndian.Uint64(handle)]
	g.mu.Unlock()
	return x
}

// count is the number of contexts (tests, metrics).
func (g *gssServer) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.ctxs)
}
