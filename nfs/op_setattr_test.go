package nfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestServerTimeByWriterNotOwner: setting atime or mtime to the server's
// time is a "touch", which needs write permission, not ownership: the
// kernel allows utimensat(NULL) to any writer, and knfsd's nfsd_setattr
// asks only NFSD_MAY_WRITE when no explicit time is given. A client time
// still needs ownership (NFS4ERR_PERM), and a caller without write
// permission is refused.
func TestServerTimeByWriterNotOwner(t *testing.T) {
	h := permTree(t)
	shared := filepath.Join(h.dir, "shared")
	if err := os.WriteFile(shared, []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o666) // root's, writable by all
	old := unix.Timespec{Sec: 1000}
	fh := h.pathFH("shared")
	serverTime := func(e *xdr.Encoder) { e.Uint32(nfs4.SetToServerTime) }
	clientTime := func(e *xdr.Encoder) {
		e.Uint32(nfs4.SetToClientTime)
		e.Int64(12345)
		e.Uint32(0)
	}
	setattr := func(cr testCred, fh []byte, bits []int, times ...func(e *xdr.Encoder)) nfs4.Status {
		t.Helper()
		if err := unix.UtimesNano(shared, []unix.Timespec{old, old}); err != nil {
			t.Fatal(err)
		}
		_, st := h.opsAs(cr, 2, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(fh)
			e.Uint32(nfs4.OpSetattr)
			nfs4.AnonStateid.Encode(e)
			nfs4.BitmapOf(bits...).Encode(e)
			v := xdr.NewEncoder(32)
			for _, f := range times {
				f(v)
			}
			e.Opaque(v.Header())
		})
		return st
	}
	times := func() (atime, mtime int64) {
		var sb unix.Stat_t
		if err := unix.Stat(shared, &sb); err != nil {
			t.Fatal(err)
		}
		return sb.Atim.Sec, sb.Mtim.Sec
	}
	both := []int{nfs4.AttrTimeAccessSet, nfs4.AttrTimeModifySet}
	if st := setattr(as1000, fh, both, serverTime, serverTime); st != nfs4.OK {
		t.Errorf("uid 1000 setting both times of a file it may write to server time: %d", st)
	} else if a, m := times(); a == old.Sec || m == old.Sec {
		t.Errorf("times not changed: atime %d mtime %d", a, m)
	}
	if st := setattr(as1000, fh, []int{nfs4.AttrTimeModifySet}, serverTime); st != nfs4.OK {
		t.Errorf("uid 1000 setting the mtime of a file it may write to server time: %d", st)
	} else if a, m := times(); a != old.Sec || m == old.Sec {
		t.Errorf("after mtime only: atime %d (want %d kept), mtime %d", a, old.Sec, m)
	}
	if st := setattr(as1000, fh, []int{nfs4.AttrTimeAccessSet}, serverTime); st != nfs4.OK {
		t.Errorf("uid 1000 setting the atime of a file it may write to server time: %d", st)
	} else if a, m := times(); a == old.Sec || m != old.Sec {
		t.Errorf("after atime only: atime %d, mtime %d (want %d kept)", a, m, old.Sec)
	}
	if st := setattr(as1000, fh, []int{nfs4.AttrTimeModifySet}, clientTime); st != nfs4.ErrPerm {
		t.Errorf("uid 1000 setting a client mtime on root's file: %d, want NFS4ERR_PERM", st)
	}
	if st := setattr(as1000, fh, both, serverTime, clientTime); st != nfs4.ErrPerm {
		t.Errorf("uid 1000 setting server atime and client mtime on root's file: %d, want NFS4ERR_PERM", st)
	}
	pub := h.pathFH("pub") // root's 0644
	for _, bits := range [][]int{both, {nfs4.AttrTimeModifySet}} {
		fs := []func(*xdr.Encoder){serverTime, serverTime}[:len(bits)]
		if st := setattr(as1000, pub, bits, fs...); st != nfs4.ErrAccess && st != nfs4.ErrPerm {
			t.Errorf("uid 1000 touching root's 0644 file (%d times): %d, want refused", len(bits), st)
		}
	}
}
