package e2e

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/engine"
	"github.com/nfsd-uring/nfsd-uring/nfs"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NLM4 as a v3 client's lockd speaks it (values from the XNFS spec).
const (
	nlmTest    = 1
	nlmLock    = 2
	nlmUnlock  = 4
	nlmGranted = 5

	nlmStatGranted = 0
	nlmStatDenied  = 1
	nlmStatBlocked = 3
)

// fakeLockd plays a client machine's rpcbind (UDP) and lockd (TCP): the
// server's GRANTED callbacks arrive on granted.
type fakeLockd struct {
	rpcbind net.PacketConn
	lockd   net.Listener
	granted chan []byte
}

func rpcReplyHeader(e *xdr.Encoder, xid uint32) {
	for _, v := range []uint32{xid, 1, 0, 0, 0, 0} {
		e.Uint32(v)
	}
}

// skipCallHeader reads an RPC call header and returns xid and procedure.
func skipCallHeader(d *xdr.Decoder) (xid, proc uint32) {
	xid = d.Uint32()
	d.Skip(12)
	d.Uint32() // program
	proc = d.Uint32()
	d.Uint32()
	d.Opaque(400)
	d.Uint32()
	d.Opaque(400)
	return
}

func newFakeLockd(t *testing.T) *fakeLockd {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLockd{rpcbind: pc, lockd: ln, granted: make(chan []byte, 8)}
	t.Cleanup(func() { pc.Close(); ln.Close() })
	go func() {
		buf := make([]byte, 9000)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			xid, _ := skipCallHeader(xdr.NewDecoder(buf[:n]))
			e := xdr.NewEncoder(64)
			rpcReplyHeader(e, xid)
			e.Uint32(uint32(ln.Addr().(*net.TCPAddr).Port)) // GETPORT: NLM is here
			pc.WriteTo(e.AppendTo(nil), from)
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
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
					d := xdr.NewDecoder(rec)
					xid, proc := skipCallHeader(d)
					cookie := d.Opaque(1024)
					if proc == nlmGranted {
						f.granted <- append([]byte(nil), d.Rest()...)
					}
					e := xdr.NewEncoder(64)
					rpcReplyHeader(e, xid)
					e.Opaque(cookie)
					e.Uint32(nlmStatGranted)
					m := xdr.NewEncoder(4)
					m.Uint32(xdr.RecordMark(len(e.AppendTo(nil))))
					c.Write(append(m.Header(), e.AppendTo(nil)...))
				}
			}()
		}
	}()
	return f
}

// nlmConn is a v3 client's lockd talking NLM over TCP to the NFS port.
type nlmConn struct {
	t   *testing.T
	c   net.Conn
	rr  *xdr.RecordReader
	xid uint32
}

func (n *nlmConn) call(proc uint32, args func(e *xdr.Encoder)) *xdr.Decoder {
	n.t.Helper()
	n.xid++
	e := xdr.NewEncoder(256)
	for _, v := range []uint32{n.xid, 0, 2, nfs.NLMProgram, nfs.NLMVersion, proc, 0, 0, 0, 0} {
		e.Uint32(v)
	}
	args(e)
	body := e.AppendTo(nil)
	m := xdr.NewEncoder(4)
	m.Uint32(xdr.RecordMark(len(body)))
	n.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := n.c.Write(append(m.Header(), body...)); err != nil {
		n.t.Fatal(err)
	}
	rec, err := n.rr.Next()
	if err != nil {
		n.t.Fatal(err)
	}
	d := xdr.NewDecoder(rec)
	for i, want := range []uint32{n.xid, 1, 0, 0, 0, 0} {
		if got := d.Uint32(); got != want {
			n.t.Fatalf("reply header word %d: %d, want %d", i, got, want)
		}
	}
	d.Opaque(1024) // cookie
	return d
}

func (n *nlmConn) alock(e *xdr.Encoder, fh []byte, svid int32, off, length uint64) {
	e.String("v3host")
	e.Opaque(fh)
	e.Opaque([]byte("oh"))
	e.Int32(svid)
	e.Uint64(off)
	e.Uint64(length)
}

func (n *nlmConn) lock(fh []byte, svid int32, off, length uint64, block bool) uint32 {
	return n.call(nlmLock, func(e *xdr.Encoder) {
		e.Opaque([]byte("c"))
		e.Bool(block)
		e.Bool(true)
		n.alock(e, fh, svid, off, length)
		e.Bool(false)
		e.Int32(1)
	}).Uint32()
}

func (n *nlmConn) unlock(fh []byte, svid int32, off, length uint64) uint32 {
	return n.call(nlmUnlock, func(e *xdr.Encoder) {
		e.Opaque([]byte("c"))
		n.alock(e, fh, svid, off, length)
	}).Uint32()
}

// v4Lock takes (or, with lsid set, extends) a write lock with NFSv4 LOCK.
func v4Lock(ctx context.Context, c *client.Client, f *client.File, lsid *nfs4.Stateid, off, length uint64) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, f.FH)
		e.Uint32(nfs4.OpLock)
		e.Uint32(2) // WRITE_LT
		e.Bool(false)
		e.Uint64(off)
		e.Uint64(length)
		if *lsid == (nfs4.Stateid{}) {
			e.Bool(true)
			e.Uint32(0)
			f.Stateid.Encode(e)
			e.Uint32(0)
			e.Uint64(c.ClientID())
			e.String("v4-owner")
		} else {
			e.Bool(false)
			lsid.Encode(e)
			e.Uint32(0)
		}
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpLock); err != nil {
			return err
		}
		*lsid = nfs4.DecodeStateid(r.D)
		lsid.Seqid = 0
		return nil
	})
}

func v4Unlock(ctx context.Context, c *client.Client, f *client.File, lsid nfs4.Stateid, off, length uint64) error {
	return c.Compound(ctx, func(e *xdr.Encoder) int {
		client.EncodePutfh(e, f.FH)
		e.Uint32(nfs4.OpLocku)
		e.Uint32(2)
		e.Uint32(0)
		lsid.Encode(e)
		e.Uint64(off)
		e.Uint64(length)
		return 2
	}, func(r *client.Reply) error {
		if err := r.Op(nfs4.OpPutfh); err != nil {
			return err
		}
		if err := r.Op(nfs4.OpLocku); err != nil {
			return err
		}
		nfs4.DecodeStateid(r.D)
		return nil
	})
}

// TestNLMWithV4Locks: over real sockets on one server, an NFSv3 client's
// NLM locks and an NFSv4.2 client's LOCKs share one lock table: each
// keeps the other out, a blocking NLM LOCK waiting for a v4 lock is
// granted by a GRANTED callback to the v3 client's lockd when the v4 lock
// goes, and NSM answers over UDP.
func TestNLMWithV4Locks(t *testing.T) {
	ctx := ctxT(t)
	fake := newFakeLockd(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("shared"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, srv := serve(t, testEngine(), nfs.Config{Exports: []nfs.Export{{Path: dir}}, StateDir: t.TempDir(),
		NSMName: "srv", NSMRPCBindPort: fake.rpcbind.LocalAddr().(*net.UDPAddr).Port}, engine.Options{})
	c, err := client.Dial(ctx, addr, client.Options{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root, err := c.RootFH(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.Open(ctx, root, "f", nfs4.ShareAccessBoth)
	if err != nil {
		t.Fatal(err)
	}
	// The v3 client's handle, from MOUNT and LOOKUP: NLM takes NFSv3
	// handles (which are the v4 ones).
	v3c := dialV3(t, addr)
	st, v3root := v3c.mount("/")
	if st != 0 {
		t.Fatalf("MNT: %d", st)
	}
	st, v3fh := v3c.lookup(v3root, "f")
	if st != nfs3OK || !bytes.Equal(v3fh, f.FH) {
		t.Fatalf("v3 LOOKUP: %d, handle %x, v4's %x", st, v3fh, f.FH)
	}
	tc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	v3 := &nlmConn{t: t, c: tc, rr: xdr.NewRecordReader(tc, 1<<20)}

	var lsid nfs4.Stateid
	if err := v4Lock(ctx, c, f, &lsid, 0, 100); err != nil {
		t.Fatalf("v4 LOCK: %v", err)
	}
	if st := v3.lock(v3fh, 7, 50, 1, false); st != nlmStatDenied {
		t.Fatalf("NLM LOCK over a v4 lock: %d", st)
	}
	d := v3.call(nlmTest, func(e *xdr.Encoder) {
		e.Opaque(nil)
		e.Bool(true)
		v3.alock(e, v3fh, 7, 0, 0)
	})
	if st, excl := d.Uint32(), d.Bool(); st != nlmStatDenied || !excl {
		t.Fatalf("NLM TEST over a v4 lock: %d %v", st, excl)
	}
	if st := v3.lock(v3fh, 7, 50, 1, true); st != nlmStatBlocked {
		t.Fatalf("blocking NLM LOCK: %d", st)
	}
	if err := v4Unlock(ctx, c, f, lsid, 0, 100); err != nil {
		t.Fatalf("LOCKU: %v", err)
	}
	select {
	case args := <-fake.granted:
		d := xdr.NewDecoder(args)
		d.Bool()
		d.String(1024)
		fh := d.Opaque(1024)
		d.Opaque(1024)
		if svid, off := d.Int32(), d.Uint64(); svid != 7 || off != 50 || !bytes.Equal(fh, v3fh) {
			t.Fatalf("GRANTED for svid %d offset %d", svid, off)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no GRANTED callback after LOCKU")
	}
	var se *client.StatusError
	if err := v4Lock(ctx, c, f, &lsid, 0, 100); !errors.As(err, &se) || se.Status != nfs4.ErrDenied {
		t.Fatalf("v4 LOCK over the granted NLM lock: %v", err)
	}
	if st := v3.unlock(v3fh, 7, 50, 1); st != nlmStatGranted {
		t.Fatalf("NLM UNLOCK: %d", st)
	}
	if err := v4Lock(ctx, c, f, &lsid, 0, 100); err != nil {
		t.Fatalf("v4 LOCK after NLM UNLOCK: %v", err)
	}

	// NSM over UDP (SM_STAT: the state number of a first boot is 1).
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeNSM(pc)
	defer pc.Close()
	uc, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	e := xdr.NewEncoder(64)
	for _, v := range []uint32{99, 0, 2, nfs.NSMProgram, nfs.NSMVersion, 1, 0, 0, 0, 0} {
		e.Uint32(v)
	}
	e.String("x")
	uc.SetDeadline(time.Now().Add(10 * time.Second))
	uc.Write(e.AppendTo(nil))
	buf := make([]byte, 512)
	n, err := uc.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	d = xdr.NewDecoder(buf[:n])
	d.Skip(24)
	if st, state := d.Uint32(), d.Uint32(); st != 0 || state != 1 {
		t.Fatalf("SM_STAT over UDP: %d %d", st, state)
	}
}
