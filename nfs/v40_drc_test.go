package nfs

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// rec40 is the record of a COMPOUND of minor version minor with xid.
func rec40(xid, minor uint32, ops ...func(e *xdr.Encoder)) []byte {
	e := xdr.NewEncoder(256)
	callHeader(e, xid, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
	e.String("")
	e.Uint32(minor)
	e.Uint32(uint32(len(ops)))
	for _, op := range ops {
		op(e)
	}
	return e.AppendTo(nil)
}

func putrootfh40(e *xdr.Encoder) { e.Uint32(nfs4.OpPutrootfh) }

func mkdir40(name string) func(e *xdr.Encoder) {
	return func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpCreate)
		e.Uint32(nfs4.NF4DIR)
		e.String(name)
		nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
		e.Uint32(4)
		e.Uint32(0o755)
	}
}

func remove40(name string) func(e *xdr.Encoder) {
	return func(e *xdr.Encoder) { e.Uint32(nfs4.OpRemove); e.String(name) }
}

// replyStatus40 is a reply's COMPOUND status.
func replyStatus40(t *testing.T, rep []byte) nfs4.Status {
	t.Helper()
	if len(rep) < 28 {
		t.Fatalf("reply %x", rep)
	}
	return nfs4.Status(binary.BigEndian.Uint32(rep[24:]))
}

// TestV40DRC: pynfs RPLY14. A 4.0 COMPOUND that creates a directory,
// sent three times with one xid, answers NFS4_OK each time, with the same
// bytes; with a new xid it runs again (NFS4ERR_EXIST). The same for
// REMOVE, and a retransmit on another connection of the same client.
func TestV40DRC(t *testing.T) {
	h := newHarness(t)
	rec := rec40(900, 0, putrootfh40, mkdir40("d"))
	first := h.record(rec)
	if st := replyStatus40(t, first); st != nfs4.OK {
		t.Fatalf("CREATE: %d", st)
	}
	for range 2 {
		if again := h.record(rec); !bytes.Equal(first, again) {
			t.Fatalf("retransmit answered differently:\n%x\n%x", first, again)
		}
	}
	if st := replyStatus40(t, h.record(rec40(901, 0, putrootfh40, mkdir40("d")))); st != nfs4.ErrExist {
		t.Fatalf("CREATE with a new xid: %d", st)
	}
	// Same xid, other arguments: another call.
	if st := replyStatus40(t, h.record(rec40(900, 0, putrootfh40, mkdir40("e")))); st != nfs4.OK {
		t.Fatalf("CREATE e with the same xid: %d", st)
	}
	// Same xid and arguments from another user of the address: that
	// user's own call, not the first user's reply.
	hdr := xdr.NewEncoder(256)
	callHeader(hdr, 900, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
	other := xdr.NewEncoder(256)
	callHeaderAs(other, 900, nfs4.ProgramNFS, 4, nfs4.ProcCompound, 1000)
	other.Fixed(rec[hdr.Pos():])
	if st := replyStatus40(t, h.record(other.AppendTo(nil))); st != nfs4.ErrExist {
		t.Fatalf("another user's CREATE with the same xid and arguments: %d", st)
	}
	rm := rec40(902, 0, putrootfh40, remove40("d"))
	first = h.record(rm)
	if st := replyStatus40(t, first); st != nfs4.OK {
		t.Fatalf("REMOVE: %d", st)
	}
	h.conn = NewConn(h.conn.Remote) // a reconnect: same address
	if again := h.record(rm); !bytes.Equal(first, again) {
		t.Fatalf("REMOVE retransmit answered differently:\n%x\n%x", first, again)
	}
	var replays uint64
	for _, p := range h.s.stats.ProcCounts() {
		if p.Status == "DRC_REPLAY" {
			replays += p.N
		}
	}
	if replays != 3 {
		t.Fatalf("DRC_REPLAY counted %d times", replays)
	}
	// One still running: the retransmit is dropped.
	busy := rec40(903, 0, putrootfh40, mkdir40("f"))
	var d xdr.Decoder
	d.Reset(busy)
	cl, ok := decodeCall(&d)
	if !ok {
		t.Fatal("call")
	}
	d.Opaque(maxTag)
	d.Uint32()
	d.Uint32()
	cred := h.s.ids.cred(cl.cred)
	h.s.v3.drc.start(drcKeyOf(h.conn, &cred, 903, nfs4.NFSVersion, nfs4.ProcCompound, d.Rest()), time.Now())
	rep := NewReply()
	h.s.Handle(h.conn, busy, rep)
	if !rep.Drop || !rep.Close {
		t.Fatalf("in-progress duplicate: drop %v close %v", rep.Drop, rep.Close)
	}
}

// TestV40DRCLeftOut: COMPOUNDs that change nothing, carry a seqid op or
// file data, and those of 4.1, are not kept.
func TestV40DRCLeftOut(t *testing.T) {
	h := newHarness(t)
	h.write("f", []byte("data"))
	close40 := func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpClose)
		e.Uint32(1)
		nfs4.Stateid{}.Encode(e)
	}
	read40 := func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpRead)
		nfs4.Stateid{}.Encode(e)
		e.Uint64(0)
		e.Uint32(4)
	}
	lookup := func(e *xdr.Encoder) { e.Uint32(nfs4.OpLookup); e.String("f") }
	getfh := func(e *xdr.Encoder) { e.Uint32(nfs4.OpGetfh) }
	for i, ops := range [][]func(e *xdr.Encoder){
		{putrootfh40, getfh},
		{putrootfh40, mkdir40("s"), close40},
		{putrootfh40, lookup, read40, mkdir40("r")},
	} {
		h.record(rec40(uint32(1000+i), 0, ops...))
	}
	if n := len(h.s.v3.drc.m); n != 0 {
		t.Fatalf("%d entries kept", n)
	}
	// The seqid op's COMPOUND ran again: the directory exists.
	if st := replyStatus40(t, h.record(rec40(1001, 0, putrootfh40, mkdir40("s"), close40))); st != nfs4.ErrExist {
		t.Fatalf("CREATE, CLOSE again: %d", st)
	}
	// 4.1: the session's slot cache answers retransmits.
	h.session()
	h.compoundMinor(1, 3, func(e *xdr.Encoder) {
		h.sequence(e)
		putrootfh40(e)
		mkdir40("four-one")(e)
	})
	if n := len(h.s.v3.drc.m); n != 0 {
		t.Fatalf("4.1: %d entries kept", n)
	}
	// What is kept.
	setattr := func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpSetattr)
		nfs4.Stateid{}.Encode(e)
		nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
		e.Uint32(4)
		e.Uint32(0o700)
	}
	for _, c := range []struct {
		ops  []func(e *xdr.Encoder)
		keep bool
	}{
		{[]func(e *xdr.Encoder){putrootfh40, lookup, setattr, getfh}, true},
		{[]func(e *xdr.Encoder){putrootfh40, setattr, close40}, false},
		{[]func(e *xdr.Encoder){putrootfh40, remove40("x"), func(e *xdr.Encoder) { e.Uint32(9999) }, close40}, true},
		{[]func(e *xdr.Encoder){putrootfh40, lookup, getfh}, false},
	} {
		e := xdr.NewEncoder(256)
		for _, op := range c.ops {
			op(e)
		}
		if got := drcCompound40(e.Header(), uint32(len(c.ops))); got != c.keep {
			t.Errorf("%x: kept %v", e.Header(), got)
		}
	}
}

// TestDRCBounds: the cache holds drcMax entries and drcBytes of replies,
// and a client filling it does not push out another's replies.
func TestDRCBounds(t *testing.T) {
	var d drc
	now := time.Now()
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	reply := make([]byte, 100)
	for i := range drcMax + 100 {
		k := drcKey{addr: a, xid: uint32(i)}
		d.start(k, now)
		d.done(k, reply)
	}
	if n := len(d.m); n > drcMax {
		t.Fatalf("%d entries", n)
	}
	for i := range 100 {
		k := drcKey{addr: b, xid: uint32(i)}
		d.start(k, now)
		d.done(k, reply)
	}
	for i := range drcMax {
		k := drcKey{addr: a, xid: uint32(i + 1<<20)}
		d.start(k, now)
		d.done(k, reply)
	}
	for i := range 100 {
		if r, _ := d.start(drcKey{addr: b, xid: uint32(i)}, now); r == nil {
			t.Fatalf("b's reply %d pushed out", i)
		}
	}
	if n := len(d.m); n > drcMax {
		t.Fatalf("%d entries", n)
	}
	// Bytes: long replies are not kept; the total stays under drcBytes.
	big := make([]byte, drcReplyMax)
	for i := range drcMax {
		k := drcKey{addr: a, xid: uint32(i + 2<<20)}
		d.start(k, now)
		d.done(k, big)
	}
	if d.bytes > drcBytes {
		t.Fatalf("%d bytes", d.bytes)
	}
	k := drcKey{addr: b, xid: 1 << 30}
	d.start(k, now)
	d.done(k, make([]byte, drcReplyMax+1))
	if d.m[k] != nil {
		t.Fatal("a long reply kept")
	}
	sum := 0
	for _, e := range d.m {
		sum += len(e.reply)
	}
	if sum != d.bytes {
		t.Fatalf("bytes %d, counted %d", d.bytes, sum)
	}
	// Expired entries run again.
	k = drcKey{addr: b, xid: 0}
	if r, _ := d.start(k, now.Add(drcTTL)); r != nil {
		t.Fatal("expired reply replayed")
	}
}
