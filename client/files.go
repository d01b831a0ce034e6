package client

import (
	"context"
	"fmt"
	"path"

	"github.com/nfsd-uring/nfsd-uring/nfs/nfs4"
)

// DefaultChunk is the read size ReadFile uses when given 0.
const DefaultChunk = 1 << 20

// OpenPath opens the file at path for reading.
func (c *Client) OpenPath(ctx context.Context, p string) (*File, error) {
	dir, err := c.LookupPath(ctx, path.Dir("/"+p))
	if err != nil {
		return nil, err
	}
	return c.Open(ctx, dir, path.Base("/"+p), nfs4.ShareAccessRead)
}

// ReadFile opens path, reads it whole with READ in chunks, and closes it.
func (c *Client) ReadFile(ctx context.Context, p string, chunk uint32) ([]byte, error) {
	return c.readFile(ctx, p, chunk, func(f *File, off uint64, buf []byte) (int, bool, error) {
		data, eof, err := c.Read(ctx, f.FH, f.Stateid, off, uint32(len(buf)))
		return copy(buf, data), eof, err
	})
}

// ReadFilePlus is ReadFile with READ_PLUS.
func (c *Client) ReadFilePlus(ctx context.Context, p string, chunk uint32) ([]byte, error) {
	return c.readFile(ctx, p, chunk, func(f *File, off uint64, buf []byte) (int, bool, error) {
		n, eof, _, err := c.ReadPlus(ctx, f.FH, f.Stateid, off, uint32(len(buf)), buf)
		return n, eof, err
	})
}

type readFunc func(f *File, off uint64, buf []byte) (n int, eof bool, err error)

func (c *Client) readFile(ctx context.Context, p string, chunk uint32, read readFunc) ([]byte, error) {
	if chunk == 0 {
		chunk = DefaultChunk
	}
	f, err := c.OpenPath(ctx, p)
	if err != nil {
		return nil, err
	}
	out, err := readAll(f, chunk, read)
	cerr := c.CloseFile(ctx, f.FH, f.Stateid)
	if err == nil {
		err = cerr
	}
	return out, err
}

func readAll(f *File, chunk uint32, read readFunc) ([]byte, error) {
	var out []byte
	for {
		off := len(out)
		out = append(out, make([]byte, chunk)...)
		n, eof, err := read(f, uint64(off), out[off:])
		out = out[:off+n]
		if err != nil {
			return out, err
		}
		if eof {
			return out, nil
		}
		if n == 0 {
			return out, fmt.Errorf("read at %d: no data and no eof", off)
		}
	}
}
