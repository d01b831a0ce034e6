package nfs

import (
	"hash/crc32"
	"net/netip"
	"sync"
	"time"
)

// The NFSv3 duplicate request cache (knfsd's nfscache.c): a client that
// lost a reply (a dropped connection, a timeout) sends the call again with
// the same xid, and a procedure that is not idempotent must not run twice:
// a REMOVE retransmitted after it succeeded would answer NFS3ERR_NOENT, a
// RENAME or LINK NFS3ERR_EXIST or NOENT, a CREATE GUARDED NFS3ERR_EXIST.
// Their replies are kept by client address (not port: a client reconnects
// from another one), xid, procedure and a checksum of the arguments, for
// drcTTL; a retransmit gets the kept reply, and one that arrives while the
// first is still running gets nothing (the client sends it again).

const (
	drcMax = 4096            // replies kept, oldest dropped first
	drcTTL = 2 * time.Minute // how long a reply is kept
	drcSum = 256             // argument bytes the checksum covers
)

type drcKey struct {
	addr      netip.Addr
	xid, proc uint32
	sum       uint32
}

type drcEntry struct {
	reply []byte // nil while the call runs
	at    time.Time
}

// drc is the cache; its zero value is ready.
type drc struct {
	mu   sync.Mutex
	m    map[drcKey]*drcEntry
	ring [drcMax]drcKey
	next int
}

// v3State is what the server keeps for NFSv3 and MOUNT.
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

func drcKeyOf(c *Conn, xid, proc uint32, args []byte) drcKey {
	return drcKey{addr: c.addr, xid: xid, proc: proc, sum: crc32.ChecksumIEEE(args[:min(len(args), drcSum)])}
}

// start looks k up: a kept reply (replay), or inProgress when the first
// call is still running; otherwise k is entered as running.
func (d *drc) start(k drcKey, now time.Time) (replay []byte, inProgress bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.m[k]; ok && now.Sub(e.at) < drcTTL {
		if e.reply == nil {
			return nil, true
		}
		return e.reply, false
	}
	if d.m == nil {
		d.m = make(map[drcKey]*drcEntry)
	}
	if old := d.ring[d.next]; d.m[old] != nil {
		delete(d.m, old)
	}
	d.ring[d.next] = k
	d.next = (d.next + 1) % drcMax
	d.m[k] = &drcEntry{at: now}
	return nil, false
}

// done keeps reply (copied) for k.
func (d *drc) done(k drcKey, reply []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.m[k]; e != nil {
		e.reply = append([]byte(nil), reply...)
	}
}

// forget drops k (a call that gave no reply to keep).
func (d *drc) forget(k drcKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e := d.m[k]; e != nil && e.reply == nil {
		delete(d.m, k)
	}
}
