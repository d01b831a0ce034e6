package nfs

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/metrics"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// nlmPeer is an NLM host as the tests play it: calls from its own
// connection (address) under its caller_name.
type nlmPeer struct {
	h    *harness
	conn *Conn
	name string
	uid  uint32 // AUTH_SYS uid and gid of its calls
}

func (h *harness) nlmPeer(remote, name string) *nlmPeer {
	return &nlmPeer{h: h, conn: NewConn(remote), name: name}
}

// rpc sends one call of prog/vers/proc from the peer and returns the
// reply after its accepted header (stat checked).
func (p *nlmPeer) rpc(prog, vers, proc, acceptStat uint32, args func(e *xdr.Encoder)) *xdr.Decoder {
	h := p.h
	h.t.Helper()
	h.xid++
	e := xdr.NewEncoder(256)
	callHeaderAs(e, h.xid, prog, vers, proc, p.uid)
	if args != nil {
		args(e)
	}
	saved := h.conn
	h.conn = p.conn
	rep := h.record(e.AppendTo(nil))
	h.conn = saved
	d := xdr.NewDecoder(rep)
	h.acceptedHeader(d, h.xid, acceptStat)
	return d
}

func (p *nlmPeer) alock(e *xdr.Encoder, fh []byte, svid int32, off, length uint64) {
	e.String(p.name)
	e.Opaque(fh)
	e.Opaque([]byte(fmt.Sprintf("%d@%s", svid, p.name)))
	e.Int32(svid)
	e.Uint64(off)
	e.Uint64(length)
}

// res reads nlm4_res and checks the cookie.
func (p *nlmPeer) res(d *xdr.Decoder) uint32 {
	p.h.t.Helper()
	if c := d.Opaque(nlmMaxNetobj); string(c) != "ck" {
		p.h.t.Fatalf("cookie %q", c)
	}
	st := d.Uint32()
	if d.Err() != nil {
		p.h.t.Fatal(d.Err())
	}
	return st
}

func (p *nlmPeer) lock(fh []byte, svid int32, off, length uint64, block, excl, reclaim bool) uint32 {
	return p.res(p.rpc(NLMProgram, NLMVersion, nlmProcLock, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
		e.Opaque([]byte("ck"))
		e.Bool(block)
		e.Bool(excl)
		p.alock(e, fh, svid, off, length)
		e.Bool(reclaim)
		e.Int32(1)
	}))
}

func (p *nlmPeer) test(fh []byte, svid int32, off, length uint64, excl bool) (uint32, nlmHolder) {
	d := p.rpc(NLMProgram, NLMVersion, nlmProcTest, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
		e.Opaque([]byte("ck"))
		e.Bool(excl)
		p.alock(e, fh, svid, off, length)
	})
	st := p.res(d)
	var hd nlmHolder
	if st == nlmDenied {
		hd = nlmHolder{exclusive: d.Bool(), svid: d.Int32(), oh: d.Opaque(nlmMaxNetobj), offset: d.Uint64(), length: d.Uint64()}
	}
	return st, hd
}

func (p *nlmPeer) unlockOrCancel(proc uint32, fh []byte, svid int32, off, length uint64) uint32 {
	return p.res(p.rpc(NLMProgram, NLMVersion, proc, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
		e.Opaque([]byte("ck"))
		if proc == nlmProcCancel {
			e.Bool(true)
			e.Bool(true)
		}
		p.alock(e, fh, svid, off, length)
	}))
}

func (p *nlmPeer) unlock(fh []byte, svid int32, off, length uint64) uint32 {
	return p.unlockOrCancel(nlmProcUnlock, fh, svid, off, length)
}

// newNLMHarness is newHarness with the NLM settings: the clients'
// rpcbind at rpcbindPort, and an existing export and state directory
// when given (a restart).
func newNLMHarness(t *testing.T, dir, state string, rpcbindPort int) *harness {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	if state == "" {
		state = t.TempDir()
	}
	s, err := NewServer(Config{Exports: []Export{{Path: dir}}, StateDir: state, NSMName: "srv", NSMRPCBindPort: rpcbindPort})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, s: s, conn: NewConn("127.0.0.1:900"), dir: dir, state: state}
}

// nlmFile makes file name through an NFSv4 OPEN and returns its handle
// and the open stateid.
func (h *harness) nlmFile(name string) ([]byte, nfs4.Stateid) {
	h.t.Helper()
	st, open := h.openFile(name, "o-"+name, nfs4.ShareAccessBoth)
	if st != nfs4.OK {
		h.t.Fatalf("OPEN %s: %d", name, st)
	}
	return h.lookupFH(name), open
}

// TestNLMLockTestUnlock: LOCK, TEST, UNLOCK between two hosts and two
// owners of one host, over wire bytes; bad handles, garbage and versions.
func TestNLMLockTestUnlock(t *testing.T) {
	h := newHarness(t)
	h.session()
	fh, _ := h.nlmFile("f")
	a := h.nlmPeer("127.0.0.1:800", "hosta")
	b := h.nlmPeer("127.0.0.2:800", "hostb")

	if st := a.lock(fh, 1, 0, 10, false, true, false); st != nlmGranted {
		t.Fatalf("LOCK: %d", st)
	}
	if st := a.lock(fh, 1, 5, 10, false, true, false); st != nlmGranted {
		t.Fatalf("LOCK by the owner over its own lock: %d", st)
	}
	st, hd := a.test(fh, 2, 3, 1, false)
	if st != nlmDenied || !hd.exclusive || hd.svid != 1 || string(hd.oh) != "1@hosta" {
		t.Fatalf("TEST by another owner: %d %+v", st, hd)
	}
	if st, _ := a.test(fh, 1, 3, 1, true); st != nlmGranted {
		t.Fatalf("TEST by the owner: %d", st)
	}
	if st := b.lock(fh, 7, 14, 0, false, false, false); st != nlmDenied {
		t.Fatalf("shared LOCK to EOF over an exclusive range: %d", st)
	}
	if st := b.lock(fh, 7, 15, 0, false, false, false); st != nlmGranted {
		t.Fatalf("shared LOCK past it: %d", st)
	}
	if st := a.unlock(fh, 1, 0, 0); st != nlmGranted {
		t.Fatalf("UNLOCK: %d", st)
	}
	if st := b.lock(fh, 7, 0, 15, false, true, false); st != nlmGranted {
		t.Fatalf("LOCK after UNLOCK: %d", st)
	}
	if st := a.unlock(fh, 9, 0, 0); st != nlmGranted {
		t.Fatalf("UNLOCK of nothing: %d", st)
	}
	if st := a.lock([]byte("not a handle"), 1, 0, 1, false, true, false); st != nlmStaleFH {
		t.Fatalf("LOCK with a bad handle: %d", st)
	}
	// Garbage arguments, a version we do not serve, an unknown procedure.
	a.rpc(NLMProgram, NLMVersion, nlmProcLock, nfs4.AcceptGarbageArgs, func(e *xdr.Encoder) { e.Uint32(3) })
	d := a.rpc(NLMProgram, 1, nlmProcLock, nfs4.AcceptProgMismatch, nil)
	if lo, hi := d.Uint32(), d.Uint32(); lo != 4 || hi != 4 {
		t.Fatalf("mismatch %d..%d", lo, hi)
	}
	a.rpc(NLMProgram, NLMVersion, 19, nfs4.AcceptProcUnavail, nil)
	a.rpc(NLMProgram, NLMVersion, nlmProcNull, nfs4.AcceptSuccess, nil)
	a.rpc(NSMProgram, NSMVersion, nsmProcNull, nfs4.AcceptSuccess, nil)

	// Counted per procedure and status (nfsd_uring_procedures_total).
	want := map[metrics.ProcKey]bool{
		{Prog: NLMProgram, Vers: NLMVersion, Proc: nlmProcLock, Status: "LCK_GRANTED"}:  true,
		{Prog: NLMProgram, Vers: NLMVersion, Proc: nlmProcLock, Status: "LCK_DENIED"}:   true,
		{Prog: NLMProgram, Vers: NLMVersion, Proc: nlmProcLock, Status: "GARBAGE_ARGS"}: true,
		{Prog: NLMProgram, Vers: 1, Proc: nlmProcLock, Status: "PROG_MISMATCH"}:         true,
		{Prog: NLMProgram, Vers: NLMVersion, Proc: 19, Status: "PROC_UNAVAIL"}:          true,
		{Prog: NSMProgram, Vers: NSMVersion, Proc: nsmProcNull, Status: "OK"}:           true,
	}
	for _, pc := range h.s.stats.ProcCounts() {
		delete(want, pc.ProcKey)
	}
	if len(want) != 0 {
		t.Fatalf("not counted: %v", want)
	}
	if ProcName(NLMProgram, NLMVersion, nlmProcFreeAll) != "FREE_ALL" || ProgramName(NSMProgram) != "nsm" {
		t.Fatal("names")
	}
}

// TestNLMConflictsWithV4Locks: one lock table. An NFSv4 lock keeps an NLM
// LOCK out (and TEST names it), and an NLM lock keeps an NFSv4 LOCK out
// (LOCK4denied names the NLM owner).
func TestNLMConflictsWithV4Locks(t *testing.T) {
	h := newHarness(t)
	h.session()
	fh, open := h.nlmFile("f")
	a := h.nlmPeer("127.0.0.1:800", "hosta")

	st, lsid := h.lock(fh, open, nfs4.Stateid{}, 0, 10)
	lsid.Seqid = 0 // the current one, whatever LOCKU made it
	if st != nfs4.OK {
		t.Fatalf("v4 LOCK: %d", st)
	}
	if st := a.lock(fh, 1, 5, 1, false, false, false); st != nlmDenied {
		t.Fatalf("NLM LOCK over a v4 lock: %d", st)
	}
	if st, hd := a.test(fh, 1, 0, 0, false); st != nlmDenied || !hd.exclusive || hd.offset != 0 || hd.length != 10 {
		t.Fatalf("NLM TEST over a v4 lock: %d %+v", st, hd)
	}
	if st := h.opStatus(fh, nfs4.OpLocku, func(e *xdr.Encoder) {
		e.Uint32(writeLT)
		e.Uint32(0)
		lsid.Encode(e)
		e.Uint64(0)
		e.Uint64(10)
	}); st != nfs4.OK {
		t.Fatalf("LOCKU: %d", st)
	}
	if st := a.lock(fh, 1, 5, 1, false, false, false); st != nlmGranted {
		t.Fatalf("NLM LOCK after LOCKU: %d", st)
	}
	if st := h.opStatus(fh, nfs4.OpLockt, func(e *xdr.Encoder) {
		e.Uint32(writeLT)
		e.Uint64(0)
		e.Uint64(^uint64(0))
		e.Uint64(h.clientID())
		e.String("x")
	}); st != nfs4.ErrDenied {
		t.Fatalf("v4 LOCKT over an NLM lock: %d", st)
	}
	if st, _ := h.lock(fh, open, lsid, 0, 10); st != nfs4.ErrDenied {
		t.Fatalf("v4 LOCK over an NLM lock: %d", st)
	}
	if st := a.unlock(fh, 1, 0, 0); st != nlmGranted {
		t.Fatal(st)
	}
	if st, _ := h.lock(fh, open, lsid, 0, 10); st != nfs4.OK {
		t.Fatalf("v4 LOCK after NLM UNLOCK: %d", st)
	}
}

// fakePeer plays a client machine's rpcbind, lockd and statd on
// 127.0.0.1: GETPORT answers its own ports, NLM GRANTED and SM_NOTIFY
// are recorded and answered with grantedStat.
type fakePeer struct {
	udp         net.PacketConn
	tcp         net.Listener
	calls       chan fakeCall
	grantedStat atomic.Uint32
}

type fakeCall struct {
	prog, proc uint32
	args       []byte
}

func newFakePeer(t *testing.T) *fakePeer {
	t.Helper()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{udp: udp, tcp: tcp, calls: make(chan fakeCall, 64)}
	t.Cleanup(func() { udp.Close(); tcp.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			if rep := p.answer(buf[:n]); rep != nil {
				udp.WriteTo(rep, from)
			}
		}
	}()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rr := xdr.NewRecordReader(c, 1<<20)
				for {
					rec, err := rr.Next()
					if err != nil {
						return
					}
					rep := p.answer(rec)
					e := xdr.NewEncoder(4)
					e.Uint32(xdr.RecordMark(len(rep)))
					c.Write(append(e.Header(), rep...))
				}
			}()
		}
	}()
	return p
}

func (p *fakePeer) port() int { return p.udp.LocalAddr().(*net.UDPAddr).Port }

func (p *fakePeer) answer(rec []byte) []byte {
	d := xdr.NewDecoder(rec)
	xid := d.Uint32()
	d.Uint32()
	d.Uint32()
	prog, _, proc := d.Uint32(), d.Uint32(), d.Uint32()
	d.Uint32()
	d.Opaque(400)
	d.Uint32()
	d.Opaque(400)
	if d.Err() != nil {
		return nil
	}
	e := xdr.NewEncoder(64)
	e.Uint32(xid)
	e.Uint32(nfs4.MsgReply)
	e.Uint32(nfs4.MsgAccepted)
	e.Uint32(0)
	e.Uint32(0)
	e.Uint32(nfs4.AcceptSuccess)
	switch prog {
	case rpcbindProgram:
		d.Uint32()
		d.Uint32()
		if d.Uint32() == ipprotoTCP {
			e.Uint32(uint32(p.tcp.Addr().(*net.TCPAddr).Port))
		} else {
			e.Uint32(uint32(p.port()))
		}
		return e.AppendTo(nil)
	case NLMProgram:
		cookie := d.Opaque(nlmMaxNetobj)
		e.Opaque(cookie)
		e.Uint32(p.grantedStat.Load())
	}
	p.calls <- fakeCall{prog, proc, bytes.Clone(d.Rest())}
	return e.AppendTo(nil)
}

func (p *fakePeer) next(t *testing.T) fakeCall {
	t.Helper()
	select {
	case c := <-p.calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no call came to the fake client")
	}
	return fakeCall{}
}

// TestNLMBlockingLockGranted: a blocking LOCK that conflicts is
// LCK_BLOCKED; when the NLM lock in its way goes, and again when a v4
// lock in its way goes (LOCKU), the server takes the lock for the waiter
// and tells its lockd with NLM_GRANTED. CANCEL takes a waiter off.
func TestNLMBlockingLockGranted(t *testing.T) {
	fake := newFakePeer(t)
	h := newNLMHarness(t, "", "", fake.port())
	defer h.s.Close()
	h.session()
	fh, open := h.nlmFile("f")
	a := h.nlmPeer("127.0.0.2:800", "hosta")
	b := h.nlmPeer("127.0.0.1:801", "hostb") // the fake's address: callbacks reach it

	if st := a.lock(fh, 1, 0, 100, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	if st := b.lock(fh, 2, 50, 10, true, true, false); st != nlmBlocked {
		t.Fatalf("blocking LOCK: %d", st)
	}
	if st := b.lock(fh, 2, 50, 10, true, true, false); st != nlmBlocked {
		t.Fatalf("blocking LOCK re-sent: %d", st)
	}
	if st := a.unlock(fh, 1, 0, 0); st != nlmGranted {
		t.Fatal(st)
	}
	c := fake.next(t)
	if c.prog != NLMProgram || c.proc != nlmProcGranted {
		t.Fatalf("callback %d/%d", c.prog, c.proc)
	}
	d := xdr.NewDecoder(c.args)
	excl := d.Bool()
	l := decodeNLMLock(d)
	if !excl || l.svid != 2 || l.offset != 50 || l.length != 10 || !bytes.Equal(l.fh, fh) || string(l.callerName) != "srv" {
		t.Fatalf("GRANTED args %v %+v", excl, l)
	}
	if st, hd := a.test(fh, 1, 0, 0, false); st != nlmDenied || hd.svid != 2 {
		t.Fatalf("TEST after the grant: %d %+v", st, hd)
	}
	waitFor(t, func() bool { return h.nlmBlocks() == 0 }) // the host took it
	if st := b.unlock(fh, 2, 50, 10); st != nlmGranted {
		t.Fatal(st)
	}

	// A v4 lock in the way, released by LOCKU.
	st, lsid := h.lock(fh, open, nfs4.Stateid{}, 0, 10)
	lsid.Seqid = 0 // the current one, whatever LOCKU made it
	if st != nfs4.OK {
		t.Fatal(st)
	}
	if st := b.lock(fh, 3, 0, 1, true, false, false); st != nlmBlocked {
		t.Fatalf("blocking shared LOCK under a v4 lock: %d", st)
	}
	if st := h.opStatus(fh, nfs4.OpLocku, func(e *xdr.Encoder) {
		e.Uint32(writeLT)
		e.Uint32(0)
		lsid.Encode(e)
		e.Uint64(0)
		e.Uint64(10)
	}); st != nfs4.OK {
		t.Fatal(st)
	}
	c = fake.next(t)
	d = xdr.NewDecoder(c.args)
	if excl, l := d.Bool(), decodeNLMLock(d); c.proc != nlmProcGranted || excl || l.svid != 3 {
		t.Fatalf("GRANTED after LOCKU: %d %v %+v", c.proc, excl, l)
	}
	if st, _ := h.lock(fh, open, lsid, 0, 10); st != nfs4.ErrDenied {
		t.Fatalf("v4 LOCK over the granted NLM lock: %d", st)
	}
	if st := b.unlock(fh, 3, 0, 1); st != nlmGranted {
		t.Fatal(st)
	}

	// CANCEL: the waiter goes, nothing is granted.
	if st := a.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	if st := b.lock(fh, 4, 0, 1, true, true, false); st != nlmBlocked {
		t.Fatal(st)
	}
	if st := b.unlockOrCancel(nlmProcCancel, fh, 4, 0, 1); st != nlmGranted {
		t.Fatalf("CANCEL: %d", st)
	}
	if n := h.nlmBlocks(); n != 0 {
		t.Fatalf("%d blocks after CANCEL", n)
	}
	if st := a.unlock(fh, 1, 0, 0); st != nlmGranted {
		t.Fatal(st)
	}
	select {
	case c := <-fake.calls:
		t.Fatalf("callback %d after CANCEL", c.proc)
	case <-time.After(200 * time.Millisecond):
	}
	// The grant refused by the host: the lock is released.
	fake.grantedStat.Store(nlmDenied)
	if st := a.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	if st := b.lock(fh, 5, 0, 1, true, true, false); st != nlmBlocked {
		t.Fatal(st)
	}
	a.unlock(fh, 1, 0, 0)
	fake.next(t)
	waitFor(t, func() bool { return h.nlmBlocks() == 0 })
	if st, _ := a.test(fh, 1, 0, 0, true); st != nlmGranted {
		t.Fatalf("TEST after a refused grant: %d", st)
	}
}

func (h *harness) nlmBlocks() int {
	h.s.state.mu.Lock()
	defer h.s.state.mu.Unlock()
	return len(h.s.nlm.blocks)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached")
}

// TestNLMFreeAllAndShare: FREE_ALL from the host releases its locks, and
// only from its own address; SHARE reservations conflict by mode and
// access.
func TestNLMFreeAllAndShare(t *testing.T) {
	h := newHarness(t)
	h.session()
	fh, _ := h.nlmFile("f")
	a := h.nlmPeer("127.0.0.1:800", "hosta")
	b := h.nlmPeer("127.0.0.2:800", "hostb")
	if st := a.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	freeAll := func(p *nlmPeer, name string) {
		p.rpc(NLMProgram, NLMVersion, nlmProcFreeAll, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
			e.String(name)
			e.Int32(3)
		})
	}
	freeAll(b, "hosta") // not from hosta's address
	if st := b.lock(fh, 1, 0, 0, false, true, false); st != nlmDenied {
		t.Fatalf("LOCK after another host's FREE_ALL: %d", st)
	}
	freeAll(a, "hosta")
	if st := b.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatalf("LOCK after FREE_ALL: %d", st)
	}

	share := func(p *nlmPeer, proc, mode, access uint32) uint32 {
		d := p.rpc(NLMProgram, NLMVersion, proc, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
			e.Opaque([]byte("ck"))
			e.String(p.name)
			e.Opaque(fh)
			e.Opaque([]byte("oh"))
			e.Uint32(mode)
			e.Uint32(access)
			e.Bool(false)
		})
		st := p.res(d)
		d.Int32()
		return st
	}
	if st := share(a, nlmProcShare, 2, 1); st != nlmGranted { // read, deny write
		t.Fatal(st)
	}
	if st := share(b, nlmProcShare, 0, 2); st != nlmDenied { // write
		t.Fatalf("SHARE for writing under deny-write: %d", st)
	}
	if st := share(b, nlmProcShare, 0, 1); st != nlmGranted {
		t.Fatalf("SHARE for reading: %d", st)
	}
	if st := share(a, nlmProcUnshare, 0, 0); st != nlmGranted {
		t.Fatal(st)
	}
	if st := share(a, nlmProcShare, 0, 2); st != nlmGranted {
		t.Fatalf("SHARE for writing after UNSHARE: %d", st)
	}
}

// TestNSMHostsFileSurvivesRestart: a host holding a lock is in the hosts
// file; after a restart the server sends SM_NOTIFY to its statd (found
// through its rpcbind) with the next odd state number, is in grace
// (reclaims only, for NLM and NFSv4 alike), and the reclaim works.
func TestNSMHostsFileSurvivesRestart(t *testing.T) {
	fake := newFakePeer(t)
	h := newNLMHarness(t, "", "", fake.port())
	h.session()
	fh, _ := h.nlmFile("f")
	b := h.nlmPeer("127.0.0.1:801", "hostb")
	if st := b.lock(fh, 2, 0, 10, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	data, err := os.ReadFile(filepath.Join(h.state, nlmHostsFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "state 1\nhost 127.0.0.1 \"hostb\"\n" {
		t.Fatalf("hosts file %q", data)
	}
	h.s.Close()

	h2 := newNLMHarness(t, h.dir, h.state, fake.port())
	defer h2.s.Close()
	c := fake.next(t)
	d := xdr.NewDecoder(c.args)
	if name, state := d.String(nsmMaxName), d.Uint32(); c.prog != NSMProgram || c.proc != nsmProcNotify || string(name) != "srv" || state != 3 {
		t.Fatalf("SM_NOTIFY %d/%d %q %d", c.prog, c.proc, name, state)
	}
	b2 := h2.nlmPeer("127.0.0.1:801", "hostb")
	a2 := h2.nlmPeer("127.0.0.2:800", "hosta")
	if st := a2.lock(fh, 1, 20, 1, false, true, false); st != nlmDeniedGrace {
		t.Fatalf("new LOCK in grace: %d", st)
	}
	if st, _ := a2.test(fh, 1, 0, 1, true); st != nlmDeniedGrace {
		t.Fatalf("TEST in grace: %d", st)
	}
	if st := b2.lock(fh, 2, 0, 10, false, true, true); st != nlmGranted {
		t.Fatalf("reclaim in grace: %d", st)
	}
	h2.s.state.mu.Lock()
	inGrace := h2.s.state.inGraceLocked()
	h2.s.state.mu.Unlock()
	if !inGrace {
		t.Fatal("no grace period after a restart with NLM hosts")
	}
	// The notified host stays in the file as it holds a lock again.
	waitFor(t, func() bool {
		data, _ := os.ReadFile(filepath.Join(h.state, nlmHostsFile))
		return string(data) == "state 3\nhost 127.0.0.1 \"hostb\"\n"
	})
	// After the grace period, reclaims are refused and new locks granted.
	h2.s.state.mu.Lock()
	h2.s.state.grace.until = time.Now()
	h2.s.state.mu.Unlock()
	if st := b2.lock(fh, 2, 0, 10, false, true, true); st != nlmDeniedGrace {
		t.Fatalf("reclaim after grace: %d", st)
	}
	if st := a2.lock(fh, 1, 20, 1, false, true, false); st != nlmGranted {
		t.Fatalf("new LOCK after grace: %d", st)
	}
}

// TestNSMNotifyFreesLocks: SM_NOTIFY from a rebooted host releases its
// locks, but only when it comes from the host's address; SM_MON is for
// local callers only; SM_STAT gives the odd state number.
func TestNSMNotifyFreesLocks(t *testing.T) {
	h := newHarness(t)
	h.session()
	fh, _ := h.nlmFile("f")
	a := h.nlmPeer("127.0.0.1:800", "hosta")
	b := h.nlmPeer("127.0.0.2:800", "hostb")
	if st := b.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	notify := func(p *nlmPeer, name string) {
		p.rpc(NSMProgram, NSMVersion, nsmProcNotify, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
			e.String(name)
			e.Int32(5)
		})
	}
	notify(a, "hostb")
	if st := a.lock(fh, 1, 0, 0, false, true, false); st != nlmDenied {
		t.Fatalf("LOCK after an SM_NOTIFY from elsewhere: %d", st)
	}
	notify(b, "HOSTB")
	if st := a.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatalf("LOCK after the host's SM_NOTIFY: %d", st)
	}

	mon := func(p *nlmPeer) uint32 {
		d := p.rpc(NSMProgram, NSMVersion, nsmProcMon, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
			e.String("peer")
			e.String("me")
			e.Uint32(NLMProgram)
			e.Uint32(NLMVersion)
			e.Uint32(16)
			e.Fixed(make([]byte, 16))
		})
		st, state := d.Uint32(), d.Uint32()
		if state&1 == 0 {
			t.Fatalf("state %d is even", state)
		}
		return st
	}
	if st := mon(a); st != nsmStatSucc {
		t.Fatalf("SM_MON from loopback: %d", st)
	}
	if st := mon(h.nlmPeer("10.1.1.1:800", "x")); st != nsmStatFail {
		t.Fatalf("SM_MON from a remote host: %d", st)
	}
	h.nlmPeer("127.0.0.1:1", "x").rpc(NSMProgram, NSMVersion, nsmProcUnmonAll, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
		e.String("me")
		e.Uint32(NLMProgram)
		e.Uint32(NLMVersion)
		e.Uint32(16)
	})
	if n := len(h.s.nlm.nsm.monitors); n != 0 {
		t.Fatalf("%d monitors after SM_UNMON_ALL", n)
	}
	d := a.rpc(NSMProgram, NSMVersion, nsmProcStat, nfs4.AcceptSuccess, func(e *xdr.Encoder) { e.String("x") })
	if st, state := d.Uint32(), d.Uint32(); st != nsmStatSucc || state != 1 {
		t.Fatalf("SM_STAT %d %d", st, state)
	}
}

// TestNSMOverUDP: ServeNSM answers datagrams, and drops NFS calls.
func TestNSMOverUDP(t *testing.T) {
	h := newHarness(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.s.ServeNSM(pc) }()
	addr := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	body, err := rpcCall("udp", addr, NSMProgram, NSMVersion, nsmProcStat, "t", func(e *xdr.Encoder) { e.String("x") })
	if err != nil {
		t.Fatal(err)
	}
	if d := xdr.NewDecoder(body); d.Uint32() != nsmStatSucc || d.Uint32() != 1 {
		t.Fatalf("SM_STAT over UDP: %x", body)
	}
	pc.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNLMHostsFileParse(t *testing.T) {
	state, hosts, err := parseHostsFile([]byte("state 7\nhost 10.0.0.1 \"a b\"\nhost ::1 \"c\"\n"))
	if err != nil || state != 7 || len(hosts) != 2 || hosts[0].name != "a b" || hosts[1].addr.String() != "::1" {
		t.Fatalf("%d %v %v", state, hosts, err)
	}
	for _, bad := range []string{"state x\n", "host 1.2.3.4 noquote\n", "host nope \"a\"\n", "what\n"} {
		if _, _, err := parseHostsFile([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestNLMExpiresCourtesyClient: an NFSv4 client whose lease ran out keeps
// its lock as a courtesy client until an NLM LOCK needs the range, as
// until a v4 LOCK does.
func TestNLMExpiresCourtesyClient(t *testing.T) {
	h := newHarness(t)
	h.session()
	fh, open := h.nlmFile("f")
	if st, _ := h.lock(fh, open, nfs4.Stateid{}, 0, 10); st != nfs4.OK {
		t.Fatal(st)
	}
	a := h.nlmPeer("127.0.0.1:800", "hosta")
	if st := a.lock(fh, 1, 0, 1, false, true, false); st != nlmDenied {
		t.Fatalf("NLM LOCK over a live v4 lock: %d", st)
	}
	h.s.state.mu.Lock()
	h.s.state.clients[h.clid].renewed.Store(time.Now().Add(-time.Hour).UnixNano())
	h.s.state.mu.Unlock()
	if st := a.lock(fh, 1, 0, 1, false, true, false); st != nlmGranted {
		t.Fatalf("NLM LOCK over a courtesy client's lock: %d", st)
	}
}

// TestNLMGraceHoldsV4: a restart with only NLM hosts recorded (no NFSv4
// client) still starts the grace period, and NFSv4 clients wait in it too
// (OPEN answers NFS4ERR_GRACE).
func TestNLMGraceHoldsV4(t *testing.T) {
	fake := newFakePeer(t)
	h := newNLMHarness(t, "", "", fake.port())
	h.session()
	fh, _ := h.nlmFile("f")
	if st := h.nlmPeer("127.0.0.1:801", "hostb").lock(fh, 2, 0, 10, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	h.s.Close()
	if err := os.Remove(filepath.Join(h.state, "clients")); err != nil {
		t.Fatal(err)
	}
	h2 := newNLMHarness(t, h.dir, h.state, fake.port())
	defer h2.s.Close()
	fake.next(t) // SM_NOTIFY
	h2.session()
	if st, _ := h2.openFile("f", "o2", nfs4.ShareAccessBoth); st != nfs4.ErrGrace {
		t.Fatalf("v4 OPEN in the NLM grace period: %d", st)
	}
}

// TestNLMAsyncMsg: LOCK_MSG is answered by a LOCK_RES call to the host's
// lockd with the result and the request's cookie.
func TestNLMAsyncMsg(t *testing.T) {
	fake := newFakePeer(t)
	h := newNLMHarness(t, "", "", fake.port())
	defer h.s.Close()
	h.session()
	fh, _ := h.nlmFile("f")
	b := h.nlmPeer("127.0.0.1:801", "hostb")
	b.rpc(NLMProgram, NLMVersion, nlmProcLockMsg, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
		e.Opaque([]byte("ck"))
		e.Bool(false)
		e.Bool(true)
		b.alock(e, fh, 1, 0, 10)
		e.Bool(false)
		e.Int32(1)
	})
	c := fake.next(t)
	if c.prog != NLMProgram || c.proc != nlmProcLockRes {
		t.Fatalf("callback %d/%d", c.prog, c.proc)
	}
	// The fake read the cookie; the status follows.
	if d := xdr.NewDecoder(c.args); d.Uint32() != nlmGranted {
		t.Fatalf("LOCK_RES %x", c.args)
	}
	if st, _ := h.nlmPeer("127.0.0.2:1", "hosta").test(fh, 1, 0, 1, true); st != nlmDenied {
		t.Fatalf("TEST after LOCK_MSG: %d", st)
	}
}

// TestNLMIdleHostForgotten: a host that holds nothing any more leaves the
// hosts file after nlmHostIdle.
func TestNLMIdleHostForgotten(t *testing.T) {
	h := newNLMHarness(t, "", "", 1)
	defer h.s.Close()
	h.session()
	fh, _ := h.nlmFile("f")
	b := h.nlmPeer("127.0.0.1:801", "hostb")
	if st := b.lock(fh, 2, 0, 10, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	if st := b.unlock(fh, 2, 0, 10); st != nlmGranted {
		t.Fatal(st)
	}
	h.s.nlm.maintain(time.Now())
	if data, _ := os.ReadFile(filepath.Join(h.state, nlmHostsFile)); !bytes.Contains(data, []byte("hostb")) {
		t.Fatalf("host gone at once: %q", data)
	}
	h.s.nlm.maintain(time.Now().Add(nlmHostIdle + time.Second))
	if data, _ := os.ReadFile(filepath.Join(h.state, nlmHostsFile)); string(data) != "state 1\n" {
		t.Fatalf("hosts file after the idle time: %q", data)
	}
}

// TestNLMStatdUpcall: Linux's private NLM procedure 16 (a local statd
// telling that a host rebooted) frees the host's locks, from loopback
// only.
func TestNLMStatdUpcall(t *testing.T) {
	h := newHarness(t)
	h.session()
	fh, _ := h.nlmFile("f")
	b := h.nlmPeer("10.9.9.9:800", "hostb")
	if st := b.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatal(st)
	}
	upcall := func(p *nlmPeer) {
		p.rpc(NLMProgram, NLMVersion, nlmProcNSMNotify, nfs4.AcceptSuccess, func(e *xdr.Encoder) {
			e.String("hostb")
			e.Int32(3)
			e.Fixed(make([]byte, nsmPrivSize))
		})
	}
	a := h.nlmPeer("127.0.0.1:800", "hosta")
	upcall(h.nlmPeer("10.1.1.1:700", "x"))
	if st := a.lock(fh, 1, 0, 0, false, true, false); st != nlmDenied {
		t.Fatalf("LOCK after a remote upcall: %d", st)
	}
	upcall(h.nlmPeer("127.0.0.1:700", "statd"))
	if st := a.lock(fh, 1, 0, 0, false, true, false); st != nlmGranted {
		t.Fatalf("LOCK after the local statd's upcall: %d", st)
	}
}

// TestNLMNeedsReadAccess: as knfsd (NFSD_MAY_LOCK), a lock needs read
// access to the file or its ownership, with the call's credentials;
// unlocking needs neither.
func TestNLMNeedsReadAccess(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("g", []byte("data"))
	fh := h.lookupFH("g")
	p := filepath.Join(h.dir, "g")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	u := h.nlmPeer("127.0.0.1:800", "hostu")
	u.uid = 1234
	if st := u.lock(fh, 1, 0, 1, false, true, false); st != nlmFailed {
		t.Fatalf("LOCK without read access: %d", st)
	}
	if st, _ := u.test(fh, 1, 0, 1, false); st != nlmFailed {
		t.Fatalf("TEST without read access: %d", st)
	}
	if err := os.Chmod(p, 0o604); err != nil {
		t.Fatal(err)
	}
	if st := u.lock(fh, 1, 0, 1, false, true, false); st != nlmGranted {
		t.Fatalf("LOCK with read access: %d", st)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if st := u.unlock(fh, 1, 0, 1); st != nlmGranted {
		t.Fatalf("UNLOCK without read access: %d", st)
	}
	if os.Getuid() == 0 {
		if err := os.Chown(p, 1234, 1234); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o200); err != nil {
			t.Fatal(err)
		}
		if st := u.lock(fh, 1, 0, 1, false, true, false); st != nlmGranted {
			t.Fatalf("LOCK by the owner without read access: %d", st)
		}
	}
}
