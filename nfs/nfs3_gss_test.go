package nfs

import (
	"bytes"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/exports"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// call3 sends an NFSv3 (prog 100003) or MOUNT (100005) version 3 call
// under the context with svc's protection and returns the accept status
// and the plain results.
func (p *gssPeer) call3(prog, proc, svc uint32, build func(e *xdr.Encoder)) (uint32, *xdr.Decoder) {
	t := p.h.t
	t.Helper()
	e := xdr.NewEncoder(256)
	if build != nil {
		build(e)
	}
	p.prog, p.vers = prog, 3
	defer func() { p.prog, p.vers = 0, 0 }()
	p.h.xid++
	p.seq++
	rep := p.h.record(p.record(p.h.xid, gssProcData, svc, p.seq, proc, e.AppendTo(nil)))
	if rep == nil {
		t.Fatal("reply dropped")
	}
	stat, d, auth := p.reply(rep, p.h.xid, svc, p.seq)
	if auth != 0 {
		t.Fatalf("auth error %d", auth)
	}
	return stat, d
}

// nfs3 is call3 of an NFSv3 procedure that must be accepted: its
// nfsstat3 and the rest.
func (p *gssPeer) nfs3(proc, svc uint32, build func(e *xdr.Encoder)) (uint32, *xdr.Decoder) {
	p.h.t.Helper()
	stat, d := p.call3(nfs4.ProgramNFS, proc, svc, build)
	if stat != nfs4.AcceptSuccess {
		p.h.t.Fatalf("proc %d svc %d: accept stat %d", proc, svc, stat)
	}
	return d.Uint32(), d
}

// mnt sends MNT of p under svc and returns the status, the handle and
// the flavours.
func (p *gssPeer) mnt(path string, svc uint32) (uint32, []byte, []uint32) {
	p.h.t.Helper()
	stat, d := p.call3(progMount, mountMnt, svc, func(e *xdr.Encoder) { e.String(path) })
	if stat != nfs4.AcceptSuccess {
		p.h.t.Fatalf("MNT svc %d: accept stat %d", svc, stat)
	}
	st := d.Uint32()
	if st != mnt3OK {
		return st, nil, nil
	}
	fh := bytes.Clone(d.Opaque(64))
	var fl []uint32
	for n := d.Uint32(); n > 0 && d.Err() == nil; n-- {
		fl = append(fl, d.Uint32())
	}
	if d.Err() != nil || d.Remaining() != 0 {
		p.h.t.Fatalf("MNT result: %v, %d left", d.Err(), d.Remaining())
	}
	return st, fh, fl
}

func krb5AllSec() exports.SecList {
	return exports.SecList(exports.SecKrb5) | exports.SecList(exports.SecKrb5i)<<4 | exports.SecList(exports.SecKrb5p)<<8
}

// TestGSSNFS3EachService: MOUNT and NFSv3 under krb5, krb5i and krb5p on
// an export that takes only those: MNT lists them, CREATE, WRITE and a
// 128 KiB READ (data left to the engine) go through with the principal's
// uid (alice, 1000; root squashed), an AUTH_SYS call of the export's
// handles gets NFS3ERR_ACCES (but for GETATTR and FSINFO of its root, RFC
// 2623 section 2.3.2) while AUTH_SYS MNT is still answered (the flavour
// is the NFS calls' to check), bad arguments are GARBAGE_ARGS
// under the context's verifier, and a GSS call is not replayed from the
// duplicate request cache.
func TestGSSNFS3EachService(t *testing.T) {
	h, kt := newGSSHarnessCfg(t, func(c *Config) {
		o := ShorthandOptions()
		o.Sec = krb5AllSec()
		o.Squash = RootSquash
		c.Exports[0].Clients = []ClientRule{{Spec: "*", Any: true, Options: o}}
	})
	if err := syscall.Chmod(h.dir, 0o777); err != nil {
		t.Fatal(err)
	}
	alice := h.gssInit(kt, "alice")
	root := h.gssInit(kt, "root")
	data := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
	names := map[uint32]string{gssSvcNone: "krb5", gssSvcInteg: "krb5i", gssSvcPriv: "krb5p"}
	var rootFH []byte
	for _, svc := range []uint32{gssSvcNone, gssSvcInteg, gssSvcPriv} {
		st, fh, fl := alice.mnt("/", svc)
		if st != mnt3OK || len(fl) != 3 || fl[0] != authKrb5 || fl[1] != authKrb5+1 || fl[2] != authKrb5+2 {
			t.Fatalf("%s MNT: %d %v", names[svc], st, fl)
		}
		rootFH = fh
		for _, who := range []struct {
			p   *gssPeer
			uid uint32
		}{{alice, 1000}, {root, defaultAnonID}} {
			name := names[svc] + "-" + map[uint32]string{1000: "alice", defaultAnonID: "root"}[who.uid]
			st, d := who.p.nfs3(nfs3Create, svc, func(e *xdr.Encoder) {
				e.Opaque(fh)
				e.String(name)
				e.Uint32(0) // UNCHECKED
				modeSattr(e, 0o644)
			})
			ffh := created3(t, st, d)
			st, d = who.p.nfs3(nfs3Write, svc, func(e *xdr.Encoder) {
				e.Opaque(ffh)
				e.Uint64(0)
				e.Uint32(uint32(len(data)))
				e.Uint32(nfs4.FileSync4)
				e.Opaque(data)
			})
			skipWcc(d)
			if n := d.Uint32(); st != nfs3OK || n != uint32(len(data)) {
				t.Fatalf("%s WRITE: %d, %d bytes", name, st, n)
			}
			for range 2 { // the second READ runs inline, the file being open
				st, d = who.p.nfs3(nfs3Read, svc, func(e *xdr.Encoder) {
					e.Opaque(ffh)
					e.Uint64(0)
					e.Uint32(uint32(len(data)))
				})
				postOp3(t, d)
				if n, eof, got := d.Uint32(), d.Bool(), d.Opaque(1<<20); st != nfs3OK || n != uint32(len(data)) || !eof || !bytes.Equal(got, data) {
					t.Fatalf("%s READ: %d, %d bytes, eof %v, same %v", name, st, n, eof, bytes.Equal(got, data))
				}
				if !h.lastReads && !h.inlineSaid {
					t.Errorf("%s READ: the data was not left to the engine", name)
				}
			}
			var sst syscall.Stat_t
			if err := syscall.Stat(filepath.Join(h.dir, name), &sst); err != nil {
				t.Fatal(err)
			}
			if sst.Uid != who.uid {
				t.Errorf("%s: owned by uid %d, want %d", name, sst.Uid, who.uid)
			}
		}
		// Truncated arguments: GARBAGE_ARGS, signed.
		if stat, _ := alice.call3(nfs4.ProgramNFS, nfs3Read, svc, func(e *xdr.Encoder) { e.Opaque(fh) }); stat != nfs4.AcceptGarbageArgs {
			t.Fatalf("%s short READ: accept stat %d", names[svc], stat)
		}
	}
	// AUTH_SYS: MNT answered with the flavours, the handle refused.
	d := h.call3(progMount, 3, mountMnt, func(e *xdr.Encoder) { e.String("/") })
	if st := d.Uint32(); st != mnt3OK {
		t.Fatalf("AUTH_SYS MNT: %d", st)
	}
	if st, _ := h.nfs3(nfs3Lookup, func(e *xdr.Encoder) { e.Opaque(rootFH); e.String("krb5-alice") }); st != nfs3ErrAcces {
		t.Fatalf("AUTH_SYS LOOKUP in a krb5 export: %d, want NFS3ERR_ACCES", st)
	}
	if st, _ := h.nfs3(nfs3Access, func(e *xdr.Encoder) { e.Opaque(rootFH); e.Uint32(1) }); st != nfs3ErrAcces {
		t.Fatalf("AUTH_SYS ACCESS of a krb5 export's root: %d, want NFS3ERR_ACCES", st)
	}
	// GETATTR and FSINFO of the root pass (RFC 2623 2.3.2), not of a file.
	for _, proc := range []uint32{nfs3Getattr, nfs3Fsinfo} {
		if st, _ := h.nfs3(proc, func(e *xdr.Encoder) { e.Opaque(rootFH) }); st != nfs3OK {
			t.Fatalf("AUTH_SYS proc %d of a krb5 export's root: %d", proc, st)
		}
	}
	_, fd := alice.nfs3(nfs3Lookup, gssSvcNone, func(e *xdr.Encoder) { e.Opaque(rootFH); e.String("krb5-alice") })
	ffh := bytes.Clone(fd.Opaque(64))
	if st, _ := h.nfs3(nfs3Getattr, func(e *xdr.Encoder) { e.Opaque(ffh) }); st != nfs3ErrAcces {
		t.Fatalf("AUTH_SYS GETATTR of a file of a krb5 export: %d, want NFS3ERR_ACCES", st)
	}
	// The DRC: a REMOVE sent again with its xid runs again under GSS.
	rm := func() uint32 {
		st, _ := alice.nfs3(nfs3Remove, gssSvcInteg, func(e *xdr.Encoder) { e.Opaque(rootFH); e.String("krb5-alice") })
		return st
	}
	if st := rm(); st != nfs3OK {
		t.Fatalf("REMOVE: %d", st)
	}
	h.xid--
	if st := rm(); st != nfs3ErrNoent {
		t.Fatalf("REMOVE again with its xid: %d, want NFS3ERR_NOENT (not a replay)", st)
	}
}

// TestGSSNFS3SysOnly: a sec=sys export refuses NFSv3 calls under
// RPCSEC_GSS with NFS3ERR_ACCES (knfsd's nfserr_wrongsec for v3), and its
// MNT lists AUTH_SYS and AUTH_NONE to a krb5 caller.
func TestGSSNFS3SysOnly(t *testing.T) {
	h, kt := newGSSHarnessCfg(t, func(c *Config) {
		o := ShorthandOptions()
		o.Sec = exports.SecList(exports.SecSys)
		c.Exports[0].Clients = []ClientRule{{Spec: "*", Any: true, Options: o}}
	})
	p := h.gssInit(kt, "alice")
	st, fh, fl := p.mnt("/", gssSvcInteg)
	if st != mnt3OK || len(fl) != 2 || fl[0] != nfs4.AuthSys || fl[1] != nfs4.AuthNone {
		t.Fatalf("MNT: %d %v", st, fl)
	}
	for _, svc := range []uint32{gssSvcNone, gssSvcInteg, gssSvcPriv} {
		if st, _ := p.nfs3(nfs3Getattr, svc, func(e *xdr.Encoder) { e.Opaque(fh) }); st != nfs3ErrAcces {
			t.Fatalf("svc %d GETATTR: %d, want NFS3ERR_ACCES", svc, st)
		}
	}
	if stat, d := p.call3(nfs4.ProgramNFS, nfs3Null, gssSvcPriv, nil); stat != nfs4.AcceptSuccess || d.Remaining() != 0 {
		t.Fatalf("NULL: accept stat %d", stat)
	}
	if st, _ := h.nfs3(nfs3Getattr, func(e *xdr.Encoder) { e.Opaque(fh) }); st != nfs3OK {
		t.Fatalf("AUTH_SYS GETATTR: %d", st)
	}
	// MOUNT version 1 under the context: PROG_MISMATCH, signed.
	p.prog, p.vers = progMount, 1
	h.xid++
	p.seq++
	rep := h.record(p.record(h.xid, gssProcData, gssSvcNone, p.seq, mountMnt, nil))
	p.prog, p.vers = 0, 0
	if stat, d, _ := p.reply(rep, h.xid, gssSvcNone, p.seq); stat != nfs4.AcceptProgMismatch || d.Uint32() != 3 || d.Uint32() != 3 {
		t.Fatalf("MOUNT v1: accept stat %d", stat)
	}
	// NFS version 2: PROG_MISMATCH, versions 3 to 4.
	p.prog, p.vers = nfs4.ProgramNFS, 2
	h.xid++
	p.seq++
	rep = h.record(p.record(h.xid, gssProcData, gssSvcNone, p.seq, nfs3Null, nil))
	p.prog, p.vers = 0, 0
	if stat, d, _ := p.reply(rep, h.xid, gssSvcNone, p.seq); stat != nfs4.AcceptProgMismatch || d.Uint32() != 3 || d.Uint32() != 4 {
		t.Fatalf("NFS v2: accept stat %d", stat)
	}
}
