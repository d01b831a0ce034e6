package nfs

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestMain checks, over every test of the package, that each operation's
// reply-size estimate bounds what it actually encoded: a modifying op is
// refused on its estimate, so an estimate too small would let it run and
// then overflow the reply or the slot cache.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		rsizeCheck = recordRsize // not while benchmarking: it costs a peek per op
	}
	curSidCheck = recordCurSid
	code := m.Run()
	if bad := curSidViolations(); len(bad) > 0 {
		fmt.Fprintln(os.Stderr, "ops using the current stateid without the table's flag:")
		for _, b := range bad {
			fmt.Fprintln(os.Stderr, "  ", b)
		}
		code = 1
	}
	if bad := rsizeViolations(); len(bad) > 0 {
		fmt.Fprintln(os.Stderr, "reply-size estimates below the actual result:")
		for _, b := range bad {
			fmt.Fprintln(os.Stderr, "  ", b)
		}
		code = 1
	}
	os.Exit(code)
}

var curSidBad struct {
	mu  sync.Mutex
	ops map[string]bool
}

// recordCurSid notes a handler that set or resolved the current stateid
// in an op the table does not mark for it (setCur and resolveSid then
// ignore it, so the op's tests fail too, but this names the op).
func recordCurSid(op uint32, have, need opFlags) {
	if have&need != 0 {
		return
	}
	curSidBad.mu.Lock()
	defer curSidBad.mu.Unlock()
	if curSidBad.ops == nil {
		curSidBad.ops = map[string]bool{}
	}
	name := "opUsesCurSid"
	if need == opSetsCurSid {
		name = "opSetsCurSid"
	}
	curSidBad.ops[OpName(op)+" lacks "+name] = true
}

func curSidViolations() []string {
	curSidBad.mu.Lock()
	defer curSidBad.mu.Unlock()
	var out []string
	for s := range curSidBad.ops {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

var rsizeBad struct {
	mu  sync.Mutex
	max map[string]string
}

func recordRsize(op uint32, est, got int) {
	if got <= est {
		return
	}
	rsizeBad.mu.Lock()
	defer rsizeBad.mu.Unlock()
	if rsizeBad.max == nil {
		rsizeBad.max = map[string]string{}
	}
	rsizeBad.max[OpName(op)] = fmt.Sprintf("%s: estimate %d, encoded %d", OpName(op), est, got)
}

func rsizeViolations() []string {
	rsizeBad.mu.Lock()
	defer rsizeBad.mu.Unlock()
	var out []string
	for _, s := range rsizeBad.max {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// notImplemented are the ops answered NFS4ERR_NOTSUPP: directory delegations,
// named attributes, SET_SSV, inter-server copy (COPY_NOTIFY), IO_ADVISE
// and WRITE_SAME.
var notImplemented = []uint32{
	nfs4.OpOpenattr,
	nfs4.OpGetDirDelegation, nfs4.OpSetSSV,
	nfs4.OpCopyNotify, nfs4.OpIOAdvise, nfs4.OpWriteSame,
}

// pnfsOps have handlers, which answer NFS4ERR_NOTSUPP while the
// metadata-server role is off (op_layout.go), as in TestOpTableWire's
// server.
var pnfsOps = []uint32{nfs4.OpGetdeviceinfo, nfs4.OpGetdevicelist, nfs4.OpLayoutcommit,
	nfs4.OpLayoutget, nfs4.OpLayoutreturn, nfs4.OpLayouterror, nfs4.OpLayoutstats}

func isNotsupp(f opFunc) bool {
	return reflect.ValueOf(f).Pointer() == reflect.ValueOf(opFunc(opNotsupp)).Pointer()
}

// TestOpTableComplete: every operation of NFSv4.1, NFSv4.2 and RFC 8276
// (3..75) has an entry, with its name, minor version and a size estimate;
// those not implemented say so explicitly; nothing else has one.
func TestOpTableComplete(t *testing.T) {
	notsupp := map[uint32]bool{}
	for _, op := range notImplemented {
		notsupp[op] = true
	}
	names := map[string]uint32{}
	for op := uint32(0); op < 80; op++ {
		info := lookupOp(op)
		if op < nfs4.OpAccess || op > nfs4.OpRemovexattr {
			if info != nil || OpName(op) != "ILLEGAL" {
				t.Errorf("op %d has an entry", op)
			}
			continue
		}
		if info == nil || info.name == "" || info.rsize == nil {
			t.Errorf("op %d: no entry, name or size estimate", op)
			continue
		}
		if prev, dup := names[info.name]; dup {
			t.Errorf("ops %d and %d both named %s", prev, op, info.name)
		}
		names[info.name] = op
		want := uint32(0)
		switch {
		case op >= nfs4.OpAllocate:
			want = 2
		case op >= nfs4.OpBackchannelCtl:
			want = 1
		}
		if info.minor != want {
			t.Errorf("%s: minor %d, want %d", info.name, info.minor, want)
		}
		if isNotsupp(info.run) != notsupp[op] {
			t.Errorf("%s: NOTSUPP handler %v, want %v", info.name, isNotsupp(info.run), notsupp[op])
		}
		if info.flags&(opInline|opNeedFH) != 0 && info.args.read == nil {
			t.Errorf("%s: inline or needing a filehandle, without an argument reader", info.name)
		}
		if info.dataAt != nil && info.args.read == nil {
			t.Errorf("%s: data without an argument reader", info.name)
		}
		if n := info.args.size; n > 0 {
			// A fixed length holds for other values than the zeros
			// it was measured with (ones make every bool true and
			// every union take its first arm after the zero one).
			ones := make([]byte, 256)
			for i := 3; i < len(ones); i += 4 {
				ones[i] = 1
			}
			d := xdr.NewDecoder(ones)
			if st := info.args.read(d); st != nfs4.OK || d.Offset() != n {
				t.Errorf("%s: fixed argument of %d bytes reads %d (status %d)", info.name, n, d.Offset(), st)
			}
		}
		// A modifying op on the event loop must touch memory only; CLOSE
		// is the one vetted for it (opClose: the state table alone).
		if info.flags&opInline != 0 && info.flags&opModifies != 0 && op != nfs4.OpClose {
			t.Errorf("%s: inline and modifying", info.name)
		}
	}
	if OpName(nfs4.OpIllegal) != "ILLEGAL" || OpName(nfs4.OpRead) != "READ" || OpName(1<<31) != "ILLEGAL" {
		t.Error("OpName")
	}
	if n := testing.AllocsPerRun(10, func() { _ = OpName(nfs4.OpReadPlus) }); n != 0 {
		t.Errorf("OpName allocates %v", n)
	}
}

// TestOpTableWire sends every op number after SEQUENCE: numbers without an
// entry get NFS4ERR_OP_ILLEGAL (as op OP_ILLEGAL), unimplemented ones
// NFS4ERR_NOTSUPP, the rest reach their handler (which, given no
// arguments, fails some other way); 4.2 ops in a 4.1 COMPOUND are illegal.
// The pNFS ops answer NOTSUPP with the role off, as before it existed.
func TestOpTableWire(t *testing.T) {
	h := newHarness(t)
	h.session()
	notsupp := map[uint32]bool{}
	for _, op := range append(append(notImplemented, pnfsOps...), v40OnlyOps...) {
		notsupp[op] = true
	}
	for _, minor := range []uint32{1, 2} {
		for op := uint32(0); op < 80; op++ {
			d, st, n := h.compoundMinor(minor, 2, func(e *xdr.Encoder) {
				h.sequence(e)
				e.Uint32(op)
			})
			skipSequence(t, d)
			gotOp := d.Uint32()
			d.Uint32()
			legal := op >= nfs4.OpAccess && op <= nfs4.OpRemovexattr && (minor == 2 || op < nfs4.OpAllocate)
			switch {
			case n != 2:
				t.Errorf("minor %d op %d: %d results", minor, op, n)
			case !legal && (st != nfs4.ErrOpIllegal || gotOp != nfs4.OpIllegal):
				t.Errorf("minor %d op %d: status %d as op %d, want OP_ILLEGAL", minor, op, st, gotOp)
			case legal && notsupp[op] && st != nfs4.ErrNotsupp:
				t.Errorf("minor %d %s: status %d, want NOTSUPP", minor, OpName(op), st)
			case legal && (st == nfs4.ErrOpIllegal || gotOp != op || (!notsupp[op] && st == nfs4.ErrNotsupp)):
				t.Errorf("minor %d %s: status %d as op %d", minor, OpName(op), st, gotOp)
			}
		}
	}
}

// TestInlineDecision: exactly the ops that never block for long let a
// COMPOUND run on the event loop, whatever the table says (the expected
// list is written out here, not read from it).
func TestInlineDecision(t *testing.T) {
	h := newHarness(t)
	noArgs := func(*xdr.Encoder) {}
	readArgs := func(e *xdr.Encoder) {
		nfs4.AnonStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(4096)
	}
	inline := map[uint32]func(e *xdr.Encoder){
		nfs4.OpPutfh:     func(e *xdr.Encoder) { e.Opaque(make([]byte, 24)) },
		nfs4.OpPutrootfh: noArgs, nfs4.OpPutpubfh: noArgs, nfs4.OpGetfh: noArgs,
		nfs4.OpSavefh: noArgs, nfs4.OpRestorefh: noArgs,
		nfs4.OpRead: readArgs, nfs4.OpReadPlus: readArgs,
		nfs4.OpGetattr: func(e *xdr.Encoder) { nfs4.BitmapOf(nfs4.AttrSize, nfs4.AttrChange).Encode(e) },
		nfs4.OpAccess:  func(e *xdr.Encoder) { e.Uint32(0x3f) },
		nfs4.OpClose: func(e *xdr.Encoder) {
			e.Uint32(0)
			nfs4.AnonStateid.Encode(e)
		},
	}
	rec := func(ops ...uint32) []byte {
		e := xdr.NewEncoder(256)
		callHeader(e, 1, nfs4.ProgramNFS, 4, nfs4.ProcCompound)
		e.String("")
		e.Uint32(2)
		e.Uint32(uint32(1 + len(ops)))
		h.sequence(e)
		for _, op := range ops {
			e.Uint32(op)
			if args := inline[op]; args != nil {
				args(e)
			} else {
				e.Fixed(make([]byte, 64)) // some arguments
			}
		}
		return e.AppendTo(nil)
	}
	for op := uint32(0); op < 80; op++ {
		_, want := inline[op]
		if got := h.s.Inline(rec(nfs4.OpPutfh, op, nfs4.OpGetattr)); got != want {
			t.Errorf("SEQUENCE+PUTFH+%s+GETATTR: inline %v, want %v", OpName(op), got, want)
		}
	}
	if h.s.Inline(rec(nfs4.OpPutfh, nfs4.OpRead, nfs4.OpSequence)[:60]) {
		t.Error("a record cut short is inline")
	}
}

// sessionLimits makes h's session with the given ca_maxresponsesize and
// ca_maxresponsesize_cached (and 64 ops).
func (h *harness) sessionLimits(maxResp, maxCached uint32) {
	h.t.Helper()
	d, st, _ := h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpExchangeID)
		e.Fixed([]byte("verifier"))
		e.String("owner-limits")
		e.Uint32(nfs4.ExchgIDUseNonPNFS)
		e.Uint32(nfs4.SP4None)
		e.Uint32(0)
	})
	if st != nfs4.OK {
		h.t.Fatalf("EXCHANGE_ID: %d", st)
	}
	opResult(h.t, d, nfs4.OpExchangeID, nfs4.OK)
	clientID, seq := d.Uint64(), d.Uint32()
	d, st, _ = h.compound(1, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpCreateSession)
		e.Uint64(clientID)
		e.Uint32(seq)
		e.Uint32(0)
		for _, a := range [][6]uint32{{0, 1 << 20, maxResp, maxCached, 64, 4}, {0, 4096, 4096, 0, 2, 1}} {
			for _, v := range a {
				e.Uint32(v)
			}
			e.Uint32(0)
		}
		e.Uint32(0x40000000)
		e.Uint32(1)
		e.Uint32(nfs4.AuthNone)
	})
	if st != nfs4.OK {
		h.t.Fatalf("CREATE_SESSION: %d", st)
	}
	opResult(h.t, d, nfs4.OpCreateSession, nfs4.OK)
	copy(h.sess[:], d.Fixed(16))
	h.seq = 0
}

// repTooBigRemove grows SEQUENCE+PUTROOTFH+k*SAVEFH+REMOVE one SAVEFH
// (8 bytes of reply) at a time until the COMPOUND fails, and checks that
// it fails at the REMOVE with status want and that the REMOVE did not run.
// The REMOVE before it, which fit, removed its file.
func repTooBigRemove(t *testing.T, h *harness, cache bool, want nfs4.Status) {
	victim := filepath.Join(h.dir, "victim")
	for k := 0; k < 60; k++ {
		h.write("victim", []byte("v"))
		d, st, n := h.compound(3+k, func(e *xdr.Encoder) {
			h.seq++
			h.sequenceSlot(e, 0, h.seq, cache)
			e.Uint32(nfs4.OpPutrootfh)
			for range k {
				e.Uint32(nfs4.OpSavefh)
			}
			e.Uint32(nfs4.OpRemove)
			e.String("victim")
		})
		if st == nfs4.OK {
			if exists(t, victim) {
				t.Fatalf("k=%d: REMOVE succeeded but the file is there", k)
			}
			continue
		}
		if st != want || n != 3+k {
			t.Fatalf("k=%d: status %d after %d results, want %d at the REMOVE", k, st, n, want)
		}
		skipSequence(t, d)
		for range 1 + k {
			d.Skip(8)
		}
		opResult(t, d, nfs4.OpRemove, want)
		if !exists(t, victim) {
			t.Fatalf("k=%d: REMOVE answered %d but ran", k, want)
		}
		if k == 0 {
			t.Fatal("no REMOVE fit at all: the test proves nothing")
		}
		return
	}
	t.Fatal("the reply never got too big")
}

// TestRepTooBigBeforeModifying: a modifying op whose result would take the
// reply past ca_maxresponsesize is answered NFS4ERR_REP_TOO_BIG without
// running (knfsd's nfsd4_check_resp_size before OP_MODIFIES_SOMETHING ops).
func TestRepTooBigBeforeModifying(t *testing.T) {
	h := newHarness(t)
	h.sessionLimits(512, 4096)
	repTooBigRemove(t, h, false, nfs4.ErrRepTooBig)
}

// TestRepTooBigToCacheBeforeModifying: with sa_cachethis, a modifying op
// whose result would not fit ca_maxresponsesize_cached gets
// NFS4ERR_REP_TOO_BIG_TO_CACHE and does not run, so a retransmit can never
// find it done but unrecorded (RFC 8881 section 2.10.6.4).
func TestRepTooBigToCacheBeforeModifying(t *testing.T) {
	h := newHarnessCfg(t, func(c *Config) { c.MaxCachedReply = 256 })
	h.sessionLimits(1<<20, 256)
	repTooBigRemove(t, h, true, nfs4.ErrRepTooBigToCache)
	// Without cachethis the same COMPOUNDs run (and are simply not kept).
	h2 := newHarnessCfg(t, func(c *Config) { c.MaxCachedReply = 256 })
	h2.sessionLimits(1<<20, 256)
	_, st, _ := h2.compound(62, func(e *xdr.Encoder) {
		h2.seq++
		h2.sequenceSlot(e, 0, h2.seq, false)
		e.Uint32(nfs4.OpPutrootfh)
		for range 59 {
			e.Uint32(nfs4.OpSavefh)
		}
		e.Uint32(nfs4.OpCreate)
		e.Uint32(nfs4.NF4DIR)
		e.String("d")
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
	})
	if st != nfs4.OK || !exists(t, filepath.Join(h2.dir, "d")) {
		t.Fatalf("no cachethis: status %d", st)
	}
}

// TestCurrentStateidByTable: the ops the table marks opUsesCurSid take
// the stateid OPEN set (WRITE, READ and CLOSE in one COMPOUND, RFC 8881
// section 16.2.3.1.2); an op without the flag (OFFLOAD_STATUS) takes the
// special value literally and refuses it.
func TestCurrentStateidByTable(t *testing.T) {
	h := newHarness(t)
	h.session()
	open := func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpOpen)
		e.Uint32(0)
		e.Uint32(nfs4.ShareAccessBoth)
		e.Uint32(nfs4.ShareDenyNone)
		e.Uint64(h.clid)
		e.String("o")
		e.Uint32(nfs4.OpenCreate)
		e.Uint32(nfs4.CreateUnchecked)
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
		e.Uint32(nfs4.ClaimNull)
		e.String("csid")
	}
	_, st := h.ops(5, func(e *xdr.Encoder) {
		open(e)
		e.Uint32(nfs4.OpWrite)
		nfs4.CurrentStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(nfs4.FileSync4)
		e.Opaque([]byte("hello"))
		e.Uint32(nfs4.OpRead)
		nfs4.CurrentStateid.Encode(e)
		e.Uint64(0)
		e.Uint32(5)
		e.Uint32(nfs4.OpClose)
		e.Uint32(0)
		nfs4.CurrentStateid.Encode(e)
	})
	if st != nfs4.OK {
		t.Fatalf("OPEN, WRITE, READ, CLOSE on the current stateid: %d", st)
	}
	if opTable[nfs4.OpOffloadStatus].flags&opUsesCurSid != 0 {
		t.Fatal("OFFLOAD_STATUS is expected without opUsesCurSid here")
	}
	_, st = h.ops(3, func(e *xdr.Encoder) {
		open(e)
		e.Uint32(nfs4.OpOffloadStatus)
		nfs4.CurrentStateid.Encode(e)
	})
	if st != nfs4.ErrBadStateid {
		t.Fatalf("OFFLOAD_STATUS of the current stateid: %d, want BAD_STATEID", st)
	}
}
