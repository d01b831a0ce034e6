package verdict

import (
	"fmt"
	"strings"
)

// nfs is the main phase: per version, the mount, the guest's listing and
// hashes against the host's, READ_PLUS on 4.2, then the write checks.
func (r *run) nfs() error {
	host, err := r.hostManifest("the host's tree (host.manifest)", "host.manifest")
	if err != nil {
		return err
	}
	pass, fail := 0, 0
	for _, v := range r.vers {
		n := len(r.rep.Fails)
		if err := r.nfsVersion(v, host); err != nil {
			return err
		}
		if len(r.rep.Fails) == n {
			pass++
		} else {
			fail++
		}
	}
	r.info("e2e-kernel: %d passed, %d failed", pass, fail)
	return nil
}

func (r *run) nfsVersion(v string, host Manifest) error {
	m, ok := r.guest.First("MOUNT", v)
	switch {
	case !ok:
		r.fail("v%s: no mount result (the mount hung or the guest stopped before it)", v)
		return nil
	case m.Field(2) != "ok":
		r.fail("v%s: MOUNT FAILED: %s\n  %s", v, m.After(2), m)
		return nil
	}
	r.info("v%s: mounted (%s)", v, m.After(2))
	guest := guestManifest("the guest's listing (M "+v+")", r.guest, "M", v)
	if r.diff("v"+v+": CHECKSUM/LISTING MISMATCH", host, guest) {
		r.info("v%s: all %d files match the host's sha256 (%d entries)", v, host.Count("F"), host.Count(""))
	}
	r.readPlus(v)
	if r.host.Value("RWFLAGS") == "off" {
		return nil
	}
	return r.rw(v)
}

// stats are a mountstats snapshot: op -> the record "TAG V OP OPS ERRORS".
func (r *run) stats(tag, v string) map[string]Record {
	out := map[string]Record{}
	for _, s := range r.guest.Keyed(tag, v) {
		if _, dup := out[s.Field(2)]; !dup {
			out[s.Field(2)] = s
		}
	}
	return out
}

// readPlus: on 4.2 the reads of the read checks are READ_PLUS, with no
// errors and no fallback to READ.
func (r *run) readPlus(v string) {
	st := r.stats("STAT", v)
	rp, rd := st["READ_PLUS"], st["READ"]
	ops, errs, reads := num(rp.Field(3)), num(rp.Field(4)), num(rd.Field(3))
	r.info("v%s: mountstats READ_PLUS ops=%d errors=%d, READ ops=%d", v, ops, errs, reads)
	if v != "4.2" {
		return
	}
	switch {
	case ops == 0:
		r.fail("v4.2: READ_PLUS counter is 0 in /proc/self/mountstats: the client never used READ_PLUS\n  %s", orNone(rp))
	case errs >= ops:
		r.fail("v4.2: every READ_PLUS failed (%d/%d errors): server rejected READ_PLUS\n  %s", errs, ops, rp)
	case reads > 0:
		r.fail("v4.2: client fell back to READ (%d READs besides %d READ_PLUS): server rejected READ_PLUS\n  %s", reads, ops, rd)
	default:
		r.info("v4.2: READ_PLUS used (%d ops, %d errors), no plain READ", ops, errs)
	}
}

// orNone quotes a record, or says there was none.
func orNone(r Record) string {
	if r.File == "" {
		return "(no such record)"
	}
	return r.String()
}

// rwFail is a failed write check.
func (r *run) rwFail(v, step, format string, a ...any) {
	r.fail("v%s: WRITE CHECK '%s' FAILED: %s", v, step, fmt.Sprintf(format, a...))
}

// flag reports whether an optional write step was on (RWFLAGS).
func (r *run) flag(name string) bool {
	return strings.Contains(","+r.host.Value("RWFLAGS")+",", ","+name+",")
}

// rw: the write checks of version v (guest-rw.sh).
func (r *run) rw(v string) error {
	if !r.guest.Has("RWDONE " + v) {
		last := "none"
		if s, ok := r.guest.Last("STEP", v); ok {
			last = s.String()
		}
		r.rwFail(v, "(all)", "the guest did not finish the write checks (last step started: %s)", last)
	}
	r.rwGuestSteps(v)
	// Past here: what the guest finished (a guest that stopped early has
	// been reported; its leftovers would only add noise).
	if !r.guest.Has("RWLISTED " + v) {
		return nil
	}
	if err := r.rwTrees(v); err != nil {
		return err
	}
	r.rwHostFacts(v)
	r.rwSeek(v)
	r.rwMountstats(v)
	if !r.guest.Has("RWDONE " + v) {
		return nil
	}
	return r.reverse(v)
}

// rwGuestSteps: the steps that failed in the guest; those skipped, and its notes.
func (r *run) rwGuestSteps(v string) {
	for _, w := range r.guest.Keyed("WERR", v) {
		if w.Field(3) == "mirror" {
			r.rwFail(v, w.Field(2), "the tmpfs mirror step failed (harness bug, not the server): %s\n  %s", w.After(3), w)
		} else {
			r.rwFail(v, w.Field(2), "guest: %s\n  %s", w.After(3), w)
		}
	}
	for _, s := range r.guest.Keyed("SKIP", v) {
		r.info("v%s: write step %s SKIPPED (%s)", v, s.Field(2), s.After(2))
	}
	for _, s := range r.guest.Keyed("INFO", v) {
		r.info("v%s: %s: %s", v, s.Field(2), s.After(2))
	}
}

// rwTrees: the tmpfs mirror == the NFS read-back == the host's rw/vV.
func (r *run) rwTrees(v string) error {
	mirror := guestManifest("expected (the guest's tmpfs mirror, RM "+v+")", r.guest, "RM", v)
	guest := guestManifest("the guest's NFS read-back after drop_caches (RW "+v+")", r.guest, "RW", v)
	host, err := r.hostManifest("the host's view of rw/v"+v, "rw-host-"+v+".manifest")
	if err != nil {
		return err
	}
	if len(mirror.Entries) == 0 {
		r.rwFail(v, "(all)", "no mirror listing from the guest (no RM %s records)", v)
		return nil
	}
	ok := r.diff(fmt.Sprintf("v%s: WRITE CHECK 'readback' FAILED", v), mirror, guest)
	ok = r.diff(fmt.Sprintf("v%s: WRITE CHECK 'on-disk' FAILED", v), mirror, host) && ok
	if ok {
		r.info("v%s: write checks: %d entries identical in the guest's mirror, the NFS read-back and on the host (%d files, sha256 + size + mode + nlink + owner)",
			v, host.Count(""), host.Count("F"))
	}
	return nil
}

// hseek is the host's lseek on FILE from OFF (an HSEEK record).
func (r *run) hseek(v, file, off, how string) (Record, bool) {
	for _, s := range r.host.Keyed("HSEEK", v) {
		if s.Field(2) == file && s.Field(3) == off && s.Field(4) == how {
			return s, true
		}
	}
	return Record{}, false
}

// rwHostFacts: on the export, the punched hole, the data past EOF, the
// xattrs set over NFS and a server-set mtime.
func (r *run) rwHostFacts(v string) {
	if v == "4.2" && r.flag("punch") {
		h, ok1 := r.hseek(v, "punched.bin", "0", "hole")
		d, ok2 := r.hseek(v, "punched.bin", "1048576", "data")
		if got := h.After(4) + "/" + d.After(4); ok1 && ok2 && got != "1048576/2097152" {
			r.rwFail(v, "punch-hole", "host lseek(SEEK_HOLE from 0)/lseek(SEEK_DATA from 1 MiB) on punched.bin = %s, want 1048576/2097152 (the DEALLOCATE did not free the blocks)\n  %s\n  %s", got, h, d)
		} else if ok1 && ok2 {
			r.info("v%s: host SEEK_HOLE/SEEK_DATA on punched.bin: hole [1048576, 2097152) as punched", v)
		}
	}
	if p, ok := r.hseek(v, "past-eof.bin", "0", "data"); !ok || p.After(4) != "1228800" {
		r.rwFail(v, "write-past-eof", "host lseek(SEEK_DATA from 0) on past-eof.bin = %s, want 1228800 (the write past EOF filled the gap?)\n  %s", p.After(4), orNone(p))
	}
	if v == "4.2" {
		r.rwXattr(v)
	}
	if m, ok := r.host.First("HMTIME", v); ok {
		t, start, now := num(m.Field(3)), num(r.host.Value("START")), num(r.host.Value("NOW"))
		if t < start-2 || t > now+2 {
			r.rwFail(v, "touch-now", "mtime of now.txt is %d, want between the run's start %d and %d (SET_TO_SERVER_TIME)\n  %s", t, start, now, m)
		}
	}
}

// rwXattr: user xattrs set over NFS (RFC 8276) as the export has them.
func (r *run) rwXattr(v string) {
	val, ok := r.host.First("HXATTR", v)
	if !ok {
		return
	}
	names, _ := r.host.First("HXATTRS", v)
	if val.After(3) == "hello-xattr" && names.After(2) == "user.e2e" {
		r.info("v%s: xattrs: the export has user.e2e=hello-xattr and nothing else under user. (set, replaced, removed over NFS)", v)
		return
	}
	r.rwFail(v, "xattr", "host view of xattr.txt: user.e2e='%s', user names '%s'; want user.e2e=hello-xattr only\n  %s\n  %s",
		val.After(3), names.After(2), val, orNone(names))
}

// seekWant is what the guest's lseek through NFS SEEK must find.
var seekWant = map[string]string{
	"punched.bin 0 hole":       "1048576",
	"punched.bin 1048576 data": "2097152",
	"punched.bin 2097152 hole": "4194304",
	"past-eof.bin 0 data":      "1228800",
}

// rwSeek: SEEK_HOLE/SEEK_DATA through NFS SEEK (4.2 only: 4.1 has no
// SEEK and the client fakes it).
func (r *run) rwSeek(v string) {
	if v != "4.2" {
		return
	}
	for _, s := range r.guest.Keyed("SEEK", v) {
		want, ok := seekWant[s.Field(2)+" "+s.Field(3)+" "+s.Field(4)]
		if ok && s.After(4) != want {
			r.rwFail(v, "seek-"+s.Field(4), "guest lseek(SEEK_%s from %s) on %s over NFS = %s, want %s\n  %s",
				strings.ToUpper(s.Field(4)), s.Field(3), s.Field(2), s.After(4), want, s)
		}
	}
}
