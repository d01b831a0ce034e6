package nfs

import (
	"encoding/binary"
	"hash/crc32"
	"net/netip"
	"sync"
	"time"
)

// The duplicate request cache (knfsd's nfscache.c), for NFSv3 and for
// NFSv4.0 COMPOUNDs (v40_drc.go): a client that lost a reply (a dropped
// connection, a timeout) sends the call again with the same xid, and a
// procedure that is not idempotent must not run twice: a REMOVE
// retransmitted after it succeeded would answer NFS3ERR_NOENT, a RENAME or
// LINK NFS3ERR_EXIST or NOENT, a CREATE GUARDED NFS3ERR_EXIST.
// Their replies are kept by client address (not port: a client reconnects
// from another one), xid, version, procedure and a checksum of the
// arguments, for drcTTL; a retransmit gets the kept reply, and one that
// arrives while the first is still running gets nothing (the client sends
// it again).
//
// Memory is bounded: drcMax replies of at most drcReplyMax bytes each,
// drcBytes in all. Each client address keeps its own queue (fairQueues,
// fair.go), and when the cache is full, in entries or bytes, the address
// holding the most gives up its oldest: a client creating files as fast as
// it can pushes out its own replies, not those another is waiting to
// retransmit for.

const (
	drcMax      = 4096            // replies kept, all clients together
	drcTTL      = 2 * time.Minute // how long a reply is kept
	drcSum      = 256             // NFSv3 argument bytes the checksum covers
	drcBytes    = 4 << 20         // reply bytes kept, all clients together
	drcReplyMax = 4 << 10         // a longer reply is not kept
)

type drcKey struct {
	addr            netip.Addr
	xid, vers, proc uint32
	sum             uint32
}

type drcEntry struct {
	reply []byte // nil while the call runs
	at    time.Time
}

// drc is the cache; its zero value is ready.
type drc struct {
	mu    sync.Mutex
	m     map[drcKey]*drcEntry
	q     fairQueues[drcKey] // the keys of m, by address (fair.go)
	bytes int                // reply bytes kept
}

// v3State is what the server keeps for NFSv3 and MOUNT. Its drc serves
// NFSv4.0 too (v40_drc.go).
type v3State struct {
	mounts mountList
	drc    drc
}

// drcProc reports whether proc's replies are cached: the procedures that
// change the namespace or attributes and would answer differently if run
// twice. WRITE is not (writing the same bytes twice is harmless), as in
// knfsd, which keeps only its status.
func drcProc(proc uint32) bool {
	switch proc {
	case nfs3Setattr, nfs3Create, nfs3Mkdir, nfs3Symlink, nfs3Mknod, nfs3Remove, nfs3Rmdir, nfs3Rename, nfs3Link:
		return true
	}
	return false
}

// drcKeyOf is the key of a call by cred; sum covers args, which the
// caller bounds (NFSv3: the first drcSum bytes), and the caller's ids and
// flavour: two users of one host (or two hosts behind one address) whose
// calls share an xid and arguments do not get each other's replies.
func drcKeyOf(c *Conn, cred *Cred, xid, vers, proc uint32, args []byte) drcKey {
	var who [12]byte
	binary.BigEndian.PutUint32(who[0:], cred.UID)
	binary.BigEndian.PutUint32(who[4:], cred.GID)
	binary.BigEndian.PutUint32(who[8:], cred.Flavor)
	sum := crc32.Update(crc32.ChecksumIEEE(args), crc32.IEEETable, who[:])
	return drcKey{addr: c.addr, xid: xid, vers: vers, proc: proc, sum: sum}
}

// start looks k up: a kept reply (replay), or inProgress when the first
// call is still running; otherwise k is entered as running.
func (d *drc) start(k drcKey, now time.Time) (replay []byte, inProgress bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.m[k]; ok {
		if now.Sub(e.at) < drcTTL {
			if e.reply == nil {
				return nil, true
			}
			return e.reply, false
		}
		// Expired: the call runs again, in the entry's place.
		d.bytes -= len(e.reply)
		e.reply, e.at = nil, now
		return nil, false
	}
	if d.m == nil {
		d.m = make(map[drcKey]*drcEntry)
		d.q.max = drcMax
	}
	if out, ok := d.q.push(k.addr, k); ok {
		d.drop(out)
	}
	d.m[k] = &drcEntry{at: now}
	return nil, false
}

// drop forgets k, a key the queues pushed out.
func (d *drc) drop(k drcKey) {
	if e := d.m[k]; e != nil {
		d.bytes -= len(e.reply)
		delete(d.m, k)
	}
}

// done keeps reply (copied) for k; a reply over drcReplyMax is not kept.
func (d *drc) done(k drcKey, reply []byte) {
	if len(reply) > drcReplyMax {
		d.forget(k)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.m[k]
	if e == nil || e.reply != nil {
		return
	}
	e.reply = append([]byte(nil), reply...)
	d.bytes += len(e.reply)
	for d.bytes > drcBytes {
		k, ok := d.q.popBig()
		if !ok {
			break
		}
		d.drop(k)
	}
}

// forget drops k (a call that gave no reply to keep).
func (d *drc) forget(k drcKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.m[k]
	if e == nil || e.reply != nil {
		return
	}
	delete(d.m, k)
	d.q.remove(k.addr, k)
}
