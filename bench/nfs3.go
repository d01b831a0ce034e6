package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nfsd-uring/nfsd-uring/client"
	"github.com/nfsd-uring/nfsd-uring/xdr"
)

// NFSv3 (--vers 3): the IO500-style workloads against a v3 server, over a
// small v3 client of nfsbench's own (MOUNT on the NFS port or on
// --mount-port, AUTH_SYS or with --sec krb5* RPCSEC_GSS, a context per
// connection). Each of the Conns connections carries Depth calls at a
// time, as a v4 run's do (and as the Linux v3 client pipelines its
// calls): one call per connection made the server receive and answer
// each request by itself, 1.6-1.7 times its CPU per 4 KiB READ of a v4 run
// (BENCHMARKS.md). Phases keep the v4 names, so --compare of a v3 and a
// v4 target lines them up.

// conn3 is one NFSv3 connection; its calls may come from many
// goroutines.
type conn3 struct {
	rpc      *client.RPCConn
	uid, gid uint32
	gss      *client.GSS // RPCSEC_GSS (--sec krb5*): nil for AUTH_SYS
}

// maxReply3 bounds a v3 reply: a 1 MiB READ's and its header.
const maxReply3 = 4 << 20

func dial3(ctx context.Context, addr string, uid, gid uint32) (*conn3, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newConn3(c, uid, gid, rand.Uint32()), nil
}

// newConn3 takes over c; its calls use xids after xid.
func newConn3(c net.Conn, uid, gid, xid uint32) *conn3 {
	return &conn3{rpc: client.NewRPCConn(c, maxReply3, xid), uid: uid, gid: gid}
}

// useKrb5 makes the connection's calls RPCSEC_GSS ones of a context of
// its own (made with an INIT call to NFS version 3), as a v3 mount with
// sec=krb5, krb5i or krb5p does. No other call may be in flight: the
// context numbers calls by their xids, from the one after INIT's.
func (c *conn3) useKrb5(k *client.Krb5) error {
	xid := c.rpc.NextXID()
	g, err := client.NewGSS(k, 100003, 3, xid, xid+1, func(rec []byte) ([]byte, error) {
		mark := binary.BigEndian.AppendUint32(nil, xdr.RecordMark(len(rec)))
		return c.rpc.Call(context.Background(), xid, append(mark, rec...))
	})
	if err != nil {
		return fmt.Errorf("NFSv3 RPCSEC_GSS context: %w", err)
	}
	c.gss = g
	return nil
}

// call sends one call and returns the decoder at its result, the accept
// status checked.
func (c *conn3) call(prog, vers, proc uint32, build func(e *xdr.Encoder)) (*xdr.Decoder, error) {
	xid, rec := c.record(prog, vers, proc, build)
	out, err := c.rpc.Call(context.Background(), xid, rec)
	if err != nil {
		return nil, err
	}
	return c.accepted(out, xid)
}

// record returns a new call's xid and record.
func (c *conn3) record(prog, vers, proc uint32, build func(e *xdr.Encoder)) (uint32, []byte) {
	xid := c.rpc.NextXID()
	if c.gss != nil {
		return xid, c.gss.Call(xid, prog, vers, proc, build)
	}
	return xid, client.SysCall(xid, prog, vers, proc, &client.Cred{Machine: "nfsbench", UID: c.uid, GID: c.gid}, build)
}

// accepted checks the reply record of the call of xid and returns the
// decoder at its result.
func (c *conn3) accepted(out []byte, xid uint32) (*xdr.Decoder, error) {
	if c.gss != nil {
		d, err := c.gss.Reply(out, xid)
		if err != nil {
			return nil, fmt.Errorf("NFSv3: %w", err)
		}
		return d, nil
	}
	d := xdr.NewDecoder(out)
	if x, mt, rs := d.Uint32(), d.Uint32(), d.Uint32(); x != xid || mt != 1 || rs != 0 {
		return nil, fmt.Errorf("NFSv3: call denied or bad reply")
	}
	d.Uint32()
	d.Opaque(400)
	if st := d.Uint32(); st != 0 || d.Err() != nil {
		return nil, fmt.Errorf("NFSv3: call not accepted (%d)", st)
	}
	return d, nil
}

// nfs3Error is a procedure's nfsstat3.
type nfs3Error uint32

func (e nfs3Error) Error() string { return fmt.Sprintf("NFS3ERR %d", uint32(e)) }

func (c *conn3) nfs(proc uint32, build func(e *xdr.Encoder)) (*xdr.Decoder, error) {
	d, err := c.call(100003, 3, proc, build)
	if err != nil {
		return nil, err
	}
	if st := d.Uint32(); st != 0 {
		return nil, nfs3Error(st)
	}
	return d, nil
}

// postOp skips a post_op_attr and returns the size it carries.
func postOp(d *xdr.Decoder) int64 {
	if !d.Bool() {
		return -1
	}
	d.Fixed(20)
	size := d.Int64()
	d.Fixed(8 + 8 + 8 + 8 + 24)
	return size
}

// mount sends MNT of p and returns the handle and the flavours the
// server lists for it.
func (c *conn3) mount(p string) ([]byte, []uint32, error) {
	d, err := c.call(100005, 3, 1, func(e *xdr.Encoder) { e.String(p) })
	if err != nil {
		return nil, nil, err
	}
	if st := d.Uint32(); st != 0 {
		return nil, nil, fmt.Errorf("MOUNT %s: status %d", p, st)
	}
	fh := bytes.Clone(d.Opaque(64))
	var flavors []uint32
	for n := d.Uint32(); n > 0 && n < 64 && d.Err() == nil; n-- {
		flavors = append(flavors, d.Uint32())
	}
	return fh, flavors, d.Err()
}

// krb5Flavor is the MOUNT pseudo-flavour of sec (RFC 2623 section 2.2):
// 390003 krb5, 390004 krb5i, 390005 krb5p.
func krb5Flavor(sec string) uint32 {
	switch sec {
	case client.SecKrb5i:
		return 390004
	case client.SecKrb5p:
		return 390005
	}
	return 390003
}

func (c *conn3) lookup(dir []byte, name string) ([]byte, int64, error) {
	d, err := c.nfs(3, func(e *xdr.Encoder) { e.Opaque(dir); e.String(name) })
	if err != nil {
		return nil, 0, err
	}
	fh := bytes.Clone(d.Opaque(64))
	return fh, postOp(d), d.Err()
}

// sattr3 writes a sattr3 setting mode and, for a file, size 0.
func sattr3(e *xdr.Encoder, mode uint32, truncate bool) {
	e.Bool(true)
	e.Uint32(mode)
	e.Bool(false)
	e.Bool(false)
	e.Bool(truncate)
	if truncate {
		e.Uint64(0)
	}
	e.Uint32(0)
	e.Uint32(0)
}

// create makes (or truncates) name in dir; mkdir makes a directory.
func (c *conn3) create(dir []byte, name string, directory bool) ([]byte, error) {
	proc := uint32(8)
	if directory {
		proc = 9
	}
	d, err := c.nfs(proc, func(e *xdr.Encoder) {
		e.Opaque(dir)
		e.String(name)
		if directory {
			sattr3(e, 0o755, false)
			return
		}
		e.Uint32(0) // UNCHECKED
		sattr3(e, 0o644, true)
	})
	if err != nil {
		return nil, err
	}
	if !d.Bool() {
		return nil, fmt.Errorf("CREATE %s: no handle", name)
	}
	return bytes.Clone(d.Opaque(64)), d.Err()
}

func (c *conn3) lookupOrMkdir(dir []byte, name string) ([]byte, error) {
	fh, _, err := c.lookup(dir, name)
	if err == nil {
		return fh, nil
	}
	return c.create(dir, name, true)
}

func (c *conn3) write(fh []byte, off int64, data []byte) error {
	for len(data) > 0 {
		d, err := c.nfs(7, func(e *xdr.Encoder) {
			e.Opaque(fh)
			e.Uint64(uint64(off))
			e.Uint32(uint32(len(data)))
			e.Uint32(0) // UNSTABLE
			e.Opaque(data)
		})
		if err != nil {
			return fmt.Errorf("WRITE %d bytes at %d: %w", len(data), off, err)
		}
		postOp3wcc(d)
		n := int(d.Uint32())
		if n <= 0 || n > len(data) || d.Err() != nil {
			return fmt.Errorf("WRITE at %d: count %d", off, n)
		}
		data, off = data[n:], off+int64(n)
	}
	return nil
}

func postOp3wcc(d *xdr.Decoder) {
	if d.Bool() {
		d.Fixed(24)
	}
	postOp(d)
}

func (c *conn3) commit(fh []byte) error {
	_, err := c.nfs(21, func(e *xdr.Encoder) { e.Opaque(fh); e.Uint64(0); e.Uint32(0) })
	return err
}

// read reads into dst at off; it returns the bytes read.
func (c *conn3) read(fh []byte, off int64, dst []byte) (int, error) {
	got := 0
	for got < len(dst) {
		n, eof, err := c.read1(fh, off+int64(got), dst[got:])
		if err != nil {
			return got, fmt.Errorf("READ at %d: %w", off+int64(got), err)
		}
		got += n
		if eof || n == 0 {
			break
		}
	}
	return got, nil
}

// read1 sends one READ of len(dst) bytes at off. Under AUTH_SYS the data
// go from the socket straight into dst (locateRead3), as the Linux
// client reads into its page cache; RPCSEC_GSS replies are checked whole.
func (c *conn3) read1(fh []byte, off int64, dst []byte) (n int, eof bool, err error) {
	xid, rec := c.record(100003, 3, 6, func(e *xdr.Encoder) {
		e.Opaque(fh)
		e.Uint64(uint64(off))
		e.Uint32(uint32(len(dst)))
	})
	placed := -1
	var out []byte
	if c.gss == nil {
		out, placed, err = c.rpc.CallInto(context.Background(), xid, rec, dst, locateRead3)
	} else {
		out, err = c.rpc.Call(context.Background(), xid, rec)
	}
	if err != nil {
		return 0, false, err
	}
	d, err := c.accepted(out, xid)
	if err != nil {
		return 0, false, err
	}
	if st := d.Uint32(); st != 0 {
		return 0, false, nfs3Error(st)
	}
	postOp(d)
	d.Uint32()
	eof = d.Bool()
	if placed >= 0 {
		n = placed
		if int(d.Uint32()) != placed {
			return 0, false, errors.New("NFSv3 READ: data length changed")
		}
	} else {
		n = copy(dst, d.Opaque(len(dst)))
	}
	return n, eof, d.Err()
}

// locateRead3 finds the data of an AUTH_SYS (or AUTH_NONE verifier) READ3
// reply that succeeded, given its first bytes: the RPC reply header, the
// status, post_op_attr, count, eof and the data's length.
func locateRead3(head []byte) (start, n int, ok bool) {
	d := xdr.NewDecoder(head)
	if d.Skip(4); d.Uint32() != 1 || d.Uint32() != 0 {
		return 0, 0, false // not an accepted reply
	}
	d.Uint32()
	d.Opaque(400)
	if d.Uint32() != 0 || d.Uint32() != 0 {
		return 0, 0, false // not SUCCESS, or the READ failed
	}
	postOp(d)
	d.Uint32()
	d.Bool()
	n = int(d.Uint32())
	if d.Err() != nil {
		return 0, 0, false
	}
	return len(head) - len(d.Rest()), n, true
}

// v3Target is a Target's NFSv3 side: its connections, the calls each
// carries at a time, and the benchmark directory's handle.
type v3Target struct {
	conns []*conn3
	depth int
	dir   []byte
}

// connect3 is Connect for --vers 3.
func (t *Target) connect3(ctx context.Context, cfg *Config) error {
	v := &v3Target{depth: max(cfg.Depth, 1)}
	for range max(cfg.Conns, 1) {
		c, err := dial3(ctx, t.Addr, cfg.UID, cfg.GID)
		if err != nil {
			v.close()
			return dialError(t.Addr, err)
		}
		v.conns = append(v.conns, c)
		if cfg.Krb5 != nil {
			if err := c.useKrb5(cfg.Krb5); err != nil {
				v.close()
				return err
			}
		}
	}
	root, err := mount3(ctx, cfg, t, v.conns[0])
	if err != nil {
		v.close()
		return err
	}
	if v.dir, err = v.conns[0].lookupOrMkdir(root, cfg.Dir); err != nil {
		v.close()
		return err
	}
	t.v3 = v
	return nil
}

// mount3 gets the export's root handle over c (under --sec's context
// when there is one), or over a connection of its own to t.MountPort on
// the server's host with AUTH_SYS, as a Linux client mounts. With --sec
// the export must list its flavour.
func mount3(ctx context.Context, cfg *Config, t *Target, c *conn3) ([]byte, error) {
	var fh []byte
	var flavors []uint32
	var err error
	if t.MountPort == 0 {
		fh, flavors, err = c.mount(t.Export)
	} else {
		host, _, herr := net.SplitHostPort(t.Addr)
		if herr != nil {
			return nil, herr
		}
		maddr := net.JoinHostPort(host, fmt.Sprint(t.MountPort))
		mc, derr := dial3(ctx, maddr, cfg.UID, cfg.GID)
		if derr != nil {
			return nil, fmt.Errorf("MOUNT service %s: %w", maddr, derr)
		}
		defer mc.rpc.Close()
		fh, flavors, err = mc.mount(t.Export)
	}
	if err != nil || cfg.Krb5 == nil {
		return fh, err
	}
	if !slices.Contains(flavors, krb5Flavor(cfg.Krb5.Sec)) {
		return nil, fmt.Errorf("MOUNT %s: the export offers flavours %v, not %s (%d)", t.Export, flavors, cfg.Krb5.Sec, krb5Flavor(cfg.Krb5.Sec))
	}
	return fh, nil
}

func (v *v3Target) close() {
	for _, c := range v.conns {
		c.rpc.Close()
	}
}

// run3 runs f(connection, worker, unit) for units 0..total-1 spread over
// Depth workers per connection (w.conn numbers the workers), until the
// deadline or the first error.
func run3(ctx context.Context, v *v3Target, total int64, deadline time.Time, m *Measure,
	f func(c *conn3, w *worker, k int64) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range len(v.conns) * v.depth {
		c := v.conns[i%len(v.conns)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{conn: i}
			defer func() { m.Latencies(w.lat) }()
			for {
				k := next.Add(1) - 1
				if k >= total || ctx.Err() != nil || !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				start := time.Now()
				if err := f(c, w, k); err != nil {
					once.Do(func() { first = err })
					next.Store(total)
					return
				}
				w.lat = append(w.lat, time.Since(start))
			}
		}()
	}
	wg.Wait()
	return first
}

// RandRead3 is RandRead over NFSv3 (READ only).
func RandRead3(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	v := t.v3
	l, _ := LayoutByName("data")
	c0 := v.conns[0]
	fh, size, err := c0.lookup(v.dir, l.Name)
	if err != nil || size != cfg.Size || cfg.Recreate {
		if fh, err = c0.create(v.dir, l.Name, false); err != nil {
			return nil, err
		}
		buf := make([]byte, 1<<20)
		for off := int64(0); off < cfg.Size; off += int64(len(buf)) {
			b := buf[:min(int64(len(buf)), cfg.Size-off)]
			l.Fill(b, off)
			if err := c0.write(fh, off, b); err != nil {
				return nil, err
			}
		}
		if err := c0.commit(fh); err != nil {
			return nil, err
		}
	}
	p := &Phase{Workload: "randread", File: l.Name, Op: "READ 4KiB", Total: int64(cfg.Ops)}
	blocks := cfg.Size / blockSize
	p.Run = func(ctx context.Context, m *Measure) error {
		return run3(ctx, v, int64(cfg.Ops), cfg.deadline(time.Now()), m, func(c *conn3, w *worker, k int64) error {
			rng := rand.New(rand.NewPCG(uint64(w.conn), uint64(k)))
			off := rng.Int64N(blocks) * blockSize
			buf := grow(&w.buf, blockSize)
			n, err := c.read(fh, off, buf)
			if err != nil {
				return err
			}
			if !cfg.NoVerify {
				if err := l.Verify(buf[:n], off, &w.scratch); err != nil {
					return err
				}
			}
			m.Add(int64(n), 1)
			return nil
		})
	}
	return []*Phase{p}, nil
}

// IOREasy3 is IOREasy over NFSv3: a file per connection of the v4 run
// (Conns), written in 2 MiB transfers (UNSTABLE, then COMMIT) and read
// back, checked.
func IOREasy3(ctx context.Context, cfg *Config, t *Target) ([]*Phase, error) {
	v := t.v3
	l, _ := LayoutByName("data")
	l.Seed = 1000
	nfiles := max(cfg.Conns, 1)
	per := (cfg.Size + iorEasyXfer - 1) / iorEasyXfer
	total := per * int64(nfiles)
	var dir []byte
	fhs := make([][]byte, nfiles)
	chunk := int64(max(cfg.RSize, 4096))
	unit := func(k int64) (file int, off int64) { return int(k % int64(nfiles)), (k / int64(nfiles)) * iorEasyXfer }
	write := &Phase{Workload: "ior-easy", Op: "write", Total: total * iorEasyXfer}
	write.Prep = func(ctx context.Context) (err error) {
		dir, err = v.conns[0].lookupOrMkdir(v.dir, "ior-easy")
		return err
	}
	write.Run = func(ctx context.Context, m *Measure) error {
		for i := range fhs {
			fh, err := v.conns[0].create(dir, fmt.Sprintf("file.%d", i), false)
			if err != nil {
				return err
			}
			fhs[i] = fh
		}
		err := run3(ctx, v, total, cfg.deadline(time.Now()), m, func(c *conn3, w *worker, k int64) error {
			f, off := unit(k)
			buf := grow(&w.buf, iorEasyXfer)
			l.Fill(buf, off)
			for i := int64(0); i < iorEasyXfer; i += chunk {
				piece := buf[i:min(iorEasyXfer, i+chunk)]
				if err := c.write(fhs[f], off+i, piece); err != nil {
					return err
				}
				m.Add(int64(len(piece)), 1)
			}
			return nil
		})
		for _, fh := range fhs {
			if err == nil {
				err = v.conns[0].commit(fh)
			}
		}
		return err
	}
	read := &Phase{Workload: "ior-easy", Op: "read", Total: total * iorEasyXfer}
	read.Run = func(ctx context.Context, m *Measure) error {
		return run3(ctx, v, total, cfg.deadline(time.Now()), m, func(c *conn3, w *worker, k int64) error {
			f, off := unit(k)
			buf := grow(&w.buf, iorEasyXfer)
			for i := int64(0); i < iorEasyXfer; i += chunk {
				piece := buf[i:min(iorEasyXfer, i+chunk)]
				n, err := c.read(fhs[f], off+i, piece)
				if err != nil {
					return err
				}
				if !cfg.NoVerify {
					if err := l.Verify(piece[:n], off+i, &w.scratch); err != nil {
						return err
					}
				}
				m.Add(int64(n), 1)
			}
			return nil
		})
	}
	read.After = func(ctx context.Context) error {
		for i := range fhs {
			v.conns[0].nfs(12, func(e *xdr.Encoder) { e.Opaque(dir); e.String(fmt.Sprintf("file.%d", i)) })
		}
		return nil
	}
	return []*Phase{write, read}, nil
}

// V3Builders are the workloads --vers 3 runs.
var V3Builders = map[string]Builder{"randread": RandRead3, "ior-easy": IOREasy3, "ior-hard": IORHard3,
	"mdtest-easy": MDTestEasy3, "mdtest-hard": MDTestHard3, "io500": IO5003, "readmatrix": ReadMatrix3}
