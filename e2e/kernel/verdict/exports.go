package verdict

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// exports is the exports phase (e2e-exports.sh, guest-exports.sh): an
// exports file with ro, root_squash and an export for another address.
// host-after.manifest is the host's listing of the exported directory.
func (r *run) exports() error {
	if !r.guest.Has("EXDONE") {
		r.fail("exports phase: the guest did not finish (no EXDONE)")
	}
	for _, m := range r.guest.Tagged("EXMOUNT") {
		if m.Field(2) != "ok" {
			r.fail("exports phase: mount of %s failed\n  %s", m.Field(1), m)
		}
	}
	n := 0
	for _, s := range r.guest.Tagged("EXR") {
		if s.Field(2) == "pass" {
			n++
		} else {
			r.fail("exports phase: step %s: %s\n  %s", s.Field(1), s.After(1), s)
		}
	}
	r.info("exports phase: %d guest steps did what they must", n)
	ls, _ := r.guest.First("EXLS", "")
	if r.guest.Has("EXNOPSEUDO") {
		r.info("exports phase: NFSv3 has no pseudo directory to list (the hidden export's mount was refused)")
	} else if got := strings.Join(strings.Fields(ls.After(0)), " "); got != "ro sq" {
		r.fail("exports phase: the pseudo directory lists '%s', want 'ro sq' (hidden is exported to another address only)\n  %s", got, orNone(ls))
	}
	host, err := r.hostManifest("the exported directory on the host", "host-after.manifest")
	if err != nil {
		return err
	}
	r.exportsOnHost(host)
	return nil
}

// exportsOnHost: root's files on sq belong to nobody, ro and root's file on
// sq are as they were, nothing was created in ro.
func (r *run) exportsOnHost(host Manifest) {
	for _, p := range []string{"./sq/by-root", "./sq/dir-by-root"} {
		e, ok := host.Find("F", p)
		if !ok {
			e, ok = host.Find("D", p)
		}
		if own := owner(e); !ok || own != "65534:65534" {
			r.fail("exports phase: %s made by the guest's root is owned by %s, want 65534:65534 (root_squash)\n  %s", p, own, orNone(e.Line))
		}
	}
	ro, _ := host.Find("F", "./ro/ro.txt")
	if ro.Last() != sha("read-only data") || ro.Field(3) != "644" {
		r.fail("exports phase: ro/ro.txt changed (content or mode; want 'read-only data', 644)\n  %s", orNone(ro.Line))
	}
	for _, p := range []string{"./ro/new", "./ro/d", "./ro/moved"} {
		for _, e := range host.Entries {
			if e.Path == p {
				r.fail("exports phase: something was created in ro\n  %s", e.Line)
			}
		}
	}
	if rf, _ := host.Find("F", "./sq/rootfile"); rf.Last() != sha("root's") {
		r.fail("exports phase: sq/rootfile was written through root_squash\n  %s", orNone(rf.Line))
	}
}

// owner is UID:GID of a write-checks manifest entry (F and D lines).
func owner(e Entry) string {
	switch {
	case e.Kind == "F" && e.Field(5) != "":
		return e.Field(5)
	case e.Kind == "D" && e.Field(3) != "":
		return e.Field(3)
	}
	return "missing"
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
