package verdict

import (
	"fmt"
	"strings"
)

// summaryOps are the ops the write checks' mountstats summary names.
var summaryOps = []string{"WRITE", "COMMIT", "SETATTR", "READ", "READ_PLUS", "CREATE", "RENAME", "LINK", "REMOVE",
	"ALLOCATE", "DEALLOCATE", "COPY", "CLONE", "LOCK", "LOCKT", "LOCKU", "SEEK"}

// noErrorOps may count no error after the write checks.
var noErrorOps = []string{"WRITE", "COMMIT", "SETATTR", "READ", "READ_PLUS", "LINK", "RENAME", "ALLOCATE",
	"DEALLOCATE", "COPY", "LOCKU", "CLOSE"}

// rwMountstats: after the write checks (STAT2), no errors on the ops that
// must not fail, less those of the expected refusals (STATU1 - STATU0);
// some WRITEs; on 4.2 no fallback to READ.
func (r *run) rwMountstats(v string) {
	st2, u0, u1 := r.stats("STAT2", v), r.stats("STATU0", v), r.stats("STATU1", v)
	errs := func(op string) int64 {
		return num(st2[op].Field(4)) - (num(u1[op].Field(4)) - num(u0[op].Field(4)))
	}
	var sum strings.Builder
	for _, op := range summaryOps {
		if n := num(st2[op].Field(3)); n > 0 {
			fmt.Fprintf(&sum, " %s=%d/%d", op, n, errs(op))
		}
	}
	r.info("v%s: mountstats after the writes (ops/errors):%s", v, sum.String())
	for _, op := range noErrorOps {
		if e := errs(op); e != 0 {
			r.rwFail(v, "mountstats-"+op, "%d of %s %s calls failed (guest /proc/self/mountstats; the expected refusals by uid 1000/1001 not counted)\n  %s",
				e, st2[op].Field(3), op, st2[op])
		}
	}
	if num(st2["WRITE"].Field(3)) == 0 {
		r.rwFail(v, "mountstats-WRITE", "the client sent no WRITE at all\n  %s", orNone(st2["WRITE"]))
	}
	if v == "4.2" && num(st2["READ"].Field(3)) > 0 {
		r.rwFail(v, "mountstats-READ", "the client fell back to READ (%s) during the write checks\n  %s", st2["READ"].Field(3), st2["READ"])
	}
}

// reverse: the host changed files in rw/host/vV while the guest had them
// mounted (one open and cached); the guest must see the changes, first on
// re-opening (close-to-open revalidation, HC), then after drop_caches (HA).
func (r *run) reverse(v string) error {
	before, err := r.hostManifest("the host's files before its change", "rw-host-before-"+v+".manifest")
	if err != nil {
		return err
	}
	gBefore := guestManifest("the guest's view (HB "+v+")", r.guest, "HB", v)
	r.diff(fmt.Sprintf("v%s: WRITE CHECK 'reverse-before' FAILED", v), before, gBefore)
	if !r.exists("rw-host-after-" + v + ".manifest") {
		r.rwFail(v, "reverse", "the host never saw READY %s, so it changed nothing", v)
		return nil
	}
	after, err := r.hostManifest("the host's files after its change", "rw-host-after-"+v+".manifest")
	if err != nil {
		return err
	}
	gAfter := guestManifest("the guest's view after drop_caches (HA "+v+")", r.guest, "HA", v)
	if r.diff(fmt.Sprintf("v%s: WRITE CHECK 'reverse-after' FAILED", v), after, gAfter) {
		r.info("v%s: reverse: the guest sees the host's same-size rewrite of an open+cached file, append, replace by rename, rename, remove, create, chmod, mkdir", v)
	}
	for _, f := range []string{"chg.bin", "repl.txt", "grow.txt"} {
		r.reopened(v, f, before, after)
	}
	return nil
}

// reopened: re-opening f after the host changed it gave the new content.
func (r *run) reopened(v, f string, before, after Manifest) {
	var hc Record
	for _, c := range r.guest.Keyed("HC", v) {
		if c.Field(2) == f {
			hc = c
		}
	}
	want, old := "none", "none"
	if e, ok := after.Find("F", "./"+f); ok {
		want = e.Last()
	}
	if e, ok := before.Find("F", "./"+f); ok {
		old = e.Last()
	}
	got := hc.Field(3)
	switch got {
	case want:
	case old:
		r.rwFail(v, "reverse-cto", "re-opening %s (still cached in the guest) gave the OLD content after the host changed it: close-to-open revalidation missed the change (change attribute / size / mtime not updated?)\n  %s", f, hc)
	default:
		r.rwFail(v, "reverse-cto", "re-opening %s after the host changed it: sha256 %s, want %s\n  %s", f, got, want, orNone(hc))
	}
}
