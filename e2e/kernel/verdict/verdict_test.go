package verdict

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var runDir = flag.String("dir", "", "a run directory of e2e/kernel/run.sh to judge (or E2E_VERDICT_DIR)")

// TestVerdict judges a kernel e2e run: run.sh calls it with -args -dir
// WORK. Without a directory there is nothing to judge.
func TestVerdict(t *testing.T) {
	dir := *runDir
	if dir == "" {
		dir = os.Getenv("E2E_VERDICT_DIR")
	}
	if dir == "" {
		t.Skip("no run directory (-args -dir DIR, or E2E_VERDICT_DIR)")
	}
	rep, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "verdict.txt"), []byte(rep.Text()), 0o644); err != nil {
		t.Error(err)
	}
	for _, i := range rep.Infos {
		t.Log(i)
	}
	for _, f := range rep.Fails {
		t.Error("FAIL: " + f)
	}
	for _, n := range rep.Notes {
		t.Log(n)
	}
}

// TestGood: the recorded runs of every phase (testdata/good, from a
// passing `make e2e`) pass, and say what they checked.
func TestGood(t *testing.T) {
	want := map[string]string{
		"nfs":     "v4.2: write checks: 56 entries identical",
		"fs":      "fill: dd failed with ENOSPC as it must",
		"exports": "exports phase: 12 guest steps did what they must",
		"restart": "v4.1: a POSIX lock survived",
		"deleg":   "v4.2: the guest's read delegation was recalled",
	}
	for phase, info := range want {
		rep, err := Check(filepath.Join("testdata", "good", phase))
		if err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
		if !rep.OK() || rep.Phase != phase {
			t.Errorf("%s: phase %q, failures:\n%s", phase, rep.Phase, strings.Join(rep.Fails, "\n"))
		}
		if !slices.ContainsFunc(rep.Infos, func(s string) bool { return strings.Contains(s, info) }) {
			t.Errorf("%s: no %q among\n%s", phase, info, strings.Join(rep.Infos, "\n"))
		}
	}
}

// An edit breaks a copy of a good run.
type edit func(t *testing.T, dir string)

// replace replaces the first line of file starting with prefix (it must
// exist) by line ("" deletes it).
func replace(file, prefix, line string) edit {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
		if i < 0 {
			t.Fatalf("%s: no line starting with %q", file, prefix)
		}
		if line == "" {
			lines = slices.Delete(lines, i, i+1)
		} else {
			lines[i] = line
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func appendLine(file, line string) edit {
	return func(t *testing.T, dir string) {
		f, err := os.OpenFile(filepath.Join(dir, file), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(file string) edit {
	return func(t *testing.T, dir string) {
		if err := os.Remove(filepath.Join(dir, file)); err != nil {
			t.Fatal(err)
		}
	}
}

// broken copies the good run of phase and applies e.
func broken(t *testing.T, phase string, e edit) string {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "good", phase))); err != nil {
		t.Fatal(err)
	}
	e(t, dir)
	return dir
}

const (
	zeroSHA = "0000000000000000000000000000000000000000000000000000000000000000"
	chgOld  = "239f2cde56db01dcabb2f5d0f2ef4b8c214b03dae98ad9a5cf4f7e6e84a25647"
)

// badRuns: a failure of each kind, and what the report must say: the
// check, and the line it failed on.
var badRuns = []struct {
	name, phase string
	edit        edit
	want        []string
}{
	{"timeout", "nfs", replace("host.txt", "QEMU ", "QEMU 124 300 300"), []string{"TIMEOUT: qemu killed after 300s", "host.txt:5: QEMU 124"}},
	{"server-died", "nfs", appendLine("host.txt", "SERVERDIED 15:10:01"), []string{"THE SERVER DIED during the test at 15:10:01"}},
	{"no-done", "nfs", replace("results.txt", "DONE", ""), []string{"guest did not finish (no DONE"}},
	{"guest-err", "restart", appendLine("results.txt", "ERR v4.1 restart: umount failed: busy"), []string{"guest: v4.1 restart: umount failed: busy", "results.txt:6: ERR v4.1"}},
	{"listing", "nfs", replace("results.txt", "M 4.2 F ./small.txt", "M 4.2 F ./small.txt "+zeroSHA),
		[]string{"v4.2: CHECKSUM/LISTING MISMATCH: 2 lines differ", "- host.manifest:", "+ results.txt:", zeroSHA}},
	{"mount", "nfs", replace("results.txt", "MOUNT 4.1 ", "MOUNT 4.1 fail mount.nfs4: Connection refused"), []string{"v4.1: MOUNT FAILED: mount.nfs4: Connection refused"}},
	{"no-read-plus", "nfs", replace("results.txt", "STAT 4.2 READ_PLUS", "STAT 4.2 READ_PLUS 0 0"), []string{"READ_PLUS counter is 0", "STAT 4.2 READ_PLUS 0 0"}},
	{"read-fallback", "nfs", replace("results.txt", "STAT 4.2 READ ", "STAT 4.2 READ 7 0"), []string{"client fell back to READ (7 READs", "STAT 4.2 READ 7 0"}},
	{"write-step", "nfs", appendLine("results.txt", "WERR 4.2 ln-s nfs rc=1 ln: /mnt/v4.2/rw/v4.2/sym-odd: Input/output error"),
		[]string{"v4.2: WRITE CHECK 'ln-s' FAILED: guest: rc=1 ln: /mnt/v4.2/rw/v4.2/sym-odd: Input/output error", "WERR 4.2 ln-s nfs"}},
	{"mirror-step", "nfs", appendLine("results.txt", "WERR 4.1 mkfifo mirror rc=1 mkfifo: no"), []string{"the tmpfs mirror step failed (harness bug"}},
	{"readback", "nfs", replace("results.txt", "RW 4.2 F ./three.bin", "RW 4.2 F ./three.bin 3 644 1 0:0 "+zeroSHA),
		[]string{"v4.2: WRITE CHECK 'readback' FAILED: 2 lines differ", "- results.txt:", "+ results.txt:", "RW 4.2 F ./three.bin 3 644"}},
	{"on-disk", "nfs", replace("rw-host-4.1.manifest", "D ./n1 ", "D ./n1 700 0:0"), []string{"v4.1: WRITE CHECK 'on-disk' FAILED", "+ rw-host-4.1.manifest:", "D ./n1 700 0:0"}},
	{"host-hole", "nfs", replace("host.txt", "HSEEK 4.2 punched.bin 0 hole", "HSEEK 4.2 punched.bin 0 hole 4194304"),
		[]string{"WRITE CHECK 'punch-hole' FAILED: host lseek", "= 4194304/2097152", "host.txt:6: HSEEK 4.2 punched.bin 0 hole 4194304"}},
	{"past-eof", "nfs", replace("host.txt", "HSEEK 4.1 past-eof.bin", "HSEEK 4.1 past-eof.bin 0 data 0"), []string{"v4.1: WRITE CHECK 'write-past-eof' FAILED", "= 0, want 1228800"}},
	{"guest-seek", "nfs", replace("results.txt", "SEEK 4.2 punched.bin 2097152 hole", "SEEK 4.2 punched.bin 2097152 hole fshelper: lseek: ENXIO"),
		[]string{"WRITE CHECK 'seek-hole' FAILED: guest lseek(SEEK_HOLE from 2097152) on punched.bin over NFS = fshelper: lseek: ENXIO, want 4194304"}},
	{"xattr", "nfs", replace("host.txt", "HXATTRS 4.2", "HXATTRS 4.2 xattr.txt user.e2e user.gone"), []string{"WRITE CHECK 'xattr' FAILED", "user names 'user.e2e user.gone'"}},
	{"server-time", "nfs", replace("host.txt", "HMTIME 4.2", "HMTIME 4.2 now.txt 978307200"), []string{"WRITE CHECK 'touch-now' FAILED: mtime of now.txt is 978307200"}},
	{"write-errors", "nfs", replace("results.txt", "STAT2 4.2 WRITE ", "STAT2 4.2 WRITE 98 3"), []string{"WRITE CHECK 'mountstats-WRITE' FAILED: 3 of 98 WRITE calls failed", "STAT2 4.2 WRITE 98 3"}},
	{"refusals-not-counted", "nfs", replace("results.txt", "STAT2 4.2 LOOKUP ", "STAT2 4.2 LOOKUP 300 200"), nil},
	{"cto", "nfs", replace("results.txt", "HC 4.2 chg.bin", "HC 4.2 chg.bin "+chgOld), []string{"re-opening chg.bin (still cached in the guest) gave the OLD content", "HC 4.2 chg.bin " + chgOld}},
	{"reverse", "nfs", remove("rw-host-after-4.1.manifest"), []string{"v4.1: WRITE CHECK 'reverse' FAILED: the host never saw READY 4.1"}},
	{"reverse-after", "nfs", replace("results.txt", "HA 4.2 F ./keep.txt", "HA 4.2 F ./keep.txt 5 644 1 0:0 f660a7996deacfbc7560e4240054a8ad82eb02fe25a95064257e07084bcacb85"),
		[]string{"WRITE CHECK 'reverse-after' FAILED", "- rw-host-after-4.2.manifest:"}},
	{"unfinished", "nfs", replace("results.txt", "RWDONE 4.2", ""), []string{"WRITE CHECK '(all)' FAILED: the guest did not finish the write checks (last step started: results.txt:"}},
	{"crossed", "fs", replace("results.txt", "FSDEV outer", "FSDEV outer 26 28 yes"), []string{"export outer (no crossmnt): st_dev of the root 26 and of proj 28, proj a submount in the guest: yes", "FSDEV outer 26 28 yes"}},
	{"b-visible", "fs", replace("results.txt", "FSM0 outer F ./proj/hidden.txt", "FSM0 outer F ./proj/b.txt 1 644 1 0:0 "+zeroSHA), []string{"the guest sees proj/b.txt"}},
	{"fill-ok", "fs", replace("results.txt", "FILL ", "FILL rc=0 64+0 records out"), []string{"fill: dd wrote 64 MiB into an 8 MiB filesystem and exited 0", "FILL rc=0"}},
	{"fs-written", "fs", replace("results.txt", "FSW cross ./c.txt", "FSW cross ./c.txt "+zeroSHA), []string{"export cross: ./c.txt on the host: sha256 f5d7", "want " + zeroSHA}},
	{"b1-changed", "fs", appendLine("host-after-b1.manifest", "F ./w-under.bin 1 644 1 0:0 "+zeroSHA), []string{"B1 (mounted at outer/proj on the host, hidden from the plain export) changed", "+ host-after-b1.manifest:"}},
	{"fs-step", "fs", appendLine("results.txt", "FSERR cross append-c.txt rc=1 cat: write error: Stale file handle"), []string{"export cross: step append-c.txt FAILED in the guest: rc=1 cat: write error: Stale file handle"}},
	{"ro-writable", "exports", replace("results.txt", "EXR ro-create", "EXR ro-create FAIL rc=0, want 'Read-only file system': "), []string{"exports phase: step ro-create: FAIL rc=0", "results.txt:3: EXR ro-create FAIL"}},
	{"hidden-listed", "exports", replace("results.txt", "EXLS", "EXLS hidden ro sq "), []string{"lists 'hidden ro sq', want 'ro sq'"}},
	{"not-squashed", "exports", replace("host-after.manifest", "D ./sq/dir-by-root", "D ./sq/dir-by-root 755 0:0"), []string{"./sq/dir-by-root made by the guest's root is owned by 0:0", "host-after.manifest:7:"}},
	{"ro-created", "exports", appendLine("host-after.manifest", "F ./ro/new 0 644 1 65534:65534 "+sha("")), []string{"something was created in ro", "F ./ro/new"}},
	{"no-reclaim", "restart", replace("server.log", `time=2026-12-02T15:11:20.285Z level=INFO msg="client reclaimed`, ""), []string{"shows 1 clients that reclaimed an open and a lock, want 2"}},
	{"lock-lost", "restart", replace("results.txt", "RESTART 4.1 ok", ""), []string{"restart phase v4.1: no 'RESTART 4.1 ok'"}},
	{"no-open", "deleg", remove("open-ok-v4.1"), []string{"deleg phase v4.1: the second client's OPEN for writing did not succeed"}},
	{"no-recall", "deleg", replace("server.log", `time=2026-12-02T15:11:41.891Z level=DEBUG msg="delegation recalled"`, ""), []string{"4 delegations granted and 1 recalled, want at least 2"}},
}

// TestBad: each broken copy of a good run fails with what went wrong and
// the line it went wrong on.
func TestBad(t *testing.T) {
	for _, c := range badRuns {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Check(broken(t, c.phase, c.edit))
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(rep.Fails, "\n")
			if c.want == nil {
				if !rep.OK() {
					t.Fatalf("want a pass, got:\n%s", all)
				}
				return
			}
			if rep.OK() {
				t.Fatal("the broken run passed")
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("no %q in the failures:\n%s", w, all)
				}
			}
		})
	}
}

func TestNotARun(t *testing.T) {
	if _, err := Check(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no host.txt") {
		t.Errorf("Check(empty dir) = %v, want a no host.txt error", err)
	}
	dir := broken(t, "restart", replace("host.txt", "PHASE", "PHASE nfs4"))
	if _, err := Check(dir); err == nil || !strings.Contains(err.Error(), `unknown PHASE "nfs4"`) {
		t.Errorf("Check(PHASE nfs4) = %v", err)
	}
}

func TestProbe(t *testing.T) {
	dir := t.TempDir()
	write := func(f, s string) {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("host.txt", "PHASE probe\nVERS 4.2 4.1\nRWFLAGS off\nSTART 1\nQEMU 0 20 300\nNOW 30\n")
	write("results.txt", "PROBE hello-from-host-127.0.0.1:4000\r\nDONE\r\n")
	if rep, err := Check(dir); err != nil || !rep.OK() || !strings.Contains(rep.Infos[0], "hello-from-host") {
		t.Fatalf("good probe: %v %+v", err, rep)
	}
	write("results.txt", "PROBE \nDONE\n")
	if rep, err := Check(dir); err != nil || rep.OK() {
		t.Fatalf("empty reply: %v %+v", err, rep)
	}
}

// TestRecordedBad: a real run whose guest was made to expect a different
// mode (its tmpfs mirror did chmod 640 where NFS did chmod 600): both
// versions fail the read-back and on-disk comparisons, naming both lines.
func TestRecordedBad(t *testing.T) {
	rep, err := Check(filepath.Join("testdata", "bad", "mirror-mode"))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Fails, "\n")
	if len(rep.Fails) != 4 {
		t.Errorf("%d failures, want 4:\n%s", len(rep.Fails), all)
	}
	for _, w := range []string{
		"v4.2: WRITE CHECK 'readback' FAILED", "v4.2: WRITE CHECK 'on-disk' FAILED",
		"v4.1: WRITE CHECK 'readback' FAILED", "v4.1: WRITE CHECK 'on-disk' FAILED",
		": RM 4.2 F ./three.bin 3 640 1 0:0 ", ": RW 4.2 F ./three.bin 3 600 1 0:0 ",
		"+ rw-host-4.1.manifest:", ": F ./three.bin 3 600 1 0:0 ",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("no %q in the failures:\n%s", w, all)
		}
	}
	if !slices.Contains(rep.Infos, "e2e-kernel: 0 passed, 2 failed") {
		t.Errorf("infos:\n%s", strings.Join(rep.Infos, "\n"))
	}
}
