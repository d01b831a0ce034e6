package nfs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// captureOps returns, for each COMPOUND in the Linux mount capture, the
// op count and the bytes of the operations: after SEQUENCE when it leads
// (session ops), else all of them (sessionless ops). Real wire bytes are
// the fuzzers' seeds.
func captureOps(f *testing.F) (session, sessionless [][]byte) {
	file, err := os.Open("testdata/linux-6.12-mount.hex")
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		rec, err := hex.DecodeString(sc.Text())
		if err != nil || len(rec) < 4 {
			f.Fatal("bad capture line")
		}
		d := xdr.NewDecoder(rec[4:])
		if c, ok := decodeCall(d); !ok || c.proc != nfs4.ProcCompound {
			continue
		}
		d.Opaque(maxTag)
		d.Uint32()
		n := d.Uint32()
		rest := d.Rest()
		if len(rest) >= 4+32 && binary.BigEndian.Uint32(rest) == nfs4.OpSequence {
			session = append(session, countThen(n-1, rest[4+32:]))
		} else {
			sessionless = append(sessionless, countThen(n, rest))
		}
	}
	return session, sessionless
}

func countThen(n uint32, b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, n), b...)
}

// stateSeeds are op sequences that make and use state: OPEN, WRITE, READ,
// LOCK, LOCKU, CLOSE, TEST_STATEID, DESTROY_SESSION, as a client sends
// them.
func stateSeeds() [][]byte {
	build := func(n uint32, ops func(e *xdr.Encoder)) []byte {
		e := xdr.NewEncoder(256)
		e.Uint32(n)
		ops(e)
		return e.AppendTo(nil)
	}
	cur := nfs4.CurrentStateid
	return [][]byte{
		build(6, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpOpen)
			e.Uint32(0)
			e.Uint32(nfs4.ShareAccessBoth)
			e.Uint32(nfs4.ShareDenyNone)
			e.Uint64(0)
			e.String("o")
			e.Uint32(nfs4.OpenCreate)
			e.Uint32(nfs4.CreateUnchecked)
			nfs4.Bitmap{}.Encode(e)
			e.Uint32(0)
			e.Uint32(nfs4.ClaimNull)
			e.String("f")
			e.Uint32(nfs4.OpWrite)
			cur.Encode(e)
			e.Uint64(0)
			e.Uint32(nfs4.FileSync4)
			e.Opaque([]byte("hello"))
			e.Uint32(nfs4.OpRead)
			cur.Encode(e)
			e.Uint64(0)
			e.Uint32(100)
			e.Uint32(nfs4.OpLock)
			e.Uint32(writeLT)
			e.Bool(false)
			e.Uint64(0)
			e.Uint64(10)
			e.Bool(true)
			e.Uint32(0)
			cur.Encode(e)
			e.Uint32(0)
			e.Uint64(0)
			e.String("l")
			e.Uint32(nfs4.OpLocku)
			e.Uint32(writeLT)
			e.Uint32(0)
			cur.Encode(e)
			e.Uint64(2)
			e.Uint64(1)
		}),
		build(3, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutrootfh)
			e.Uint32(nfs4.OpTestStateid)
			e.Uint32(1)
			cur.Encode(e)
			e.Uint32(nfs4.OpReadPlus)
			cur.Encode(e)
			e.Uint64(0)
			e.Uint32(4096)
		}),
	}
}

// FuzzCompoundOps runs fuzzed operations after a valid SEQUENCE on a live
// session, so that every operation's decoder and handler see hostile
// arguments. It must never panic or hang, every reply must be a
// well-formed record, and a retransmit of the same slot and sequence id
// must get a reply of the same length (the same bytes when it carried no
// file data) without running anything again.
func FuzzCompoundOps(f *testing.F) {
	session, _ := captureOps(f)
	for _, s := range session {
		f.Add(s, false)
	}
	for _, s := range stateSeeds() {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, cache bool) {
		if len(in) < 4 {
			return
		}
		n := binary.BigEndian.Uint32(in)%15 + 1 // with SEQUENCE, the session's 16
		h := newHarness(t)
		h.session()
		h.write("f", []byte("hello, fuzz"))
		build := func() []byte {
			e := xdr.NewEncoder(256)
			callHeader(e, 7, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
			e.String("")
			e.Uint32(2)
			e.Uint32(n + 1)
			h.sequenceSlot(e, 0, 1, cache)
			e.Fixed(in[4:]) // XDR-padded: the record stays 4-aligned
			return e.AppendTo(nil)
		}
		first, reads := h.recordReads(build())
		sess := h.s.state.session(h.sess[:])
		if sess == nil {
			return // the ops destroyed their own session
		}
		d := xdr.NewDecoder(first)
		h.acceptedHeader(d, 7, nfs4.AcceptSuccess)
		d.Skip(4 + 4 + 4 + 4) // status, empty tag, count, SEQUENCE
		if nfs4.Status(d.Uint32()) != nfs4.OK {
			return // SEQUENCE refused it: no slot was used
		}
		sess.slots[0].mu.Lock()
		kept := sess.slots[0].cache.ok
		sess.slots[0].mu.Unlock()
		again, _ := h.recordReads(build())
		if !kept {
			// Too big to keep: the retransmit is refused, never re-run.
			d = xdr.NewDecoder(again)
			h.acceptedHeader(d, 7, nfs4.AcceptSuccess)
			if st := nfs4.Status(d.Uint32()); st != nfs4.ErrRetryUncachedRep {
				t.Fatalf("retransmit of an uncached reply: status %d", st)
			}
			return
		}
		if len(first) != len(again) || (!reads && !bytes.Equal(first, again)) {
			t.Fatalf("retransmit differs:\n%x\n%x", first, again)
		}
	})
}

// recordReads is record that also says whether the reply carried reads.
func (h *harness) recordReads(rec []byte) ([]byte, bool) {
	out := h.record(rec)
	return out, h.lastReads
}

// FuzzSessionless feeds fuzzed sessionless operations (EXCHANGE_ID,
// CREATE_SESSION, DESTROY_SESSION, BIND_CONN_TO_SESSION,
// DESTROY_CLIENTID) to a server with a live client: no panic, well-formed
// replies, and the live session survives whatever the operation was
// unless it named that session from its own connection.
func FuzzSessionless(f *testing.F) {
	_, sessionless := captureOps(f)
	for _, s := range sessionless {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 4 {
			return
		}
		h := newHarness(t)
		h.session()
		other := h.peer(2000, "other")
		e := xdr.NewEncoder(256)
		callHeaderAs(e, 9, nfs4.ProgramNFS, 4, nfs4.ProcCompound, 2000)
		e.String("")
		e.Uint32(2)
		e.Fixed(in)
		other.record(e.AppendTo(nil))
		if h.s.state.session(h.sess[:]) == nil {
			t.Fatal("another principal's operation destroyed the session")
		}
	})
}

// FuzzDecodeCall: the RPC call header and AUTH_SYS decoders take any bytes.
func FuzzDecodeCall(f *testing.F) {
	e := xdr.NewEncoder(128)
	callHeaderAs(e, 1, nfs4.ProgramNFS, 4, nfs4.ProcCompound, 1000)
	f.Add(e.AppendTo(nil))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		c, ok := decodeCall(xdr.NewDecoder(rec))
		if ok && c.authErr == nfs4.AuthOK && (c.cred.NGIDs < 0 || c.cred.NGIDs > maxAuxGIDs) {
			t.Fatalf("%d groups", c.cred.NGIDs)
		}
	})
}

// FuzzInline: the quick scans an engine runs on every record take any
// bytes, and WriteAlign's offset stays inside what it was given.
func FuzzInline(f *testing.F) {
	h := &harness{}
	for _, s := range stateSeeds() {
		e := xdr.NewEncoder(256)
		callHeader(e, 7, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
		e.String("")
		e.Uint32(2)
		e.Uint32(binary.BigEndian.Uint32(s) + 1)
		h.sequenceSlot(e, 0, 1, false)
		e.Fixed(s[4:])
		f.Add(e.AppendTo(nil))
	}
	s, err := NewServer(Config{Exports: []Export{{Path: f.TempDir()}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	f.Fuzz(func(t *testing.T, rec []byte) {
		s.Inline(rec)
		if off, _, ok := WriteAlign(rec); ok && (off < 0 || off > len(rec)) {
			t.Fatalf("WriteAlign offset %d of %d bytes", off, len(rec))
		}
	})
}
