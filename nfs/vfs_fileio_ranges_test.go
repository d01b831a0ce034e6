package nfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

const u64max = ^uint64(0)

// opStatus sends PUTFH fh plus one operation and returns that operation's
// status (or the COMPOUND's when an earlier op failed).
func (h *harness) opStatus(fh []byte, op uint32, args func(e *xdr.Encoder)) nfs4.Status {
	h.t.Helper()
	d, st := h.ops(2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(op)
		args(e)
	})
	skipSequence(h.t, d)
	opResult(h.t, d, nfs4.OpPutfh, nfs4.OK)
	if got := d.Uint32(); got != op {
		h.t.Fatalf("result for op %d, want %d", got, op)
	}
	return st
}

// TestWriteOffsetOverflow: a WRITE whose offset plus length passes the
// largest file offset, or wraps past 2^64, is NFS4ERR_FBIG (as knfsd's
// nfsd4_write) and changes nothing; the file's start is not overwritten.
func TestWriteOffsetOverflow(t *testing.T) {
	h := newHarness(t)
	h.session()
	st, sid, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	if st, n, _, _ := h.writeOp(fh, sid, 0, nfs4.FileSync4, []byte("start")); st != nfs4.OK || n != 5 {
		t.Fatalf("control WRITE: %d %d", st, n)
	}
	for _, off := range []uint64{u64max, u64max - 1, 1 << 63, 1<<63 - 1, 1<<63 - 2} {
		if st, n, _, _ := h.writeOp(fh, sid, off, nfs4.Unstable4, []byte("XY")); st != nfs4.ErrFbig {
			t.Fatalf("2-byte WRITE at %#x: status %d count %d, want NFS4ERR_FBIG", off, st, n)
		}
	}
	got, _ := os.ReadFile(filepath.Join(h.dir, "f"))
	if len(got) < 5 || string(got[:5]) != "start" {
		t.Fatalf("file starts %q after the rejected WRITEs", got[:min(len(got), 5)])
	}
}

// TestRangeOverflow checks every other operation with an offset and a
// length for wrap-around and offsets past int64: ALLOCATE, DEALLOCATE,
// COPY, CLONE, READ, READ_PLUS, SEEK, LOCK, LOCKT, LOCKU, COMMIT.
func TestRangeOverflow(t *testing.T) {
	h := newHarness(t)
	h.session()
	h.write("src", []byte("0123456789"))
	st, sid, fh := h.create("f", nfs4.CreateUnchecked, "")
	if st != nfs4.OK {
		t.Fatal(st)
	}
	src := h.lookupFH("src")
	fallocate := func(op uint32, off, n uint64) nfs4.Status {
		return h.opStatus(fh, op, func(e *xdr.Encoder) {
			sid.Encode(e)
			e.Uint64(off)
			e.Uint64(n)
		})
	}
	for _, op := range []uint32{nfs4.OpAllocate, nfs4.OpDeallocate} {
		for _, c := range []struct {
			off, n uint64
			want   nfs4.Status
		}{
			{u64max, 2, nfs4.ErrInval},
			{1 << 63, 1, nfs4.ErrInval},
			{0, 1 << 63, nfs4.ErrInval},
			{1<<63 - 1, 2, nfs4.ErrFbig},
			{1 << 62, 1 << 62, nfs4.ErrFbig},
		} {
			if st := fallocate(op, c.off, c.n); st != c.want {
				t.Errorf("op %d at %#x+%#x: %d, want %d", op, c.off, c.n, st, c.want)
			}
		}
	}
	copyOp := func(op uint32, srcOff, dstOff, count uint64) nfs4.Status {
		d, st := h.ops(4, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(src)
			e.Uint32(nfs4.OpSavefh)
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(op)
			nfs4.AnonStateid.Encode(e)
			sid.Encode(e)
			e.Uint64(srcOff)
			e.Uint64(dstOff)
			e.Uint64(count)
			if op == nfs4.OpCopy {
				e.Bool(true)
				e.Bool(true)
				e.Uint32(0)
			}
		})
		skipSequence(t, d)
		return st
	}
	for _, op := range []uint32{nfs4.OpCopy, nfs4.OpClone} {
		for _, c := range []struct {
			srcOff, dstOff, count uint64
			want                  nfs4.Status
		}{
			{0, u64max, 2, nfs4.ErrInval},
			{0, 1 << 63, 0, nfs4.ErrInval},
			{0, 1<<63 - 5, 0, nfs4.ErrFbig}, // 10 bytes from there pass the limit
			{u64max, 0, 2, nfs4.ErrInval},   // source range past its EOF
			{2, u64max - 1, u64max, nfs4.ErrInval},
		} {
			if st := copyOp(op, c.srcOff, c.dstOff, c.count); st != c.want {
				t.Errorf("op %d src %#x dst %#x count %#x: %d, want %d", op, c.srcOff, c.dstOff, c.count, st, c.want)
			}
		}
	}
	// READ and READ_PLUS past EOF, even at 2^64-1: nothing, eof.
	for _, op := range []uint32{nfs4.OpRead, nfs4.OpReadPlus} {
		for _, off := range []uint64{u64max, 1 << 63, u64max - 10} {
			d, st := h.ops(2, func(e *xdr.Encoder) {
				e.Uint32(nfs4.OpPutfh)
				e.Opaque(src)
				e.Uint32(op)
				nfs4.AnonStateid.Encode(e)
				e.Uint64(off)
				e.Uint32(1 << 20)
			})
			skipSequence(t, d)
			opResult(t, d, nfs4.OpPutfh, nfs4.OK)
			opResult(t, d, op, nfs4.OK)
			if eof, n := d.Bool(), d.Uint32(); st != nfs4.OK || !eof || n != 0 {
				t.Errorf("op %d at %#x: eof %v, %d bytes/segments", op, off, eof, n)
			}
		}
	}
	for _, off := range []uint64{u64max, 1 << 63} {
		st := h.opStatus(src, nfs4.OpSeek, func(e *xdr.Encoder) {
			nfs4.AnonStateid.Encode(e)
			e.Uint64(off)
			e.Uint32(nfs4.ContentData)
		})
		if st != nfs4.ErrNxio {
			t.Errorf("SEEK at %#x: %d", off, st)
		}
	}
	// Locks: a length of all ones means "to EOF" from any offset; any
	// other range that passes 2^64-1 is NFS4ERR_INVAL (RFC 8881 §18.10.3).
	lock := func(off, n uint64) nfs4.Status {
		return h.opStatus(fh, nfs4.OpLock, func(e *xdr.Encoder) {
			e.Uint32(writeLT)
			e.Bool(false)
			e.Uint64(off)
			e.Uint64(n)
			e.Bool(true)
			e.Uint32(0)
			sid.Encode(e)
			e.Uint32(0)
			e.Uint64(h.clientID())
			e.String("lock-owner")
		})
	}
	lockt := func(off, n uint64) nfs4.Status {
		return h.opStatus(fh, nfs4.OpLockt, func(e *xdr.Encoder) {
			e.Uint32(writeLT)
			e.Uint64(off)
			e.Uint64(n)
			e.Uint64(h.clientID())
			e.String("other-owner")
		})
	}
	for _, c := range []struct {
		off, n uint64
		want   nfs4.Status
	}{
		{u64max, 2, nfs4.ErrInval},
		{1, u64max, nfs4.OK}, // all ones: to EOF
		{2, u64max - 1, nfs4.ErrInval},
		{u64max, 1, nfs4.ErrInval}, // ends at 2^64
	} {
		if st := lockt(c.off, c.n); st != c.want {
			t.Errorf("LOCKT %#x+%#x: %d, want %d", c.off, c.n, st, c.want)
		}
	}
	if st := lock(u64max, 2); st != nfs4.ErrInval {
		t.Errorf("LOCK at 2^64-1 for 2: %d", st)
	}
	if st := lock(1<<63, u64max); st != nfs4.OK {
		t.Errorf("LOCK from 2^63 to EOF: %d", st)
	}
	// COMMIT syncs the whole file whatever the range (as knfsd clamps it).
	st = h.opStatus(fh, nfs4.OpCommit, func(e *xdr.Encoder) {
		e.Uint64(u64max)
		e.Uint32(^uint32(0))
	})
	if st != nfs4.OK {
		t.Errorf("COMMIT at 2^64-1: %d", st)
	}
}
