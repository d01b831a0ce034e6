package nfs

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// TestCreateDirKeepsSetgid: a directory made in a set-group-ID directory
// inherits the bit and the group (mkdir(2)); CREATE used to chmod it to the
// mode the client sent, dropping the bit, so files made in it got the
// creator's group. As with a local mkdir and knfsd (which drops the mode
// from its post-create SETATTR), CREATE of a 0755 directory in a 2775 one
// gives 2755, and what is made inside gets the project group.
func TestCreateDirKeepsSetgid(t *testing.T) {
	h := permTree(t)
	proj := filepath.Join(h.dir, "proj")
	if err := os.Mkdir(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chown(proj, 0, 3000)
	unix.Chmod(proj, 0o2775) // os.Chmod would take 0o2000 for a permission bit
	plain := filepath.Join(h.dir, "plain")
	if err := os.Mkdir(plain, 0o700); err != nil {
		t.Fatal(err)
	}
	unix.Chmod(plain, 0o777)
	projFH := h.pathFH("proj")
	mkdir := func(dir []byte, name string, mode uint32) ([]byte, nfs4.Status) {
		d, st := h.opsAs(as2000, 3, func(e *xdr.Encoder) {
			e.Uint32(nfs4.OpPutfh)
			e.Opaque(dir)
			e.Uint32(nfs4.OpCreate)
			e.Uint32(nfs4.NF4DIR)
			e.String(name)
			nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
			e.Uint32(4)
			e.Uint32(mode)
			e.Uint32(nfs4.OpGetfh)
		})
		if st != nfs4.OK {
			return nil, st
		}
		skipSequence(t, d)
		opResult(t, d, nfs4.OpPutfh, nfs4.OK)
		opResult(t, d, nfs4.OpCreate, nfs4.OK)
		d.Fixed(4 + 8 + 8)
		nfs4.DecodeBitmap(d)
		opResult(t, d, nfs4.OpGetfh, nfs4.OK)
		return append([]byte(nil), d.Opaque(128)...), nfs4.OK
	}
	stat := func(rel string) unix.Stat_t {
		var sb unix.Stat_t
		if err := unix.Lstat(filepath.Join(h.dir, rel), &sb); err != nil {
			t.Fatal(err)
		}
		return sb
	}
	sub, st := mkdir(projFH, "sub", 0o755)
	if st != nfs4.OK {
		t.Fatalf("CREATE proj/sub as uid 2000: %d", st)
	}
	if sb := stat("proj/sub"); sb.Mode&0o7777 != 0o2755 || sb.Gid != 3000 {
		t.Errorf("proj/sub: mode %o gid %d, want 2755 gid 3000 (as mkdir)", sb.Mode&0o7777, sb.Gid)
	}
	if _, st := mkdir(sub, "deeper", 0o700); st != nfs4.OK {
		t.Fatalf("CREATE proj/sub/deeper: %d", st)
	}
	if sb := stat("proj/sub/deeper"); sb.Mode&0o7777 != 0o2700 || sb.Gid != 3000 {
		t.Errorf("proj/sub/deeper: mode %o gid %d, want 2700 gid 3000", sb.Mode&0o7777, sb.Gid)
	}
	// The mode the client sent still wins where the kernel gave less
	// (here the test's umask; the server runs with umask 0).
	if _, st := mkdir(projFH, "open", 0o777); st != nfs4.OK {
		t.Fatalf("CREATE proj/open: %d", st)
	}
	if sb := stat("proj/open"); sb.Mode&0o7777 != 0o2777 {
		t.Errorf("proj/open: mode %o, want 2777", sb.Mode&0o7777)
	}
	// Outside a set-group-ID directory nothing changes.
	if _, st := mkdir(h.pathFH("plain"), "d", 0o755); st != nfs4.OK {
		t.Fatalf("CREATE plain/d: %d", st)
	}
	if sb := stat("plain/d"); sb.Mode&0o7777 != 0o755 || sb.Gid != 2000 {
		t.Errorf("plain/d: mode %o gid %d, want 755 gid 2000", sb.Mode&0o7777, sb.Gid)
	}
}
