package verdict

import (
	"path/filepath"
	"regexp"
	"strings"
)

// reclaimed is the server's line for a client that reclaimed an open and a
// lock at its RECLAIM_COMPLETE (nfs: the grace period).
var reclaimed = regexp.MustCompile(`msg="client reclaimed its state".* opens=[1-9][0-9]* locks=[1-9]`)

var restartNotes = regexp.MustCompile(`grace period|reclaimed|level=(WARN|ERROR)`)

// restart is the restart phase (e2e-restart.sh, guest-restart.sh): a POSIX
// lock held across a server kill -9 + restart. The client must have
// reclaimed (OPEN CLAIM_PREVIOUS, LOCK reclaim), not merely locked again
// after NFS4ERR_NO_GRACE: the server logs one line per client that did.
func (r *run) restart() error {
	log, err := r.serverLog()
	if err != nil {
		return err
	}
	if n := len(logLines(log, reclaimed)); n < len(r.vers) {
		r.fail("restart phase: the server log shows %d clients that reclaimed an open and a lock, want %d (one per restart)", n, len(r.vers))
	}
	for _, v := range r.vers {
		if r.guest.Has("RESTART " + v + " ok") {
			r.info("v%s: a POSIX lock survived a server kill -9 + restart (reclaimed in the grace period; conflicting lock refused, holder's unlock worked)", v)
		} else {
			r.fail("restart phase v%s: no 'RESTART %s ok' from the guest (see results.txt, console.log, server.log)", v, v)
		}
	}
	r.rep.Notes = append(r.rep.Notes, logLines(log, restartNotes)...)
	return nil
}

var (
	delegGranted  = regexp.MustCompile(`msg="delegation granted"`)
	delegRecalled = regexp.MustCompile(`msg="delegation recalled"`)
	delegNotes    = regexp.MustCompile(`delegation|CB_RECALL|level=(WARN|ERROR)`)
)

// deleg is the delegation phase (e2e-deleg.sh, guest-deleg.sh): the
// guest's read delegation recalled for a second client's write open.
func (r *run) deleg() error {
	log, err := r.serverLog()
	if err != nil {
		return err
	}
	granted, recalled := len(logLines(log, delegGranted)), len(logLines(log, delegRecalled))
	if granted < len(r.vers) || recalled < len(r.vers) {
		r.fail("deleg phase: the server log shows %d delegations granted and %d recalled, want at least %d of each", granted, recalled, len(r.vers))
	}
	hostLog, err := readRecords(filepath.Join(r.dir, "host.log"))
	if err != nil {
		return err
	}
	for _, v := range r.vers {
		r.delegVersion(v, hostLog)
	}
	for _, l := range hostLog {
		r.rep.Notes = append(r.rep.Notes, l.String())
	}
	r.rep.Notes = append(r.rep.Notes, logLines(log, delegNotes)...)
	return nil
}

func (r *run) delegVersion(v string, hostLog Records) {
	ok := true
	if !r.exists("open-ok-v" + v) {
		r.fail("deleg phase v%s: the second client's OPEN for writing did not succeed within 30 s (no open-ok-v%s; see host.log)", v, v)
		ok = false
	}
	d, found := r.guest.First("DELEG", v)
	if !found || d.Field(2) != "ok" {
		r.fail("deleg phase v%s: no 'DELEG %s ok' from the guest (see results.txt, console.log, server.log)", v, v)
		ok = false
	}
	if !ok {
		return
	}
	opened := ""
	for _, l := range hostLog {
		if strings.Contains(l.Text, "deleg-v"+v+".txt for writing") {
			opened = strings.TrimPrefix(l.Text, "delegclient: ")
			break
		}
	}
	r.info("v%s: the guest's read delegation was recalled for the host client's write open, which then succeeded (%s); the guest read the new content (%s)", v, opened, d.After(2))
}
