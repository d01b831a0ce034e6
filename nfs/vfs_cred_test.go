package nfs

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// threadIDs returns the fourth (filesystem) id of the Uid: and Gid: lines
// and the Groups: line of the calling thread's status.
func threadIDs(t *testing.T) (fsuid, fsgid, groups string) {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 5 && f[0] == "Uid:":
			fsuid = f[4]
		case len(f) == 5 && f[0] == "Gid:":
			fsgid = f[4]
		case len(f) >= 1 && f[0] == "Groups:":
			groups = strings.Join(f[1:], " ")
		}
	}
	return fsuid, fsgid, groups
}

func TestAsCallerSwitchesAndRestores(t *testing.T) {
	if !canSwitch {
		t.Skip("needs root")
	}
	runtime.LockOSThread() // read the status of the thread asCaller switched
	defer runtime.UnlockOSThread()
	cr := Cred{UID: 1000, GID: 1001, NGIDs: 2, GIDs: [maxAuxGIDs]uint32{5, 6}}
	var uid, gid, groups string
	if err := asCaller(cr, func() error {
		uid, gid, groups = threadIDs(t)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if uid != "1000" || gid != "1001" || groups != "5 6" {
		t.Fatalf("as caller: fsuid %s fsgid %s groups %q", uid, gid, groups)
	}
	if uid, gid, groups = threadIDs(t); uid != "0" || gid != "0" || groups != "" {
		t.Fatalf("after: fsuid %s fsgid %s groups %q", uid, gid, groups)
	}
}

// TestAsCallerRefusesWhatTheKernelRejects: setfsuid(-1) changes nothing
// and reports no error; before the fix f ran as root.
func TestAsCallerRefusesWhatTheKernelRejects(t *testing.T) {
	if !canSwitch {
		t.Skip("needs root")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, cr := range []Cred{
		{UID: 0xFFFFFFFF, GID: 1000},
		{UID: 1000, GID: 0xFFFFFFFF},
		{UID: 1000, GID: 1000, NGIDs: 1, GIDs: [maxAuxGIDs]uint32{0xFFFFFFFF}},
	} {
		ran := ""
		err := asCaller(cr, func() error {
			ran, _, _ = threadIDs(t)
			return nil
		})
		if err != unix.EACCES || ran != "" {
			t.Errorf("%+v: err %v, ran as fsuid %q", cr, err, ran)
		}
		if uid, gid, _ := threadIDs(t); uid != "0" || gid != "0" {
			t.Errorf("%+v: left fsuid %s fsgid %s", cr, uid, gid)
		}
	}
}

func TestIDMapper(t *testing.T) {
	m := newIDMapper(&Config{AnonUID: 4242, AnonGID: 4343})
	got := m.cred(Cred{UID: 0xFFFFFFFF, GID: 0xFFFFFFFF, Flavor: nfs4.AuthSys, NGIDs: 3,
		GIDs: [maxAuxGIDs]uint32{7, 0xFFFFFFFF, 9}})
	want := Cred{UID: 4242, GID: 4343, Flavor: nfs4.AuthSys, NGIDs: 2, GIDs: [maxAuxGIDs]uint32{7, 9}}
	if got != want {
		t.Errorf("-1 ids: %+v, want %+v", got, want)
	}
	if got := m.cred(Cred{UID: 0, GID: 0, Flavor: nfs4.AuthNone}); got.UID != 4242 || got.GID != 4343 {
		t.Errorf("AUTH_NONE: %+v", got)
	}
	ok := Cred{UID: 1000, GID: 100, Flavor: nfs4.AuthSys, NGIDs: 1, GIDs: [maxAuxGIDs]uint32{4}}
	if got := m.cred(ok); got != ok {
		t.Errorf("valid ids changed: %+v", got)
	}
	// An id outside the user namespace's map is one the kernel rejects.
	sp := idSpace{{0, 1000}, {5000, 10}}
	for id, want := range map[uint32]bool{0: true, 999: true, 1000: false, 5009: true, 5010: false, 0xFFFFFFFF: false} {
		if sp.validID(id) != want {
			t.Errorf("validID(%d) = %v", id, !want)
		}
	}
	if !fullIDSpace.validID(0xFFFFFFFE) || fullIDSpace.validID(0xFFFFFFFF) {
		t.Error("full id space")
	}
}

// TestUnmappableUIDIsNotRoot: a caller claiming uid and gid 0xFFFFFFFF
// used to act as root (setfsuid(-1) is a no-op): it chmod'ed root's files
// and created root-owned directories. It is now the anonymous user.
func TestUnmappableUIDIsNotRoot(t *testing.T) {
	h := permTree(t)
	open := filepath.Join(h.dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777) // past the umask
	fh := h.pathFH("pub")
	_, st := h.opsAs(asNoone, 2, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutfh)
		e.Opaque(fh)
		e.Uint32(nfs4.OpSetattr)
		nfs4.AnonStateid.Encode(e)
		nfs4.BitmapOf(nfs4.AttrMode).Encode(e)
		e.Uint32(4)
		e.Uint32(0o666)
	})
	var sb unix.Stat_t
	unix.Stat(filepath.Join(h.dir, "pub"), &sb)
	if st != nfs4.ErrPerm || sb.Mode&0o777 != 0o644 {
		t.Errorf("SETATTR mode of root's file as uid -1: %d, mode now %o", st, sb.Mode&0o777)
	}
	_, st = h.opsAs(asNoone, 3, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("open")
		e.Uint32(nfs4.OpCreate)
		e.Uint32(nfs4.NF4DIR)
		e.String("made")
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
	})
	if st != nfs4.OK {
		t.Fatalf("CREATE as uid -1 in a 0777 directory: %d", st)
	}
	unix.Stat(filepath.Join(open, "made"), &sb)
	if sb.Uid != defaultAnonID || sb.Gid != defaultAnonID {
		t.Errorf("directory made by uid -1 owned by %d:%d, want %d:%d", sb.Uid, sb.Gid, defaultAnonID, defaultAnonID)
	}
	// Control: a real user creates as itself.
	_, st = h.opsAs(as1000, 3, func(e *xdr.Encoder) {
		e.Uint32(nfs4.OpPutrootfh)
		e.Uint32(nfs4.OpLookup)
		e.String("open")
		e.Uint32(nfs4.OpCreate)
		e.Uint32(nfs4.NF4DIR)
		e.String("made1000")
		nfs4.Bitmap{}.Encode(e)
		e.Uint32(0)
	})
	unix.Stat(filepath.Join(open, "made1000"), &sb)
	if st != nfs4.OK || sb.Uid != 1000 || sb.Gid != 1000 {
		t.Errorf("CREATE as uid 1000: %d, owned by %d:%d", st, sb.Uid, sb.Gid)
	}
}

// threadCapEff returns the CapEff line of the calling thread's status.
func threadCapEff(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "CapEff:" {
			v, err := strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatal("no CapEff line")
	return 0
}

// TestAsCallerDropsSysResource: a caller other than root acts without
// CAP_SYS_RESOURCE (knfsd's nfsd_setuser), so root's reserved blocks and
// quotas stop it; and, since capset writes the whole effective set, the
// drop must not give back the filesystem capabilities the kernel took
// when the fsuid left 0. Root keeps CAP_SYS_RESOURCE; afterwards the
// thread has exactly what it had.
func TestAsCallerDropsSysResource(t *testing.T) {
	if !canSwitch {
		t.Skip("needs root")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	shed := uint64(1 << unix.CAP_SYS_RESOURCE)
	const dacOverride = 1 << unix.CAP_DAC_OVERRIDE
	if !shedsReserve {
		// Where tests run without CAP_SYS_RESOURCE, the same code sheds
		// CAP_KILL instead, so the order of capset and setfsuid is
		// still checked.
		if !serverCaps.has(unix.CAP_KILL) {
			t.Skip("neither CAP_SYS_RESOURCE nor CAP_KILL to shed")
		}
		saved := callerCaps
		callerCaps, shedsReserve, shed = serverCaps.without(unix.CAP_KILL), true, 1<<unix.CAP_KILL
		defer func() { callerCaps, shedsReserve = saved, false }()
	}
	before := threadCapEff(t)
	var during uint64
	asCaller(Cred{UID: 1000, GID: 1000}, func() error { during = threadCapEff(t); return nil })
	if during&dacOverride != 0 {
		t.Errorf("as uid 1000: CAP_DAC_OVERRIDE effective (CapEff %x)", during)
	}
	if during&shed != 0 {
		t.Errorf("as uid 1000: CapEff %x still has %x", during, shed)
	}
	asCaller(Cred{UID: 0, GID: 5}, func() error { during = threadCapEff(t); return nil })
	if during&shed == 0 {
		t.Errorf("as root with gid 5: CapEff %x lacks %x", during, shed)
	}
	if after := threadCapEff(t); after != before {
		t.Errorf("after: CapEff %x, want %x", after, before)
	}
}

// TestThreadCapsetRoundTrip: rawCapget and rawCapset read and write the
// calling thread's sets (checked with a capability this test can drop:
// the one asCaller drops may be missing where tests run).
func TestThreadCapsetRoundTrip(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var c threadCaps
	if rawCapget(&c) != 0 {
		t.Skip("capget refused")
	}
	cp := -1
	for _, x := range []int{unix.CAP_SYS_RESOURCE, unix.CAP_NET_RAW, unix.CAP_MKNOD, unix.CAP_KILL} {
		if c.has(x) {
			cp = x
			break
		}
	}
	if cp < 0 {
		t.Skip("no capability to drop")
	}
	less := c.without(cp)
	if e := rawCapset(&less); e != 0 {
		t.Fatalf("capset: %v", e)
	}
	got := threadCapEff(t)
	rawCapset(&c)
	if got&(1<<cp) != 0 {
		t.Errorf("capability %d still effective after capset (CapEff %x)", cp, got)
	}
	if now := threadCapEff(t); now&(1<<cp) == 0 {
		t.Errorf("capability %d not raised again (CapEff %x)", cp, now)
	}
}
