package nfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// bigFile writes a 64 KiB file of uid:gid and mode in h's export: READs
// of its start end before its size hint and so skip their fstat.
func (h *harness) bigFile(name string, uid, gid int, mode os.FileMode) {
	h.t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), 64<<10), 0o600); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Chown(p, uid, gid); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		h.t.Fatal(err)
	}
}

// ioStatuses returns what READ, WRITE and SETATTR(size) answer cr with sid
// on fh.
func (h *harness) ioStatuses(cr testCred, fh []byte, sid nfs4.Stateid) [3]nfs4.Status {
	h.t.Helper()
	return [3]nfs4.Status{h.readAs(cr, fh, nfs4.OpRead, sid), h.writeAs(cr, fh, sid, 0), h.truncateAs(cr, fh, sid, 64<<10)}
}

var (
	allOK     = [3]nfs4.Status{nfs4.OK, nfs4.OK, nfs4.OK}
	allAccess = [3]nfs4.Status{nfs4.ErrAccess, nfs4.ErrAccess, nfs4.ErrAccess}
)

// TestOpenStateidCheckedAfterChmod: READ, WRITE and SETATTR(size) with
// an open stateid check the caller against the file's mode now, as
// knfsd's nfs4_check_file does on every stateful I/O: after the owner's
// chmod 0600 through the server, another user's open stateid reads,
// writes and truncates no more, at once; after a chmod on the host, at
// once for WRITE and SETATTR (they fstat) and within permTTL for a READ
// that skips its fstat. Issue 21 finding 6.
func TestOpenStateidCheckedAfterChmod(t *testing.T) {
	h := permTree(t)
	h.bigFile("shared", 0, 0, 0o666)
	h.bigFile("local", 0, 0, 0o666)
	root := h.rootFH()
	for _, name := range []string{"shared", "local"} {
		st, sid := h.openIn(as1000, root, name, "owner-1000", nfs4.ShareAccessBoth, nfs4.ShareDenyNone)
		if st != nfs4.OK {
			t.Fatalf("OPEN %s as uid 1000: %d", name, st)
		}
		fh := h.pathFH(name)
		if got := h.ioStatuses(as1000, fh, sid); got != allOK {
			t.Fatalf("%s before chmod: %v", name, got)
		}
		if got := h.readAs(as1000, fh, nfs4.OpRead, sid); got != nfs4.OK {
			t.Fatalf("%s READ before chmod: %d", name, got) // now within the size hint
		}
		if name == "shared" {
			if got := h.setattrAs(asRoot, fh, nfs4.AnonStateid, 0, 0o600); got != nfs4.OK {
				t.Fatalf("SETATTR mode 0600 as root: %d", got)
			}
		} else {
			if err := os.Chmod(filepath.Join(h.dir, name), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := h.writeAs(as1000, fh, sid, 0); got != nfs4.ErrAccess {
				t.Errorf("%s WRITE at once after a chmod on the host: %d, want NFS4ERR_ACCESS", name, got)
			}
			time.Sleep(time.Duration(permTTL) + 10*time.Millisecond)
		}
		if got := h.ioStatuses(as1000, fh, sid); got != allAccess {
			t.Errorf("%s after chmod 0600: READ, WRITE, SETATTR(size) %v, want NFS4ERR_ACCESS", name, got)
		}
		if got := h.ioStatuses(asRoot, fh, nfs4.AnonStateid); got != allOK {
			t.Errorf("%s as root after chmod: %v", name, got)
		}
	}
}

// TestOwnerKeepsIOAfterChmod: the file's owner reads, writes and
// truncates through its open after chmod 0 (knfsd's
// NFSD_MAY_OWNER_OVERRIDE: a client's fchmod(fd, 0) must not break fd).
func TestOwnerKeepsIOAfterChmod(t *testing.T) {
	h := permTree(t)
	h.bigFile("own", 1000, 1000, 0o644)
	st, sid := h.openIn(as1000, h.rootFH(), "own", "owner-1000", nfs4.ShareAccessBoth, nfs4.ShareDenyNone)
	if st != nfs4.OK {
		t.Fatalf("OPEN own as its owner: %d", st)
	}
	fh := h.pathFH("own")
	if got := h.setattrAs(as1000, fh, sid, 0, 0); got != nfs4.OK {
		t.Fatalf("SETATTR mode 0 as the owner: %d", got)
	}
	if got := h.ioStatuses(as1000, fh, sid); got != allOK {
		t.Errorf("the owner after chmod 0: READ, WRITE, SETATTR(size) %v, want OK", got)
	}
	if got := h.ioStatuses(as2000, fh, nfs4.AnonStateid); got != allAccess {
		t.Errorf("another user after chmod 0: %v, want NFS4ERR_ACCESS", got)
	}
}

// TestRootSquashReloadChecksOpenStateids: after a reload from
// no_root_squash to root_squash, root's open stateid of a root-only file
// reads and writes no more: the caller is checked as the export's options
// map it now. Issue 21 finding 6.
func TestRootSquashReloadChecksOpenStateids(t *testing.T) {
	h := permTree(t)
	h.bigFile("rootonly", 0, 0, 0o600)
	st, sid := h.openIn(asRoot, h.rootFH(), "rootonly", "owner-0", nfs4.ShareAccessBoth, nfs4.ShareDenyNone)
	if st != nfs4.OK {
		t.Fatalf("OPEN rootonly as root: %d", st)
	}
	fh := h.pathFH("rootonly")
	if got := h.ioStatuses(asRoot, fh, sid); got != allOK {
		t.Fatalf("before the reload: %v", got)
	}
	h.readAs(asRoot, fh, nfs4.OpRead, sid) // the next READ may skip its fstat
	squash := ClientOptions{Squash: RootSquash, AnonUID: defaultAnonID, AnonGID: defaultAnonID, Insecure: true}
	if err := h.s.Reload([]Export{{Path: h.dir, Clients: []ClientRule{{Spec: "*", Any: true, Options: squash}}}}); err != nil {
		t.Fatal(err)
	}
	if got := h.ioStatuses(asRoot, fh, sid); got != allAccess {
		t.Errorf("root squashed after the reload: READ, WRITE, SETATTR(size) %v, want NFS4ERR_ACCESS", got)
	}
}
