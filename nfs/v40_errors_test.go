package nfs

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// fh40 looks name up from the root in a 4.0 COMPOUND and returns its
// handle.
func (h *harness) fh40(name string) []byte {
	h.t.Helper()
	d, st, _ := h.c40(3, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String(name)
		e.Uint32(nfs4.OpGetfh)
	})
	if st != nfs4.OK {
		h.t.Fatalf("LOOKUP %s: %d", name, st)
	}
	opResult(h.t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(h.t, d, nfs4.OpLookup, nfs4.OK)
	opResult(h.t, d, nfs4.OpGetfh, nfs4.OK)
	return bytes.Clone(d.Opaque(128))
}

func anonWrite(sid nfs4.Stateid, data []byte) func(e *xdr.Encoder) {
	return func(e *xdr.Encoder) {
		sid.Encode(e)
		e.Uint64(0)
		e.Uint32(nfs4.Unstable4)
		e.Opaque(data)
	}
}

// TestV40WrongType: RFC 7530 has no NFS4ERR_WRONG_TYPE. A WRITE to a fifo
// is NFS4ERR_INVAL in 4.0 (NFS4ERR_WRONG_TYPE in 4.1), an OPEN of one
// NFS4ERR_SYMLINK (section 16.16.6), as knfsd's nfsd4_map_status; LOCKT
// on a directory is NFS4ERR_ISDIR in both (pynfs WRT6, OPEN7, LKT2).
func TestV40WrongType(t *testing.T) {
	h := newHarness(t)
	if err := unix.Mkfifo(filepath.Join(h.dir, "p"), 0o666); err != nil {
		t.Fatal(err)
	}
	id := h.client40("c1")
	fifo := h.fh40("p")
	if st, _, _ := h.seqOp40(fifo, nfs4.OpWrite, anonWrite(nfs4.AnonStateid, []byte("x"))); st != nfs4.ErrInval {
		t.Fatalf("4.0 WRITE to a fifo: %d, want INVAL", st)
	}
	st, _, _, _ := h.open40(id, "o", 1, "p")
	if st != nfs4.ErrSymlink {
		t.Fatalf("4.0 OPEN of a fifo: %d, want SYMLINK", st)
	}
	lockt := func(e *xdr.Encoder) {
		e.Uint32(writeLT)
		e.Uint64(0)
		e.Uint64(1)
		e.Uint64(id)
		e.String("lo")
	}
	if st, _, _ := h.seqOp40(fifo, nfs4.OpLockt, lockt); st != nfs4.ErrInval {
		t.Fatalf("4.0 LOCKT of a fifo: %d, want INVAL", st)
	}

	h.session()
	if st := h.opStatus(h.lookupFH("p"), nfs4.OpWrite, anonWrite(nfs4.AnonStateid, []byte("x"))); st != nfs4.ErrWrongType {
		t.Fatalf("4.1 WRITE to a fifo: %d, want WRONG_TYPE", st)
	}
	if err := os.Mkdir(filepath.Join(h.dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if st := h.opStatus(h.lookupFH("d"), nfs4.OpLockt, lockt); st != nfs4.ErrIsdir {
		t.Fatalf("LOCKT of a directory: %d, want ISDIR", st)
	}
}

// TestWriteOnlyAttrsUnreadable: GETATTR and READDIR asking for a
// write-only attribute are NFS4ERR_INVAL (pynfs GATT3, RDDR9).
func TestWriteOnlyAttrsUnreadable(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("f", nil)
	req := nfs4.BitmapOf(nfs4.AttrSize, nfs4.AttrTimeModifySet)
	if st := h.opStatus(h.lookupFH("f"), nfs4.OpGetattr, func(e *xdr.Encoder) { req.Encode(e) }); st != nfs4.ErrInval {
		t.Fatalf("GETATTR of time_modify_set: %d", st)
	}
	if st := h.opStatus(h.rootFH(), nfs4.OpReaddir, readdirArgs4(req, 4096)); st != nfs4.ErrInval {
		t.Fatalf("READDIR asking time_modify_set: %d", st)
	}
	// A READDIR reply cannot be shorter than 16 bytes (pynfs RDDR8).
	if st := h.opStatus(h.rootFH(), nfs4.OpReaddir, readdirArgs4(nfs4.BitmapOf(nfs4.AttrSize), 15)); st != nfs4.ErrToosmall {
		t.Fatalf("READDIR with maxcount 15: %d", st)
	}
}

func readdirArgs4(req nfs4.Bitmap, maxcount uint32) func(e *xdr.Encoder) {
	return func(e *xdr.Encoder) {
		e.Uint64(0)
		e.Fixed(make([]byte, nfs4.VerifierSize))
		e.Uint32(maxcount)
		e.Uint32(maxcount)
		req.Encode(e)
	}
}

// TestV40SupportedAttrs: a 4.0 client is told only of RFC 7530's
// attributes (up to mounted_on_fileid), and is sent no others even when
// it asks (pynfs GATT6); a 4.2 client sees xattr_support.
func TestV40SupportedAttrs(t *testing.T) {
	h := newHarness(t)
	h.client40("c1")
	ask := nfs4.BitmapOf(nfs4.AttrSupportedAttrs, nfs4.AttrXattrSupport)
	d, st, _ := h.c40(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpGetattr)
		ask.Encode(e)
	})
	if st != nfs4.OK {
		t.Fatal(st)
	}
	opResult(t, d, nfs4.OpPutrootfh, nfs4.OK)
	opResult(t, d, nfs4.OpGetattr, nfs4.OK)
	if got := nfs4.DecodeBitmap(d); got != nfs4.BitmapOf(nfs4.AttrSupportedAttrs) {
		t.Fatalf("4.0 GETATTR answered %x", got)
	}
	d.Uint32() // attr_vals length
	sup := nfs4.DecodeBitmap(d)
	if sup[2] != 0 || sup[1]>>24 != 0 || !sup.Has(nfs4.AttrMountedOnFileid) {
		t.Fatalf("4.0 supported_attrs %x", sup)
	}
	if h.s.supportedFor(2) == sup || !h.s.supportedFor(2).Has(nfs4.AttrXattrSupport) {
		t.Fatalf("4.2 supported_attrs %x", h.s.supportedFor(2))
	}
}

// TestSetattrMalformed: a fattr4 with bytes past its values is
// NFS4ERR_BADXDR (SATT8); a time of 10^9 nanoseconds NFS4ERR_INVAL
// (SATT10); an empty owner NFS4ERR_INVAL (SATT16); a size past 2^63-1
// NFS4ERR_FBIG (SATT12x).
func TestSetattrMalformed(t *testing.T) {
	h := newHarness(t)
	h.session()
	st, sid, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	setattr := func(sid nfs4.Stateid, mask nfs4.Bitmap, vals []byte) nfs4.Status {
		return h.opStatus(fh, nfs4.OpSetattr, func(e *xdr.Encoder) {
			sid.Encode(e)
			mask.Encode(e)
			e.Opaque(vals)
		})
	}
	be32 := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, x)
		}
		return b
	}
	cases := []struct {
		name string
		mask nfs4.Bitmap
		vals []byte
		want nfs4.Status
	}{
		{"mode", nfs4.BitmapOf(nfs4.AttrMode), be32(0o644), nfs4.OK},
		{"mode and extra bytes", nfs4.BitmapOf(nfs4.AttrMode), be32(0o644, 0), nfs4.ErrBadXDR},
		{"mode cut short", nfs4.BitmapOf(nfs4.AttrMode), be32(0o644)[:2], nfs4.ErrBadXDR},
		{"nseconds 1e9", nfs4.BitmapOf(nfs4.AttrTimeModifySet), be32(nfs4.SetToClientTime, 0, 5, 1e9), nfs4.ErrInval},
		{"empty owner", nfs4.BitmapOf(nfs4.AttrOwner), be32(0), nfs4.ErrInval},
		{"empty group", nfs4.BitmapOf(nfs4.AttrOwnerGroup), be32(0), nfs4.ErrInval},
		{"size 2^64-1", nfs4.BitmapOf(nfs4.AttrSize), be32(0xffffffff, 0xffffffff), nfs4.ErrFbig},
	}
	for _, c := range cases {
		if got := setattr(sid, c.mask, c.vals); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(h.dir, "f")); err != nil || fi.Size() != 0 {
		t.Fatalf("file after the refusals: %v %v", fi, err)
	}
}

// TestV40StateidErrors: a special stateid where an open's is needed is
// bad, not stale (CLOSE4, LOCK11, LKU8, OPDG5); a stateid of an earlier
// boot is stale, also for OPEN_CONFIRM of a client with no state (OPCF6);
// a stateid of a client whose state was dropped is expired (CID1, CLOSE8):
// here the client rebooted, another SETCLIENTID and confirm.
func TestV40StateidErrors(t *testing.T) {
	h := newHarness(t)
	id := h.client40("c1")
	st, sid, _, fh := h.open40(id, "o", 1, "f")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	if st, _, _ := h.seqOp40(fh, nfs4.OpOpenConfirm, openConfirm40(sid, 2)); st != nfs4.OK {
		t.Fatalf("OPEN_CONFIRM: %d", st)
	}
	sid.Seqid++
	closeWith := func(s nfs4.Stateid, seqid uint32) nfs4.Status {
		st, _, _ := h.seqOp40(fh, nfs4.OpClose, func(e *xdr.Encoder) {
			e.Uint32(seqid)
			s.Encode(e)
		})
		return st
	}
	if st := closeWith(nfs4.AnonStateid, 3); st != nfs4.ErrBadStateid {
		t.Fatalf("CLOSE of the anonymous stateid: %d", st)
	}
	stale := nfs4.Stateid{Seqid: sid.Seqid}
	stale.Other[3] = 1
	if st := closeWith(stale, 3); st != nfs4.ErrStaleStateid {
		t.Fatalf("CLOSE of a stale stateid: %d", st)
	}
	if st, _, _ := h.seqOp40(fh, nfs4.OpOpenConfirm, openConfirm40(stale, 3)); st != nfs4.ErrStaleStateid {
		t.Fatalf("OPEN_CONFIRM of a stale stateid: %d", st)
	}
	st, id2, cv := h.setclientid("c1", 2)
	if st != nfs4.OK || h.confirm40(id2, cv) != nfs4.OK {
		t.Fatalf("the client's reboot: %d", st)
	}
	if st := closeWith(sid, 3); st != nfs4.ErrExpired {
		t.Fatalf("CLOSE of the rebooted client's stateid: %d", st)
	}
	bad := sid
	bad.Other[11] ^= 0xff
	if st := closeWith(bad, 3); st != nfs4.ErrBadStateid {
		t.Fatalf("CLOSE of a stateid never issued: %d", st)
	}
}

// TestExpiredOthersBounded: the record of dropped 4.0 clients' stateids
// keeps the newest maxExpiredOthers, and a host churning through clients
// pushes out its own, not another host's.
func TestExpiredOthersBounded(t *testing.T) {
	var x expiredOthers
	other := func(i int) [nfs4.OtherSize]byte {
		var o [nfs4.OtherSize]byte
		binary.BigEndian.PutUint64(o[4:], uint64(i))
		return o
	}
	quiet := &client{v40: &v40State{}, addr: netip.MustParseAddr("192.0.2.2"), opens: map[openKey]*openState{}}
	for i := 0; i < 10; i++ {
		quiet.opens[openKey{owner: string(rune('a' + i))}] = &openState{other: other(1<<40 + i)}
	}
	x.addClient(quiet)
	c := &client{v40: &v40State{}, addr: netip.MustParseAddr("192.0.2.1")}
	for i := 0; i < 2*maxExpiredOthers; i++ {
		c.opens = map[openKey]*openState{{owner: "o"}: {other: other(i)}}
		x.addClient(c)
	}
	if len(x.set) != maxExpiredOthers || x.has(other(maxExpiredOthers)) || !x.has(other(2*maxExpiredOthers-1)) {
		t.Fatalf("%d kept; oldest of the newest kept %v", len(x.set), x.has(other(maxExpiredOthers+10)))
	}
	for i := 0; i < 10; i++ {
		if !x.has(other(1<<40 + i)) {
			t.Fatalf("the quiet host's stateid %d was pushed out by the churning one", i)
		}
	}
}
