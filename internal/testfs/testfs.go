// Package testfs makes throw-away filesystems for tests: a fresh ext4 in
// an image file, loop-mounted. Tests that need one skip cleanly where
// they cannot have it (not root, no mkfs.ext4, no loop devices).
package testfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Ext4 makes a fresh ext4 of sizeMiB in an image under t.TempDir(), with
// mkfs.ext4's extra arguments (e.g. "-m", "50" for half the blocks
// reserved for root), mounts it at dir (made if missing) and unmounts it
// when the test ends. It skips the test where that cannot be done.
func Ext4(t testing.TB, dir string, sizeMiB int, mkfsArgs ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (loop mounts)")
	}
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("needs mkfs.ext4 (e2fsprogs)")
	}
	img := filepath.Join(t.TempDir(), "fs.img")
	if out, err := exec.Command("truncate", "-s", strconv.Itoa(sizeMiB)+"M", img).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v %s", err, out)
	}
	args := append([]string{"-q", "-F"}, mkfsArgs...)
	if out, err := exec.Command("mkfs.ext4", append(args, img)...).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	os.MkdirAll(dir, 0o755)
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("loop mount unavailable: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}
