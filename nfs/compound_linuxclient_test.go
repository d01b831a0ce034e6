package nfs

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"os"
	"testing"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestLinuxClientMountBytes replays the first calls a real Linux 6.12
// client made when mounting with vers=4.2 (captured with tcpdump during
// make e2e; one record per line, record marker included): NULL,
// EXCHANGE_ID, CREATE_SESSION, RECLAIM_COMPLETE, PUTROOTFH+GETATTR, the
// fsinfo/pathconf/statfs GETATTRs, ACCESS, READDIR, READLINK. The client
// id, session id and file handles of the capture are swapped for this
// server's; everything else is the client's own bytes. Every call must
// decode and succeed (READLINK of a directory: NFS4ERR_INVAL).
func TestLinuxClientMountBytes(t *testing.T) {
	f, err := os.Open("testdata/linux-6.12-mount.hex")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := newHarness(t)
	root := h.s.root().handle
	var clientID uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		rec, err := hex.DecodeString(sc.Text())
		if err != nil || len(rec) < 4 {
			t.Fatalf("line %d: %v", line, err)
		}
		rec = rec[4:] // record marker
		ops, rec := h.patchCapture(t, rec, clientID, root)
		reply := xdr.NewDecoder(h.record(rec))
		xid := binary.BigEndian.Uint32(rec)
		h.acceptedHeader(reply, xid, nfs4.AcceptSuccess)
		if len(ops) == 0 {
			continue // NULL
		}
		status := nfs4.Status(reply.Uint32())
		reply.Opaque(1024)
		reply.Uint32()
		t.Logf("line %d: ops %v status %d", line, ops, status)
		last := ops[len(ops)-1]
		want := nfs4.OK
		if last == nfs4.OpReadlink {
			want = nfs4.ErrInval
		}
		if status != want {
			t.Fatalf("line %d (ops %v): status %d, want %d", line, ops, status, want)
		}
		if ops[0] == nfs4.OpExchangeID {
			reply.Uint32()
			reply.Uint32()
			clientID = reply.Uint64()
		}
		if ops[0] == nfs4.OpCreateSession {
			reply.Uint32()
			reply.Uint32()
			copy(h.sess[:], reply.Fixed(16))
		}
	}
}

// patchCapture swaps the captured client id, session id and file handles
// for this server's and returns the op numbers and the patched record.
func (h *harness) patchCapture(t *testing.T, rec []byte, clientID uint64, fh []byte) ([]uint32, []byte) {
	d := xdr.NewDecoder(rec)
	c, ok := decodeCall(d)
	if !ok || c.proc == nfs4.ProcNull {
		return nil, rec
	}
	d.Opaque(maxTag)
	d.Uint32()
	n := d.ArrayLen(64, 4)
	var ops []uint32
	for i := 0; i < n; i++ {
		op := d.Uint32()
		ops = append(ops, op)
		pos := d.Offset()
		switch op {
		case nfs4.OpCreateSession:
			binary.BigEndian.PutUint64(rec[pos:], clientID)
			return ops, rec
		case nfs4.OpSequence:
			copy(rec[pos:], h.sess[:])
			d.Skip(16 + 16)
		case nfs4.OpPutfh:
			// Splice our handle (its length differs) in for the captured one.
			l := int(binary.BigEndian.Uint32(rec[pos:]))
			old := 4 + (l+3)&^3
			e := xdr.NewEncoder(64)
			e.Opaque(fh)
			ours := e.Header()
			rec = append(append(append([]byte(nil), rec[:pos]...), ours...), rec[pos+old:]...)
			d = xdr.NewDecoder(rec)
			d.Skip(pos + len(ours))
		case nfs4.OpGetattr:
			nfs4.DecodeBitmap(d)
		case nfs4.OpPutrootfh, nfs4.OpGetfh, nfs4.OpReadlink:
		case nfs4.OpAccess:
			d.Uint32()
		case nfs4.OpReaddir:
			d.Skip(8 + 8 + 4 + 4)
			nfs4.DecodeBitmap(d)
		case nfs4.OpSecinfoNoName:
			d.Uint32()
		default:
			return ops, rec // the rest needs no patching
		}
	}
	return ops, rec
}
