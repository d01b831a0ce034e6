package verdict

import (
	"slices"
	"strings"
)

// fs is the filesystem phase (e2e-fs.sh, guest-fs.sh): filesystems mounted
// inside the exports, and one filled up.
func (r *run) fs() error {
	v := ""
	if len(r.vers) > 0 {
		v = r.vers[0]
	}
	if !r.guest.Has("FSDONE") {
		r.fail("v%s: the guest did not finish the filesystem phase (no FSDONE)", v)
	}
	var names []string
	for _, e := range strings.Split(r.host.Value("FSEXPORTS"), ",") {
		if n, _, _ := strings.Cut(e, ":"); n != "" {
			names = append(names, n)
		}
	}
	if !slices.Contains(names, "cross") {
		r.info("export cross (crossmnt) SKIPPED (E2E_FS_CROSS=0)")
	}
	for _, e := range r.guest.Tagged("FSERR") {
		r.fail("v%s: export %s: step %s FAILED in the guest: %s\n  %s", v, e.Field(1), e.Field(2), e.After(2), e)
	}
	for _, n := range names {
		if err := r.fsExport(n); err != nil {
			return err
		}
	}
	if slices.Contains(names, "outer") {
		r.fill()
	}
	// Nothing written through "outer" may land in B1, mounted over its proj.
	b0, err := r.hostManifest("B1 before the run (host-before-b1.manifest)", "host-before-b1.manifest")
	if err != nil {
		return err
	}
	b1, err := r.hostManifest("B1 after (host-after-b1.manifest)", "host-after-b1.manifest")
	if err != nil {
		return err
	}
	r.diff("export outer: B1 (mounted at outer/proj on the host, hidden from the plain export) changed", b0, b1)
	return nil
}

// fsExport: the mount, the listings before / after the writes against the
// host's, the rule at proj, and every file the guest wrote.
func (r *run) fsExport(n string) error {
	m, ok := r.guest.First("FSMOUNT", n)
	switch {
	case !ok:
		r.fail("export %s: no mount result (the mount hung or the guest stopped before it)", n)
		return nil
	case m.Field(2) != "ok":
		r.fail("export %s: MOUNT FAILED: %s\n  %s", n, m.After(2), m)
		return nil
	}
	r.info("export %s: mounted (%s)", n, m.After(2))
	before, err := r.hostManifest("the host's view before the writes", "host-before-"+n+".manifest")
	if err != nil {
		return err
	}
	after, err := r.hostManifest("the host's view after the writes", "host-after-"+n+".manifest")
	if err != nil {
		return err
	}
	g0 := guestManifest("the guest's listing before the writes (FSM0 "+n+")", r.guest, "FSM0", n)
	if r.diff("export "+n+": listing before the writes", before, g0) {
		r.info("export %s: before the writes, %d entries identical on the host and in the guest (sha256 + size + mode + nlink + owner)", n, before.Count(""))
	}
	r.fsRule(n, g0)
	if r.guest.Has("FSDONE") {
		g1 := guestManifest("the guest's read-back after the writes and drop_caches (FSM1 "+n+")", r.guest, "FSM1", n)
		if r.diff("export "+n+": read-back after the writes", after, g1) {
			r.info("export %s: after the writes, %d entries identical on the host and in the guest's read-back", n, after.Count(""))
		}
	}
	for _, w := range r.guest.Keyed("FSW", n) {
		got := "MISSING"
		if e, ok := after.Find("F", w.Field(2)); ok {
			got = e.Last()
		}
		if got != w.Field(3) {
			r.fail("export %s: %s on the host: sha256 %s, want %s (what the guest wrote)\n  %s", n, w.Field(2), got, w.Field(3), w)
		}
	}
	var ino []string
	for _, i := range r.guest.Keyed("FSINO", n) {
		ino = append(ino, i.After(1))
	}
	if len(ino) > 0 {
		r.info("export %s: fileids the guest sees: %s", n, strings.Join(ino, ", "))
	}
	return nil
}

// fsRule: what is at proj. Without crossmnt, the directory beneath the
// mount point, on the export's filesystem (knfsd's rule, exports(5)); with
// crossmnt, the filesystem mounted there, with its own fsid (the Linux
// client mounts it as a submount).
func (r *run) fsRule(n string, g0 Manifest) {
	dev, _ := r.guest.First("FSDEV", n)
	root, proj, sub := dev.Field(2), dev.Field(3), dev.Field(4)
	has := func(p string) bool { _, ok := g0.Find("F", p); return ok }
	switch n {
	case "outer":
		if has("./proj/b.txt") {
			r.fail("export outer (no crossmnt): the guest sees proj/b.txt, a file of the filesystem mounted at proj: without crossmnt a mount point inside the export must show the directory beneath it (proj/hidden.txt), as knfsd does (exports(5))")
		} else if !has("./proj/hidden.txt") {
			r.fail("export outer (no crossmnt): proj/hidden.txt, in the directory beneath the mount point, is not in the guest's listing")
		}
		if root == "" || proj == "none" || root != proj || sub != "no" {
			r.fail("export outer (no crossmnt): st_dev of the root %s and of proj %s, proj a submount in the guest: %s; the directory beneath the mount point belongs to the export's filesystem (same fsid, no submount)\n  %s", root, proj, sub, orNone(dev))
		} else {
			r.info("export outer: proj is the directory beneath the mount point (hidden.txt, same fsid: st_dev %s)", root)
		}
	case "cross":
		if has("./proj/hidden2.txt") {
			r.fail("export cross (crossmnt): the guest sees proj/hidden2.txt, beneath the mount point: crossmnt must cross into the filesystem mounted at proj")
		} else if !has("./proj/d.txt") {
			r.fail("export cross (crossmnt): proj/d.txt, on the filesystem mounted at proj, is not in the guest's listing")
		}
		if root == "" || proj == "none" || root == proj || sub != "yes" {
			r.fail("export cross (crossmnt): st_dev of the root %s and of proj %s, proj a submount in the guest: %s; the filesystem mounted at proj needs its own fsid (the client then mounts it as a submount)\n  %s", root, proj, sub, orNone(dev))
		} else {
			r.info("export cross: proj is the filesystem mounted there, with its own fsid (guest submount, st_dev %s vs %s)", root, proj)
		}
	}
}

// rc is the exit status in "TAG rc=N MSG", "" when there is none.
func rc(r Record) string {
	return strings.TrimPrefix(r.Field(1), "rc=")
}

// fill: dd on the full filesystem must fail with ENOSPC, the file written
// before must be intact, and space must come back after rm.
func (r *run) fill() {
	f, ok := r.guest.First("FILL", "")
	if !ok {
		r.fail("fill: no result from the guest (it stopped before the fill)")
		return
	}
	size := r.guest.Value("FILLSIZE")
	msg := f.After(1)
	switch {
	case rc(f) == "0":
		r.fail("fill: dd wrote 64 MiB into an 8 MiB filesystem and exited 0 (fill.bin: %s bytes): a WRITE that failed on the server (ENOSPC) must be answered with an error (NFS4ERR_NOSPC), never NFS4_OK\n  %s", size, f)
	case rc(f) == "137":
		r.fail("fill: dd did not finish within 120 s (killed; fill.bin: %s bytes): the client kept retrying?\n  %s", size, f)
	case !strings.Contains(msg, "No space left on device"):
		r.fail("fill: dd failed (rc=%s) but not with ENOSPC ('No space left on device')\n  %s", rc(f), f)
	default:
		r.info("fill: dd failed with ENOSPC as it must (rc=%s, fill.bin reached %s bytes): %s", rc(f), size, msg)
	}
	k, _ := r.guest.First("FILLKEEP", "")
	if k.Field(1) == "" || k.Field(1) != k.Field(2) {
		r.fail("fill: keep.bin, written before the fill, reads back in the guest (after drop_caches) with sha256 %s, want %s\n  %s", k.Field(1), k.Field(2), orNone(k))
	} else {
		r.info("fill: keep.bin, written before the fill, reads back intact")
	}
	if a, _ := r.guest.First("FILLAFTER", ""); rc(a) != "0" {
		r.fail("fill: after removing fill.bin, writing after.bin failed (rc=%s): the space of the removed file did not come back?\n  %s", rc(a), orNone(a))
	}
}
