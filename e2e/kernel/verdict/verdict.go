package verdict

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A Report is a run's verdict: what failed, and what passed worth saying.
type Report struct {
	Phase string
	Fails []string
	Infos []string
	// Notes follow the failures: the server's complaints, for a post-mortem.
	Notes []string
}

// OK reports whether nothing failed.
func (r *Report) OK() bool { return len(r.Fails) == 0 }

func (r *Report) fail(format string, a ...any) {
	r.Fails = append(r.Fails, fmt.Sprintf(format, a...))
}

func (r *Report) info(format string, a ...any) {
	r.Infos = append(r.Infos, fmt.Sprintf(format, a...))
}

// run is what one check reads: the run directory and its two records files.
type run struct {
	dir   string
	guest Records // results.txt
	host  Records // host.txt
	vers  []string
	rep   *Report
}

// Check judges the run recorded in dir.
func Check(dir string) (*Report, error) {
	r := &run{dir: dir, rep: &Report{}}
	var err error
	if r.host, err = readRecords(filepath.Join(dir, "host.txt")); err != nil {
		return nil, err
	}
	if len(r.host) == 0 {
		return nil, fmt.Errorf("%s: no host.txt (not a run directory of run.sh?)", dir)
	}
	if r.guest, err = readRecords(filepath.Join(dir, "results.txt")); err != nil {
		return nil, err
	}
	r.rep.Phase = r.host.Value("PHASE")
	r.vers = strings.Fields(r.host.Value("VERS"))
	r.common()
	if err := r.phase(); err != nil {
		return nil, err
	}
	if !r.rep.OK() {
		r.serverComplaints()
	}
	return r.rep, nil
}

func (r *run) phase() error {
	switch r.rep.Phase {
	case "probe":
		r.probe()
	case "nfs":
		return r.nfs()
	case "fs":
		return r.fs()
	case "exports":
		return r.exports()
	case "restart":
		return r.restart()
	case "deleg":
		return r.deleg()
	default:
		return fmt.Errorf("%s: unknown PHASE %q", filepath.Join(r.dir, "host.txt"), r.rep.Phase)
	}
	return nil
}

// common: qemu's fate, the guest's end, its ERR records.
func (r *run) common() {
	q, ok := r.host.First("QEMU", "")
	switch {
	case r.host.Value("SERVERDIED") != "":
		r.fail("THE SERVER DIED during the test at %s (guest stopped; see the server log)", r.host.Value("SERVERDIED"))
	case !ok:
		r.fail("no QEMU record in host.txt: run.sh stopped before qemu exited")
	case q.Field(1) == "124" || q.Field(1) == "137":
		r.fail("TIMEOUT: qemu killed after %ss (guest hung; see console.log)\n  %s", q.Field(3), q)
	case q.Field(1) != "0":
		r.fail("qemu exited with status %s\n  %s", q.Field(1), q)
	}
	if !r.guest.Has("DONE") {
		r.fail("guest did not finish (no DONE record in results.txt)")
	}
	for _, e := range r.guest.Tagged("ERR") {
		r.fail("guest: %s\n  %s", e.After(0), e)
	}
}

func (r *run) fail(format string, a ...any) { r.rep.fail(format, a...) }
func (r *run) info(format string, a ...any) { r.rep.info(format, a...) }

func (r *run) probe() {
	if p, ok := r.guest.First("PROBE", ""); ok && p.After(0) != "" {
		r.info("probe: guest got '%s' from the host through guestfwd", p.After(0))
		return
	}
	r.fail("probe: guest got no reply from the host via 10.0.2.100:2049 (no PROBE record with a reply)")
}

// diff fails unless the manifests are equal; it reports whether they are.
func (r *run) diff(what string, want, got Manifest) bool {
	d := Diff(want, got)
	if len(d) == 0 {
		return true
	}
	r.fail("%s: %d lines differ: %s", what, len(d), diffText(want, got, d))
	return false
}

func (r *run) hostManifest(name, file string) (Manifest, error) {
	return hostManifest(name, r.dir, file)
}

func (r *run) exists(file string) bool {
	_, err := os.Stat(filepath.Join(r.dir, file))
	return err == nil
}

// serverLog is the server's log, one string per line.
func (r *run) serverLog() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(r.dir, "server.log"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n"), err
}

// logLines are the log's lines that match re.
func logLines(log []string, re *regexp.Regexp) []string {
	var out []string
	for _, l := range log {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

var complaint = regexp.MustCompile(`level=(WARN|ERROR)`)

// serverComplaints: the server's warnings and errors, after the failures.
func (r *run) serverComplaints() {
	log, _ := r.serverLog()
	c := logLines(log, complaint)
	if len(c) == 0 {
		return
	}
	r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("server.log: %d WARN/ERROR lines", len(c)))
	if len(c) > 40 {
		c = c[:40]
	}
	r.rep.Notes = append(r.rep.Notes, c...)
}

// num is a decimal field, 0 when it is not one.
func num(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Text is the report as verdict.txt holds it: PASS or FAIL, the failures,
// what passed, then the notes.
func (r *Report) Text() string {
	var b strings.Builder
	if r.OK() {
		fmt.Fprintf(&b, "PASS %s\n", r.Phase)
	} else {
		fmt.Fprintf(&b, "FAIL %s: %d failures\n", r.Phase, len(r.Fails))
	}
	for _, f := range r.Fails {
		b.WriteString("FAIL: " + f + "\n")
	}
	for _, i := range r.Infos {
		b.WriteString("ok: " + i + "\n")
	}
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	return b.String()
}
