package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
)

// makeSample creates dir with a small tree to serve, unless it exists.
// The sparse file shows READ_PLUS at work: 4 KiB of data every 32 KiB.
func makeSample(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err == nil {
		return abs, nil
	}
	if err := os.MkdirAll(filepath.Join(abs, "docs"), 0o755); err != nil {
		return "", err
	}
	files := map[string]string{
		"README.txt":     "Served by nfsd-uring. Try: ls -l; cat docs/hello.txt; cp sparse.img /tmp\n",
		"docs/hello.txt": "hello from nfsd-uring\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(abs, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	random := make([]byte, 4<<20)
	rand.Read(random)
	if err := os.WriteFile(filepath.Join(abs, "random.bin"), random, 0o644); err != nil {
		return "", err
	}
	if err := writeSparse(filepath.Join(abs, "sparse.img"), 16<<20, 4<<10, 32<<10); err != nil {
		return "", err
	}
	if err := os.Symlink("docs/hello.txt", filepath.Join(abs, "hello-link")); err != nil {
		return "", err
	}
	return abs, nil
}

// writeSparse writes a file of size bytes with data bytes of data at the
// start of every period bytes, the rest holes.
func writeSparse(path string, size, data, period int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	block := make([]byte, data)
	for off := int64(0); off < size; off += period {
		for i := range block {
			block[i] = byte(off/period) + 1
		}
		if _, err := f.WriteAt(block, off); err != nil {
			return err
		}
	}
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("sample: %w", err)
	}
	return nil
}
