// Command delegclient is the second NFS client of the kernel e2e's
// delegation phase (e2e-deleg.sh): while the guest's Linux client holds a
// read delegation on a file, it opens that file for writing, which makes
// the server recall the delegation (CB_RECALL) and answer NFS4ERR_DELAY
// until the guest returns it, then writes new content. It prints how many
// NFS4ERR_DELAY answers it got and how long the open took.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:2049", "server address")
	file := flag.String("path", "", "file to open for writing, from the export root")
	data := flag.String("data", "", "content to write (replaces the file's)")
	timeout := flag.Duration("timeout", 30*time.Second, "how long to wait for the open")
	flag.Parse()
	if *file == "" {
		fmt.Fprintln(os.Stderr, "usage: delegclient -addr HOST:PORT -path FILE -data TEXT")
		os.Exit(2)
	}
	if err := run(*addr, *file, *data, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "delegclient:", err)
		os.Exit(1)
	}
}

func run(addr, file, data string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// The client retries NFS4ERR_DELAY itself, with a backoff up to
	// DelayMax, until the context ends.
	c, err := client.Dial(ctx, addr, client.Options{DelayRetries: 1 << 20, DelayMax: 200 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer c.Close()
	dir, err := c.LookupPath(ctx, path.Dir(file))
	if err != nil {
		return fmt.Errorf("lookup %s: %w", path.Dir(file), err)
	}
	start := time.Now()
	f, err := c.Open(ctx, dir, path.Base(file), nfs4.ShareAccessWrite)
	took := time.Since(start)
	delays := c.Stats().Delays
	if err != nil {
		return fmt.Errorf("open %s for writing: %w (after %d NFS4ERR_DELAY answers, %.2fs)", file, err, delays, took.Seconds())
	}
	fmt.Printf("delegclient: opened %s for writing after %d NFS4ERR_DELAY answers in %.2fs\n", file, delays, took.Seconds())
	if _, err := c.Write(ctx, f.FH, f.Stateid, 0, nfs4.FileSync4, []byte(data)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := c.Truncate(ctx, f, uint64(len(data))); err != nil {
		return fmt.Errorf("truncate: %w", err)
	}
	if err := c.CloseFile(ctx, f.FH, f.Stateid); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	fmt.Printf("delegclient: wrote %d bytes to %s\n", len(data), file)
	return nil
}
