package verdict

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRecords: CRs from the serial port go, fields and the text after them
// keep what the guest printed.
func TestRecords(t *testing.T) {
	p := filepath.Join(t.TempDir(), "results.txt")
	if err := os.WriteFile(p, []byte("WERR 4.2 ln-s nfs rc=1 ln: a  b \r\nSEEK 4.2 f 0 hole 7 \r\nDONE\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := readRecords(p)
	if err != nil {
		t.Fatal(err)
	}
	w := rs.Keyed("WERR", "4.2")[0]
	if w.Tag() != "WERR" || w.Field(2) != "ln-s" || w.After(3) != "rc=1 ln: a  b" || w.Field(9) != "" || w.After(9) != "" {
		t.Errorf("WERR record: %q %q %q", w.Tag(), w.Field(2), w.After(3))
	}
	if s, _ := rs.First("SEEK", "4.2"); s.After(4) != "7" || s.String() != "results.txt:2: SEEK 4.2 f 0 hole 7 " {
		t.Errorf("SEEK record: %q %q", s.After(4), s)
	}
	if !rs.Has("DONE") || rs.Has("DON") {
		t.Error("Has")
	}
	if rs, err := readRecords(filepath.Join(t.TempDir(), "none")); rs != nil || err != nil {
		t.Errorf("a missing file: %v %v", rs, err)
	}
}

var fuzzPhases = []string{"nfs", "fs", "exports", "restart", "deleg"}

// FuzzCheck: whatever the guest printed, the verdict reports and never
// panics (results.txt comes from a VM running the code under test).
func FuzzCheck(f *testing.F) {
	// Copies of the good runs, one per phase; a fuzzing process runs its
	// calls one at a time.
	dirs := make([]string, len(fuzzPhases))
	for i, phase := range fuzzPhases {
		dirs[i] = f.TempDir()
		if err := os.CopyFS(dirs[i], os.DirFS(filepath.Join("testdata", "good", phase))); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("testdata", "good", phase, "results.txt"))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 4096 {
			b = b[:4096]
		}
		f.Add(uint8(i), string(b), "F ./ro/ro.txt\nD ./sq/by-root\n")
	}
	f.Fuzz(func(t *testing.T, phase uint8, results, manifest string) {
		dir := dirs[int(phase)%len(dirs)]
		for _, f := range []string{"results.txt", "host-after.manifest", "rw-host-4.2.manifest", "host-after-outer.manifest"} {
			text := manifest
			if f == "results.txt" {
				text = results
			}
			if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Check(dir); err != nil {
			t.Fatal(err)
		}
	})
}
